// Package bosai is Bos-AI on agentgraph: a planner chooses specialist
// agents for a request, they run in parallel, and a composer reads all
// their results and writes the answer, with a trace of every step.
//
// It is an example to read. The whole orchestration is one graph of
// package graph over the State struct:
//
//	START → plan ─(one Send per chosen agent)→ agent ×N → compose → END
//
// The plan node asks the model for a Decision with agent.Call (structured
// output, validated, retried), after the seed's keyword heuristic and the
// request's preferences; if the model gives nothing usable it falls back to
// the heuristic with confidence 0.4. Its router sends one task per chosen
// agent (graph.AddTask and Dispatch), so the agents run in one super-step,
// in parallel. Each task adds its AgentResult and its trace through Append
// reducers and subtracts one from Pending through a Sum reducer (the
// seed's pending_agents, decremented); the reducers merge the tasks'
// updates in plan order whatever order they finished in. The compose node
// is the join: it runs once, after every agent.
//
// The agents:
//
//   - knowledge (the seed's SQL agent): the model writes a search query,
//     the knowledge MCP server runs it (search_knowledge), and Tabulate
//     turns the MCP result into a TabularResult;
//   - api (the seed's API Docs agent): the model plans one call from the
//     endpoint catalogue (Endpoints), made over HTTP under a resilience
//     policy (retries on 5xx and 429);
//   - computation: the model writes a Starlark program that the
//     calculator MCP server runs in its sandbox (run_code).
//
// An agent's failure never fails the run: it is kept in its AgentResult,
// recorded as an error event in the trace, and the composer answers with
// what the others found (Response.Partial). A composer whose model fails
// answers with the results as they are. Only a cancelled context stops a
// run.
//
// Bot.Run streams the trace as it happens (graph.Emit inside the nodes,
// read from the graph's stream) and ends with the Response, whose Trace
// holds the same events in plan order. Each run is checkpointed on a
// thread of its own (Response.Thread, Bot.State).
//
// With no model configured in the environment the Bot runs on
// NewOfflineModel, a rule-based model that reads Bos-AI's prompts and
// decides from their content.
package bosai
