// Package cortexr is Cortex-R in Go: an agent that answers a query by
// looping perception → decision → sandboxed action over MCP tools, with
// session memory, built on agentgraph's graph, agent and mcp packages.
//
// # The loop
//
// Each step of a run is three nodes of a graph (Agent.Graph draws it):
//
//   - perceive asks the model, with agent.Call[Perception], for the query's
//     intent, entities, a tool hint and the MCP servers it needs, from a
//     catalogue of the configured servers. An answer that does not parse,
//     fails validation after agent.Call's retries, or names no known server
//     selects every server (Perception.Fallback).
//   - decide lists the selected servers' tools (mcp.Registry) and asks the
//     model for a plan: a Starlark function solve() calling the tools as
//     functions, following the Config.Strategy, with perception's tool hint,
//     the persona and memory (the last items and, in a long session, the
//     items Memory.Search finds for the query). With Config.MemoryFallback
//     (the seed's memory_fallback_enabled, off by default) a retry after a
//     failed attempt is offered the tools that worked before in this
//     session (Memory.RecentSuccesses), or in earlier sessions too with
//     Config.MemoryFallbackAcrossSessions.
//   - act runs the plan with RunPlan in a sandbox and reads its result.
//     "FINAL_ANSWER: …" ends the run; "FURTHER_PROCESSING_REQUIRED: …" starts
//     the next step with the result fed back to perception in the input; an
//     error (a plan that does not parse, raises, calls a failing tool or hits
//     a limit) costs a lifeline and the step is tried again, until
//     Config.Lifelines are spent (OutcomeFailed). After Config.MaxSteps steps a
//     run that still needs processing ends with OutcomeStepLimit and the last
//     intermediate result.
//
// # Strategies
//
// StrategyConservative allows one tool call per step (a plan with more is
// rejected before it runs and the next attempt is told why);
// StrategyParallel gives plans parallel(calls=[[tool, {args}], ...]), run
// concurrently, 2 to MaxParallelCalls at once; StrategySequential, the
// default, gives plans try_call(tool=..., args={...}) for fallback chains,
// Starlark having no try/except. Profile reads the seed's profiles.yaml.
//
// # Plans as models write them
//
// A fenced block after prose, `async def solve()`, `await`, and imports of
// json, math and re are accepted; re is Python's re over Go's RE2 syntax.
//
// # Documents
//
// The documents server (package rag) searches a folder of Markdown, text
// and HTML documents and web pages, chunked, embedded and indexed in
// process, re-embedding only documents whose hash changed, and converts
// web pages to Markdown. DemoDocuments is the bundled offline set (and
// https://example.com from a saved copy).
//
// Agent.Run streams the steps as Events (perception, plan, each tool call,
// the action's result) and ends with an EventAnswer. Every run is
// checkpointed on the thread "<session id>#<n>" (Config.Checkpointer), so
// its state after each step can be read back with Agent.Graph().Thread(id).State and
// History.
//
// # The sandbox
//
// Plans are Starlark, a small deterministic Python dialect, run with
// go.starlark.net: built-ins, a Python-like sum, the json, math and re
// modules and one function per tool, nothing else. There is no load statement
// (ErrLoadDisabled), no file, network, clock or environment access, and no
// recursion. Each plan is bounded by Limits: execution steps, wall time and
// tool calls; and stops when the run's context is cancelled. Each plan runs
// in a worker process of the examples' sandbox package, under OS limits on
// memory, stack depth, CPU time and output as well, so a plan that exhausts
// one fails with a "sandbox ... limit" PlanError (a lifeline) and the agent
// carries on. re runs in the worker too, under the same limits; only the
// tools run in the agent's process.
//
// # Memory
//
// A session's Memory is the seed's MemoryManager: every tool call, tool
// output (with success), plan output and final answer, appended as one JSON
// line each to a file per session,
// <MemoryDir>/YYYY/MM/DD/session-<unix>-<id>.jsonl, without rewriting what
// is there; Memory.Search finds items similar to a query (offline lexical
// embedding). Sessions do not read each other's memory unless
// Config.MemoryFallbackAcrossSessions is set; an earlier session that
// cannot be read is then skipped and logged. Each stored text, tool
// arguments and tool result is clipped to MaxMemoryText bytes, and a
// session to MaxSessionBytes.
//
// # Offline
//
// Without a Config.Model the agent uses OfflineModel, a rule-based demo
// model that reads the perception and decision prompts and recognises a few
// kinds of query, such as the seed's "Find the ASCII values of characters in
// INDIA and then return sum of exponentials of those values", "Summarize
// this webpage: https://example.com" and questions over the stored
// documents. A query it cannot plan fails (a lifeline each attempt) rather
// than passing a non-answer off as FINAL_ANSWER.
package cortexr
