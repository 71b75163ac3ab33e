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
// every client and reaps every subprocess (and the process group it leads);
// it returns when its context ends, killing the subprocesses left first and
// leaving what is left of that cleanup to finish in the background (see
// [Manager.Shutdown] for its bounds: an HTTP client's close may take 5 s,
// and a connect waiting on an OAuth.Authorize that ignores its context
// waits for it).
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
// progress (routed by progress token; see "Order of a call's messages"
// below), elicitations (the server asks the user; the
// callback blocks until an answer, which is completed with the schema's
// defaults and validated against it before it goes back), each content item
// of every result, and every failure classified as timeout, connection,
// execution or validation. [Session.CallTool] returns a [toolresult.Result]
// (the result type operators and local tools return too) of items of every
// MCP content kind (text, image, audio, embedded resource, resource link,
// structured content, widgets); [Session.CallToolsParallel] runs calls
// concurrently without letting one failure cancel the others. Cancelling a
// call's context returns promptly and tells the server
// (notifications/cancelled).
//
// A tool that declares an output schema (MCP outputSchema, as its
// server's last tools/list gave it, such as a [Registry]'s listing) has
// each successful result checked against it: a result without
// structuredContent, or whose structuredContent does not conform, is a
// tool error the model sees (IsError, with a first text item naming the
// tool and up to ten mismatched fields), reported to Callbacks.Error as
// KindValidation; the server's content follows it. The schema is compiled
// once per listing, when a call of the tool first returns; one over
// [MaxInputSchemaBytes], or one that does not compile, checks nothing and
// is logged once. Tools never listed are not checked.
//
// # Hung servers and size limits
//
// Every call attempt has a time limit: ManagerConfig.CallTimeout (2 minutes
// by default), overridden per server (Server.CallTimeout) and per tool
// (Server.ToolTimeouts). An attempt that runs out fails with a
// [*TimeoutError] and counts as a failure of the server for [Health] and
// the circuit breaker. After a timeout (the call's own or the caller's
// deadline) the manager pings the server; a server that does not answer
// within ManagerConfig.PingTimeout has stalled: its connection is cut, the
// calls in flight on it fail with a [*StallError], and the next call
// reconnects, starting a stdio server afresh. One message from a server (a
// stdio line, a server-sent event, a JSON body) may hold at most
// ManagerConfig.MaxMessageBytes and is never read past it; one tool result
// at most ManagerConfig.MaxResultBytes. Both fail with a [*LimitError]
// naming the server and the limit. Connecting (starting the transport and
// the initialize handshake) is bounded by ManagerConfig.ConnectTimeout and
// listing a server's tools by its CallTimeout, both [*TimeoutError]s that
// count as failures of the server (and as Timeouts in [Health]), as is
// [Manager.Check]'s probe by the CallTimeout; a tool list may hold at most
// ManagerConfig.MaxTools tools over all its pages. [Health] reports
// timeouts, restarts and the limits in force (CallTimeout, ToolTimeouts,
// ConnectTimeout, MaxTools, MaxMessageBytes, MaxResultBytes).
//
// # Remote servers' credentials
//
// Requests go to Server.URL's origin only: a redirect elsewhere is not
// followed, so Server.Headers and the OAuth token stay with the server. An
// OAuth client's own credentials (ClientSecret, PrivateKey, Enterprise) go
// only to the authorization servers OAuth.AuthorizationServers allows, by
// default the MCP server's own origin, and only after the authorization
// server's metadata named the issuer it was fetched for (RFC 8414 §3.3).
// Error responses are read up to 64 KiB.
//
// A server's requests are bounded too. At most
// ManagerConfig.MaxServerRequests of its requests (elicitations, pings,
// roots and sampling requests) are answered at once; one over the limit
// is answered at once with a JSON-RPC error (a [*LimitError]'s text),
// without a callback, and counted in Health.RejectedRequests. Over stdio
// and in process a refused request costs no goroutine; over streamable
// HTTP, mcp-go's transport still spends a goroutine and an HTTP POST of
// the answer on each request, refused or not (see
// ManagerConfig.MaxServerRequests). At most
// ManagerConfig.MaxQueuedProgress progress notifications wait for a
// session's Progress callback; more are dropped and counted in
// Health.DroppedProgress. Progress reaches only calls made to the server
// that sent it, whose tokens are random.
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
// *zap.Logger, and so do the transports' own logs (stdio servers are
// reached through this package's transport; mcp-go's HTTP and SSE
// transports are given a slog adapter). A server's logging notifications
// are logged at their level (one the protocol does not define at Warn),
// and a stdio server's stderr at Debug, a write an entry, with at most 4
// KiB of their data, 100 at once then 20 a second for each;
// those over that budget are counted in Health.SuppressedLogs.
//
// # Order of a call's messages
//
// A session's callbacks run one at a time in the order the client received
// what they report, and [Session.CallTool] returns only after every callback
// for what arrived before the call's result has run (unless the caller's
// context ended first; then the context of the call's callback running
// ends, and the call waits for it at most [CallbackGrace]). So a caller that
// reports "tool complete" after CallTool returns (as operator.Provider does)
// never reports it before the call's progress. The client receives a call's
// messages in the order the server sent them when one ordered stream
// carries them all:
//
//   - in-process: the manager's own transport hands a response (and an
//     elicitation request) over only after the notifications the server
//     sent before it; mcp-go's in-process transport does not, as it
//     forwards notifications on a goroutine of their own;
//   - stdio: the client reads the subprocess's output in order, but
//     mcp-go's stdio server may write a call's result before its progress;
//     serve mcp-go servers with [github.com/agentgraph/agentgraph/mcp/stdio]
//     to write them in order;
//   - streamable HTTP: the response stream of the POST carries the call's
//     messages in order, but a server may send progress over the
//     standalone GET stream instead (mcp-go's server does so for some of
//     them while the GET stream is open, see Server.NoListen), and then it
//     can arrive out of order or after the result.
//
// The client drops a call's progress before its result only when the
// session's Progress callback is behind by ManagerConfig.MaxQueuedProgress
// notifications, or the caller gave up on the call (both counted in
// [Health].DroppedProgress); an mcp-go server drops it when a tool sends
// notifications faster than its session's queue (100 messages) drains:
// SendNotificationToClient then returns server.ErrNotificationChannelBlocked
// to the tool.
//
// Progress that arrives after its call returned is dropped rather than
// delivered after the call's end: it is logged at debug level and counted
// in [Health].LateProgress. Progress for a token the manager does not know
// (a call that ended more than ManagerConfig.ProgressLinger ago) is logged
// at debug level.
package mcp
