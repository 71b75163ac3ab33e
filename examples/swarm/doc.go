// Package swarm is a supervisor-star swarm of agents built on agentgraph:
// a supervisor plans and routes, each MCP server is one specialised agent,
// each agent checks its own output with a tri-state reflection before it
// returns, successful executions are kept as skills for similar tasks, and
// an Architect designs new teams of agents that run as one node. It is the
// Go form of seed 004 ("Agentic Orchestrator Swarm") and an example to read:
// every part is a public agentgraph package doing its job.
//
// # The graph
//
// The swarm is one graph.Graph over State (the seed's GraphState): the
// request, the current Plan (replaced by each supervisor turn), append-only
// logs of Tasks, Results, the supervisor's Thoughts, the chat Messages, the
// Citations the results used and the run's Trace, a Blackboard merged key
// by key, the routing in Next, and the token Usage, which sums itself.
//
//	preprocess → supervisor ⇢ mcp_agent_<server> | team_<name> | architect → supervisor … ⇢ qa → END
//
// The supervisor asks the model, with agent.Call, for a Decision: its
// reasoning, the whole updated plan and the agents to run now. Progress is
// decided from the results, not from the model's word: a step with an
// approved result is done whatever the plan says, settled steps stay as
// they were, and the agents selected run in the next super-step, in
// parallel when there are several. It hands over to QA when nothing is
// selected, after Config.MaxTurns turns, or when its circuit breaker trips:
// two turns in a row without progress (the same agents routed without a new
// success, or agents selected whose steps are done). QA's status counts the
// approved results, and its answer ends with the sources.
//
// # Agents
//
// Each server of Config.Servers or Config.ServersFile (by default the
// chatbot's bundled knowledge, calculator and websearch servers, in
// process) becomes the agent "mcp_agent_<server>", a subgraph that sees only
// that server's tools:
//
//	retrieve → execute ⇢ call → reflect ⇢ execute (REJECTED, attempts left)
//	                   ⇢ reflect      ⇢ fix → save (FIXED)
//	                                  ⇢ save (APPROVED, or out of attempts)
//
// retrieve asks the SkillStore for past successful executions of similar
// tasks (Voyager's skill library); execute asks the model for a Choice, one
// tool call or, when no tool fits, the step's output written by the model
// (the seed's LLM path); call makes the tool call through the server's tool
// as an operator tool (mcptool.WithServer, on a per-call mcp.Session), as
// a step of its own so that its result is checkpointed before reflection;
// reflect asks the model for an supervisor.Review through supervisor.Critique:
// APPROVED, FIXED (with the corrected output) or REJECTED (with feedback
// for the next attempt). save hands a Result with its citations to the
// supervisor and, for a success, saves a Skill with the lesson the
// rejections taught.
//
// A failing server fails its agent's step, not the run: the supervisor
// sees the failure, may plan the step on another agent, and QA says what
// could not be done. Reload (or Watch) reads the servers file again while
// the swarm serves: new servers become agents of the next runs, removed ones
// are no longer offered and shut down when the runs using them finish.
//
// # The Architect
//
// Asked for a team ("Build me a team that research stocks and writes a
// Python report"), the supervisor routes to the architect node, which asks
// the model for a TeamSpec: single-purpose agents, each bound to at most one
// MCP server, and a workflow. The design is validated (its JSON schema,
// TeamSpec.Validate, the swarm's servers), saved to Config.Workflows, and
// registered: the swarm's graph is rebuilt with the team as the node
// "team_<name>", a sub-swarm with its own supervisor, agents and QA, for the
// runs that start from then on; the architect runs the team at once too.
//
// # Models
//
// Config.Client calls the models (agent.New(agent.ConfigFromEnv()) for real
// providers). Without one, NewOfflineModel answers: a rule-based demo model
// that reads the prompts' sections and makes the decisions described on it,
// so the swarm runs with no key and no network. A model call that fails
// (an unreachable provider) stops the run with a *ModelError.
//
// # Running, durability and serving
//
// Swarm.Run streams Event values (plans, skills, executions with the
// agent's thought, reviews, results, teams, the answer) as an iter.Seq2 and
// ends with EventDone and the Outcome. Each run is checkpointed on a thread
// of its own (Config.Checkpointer, in memory by default; OpenStorage gives
// SQLite files or PostgreSQL, and a Memory for skills, teams and finished
// tasks that outlives the process); Event.Thread and Outcome.Thread name
// it. A finished run keeps only its last checkpoint, which holds its
// Outcome: its agents' checkpoints are deleted, and a principal's tasks,
// finished or not, least recently started or finished beyond
// Config.KeepTasks (of all principals beyond Config.KeepTotalTasks) are
// deleted whole. A thread
// id "principal.id" (the web API's) makes the run that principal's: the
// skills it learns and the teams its Architect designs are offered to that
// principal's runs only. The thread id is then the principal's only
// credential: an embedder must never let a client choose thread ids (for
// example by serving Swarm.Graph through agent/server, whose clients name
// their threads), or a client names another principal's thread and gets
// that principal's skills and teams. Swarm.Handler names a new task's
// thread itself, from the authenticated principal, and serves a task only
// to the principal its thread id names.
// Swarm.Resume continues a run that stopped (cancelled, failed, or killed)
// from its last checkpoint, inside the agent where it stopped: a tool call
// whose step was saved is not made again. Swarm.Handler serves the web API
// with SSE progress, and Config.Tracing sends the run to OpenTelemetry
// (trace id from the thread id).
package swarm
