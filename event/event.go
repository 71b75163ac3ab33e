package event

import "time"

// Type names a kind of event. Types are lower-case, dot-separated words
// ("order.packing", "order.item.added"); the value is what appears in the
// "type" field of the JSON form and in the event: line of the SSE form.
type Type string

// TypeError is the type of [Error], the one payload this package defines:
// a failure the consumer should see. The sse package reports its own
// failures (lost or unencodable events) with it.
const TypeError Type = "error"

// Validator is implemented by payloads that check their own fields.
// [Emitter.Emit] calls Validate before numbering or queuing the event and
// returns its error (a [*ValidationError] by convention).
type Validator interface {
	Validate() error
}

// Coalescer is implemented by payloads that a newer report may replace
// while they wait in a full [Emitter] buffer, such as progress: a queued
// payload is replaced by a newer one of the same type whose CoalesceKey is
// the same non-empty string (the source it reports on). An empty key means
// the event is never replaced.
type Coalescer interface {
	CoalesceKey() string
}

// Event is one typed event of one request: the envelope (request id,
// sequence number, time) and a payload.
//
// Its JSON form is flat, the payload's fields following the envelope's:
//
//	{"type":"order.packing","request_id":"req-1","seq":7,"timestamp":"2026-01-02T03:04:05.000000006Z","order":"A-17","progress":0.5}
type Event struct {
	// Type is the payload's type. [Emitter.Emit] and [Event.MarshalJSON]
	// fill it from Payload when it is empty.
	Type Type
	// RequestID identifies the request the event belongs to.
	RequestID string
	// Seq is the event's position among its request's events, from 1. An
	// [Emitter] numbers events in emit order; a gap in the numbers delivered to
	// a consumer is explained by the Coalesced count of the event after it.
	Seq uint64
	// Time is when the event was emitted. It is encoded in UTC with
	// nanoseconds (RFC 3339).
	Time time.Time
	// Coalesced is how many earlier progress events of the same source this
	// one replaced while the consumer was behind (0 normally).
	Coalesced int
	// Payload holds the type-specific fields. After decoding it is the
	// struct a [Decoder] has registered for Type, or a [Raw].
	Payload Payload
}

// Payload is the type-specific part of an [Event]: an application's struct
// whose EventType method names its type. It is encoded with encoding/json,
// and decoded by a [Decoder] it is registered with (as [Raw] otherwise).
// Its JSON fields must not be named type, request_id, seq, timestamp or
// coalesced. It may implement [Validator] and [Coalescer].
type Payload interface {
	// EventType returns the type of event the payload belongs to.
	EventType() Type
}

// Raw is the payload of a decoded event whose type the decoder does not
// know.
type Raw struct {
	// Type is the event's type.
	Type Type
	// Fields is the event's JSON object without the envelope fields.
	Fields []byte
}

// EventType returns r.Type.
func (r Raw) EventType() Type { return r.Type }

// Error is the payload of [TypeError]: a failure the consumer should see.
// It is an event, not a Go error.
type Error struct {
	Message string `json:"message"`
	// Code is a short machine-readable reason, or empty. The sse package
	// sends "events_lost", "unencodable_event" and "stream_failed".
	Code string `json:"code,omitempty"`
}

// EventType returns [TypeError].
func (Error) EventType() Type { return TypeError }

// Validate checks that the message is set.
func (e Error) Validate() error {
	if e.Message == "" {
		return &ValidationError{Type: TypeError, Field: "message", Reason: "is empty; set it"}
	}
	return nil
}
