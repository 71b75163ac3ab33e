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
//   - sql (the seed's SQL agent): a graph of its own (list_tables → schema
//     → generate → safety_check → llm_check → execute → parse) that writes
//     one SELECT from the schema, checks it (dbserver.Check, then a model
//     review), runs it read-only through MCP database tools and returns a
//     TabularResult, with up to MaxSQLAttempts attempts, each failed one
//     and its error shown to the model; the bundled server is package
//     dbserver on a sample shop database;
//   - api_docs (the seed's API Docs agent): endpoints from the API
//     documentation (APIDocs, apidocs.yaml) scored against the question,
//     a model-written ApiCallPlan, bearer token and headers from the
//     request context, 401 → token refresh, 400 → the model adjusts once,
//     mutating methods only when the documentation allows them, and a
//     model-written summary; the agent calls the configured API only
//     (a request may choose another base among Config.AllowedAPIBases),
//     refreshes tokens against it and follows redirects on its origin;
//   - computation: the model writes a Starlark program that the
//     calculator MCP server runs in its sandbox (run_code).
//
// Handler serves the same requests over HTTP (JSON or server-sent events).
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
// thread of its own (Response.Thread, Bot.State); the Bot's own in-memory
// saver keeps the Config.KeepRuns latest finished runs.
//
// With no model configured in the environment the Bot runs on
// NewOfflineModel, a rule-based model that reads Bos-AI's prompts and
// decides from their content.
package bosai
