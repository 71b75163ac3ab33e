// Package sse streams events to HTTP clients as Server-Sent Events and reads
// such streams back.
//
// Each event is one SSE message: its sequence number as the id, its type as
// the event name and its JSON form as the data:
//
//	id: 7
//	event: tool.progress
//	data: {"type":"tool.progress","request_id":"req-1","seq":7,"timestamp":"...","tool":"search","progress":0.5,"message":"Processing..."}
//
// [Stream] is the server side of one request. Feed it from the request's
// event.Emitter with [Stream.Run] and mount it as the handler: it flushes each
// event as it comes, sends heartbeat comments while idle, stops when the
// client goes away, and keeps a bounded replay buffer so that a client that
// reconnects with a Last-Event-ID header (browsers' EventSource does this by
// itself) continues after the last event it saw, without losing or repeating
// any. [Writer] and [AppendEvent] are the pieces it is built from.
//
// [Read] parses any SSE stream by the rules browsers follow, and
// [ReadEvents] decodes the messages into event.Event values, for Go clients
// and tests. [Follow] is the Go counterpart of a browser's EventSource: it
// reconnects with Last-Event-ID when a connection drops and yields each event
// once.
package sse
