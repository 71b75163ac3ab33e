// Package resume holds what the journals of event's subpackages (natsbus,
// postgres) do alike when they read a key's events to a reader that
// resumes after a sequence number: skip what the reader has, and tell it
// first when the retention dropped events it needed.
package resume

import (
	"strconv"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// Cursor is a reader's position in a key's events, which it reads oldest
// first. The zero Cursor is a reader that has nothing yet.
type Cursor struct {
	after, prev uint64
	started     bool
}

// After returns the cursor of a reader that has the events up to Seq
// after.
func After(after uint64) Cursor { return Cursor{after: after} }

// Pass yields ev to yield unless the reader has it: its Seq is at most
// the cursor's after, or at most that of an event yielded before. Before
// the first event read, when the key's oldest kept event is past after+1,
// Pass first yields an error event with code "events_lost". It reports
// whether it yielded ev, and whether to go on: false once yield returned
// false.
func (c *Cursor) Pass(ev event.Event, yield func(event.Event, error) bool) (yielded, more bool) {
	if !c.started && ev.Seq > c.after+1 && ev.Seq > 1 {
		if !yield(Lost(ev.RequestID, ev.Seq-1), nil) {
			return false, false
		}
	}
	c.started = true
	if ev.Seq <= c.after || ev.Seq <= c.prev {
		return false, true
	}
	c.prev = ev.Seq
	return true, yield(ev, nil)
}

// Lost returns the error event telling a reader of request requestID that
// the events up to Seq upTo are no longer kept. Its Time is now.
func Lost(requestID string, upTo uint64) event.Event {
	return event.Event{Type: event.TypeError, RequestID: requestID, Seq: upTo, Time: time.Now(), Payload: event.Error{
		Code:    "events_lost",
		Message: "events up to id " + strconv.FormatUint(upTo, 10) + " are no longer kept for this stream; some were missed, the rest follow",
	}}
}
