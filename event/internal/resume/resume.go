// Package resume holds what the journals of event's subpackages (natsbus,
// postgres) do alike when they read a key's events to a reader that
// resumes after a sequence number: skip what the reader has (and copies
// and events out of order), and tell it when events it needed are
// missing: dropped by the retention before it read them, or not
// decodable.
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
	prev      uint64 // the largest Seq yielded, or after; it never goes down
	started   bool   // an event was read
	requestID string // of the last event seen
	repeats   uint64
}

// After returns the cursor of a reader that has the events up to Seq
// after.
func After(after uint64) Cursor { return Cursor{after: after, prev: after} }

// Pass yields ev to yield unless the reader has it: its Seq is at most
// the cursor's after (the resume point) or at most that of an event
// yielded before (a repeat, or an event out of order; [Cursor.Repeats]
// counts them). When the first event read is past after+1, the events
// between were dropped by the retention, and Pass first yields an error
// event with code "events_lost". A gap later is no loss: an [event.Emitter]
// that coalesces progress events removes the replaced one from its place
// and numbers the survivor later, so a gap is explained by the Coalesced
// count of an event after it, which Pass cannot wait for. Pass reports
// whether it yielded ev, and whether to go on: false once yield returned
// false.
func (c *Cursor) Pass(ev event.Event, yield func(event.Event, error) bool) (yielded, more bool) {
	c.requestID = ev.RequestID
	first := !c.started
	c.started = true
	if ev.Seq <= c.prev {
		if ev.Seq > c.after {
			c.repeats++
		}
		return false, true
	}
	if first && ev.Seq-1 > c.prev {
		if !yield(Lost(ev.RequestID, ev.Seq-1), nil) {
			return false, false
		}
	}
	c.prev = ev.Seq
	return true, yield(ev, nil)
}

// Repeats returns how many events past the resume point Pass skipped
// because an event with the same or a larger Seq was yielded before.
func (c *Cursor) Repeats() uint64 { return c.repeats }

// Undecodable tells the reader that a stored event could not be decoded
// (err), with an error event with code "events_lost", unless the reader
// has it: seq, when the journal knows it without decoding (0 when not),
// is at most the cursor's after or at most that of an event yielded or
// told of before. A known seq past after+1 at the first event read is
// preceded by the notice of the events dropped before it, as in Pass. A
// notice for an unknown seq carries the Seq of the last
// event yielded (after, at first), so a reader resuming from it reads on
// from there. It reports whether to go on.
func (c *Cursor) Undecodable(seq uint64, err error, yield func(event.Event, error) bool) bool {
	if seq != 0 && seq <= c.prev {
		return true
	}
	id := "an event"
	at := c.prev
	if seq != 0 {
		if !c.started && seq-1 > c.prev {
			if !yield(Lost(c.requestID, seq-1), nil) {
				return false
			}
		}
		id, at = "event id "+strconv.FormatUint(seq, 10), seq
		c.prev, c.started = seq, true
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
