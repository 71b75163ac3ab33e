package event

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Test for them with errors.Is.
var (
	// ErrClosed: the emitter or bus was closed; nothing more can be sent.
	ErrClosed = errors.New("event: closed")
	// ErrConsumerGone: the emitter's consumer stopped reading (it broke out of
	// the loop or its context ended), so emitting is pointless. A run that
	// gets it should stop.
	ErrConsumerGone = errors.New("event: consumer stopped reading")
	// ErrConsumerActive: Events was called while another consumer reads the
	// same emitter. An emitter has one consumer.
	ErrConsumerActive = errors.New("event: emitter already has a consumer")
	// ErrSlowConsumer: the consumer did not make room in the buffer within
	// EmitterConfig.MaxWait; the emitter has failed.
	ErrSlowConsumer = errors.New("event: consumer too slow")
	// ErrDropped: a bus subscriber's queue stayed full past
	// BusConfig.PublishWait, so it did not get the event.
	ErrDropped = errors.New("event: dropped for a slow subscriber")
	// ErrBadPattern: a subscription pattern is not a valid glob.
	ErrBadPattern = errors.New("event: bad subscription pattern")
)

// ValidationError reports a payload field with a missing or out-of-range
// value. Emit returns it before the event is numbered or queued.
type ValidationError struct {
	// Type is the event's type.
	Type Type
	// Field is the JSON name of the bad field.
	Field string
	// Reason says what is wrong and how to fix it.
	Reason string
}

// Error formats the field, its type and the reason.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("event: %s: field %s %s", e.Type, e.Field, e.Reason)
}
