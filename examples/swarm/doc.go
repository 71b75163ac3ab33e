// Package swarm is a supervisor-star swarm of agents built on agentgraph:
// a supervisor plans and routes, each MCP server is one specialised agent,
// each agent checks its own output with a tri-state reflection before it
// returns, and successful executions are kept as skills for similar tasks.
// It is the Go form of seed 004 ("Agentic Orchestrator Swarm") and an
// example to read: every part is a public agentgraph package doing its job.
//
// # The graph
//
// The swarm is one graph.Graph over State (the seed's GraphState): the
// request, the current Plan (replaced by each supervisor turn), append-only
// logs of Tasks, Results and the supervisor's Thoughts, a Blackboard merged
// key by key, the routing in Next, and the token Usage, which sums itself.
//
//	preprocess → supervisor ⇢ mcp_agent_<server> → supervisor … ⇢ qa → END
//
// The supervisor asks the model, with agent.Call, for a Decision: its
// reasoning, the whole updated plan and the agents to run now. Settled
// steps stay as they were whatever the model writes; the agents selected
// run in the next super-step, in parallel when there are several, and all
// return to the supervisor. It hands over to QA when nothing is selected,
// after Config.MaxTurns turns, or when its circuit breaker trips: the same
// agents routed three turns in a row without a new success.
//
// # Agents: one MCP server each
//
// Each server of Config.Servers (by default the chatbot's bundled knowledge,
// calculator and websearch servers, in process) becomes the agent
// "mcp_agent_<server>", a subgraph that sees only that server's tools:
//
//	retrieve → execute → reflect ⇢ execute (REJECTED, attempts left)
//	                             ⇢ fix → save (FIXED)
//	                             ⇢ save (APPROVED, or out of attempts)
//
// retrieve asks the SkillStore for past successful executions of similar
// tasks (Voyager's skill library); execute asks the model for a Choice,
// one tool call, with the skills as examples and the feedback of a rejected
// attempt, and makes it through an mcp.Session; reflect asks the model for
// an supervisor.Review through supervisor.Critique: APPROVED, FIXED (with the
// corrected output) or REJECTED (with feedback for the next attempt). save hands a Result to the supervisor and,
// for a success, saves a Skill with the lesson the rejections taught.
//
// A failing server fails its agent's step, not the run: the supervisor
// sees the failure, may plan the step on another agent, and QA says what
// could not be done.
//
// # Models
//
// Config.Client calls the models (agent.New(agent.ConfigFromEnv()) for real
// providers). Without one, NewOfflineModel answers: a rule-based demo model
// that reads the prompts' sections and makes the decisions described on it,
// so the swarm runs with no key and no network.
//
// # Running
//
// Swarm.Run streams Event values (plans, skills, executions, reviews,
// results, the answer) as an iter.Seq2 and ends with EventDone and the
// Outcome. Each run is checkpointed on a thread of its own
// (Config.Checkpointer, in memory by default); Event.Thread and
// Outcome.Thread name it. Swarm.Resume continues a run that stopped
// (cancelled, failed, or killed, with a persistent saver) from its last
// checkpoint without running its finished steps again, and
// Graph().Thread(id).State and History show it.
package swarm
