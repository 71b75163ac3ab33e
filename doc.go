// Package agentgraph is an embeddable Go SDK for building agent graphs: typed
// state machines whose nodes call language models, tools and other graphs.
//
// The root package holds no code; it documents how the SDK is laid out. Import
// the package you need:
//
//   - [github.com/agentgraph/agentgraph/graph]: the engine. A generic graph over
//     a user's state struct, with per-field reducers, static and conditional
//     edges, parallel super-steps, dynamic fan-out, subgraphs, streaming,
//     checkpoints, interrupts and resume.
//   - [github.com/agentgraph/agentgraph/agent]: the LLM client on langchaingo
//     (model aliases, token usage, streaming) and structured output (JSON
//     Schema from Go types, validation, error-feedback retry);
//     [github.com/agentgraph/agentgraph/agent/server] serves compiled graphs
//     over LangGraph's Agent Server API.
//   - [github.com/agentgraph/agentgraph/agent/model]: the model vocabulary
//     (Model, Message, tool definitions, stream chunks, usage), a leaf package;
//     [github.com/agentgraph/agentgraph/agent/provider] adapts OpenAI,
//     Anthropic and Ollama to it; [github.com/agentgraph/agentgraph/agent/react]
//     is the prebuilt tool-calling agent; [github.com/agentgraph/agentgraph/agent/telemetry]
//     traces and measures runs, steps, nodes, model calls and tool calls with
//     OpenTelemetry.
//   - [github.com/agentgraph/agentgraph/operator]: the operator interface, its
//     registry and factories, the messaging context and the built-in operators;
//     the Tool interface of what a model calls, typed Go-function tools,
//     toolsets, local tools and the provider that merges local tools,
//     operators and MCP tools in one catalogue; beneath it,
//     [github.com/agentgraph/agentgraph/operator/plan] is the plan a model
//     writes (a leaf package) and [github.com/agentgraph/agentgraph/operator/workflow]
//     validates and runs plans as a graph with independent steps in parallel.
//   - [github.com/agentgraph/agentgraph/mcp]: the MCP client layer: server
//     registry, client manager, per-request sessions with progress,
//     elicitation and content callbacks, multi-modal results.
//   - [github.com/agentgraph/agentgraph/memory]: conversation window and
//     summary, long-term memory items, result store, action history and the
//     context assembler.
//   - [github.com/agentgraph/agentgraph/event]: typed events, the per-request
//     emitter, the publish/subscribe bus and Server-Sent Events encoding.
//   - [github.com/agentgraph/agentgraph/resilience]: retry, circuit breaker,
//     timeout, bulkhead, fallback and error classification.
//   - [github.com/agentgraph/agentgraph/document]: upload, chunking with
//     overlap, LLM summaries, storage and the processing pipeline.
//   - [github.com/agentgraph/agentgraph/cognition]: user profiles, episodic
//     memory, identity, the meta-monitor and a background task queue.
//
// The examples directory holds complete programs built only from these
// packages; examples/chatbot is the reference wiring of an agentic chatbot,
// and examples/supervisor the supervisor's steps and prompts that it and
// the swarm example share (an application kit, not part of the general SDK).
// Packages under internal/ are implementation details and may change at any
// time.
//
// Every package logs through an injected *zap.Logger (a no-op logger by
// default), takes a [context.Context] on every call that blocks, and keeps no
// global state beyond explicitly named default registries.
package agentgraph
