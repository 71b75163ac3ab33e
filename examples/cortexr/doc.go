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
//     functions. After a failed attempt it offers the tools that worked
//     before, newest first, from this session's memory and earlier sessions'
//     (Memory.RecentSuccesses), the seed's memory fallback.
//   - act runs the plan with RunPlan in a sandbox and reads its result.
//     "FINAL_ANSWER: …" ends the run; "FURTHER_PROCESSING_REQUIRED: …" starts
//     the next step with the result fed back to perception in the input; an
//     error (a plan that does not parse, raises, calls a failing tool or hits
//     a limit) costs a lifeline and the step is tried again, until
//     Config.Lifelines are spent (OutcomeFailed). After Config.MaxSteps steps a
//     run that still needs processing ends with OutcomeStepLimit and the last
//     intermediate result.
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
// go.starlark.net: built-ins, a Python-like sum, the json and math modules
// and one function per tool, nothing else. There is no load statement
// (ErrLoadDisabled), no file, network, clock or environment access, and no
// recursion. Each plan is bounded by Limits: execution steps, wall time and
// tool calls; and stops when the run's context is cancelled. Starlark does
// not bound memory: a plan can build large values before a limit stops it.
//
// # Memory
//
// A session's Memory is the seed's MemoryManager: every tool call, tool
// output (with success), plan output and final answer, appended to a JSON
// file per session, <MemoryDir>/YYYY/MM/DD/session-<unix>-<id>.json, written
// atomically after each item.
//
// # Offline
//
// Without a Config.Client the agent uses OfflineModel, a rule-based demo
// model that reads the perception and decision prompts and recognises a few
// kinds of query, such as the seed's "Find the ASCII values of characters in
// INDIA and then return sum of exponentials of those values".
package cortexr
