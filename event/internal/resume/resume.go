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

// MaxGap bounds how far past the largest Seq yielded one event may move
// a cursor's position once an event was read. An Emitter's coalescing
// leaves gaps of a few ids; an event numbered further on is shown, after
// an "events_lost" notice, but the position stays, so that one event with
// a wrong Seq (1<<63, say) does not hide every later one. Likewise
// ResyncAfter events in a row, each numbered one more than the last and
// all more than MaxGap below the position, make the cursor tell the reader
// and read on from them: the ids went back, and the position was wrong.
const (
	MaxGap      = 1 << 20
	ResyncAfter = 8
)

// Cursor is a reader's position in a key's events, which it reads oldest
// first and which the writer numbers 1, 2, 3... The zero Cursor is a
// reader that has nothing yet.
type Cursor struct {
	after     uint64 // the reader's resume point
	prev      uint64 // the largest Seq yielded, or after; it never goes down but on a resync
	started   bool   // an event was read
	requestID string // of the last event seen, or the key before
	repeats   uint64
	run       uint64 // skipped events in a row far below prev, each one more than the last
	lastSkip  uint64 // the Seq of the last of them
}

// After returns the cursor of a reader of key that has the events up to
// Seq after. Notices told before any event is read carry key as their
// RequestID.
func After(key string, after uint64) Cursor {
	return Cursor{after: after, prev: after, requestID: key}
}

// Pass yields ev to yield unless the reader has it: its Seq is at most
// the cursor's after (the resume point) or at most that of an event
// yielded before (a repeat, or an event out of order; [Cursor.Repeats]
// counts them). When the first event read is past after+1, the events
// between were dropped by the retention, and Pass first yields an error
// event with code "events_lost". A gap later is no loss: an [event.Emitter]
// that coalesces progress events removes the replaced one from its place
// and numbers the survivor later, so a gap is explained by the Coalesced
// count of an event after it, which Pass cannot wait for; the journal
// tells of losses in the middle of a read with [Lost]. A gap later larger
// than [MaxGap] is told and does not move the position. Pass reports
// whether it yielded ev, and whether to go on: false once yield returned
// false.
func (c *Cursor) Pass(ev event.Event, yield func(event.Event, error) bool) (yielded, more bool) {
	if ev.RequestID != "" {
		c.requestID = ev.RequestID
	}
	first := !c.started
	c.started = true
	if ev.Seq <= c.prev {
		if ev.Seq <= c.after {
			return false, true
		}
		if !c.resync(ev.Seq) {
			c.repeats++
			return false, true
		}
		if !yield(c.notice("event ids went back from "+strconv.FormatUint(c.prev, 10)+" to "+strconv.FormatUint(ev.Seq, 10)+
			"; the stream is read on from there, and the events just before were missed"), nil) {
			return false, false
		}
		c.prev = ev.Seq
		return true, yield(ev, nil)
	}
	c.run = 0
	if first && ev.Seq-1 > c.prev {
		if !yield(Lost(c.requestID, ev.Seq-1), nil) {
			return false, false
		}
	} else if !first && ev.Seq-c.prev > MaxGap {
		if !yield(c.far(ev.Seq), nil) {
			return false, false
		}
		return true, yield(ev, nil)
	}
	c.prev = ev.Seq
	return true, yield(ev, nil)
}

// resync counts seq, skipped as at most the position, and reports whether
// it ends a run of ResyncAfter events far below the position, each one
// more than the last.
func (c *Cursor) resync(seq uint64) bool {
	if c.prev-seq <= MaxGap {
		c.run = 0
		return false
	}
	if c.run > 0 && seq == c.lastSkip+1 {
		c.run++
	} else {
		c.run = 1
	}
	c.lastSkip = seq
	if c.run < ResyncAfter {
		return false
	}
	c.run = 0
	return true
}

// far returns the notice of an event numbered seq, more than MaxGap past
// the position.
func (c *Cursor) far(seq uint64) event.Event {
	return c.notice("event id " + strconv.FormatUint(seq, 10) + " is more than " + strconv.FormatUint(MaxGap, 10) +
		" past the last (" + strconv.FormatUint(c.prev, 10) + "); it is shown, and the stream is read on from " + strconv.FormatUint(c.prev, 10))
}

// notice returns an error event with code "events_lost", message msg and
// the Seq of the position.
func (c *Cursor) notice(msg string) event.Event {
	return event.Event{Type: event.TypeError, RequestID: c.requestID, Seq: c.prev, Time: time.Now(), Payload: event.Error{
		Code: "events_lost", Message: msg,
	}}
}

// Repeats returns how many events past the resume point Pass skipped
// because an event with the same or a larger Seq was yielded before.
func (c *Cursor) Repeats() uint64 { return c.repeats }

// Undecodable tells the reader that a stored event could not be decoded
// (err), with an error event with code "events_lost", unless the reader
// has it: seq, when the journal knows it without decoding (0 when not),
// is at most the cursor's after or at most that of an event yielded or
// told of before. A known seq past after+1 at the first event read is
// preceded by the notice of the events dropped before it, as in Pass; a
// known seq later more than [MaxGap] past the position is told and does
// not move it. A notice for an unknown seq carries the Seq of the last
// event yielded (after, at first), so a reader resuming from it reads on
// from there. It reports whether to go on.
func (c *Cursor) Undecodable(seq uint64, err error, yield func(event.Event, error) bool) bool {
	if seq != 0 && seq <= c.prev {
		return true
	}
	first := !c.started
	c.started = true
	id := "an event"
	at := c.prev
	if seq != 0 {
		id = "event id " + strconv.FormatUint(seq, 10)
		switch {
		case first && seq-1 > c.prev:
			if !yield(Lost(c.requestID, seq-1), nil) {
				return false
			}
			c.prev = seq
		case !first && seq-c.prev > MaxGap:
			if !yield(c.far(seq), nil) {
				return false
			}
		default:
			c.prev = seq
		}
		at = c.prev
	}
	return yield(event.Event{Type: event.TypeError, RequestID: c.requestID, Seq: at, Time: time.Now(), Payload: event.Error{
		Code:    "events_lost",
		Message: id + " of this stream is not a valid event (" + err.Error() + "); it was missed, the rest follow",
	}}, nil)
}

// Dropped tells the reader, with an error event with code "events_lost",
// that the journal found events dropped by its retention in the middle of
// a read, before the event numbered next (0 when not known), unless the
// reader has every event before next: the notice carries the Seq before
// next, or the position when next is not known. The position does not
// move. It reports whether to go on.
func (c *Cursor) Dropped(next uint64, yield func(event.Event, error) bool) bool {
	upTo := c.prev
	if next != 0 {
		if next-1 <= c.prev {
			return true
		}
		upTo = next - 1
	}
	return yield(Lost(c.requestID, upTo), nil)
}

// Lost returns the error event telling a reader of request requestID that
// the events up to Seq upTo are no longer kept. Its Time is now.
func Lost(requestID string, upTo uint64) event.Event {
	return event.Event{Type: event.TypeError, RequestID: requestID, Seq: upTo, Time: time.Now(), Payload: event.Error{
		Code:    "events_lost",
		Message: "events up to id " + strconv.FormatUint(upTo, 10) + " are no longer kept for this stream; some were missed, the rest follow",
	}}
}
