// Package event defines the typed events an agent run reports while it works,
// and carries them: to the one client of a request through an [Emitter], and
// to any number of observers through a [Bus].
//
// # Events
//
// An [Event] is an envelope (request id, a per-request sequence number, a
// timestamp) around a typed payload. The catalogue covers the supervisor
// (supervisor.thinking, supervisor.decided), tools (tool.start,
// tool.progress, tool.content, tool.complete, tool.error), MCP callbacks
// (mcp.progress, mcp.content, mcp.elicitation, mcp.error), workflows
// (workflow.created, workflow.step.start, workflow.step.complete,
// workflow.complete), the answer (response.chunk, response.done), answers
// operators send directly (direct.response and direct.response.start, .chunk,
// .done), user interaction (elicitation.request, elicitation.response,
// clarify.request), failures (error) and token.usage. Each type has a
// payload struct of the same name: [ToolProgress] is the payload of
// [TypeToolProgress].
//
// The JSON form is flat, the envelope after "type" and the payload's fields
// after it:
//
//	{"type":"tool.progress","request_id":"req-1","seq":7,"timestamp":"2026-01-02T03:04:05.000000006Z","tool":"search","progress":0.5,"message":"Processing..."}
//
// Decoding gives back the payload struct. Hot payloads are encoded by hand,
// byte-identical to encoding/json, without allocating.
//
// mcp.* events are internal: an MCP server's callbacks raise them, and
// [ToUserFacing] (or [UserFacing] over a stream) maps them to the tool.* and
// elicitation.request events users see, so logs keep the server while the
// client sees tools.
//
// # Emitter: one request, one consumer
//
// A run emits through an [Emitter]; the HTTP handler (see the sse
// subpackage) ranges over [Emitter.Events]. Delivery is ordered and the
// buffer bounded. When the consumer falls behind and the buffer fills,
// progress events are coalesced (a newer report for the same tool replaces
// the queued one; the survivor's Coalesced field and [EmitterStats] count
// it), while every other event makes its producer wait: responses, results
// and terminal events are never dropped. A slow client thus slows the run
// down instead of losing its answer; the wait is bounded by the producer's
// context, by the consumer going away ([ErrConsumerGone]), and optionally by
// EmitterConfig.MaxWait ([ErrSlowConsumer]).
//
// # Bus: many subscribers
//
// [Bus] is publish/subscribe with glob patterns over the type ("tool.*",
// "*.error", "*"). [MemoryBus] serves one process: each subscription has its
// own bounded queue and goroutine, so a slow handler delays only itself (and
// Publish by at most BusConfig.PublishWait, after which the event is dropped
// for that subscription, counted, logged and reported as [ErrDropped]), and a
// panicking handler is recovered and logged while the others go on. The
// natsbus subpackage connects the buses of several instances of a service.
package event
