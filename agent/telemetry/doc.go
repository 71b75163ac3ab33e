// Package telemetry traces and measures agentgraph programs with
// OpenTelemetry: graph node attempts, model calls and tool calls.
//
// A [Telemetry] is built from the providers a program already has
// ([Config.TracerProvider], [Config.MeterProvider]); it keeps no global state
// and never reads the OpenTelemetry globals itself. It instruments by
// wrapping:
//
//   - [Telemetry.Model] wraps a [model.Model]: a span per call named
//     "chat {model}" with the OpenTelemetry GenAI semantic conventions
//     (provider, requested and response model, response id,
//     input/output/reasoning/cached tokens, finish reasons, time to first
//     chunk when streaming), and the gen_ai.client.token.usage and
//     gen_ai.client.operation.duration metrics.
//   - [Telemetry.Tool] wraps an [operator.Tool]: a span per call named
//     "execute_tool {name}" (tool name, call id, whether the result is an
//     error, result size), and counters of tool calls and tool errors by
//     tool.
//   - [Telemetry.Hooks] returns [graph.Hooks] that trace a graph run as a
//     tree: a span per run ("run {graph}": graph, thread id, run id,
//     outcome, steps; interrupts and resumes as events), per super-step
//     ("step"), per node attempt ("node {name}", retries and errors on
//     it), per checkpoint save ("checkpoint save": backend, bytes), with a
//     subgraph's run nested under its node; and that feed the
//     agentgraph.run.duration (by graph and outcome) and
//     agentgraph.run.active metrics.
//   - [Telemetry.BreakerObserver] counts a resilience breaker's state
//     changes in agentgraph.breaker.state_changes.
//
// The mcp package's HTTP transports send the caller's W3C trace context
// (traceparent) with each request, so an MCP server that traces joins the
// run's trace.
//
// Prompts and completions can hold personal data, so they are not recorded
// unless [Config.CaptureContent] is set; then they are added to the model
// span as events, each cut to [MaxContentBytes].
//
// A Telemetry with neither provider does nothing and costs nothing: its
// wrappers return what they were given unchanged and its hooks are empty, so
// a program can wire telemetry unconditionally.
package telemetry
