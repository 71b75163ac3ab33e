// Package resume holds what the journals of event's subpackages (natsbus,
// postgres) do alike when they read a key's events to a reader that
// resumes after a sequence number: skip what the reader has, and tell it
// when events it needed are missing: dropped by the retention before it
// read them, not decodable, or out of order.
package resume

import (
	"strconv"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// Cursor is a reader's position in a key's events, which it reads oldest
// first and which the writer numbers 1, 2, 3... The zero Cursor is a
// reader that has nothing yet.
type Cursor struct {
	after     uint64 // the reader's resume point
	prev      uint64 // the Seq of the last event yielded, or after
	requestID string // of the last event seen
}

// After returns the cursor of a reader that has the events up to Seq
// after.
func After(after uint64) Cursor { return Cursor{after: after, prev: after} }

// Pass yields ev to yield unless the reader has it: its Seq is at most
// the cursor's after (the resume point). Every other event is yielded,
// once an event with code "events_lost" has told the reader of what does
// not follow from the event yielded before (after, at first): a Seq
// past the next one (events were dropped, or the writer skipped some), or
// one at or below it (out of order: the ids are no longer reliable to
// resume from). Pass reports whether it yielded ev, and whether to go
// on: false once yield returned false.
func (c *Cursor) Pass(ev event.Event, yield func(event.Event, error) bool) (yielded, more bool) {
	c.requestID = ev.RequestID
	if ev.Seq <= c.after {
		return false, true
	}
	switch {
	case ev.Seq-1 > c.prev:
		if !yield(Lost(ev.RequestID, ev.Seq-1), nil) {
			return false, false
		}
	case ev.Seq <= c.prev:
		if !yield(outOfOrder(ev.RequestID, ev.Seq, c.prev), nil) {
			return false, false
		}
	}
	c.prev = ev.Seq
	return true, yield(ev, nil)
}

// Undecodable tells the reader that a stored event could not be decoded
// (err), with an error event with code "events_lost", unless the reader
// has it: seq, when the journal knows it without decoding (0 when not),
// is at most the cursor's after. It reports whether to go on.
func (c *Cursor) Undecodable(seq uint64, err error, yield func(event.Event, error) bool) bool {
	if seq != 0 && seq <= c.after {
		return true
	}
	id := "an event"
	at := c.prev
	if seq != 0 {
		id, at = "event id "+strconv.FormatUint(seq, 10), seq
		if seq > c.prev {
			c.prev = seq
		}
	}
	return yield(event.Event{Type: event.TypeError, RequestID: c.requestID, Seq: at, Time: time.Now(), Payload: event.Error{
		Code:    "events_lost",
		Message: id + " of this stream is not a valid event (" + err.Error() + "); it was missed, the rest follow",
	}}, nil)
}

// Lost returns the error event telling a reader of request requestID that
// the events up to Seq upTo are no longer kept. Its Time is now.
func Lost(requestID string, upTo uint64) event.Event {
	return event.Event{Type: event.TypeError, RequestID: requestID, Seq: upTo, Time: time.Now(), Payload: event.Error{
		Code:    "events_lost",
		Message: "events up to id " + strconv.FormatUint(upTo, 10) + " are no longer kept for this stream; some were missed, the rest follow",
	}}
}

// outOfOrder returns the error event telling a reader that the event
// with Seq seq came after the one with Seq prev.
func outOfOrder(requestID string, seq, prev uint64) event.Event {
	return event.Event{Type: event.TypeError, RequestID: requestID, Seq: seq - 1, Time: time.Now(), Payload: event.Error{
		Code: "events_lost",
		Message: "event id " + strconv.FormatUint(seq, 10) + " came after id " + strconv.FormatUint(prev, 10) +
			", out of order; events may have been missed, the rest follow as stored",
	}}
}
