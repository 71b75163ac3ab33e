// Package mcp connects agents to tools on Model Context Protocol servers. It
// is built on github.com/mark3labs/mcp-go and adds what a production client
// needs around it: a catalogue of servers and tools, one managed connection
// per server, per-request sessions with callbacks, and results normalised
// into multi-modal content.
//
// # The model
//
// A [Manager] holds the servers ([Server]: a stdio subprocess, a streamable
// HTTP or legacy SSE endpoint, or an mcp-go server in the same binary) and
// creates one client per server on first use. Every call waits for a slot in
// the server's concurrency limit (10 by default), then runs through the
// server's resilience policy (the [resilience.MCP] preset: retry with
// backoff, circuit breaker). A connection that drops or a subprocess that
// dies is replaced on the next call. [Manager.Shutdown] refuses new work,
// waits for calls in flight until its context ends, cancels the rest, closes
// every client and reaps every subprocess (and the process group it leads).
//
// A [Registry] lists the tools in two stages, as a model needs them. Stage 1
// ([Registry.Tools]) keeps only summaries (name, description, server,
// availability), refreshed every TTL (5 minutes by default) or as soon as a
// server announces that its list changed; concurrent refreshes share one
// run. Stage 2 ([Registry.Tool]) fetches a tool's full schema when it is
// selected and caches it. A name that two servers offer is listed once per
// server as "<server>__<tool>"; calling the bare name is an
// [*AmbiguousToolError], and an unknown name is a [*ToolNotFoundError] that
// lists close names. Servers come from code ([Manager.Add]), from a config
// file in the common mcpServers shape ([LoadConfig]) and from a discovery
// service (RegistryConfig.DiscoveryURL).
//
// A [Session] is one request's view: create it with [Registry.NewSession] or
// [Manager.NewSession] and `defer session.Close()`. Its [Callbacks] receive
// progress (routed by progress token, including notifications that arrive
// just after the result), elicitations (the server asks the user; the
// callback blocks until an answer, which is completed with the schema's
// defaults and validated against it before it goes back), each content item
// of every result, and every failure classified as timeout, connection,
// execution or validation. [Session.CallTool] returns a [ToolResult] of
// [ToolContent] items (text, image, audio, embedded resource, resource link,
// structured content, widgets); [Session.CallToolsParallel] runs calls
// concurrently without letting one failure cancel the others. Cancelling a
// call's context returns promptly and tells the server
// (notifications/cancelled).
//
// # Protocol choices
//
// Servers are spoken to with protocol revision 2025-11-25 unless
// Server.ProtocolVersion says otherwise: probing for 2026-07-28 breaks stdio
// servers that exit on an unknown first message and mistakes lenient
// servers for modern ones. Streamable HTTP clients keep the standalone GET
// stream open for server-initiated messages (logging, list_changed, some
// elicitations), retrying a failing stream a bounded number of times
// (Server.ListenRetries). The legacy SSE transport cannot carry
// server-to-client requests, so over it the client declares no elicitation
// support, and a request the server sends anyway fails the calls in flight
// with [ErrServerRequestsUnsupported] instead of leaving them to hang. Only transport failures are retried:
// never a tool's error result, never the server's JSON-RPC errors, never a
// call the caller cancelled, and a failure after the request went out only
// when the tool is marked read-only or idempotent.
//
// Servers' logging notifications and subprocess stderr go to the injected
// *zap.Logger.
package mcp
