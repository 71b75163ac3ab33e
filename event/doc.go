// Package event carries the typed events a run reports while it works: to
// the one client of a request through an [Emitter], and to any number of
// observers through a [Bus].
//
// # Events
//
// An [Event] is an envelope (request id, a per-request sequence number, a
// timestamp) around a [Payload]: an application's struct whose EventType
// method names its type ("order.packing", "order.shipped"). The package
// defines one payload of its own, [Error], with which transports report
// their failures. A payload may check its fields ([Validator]) and may say
// that a newer report replaces it in a full buffer ([Coalescer]).
//
// The JSON form is flat, the envelope after "type" and the payload's fields
// after it:
//
//	{"type":"order.packing","request_id":"req-1","seq":7,"timestamp":"2026-01-02T03:04:05.000000006Z","order":"A-17","progress":0.5}
//
// A [Decoder] gives back the payload structs registered with it
// ([Register]) and a [Raw] for other types; an application registers its
// types on a decoder value when it starts.
//
// # Emitter: one request, one consumer
//
// A run emits through an [Emitter]; the HTTP handler (see the sse
// subpackage) ranges over [Emitter.Events]. Delivery is ordered and the
// buffer bounded. When the consumer falls behind and the buffer fills,
// coalescable events are coalesced (a newer report from the same source
// replaces the queued one; the survivor's Coalesced field and
// [EmitterStats] count it), while every other event makes its producer
// wait: results and answers are never dropped. A slow client thus slows
// the run down instead of losing its answer; the wait is bounded by the
// producer's context, by the consumer going away ([ErrConsumerGone]), and
// optionally by EmitterConfig.MaxWait ([ErrSlowConsumer]).
//
// # Bus: many subscribers
//
// [Bus] is publish/subscribe with glob patterns over the type ("order.*",
// "*.error", "*"). [MemoryBus] serves one process: each subscription has its
// own bounded queue and goroutine, so a slow handler delays only itself (and
// Publish by at most BusConfig.PublishWait, after which the event is dropped
// for that subscription, counted, logged and reported as [ErrDropped]), and a
// panicking handler is recovered and logged while the others go on. The
// natsbus subpackage connects the buses of several instances of a service.
//
// # Journal: one stream, any instance
//
// A [Journal] keeps keyed streams (a run's events, a request's) where every
// instance sharing it can read them: the instance running the stream
// appends and ends it, and a client that lost its connection resumes on
// any instance, which replays the events after the client's last id and
// follows the rest live. A writer that dies without ending its key is
// reported to readers as [ErrWriterLost] a lease later. The natsbus
// subpackage keeps a journal in NATS JetStream, the postgres subpackage in
// PostgreSQL; the journaltest subpackage checks an implementation.
package event
