// Package natsbus is an event.Bus over NATS, for a service that runs as
// several instances: an event published by one instance reaches the matching
// subscribers of every instance.
//
// # Why NATS
//
// Both NATS and Redis pub/sub were candidates. NATS fits events better: its
// subjects are dot-separated tokens like event types, so "tool.*" becomes the
// server-side subscription "<prefix>.tool.>" and an instance receives only
// what its handlers asked for; it keeps the order of one publisher's
// messages; it reports a subscriber that cannot keep up (slow consumer)
// instead of silently disconnecting it, as Redis does when a pub/sub client
// exceeds its output buffer; and it reconnects, buffering publishes, without
// extra code. The client, nats.go, is pure Go and small. Redis remains the
// better choice only where it is already the one piece of infrastructure and
// NATS would be a new one.
//
// # Model
//
// Publish encodes the event as its JSON form and publishes it on the subject
// "<prefix>.<type>" (prefix "agentgraph.events" by default). Each Subscribe
// opens one NATS subscription, translating the glob to a NATS subject where
// possible ("*" → "<prefix>.>", "tool.*" → "<prefix>.tool.>", an exact type to
// its subject; other globs receive "<prefix>.>" and filter locally), and
// hands the decoded events to an event.MemoryBus of its own, so handlers get
// the same isolation as in-process: their own queue and goroutine, panics
// recovered and logged, a slow handler delaying nobody else.
//
// Delivery is at most once, as NATS core pub/sub is: events published while a
// subscriber is disconnected are not replayed to it. Losses the bus can see
// (a full handler queue, NATS dropping messages for a slow consumer, an event
// that does not decode) are counted in [Stats] and logged.
//
// # Journal
//
// A [Journal] is the replayable side: it keeps keyed event streams (one per
// run or request) in a JetStream stream with bounded retention, so that a
// client that lost its connection to one instance resumes on another from
// the last event it saw. Readers follow a key live until its writer ends it,
// and end with [ErrWriterLost] when the writer's heartbeats stop.
//
// A key's writer is the journal that wrote its first message; readers take
// its events, its end and its heartbeats ("<Stream>.alive.<writer id>")
// alone, and count and drop the messages of anyone else ([JournalStats]).
// The writer's id travels in every message, so anyone who can read the
// stream can copy it: without JournalConfig.SigningKey, NATS subject
// permissions must keep every user but the service's instances from
// publishing on "<Stream>.key.>" and "<Stream>.alive.>", or another client
// can end a key early, add events to it, or keep a dead writer's readers
// waiting. With a SigningKey, each message is signed (HMAC-SHA256 over its
// subject, its journal headers and its body) and readers refuse those
// unsigned or badly signed. Every message carries the time it was sent,
// signed with it: a reader heeds a heartbeat only if it was sent within
// Lease plus [JournalClockSkew] and numbered above the last one it heeded,
// so that heartbeats replayed after the writer died, to a reader old or
// new, do not keep it waiting; and a key's first message sent more than
// MaxAge plus JournalClockSkew ago (a copy republished after the key
// expired) does not make its writer the key's. A signature proves who
// wrote a message, not that it is new: a copy of a key's signed event
// published again under the same key has a Seq the reader has read, and
// is skipped. The clocks of the instances must agree within
// JournalClockSkew.
package natsbus
