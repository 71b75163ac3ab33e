package resume_test

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/resume"
	"github.com/google/go-cmp/cmp"
)

// read passes the events of seqs through a cursor after after and returns
// what it yields: a Seq each, and "lost N" for an events_lost notice.
func read(after uint64, seqs ...uint64) []string {
	var got []string
	yield := func(ev event.Event, err error) bool {
		if e, ok := ev.Payload.(event.Error); ok {
			if ev.Type != event.TypeError || e.Code != "events_lost" || ev.RequestID != "r" {
				got = append(got, "bad notice")
			}
			got = append(got, "lost "+strconv.FormatUint(ev.Seq, 10))
			return true
		}
		got = append(got, strconv.FormatUint(ev.Seq, 10))
		return true
	}
	cur := resume.After(after)
	for _, s := range seqs {
		cur.Pass(event.Event{RequestID: "r", Seq: s}, yield)
	}
	return got
}

// TestPass skips what the reader has, and tells of dropped events and of
// events out of order before the event that shows them.
func TestPass(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after uint64
		seqs  []uint64
		want  []string
	}{
		{"from the start", 0, []uint64{1, 2, 3}, []string{"1", "2", "3"}},
		{"resumed", 2, []uint64{1, 2, 3, 4}, []string{"3", "4"}},
		{"repeats told", 0, []uint64{1, 2, 2, 3}, []string{"1", "2", "lost 1", "2", "3"}},
		{"dropped before the start", 0, []uint64{3, 4}, []string{"lost 2", "3", "4"}},
		{"dropped after resuming", 2, []uint64{5, 6}, []string{"lost 4", "5", "6"}},
		{"nothing dropped that the reader needs", 4, []uint64{3, 4, 5}, []string{"5"}},
		{"a gap later is a loss", 0, []uint64{1, 5}, []string{"1", "lost 4", "5"}},
		{"below the resume point later", 3, []uint64{4, 2, 5}, []string{"4", "5"}},
		// One event with the largest Seq hides none of those after it.
		{"largest seq", 0, []uint64{1, 2, math.MaxUint64, 3, 4}, []string{"1", "2", "lost 18446744073709551614",
			"18446744073709551615", "lost 2", "3", "4"}},
		{"largest seq first", 0, []uint64{math.MaxUint64, 1}, []string{"lost 18446744073709551614",
			"18446744073709551615", "lost 0", "1"}},
	} {
		if got := read(tc.after, tc.seqs...); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: yielded %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPassStops reports what was yielded and stops when yield does.
func TestPassStops(t *testing.T) {
	cur := resume.After(0)
	n := 0
	stop := func(event.Event, error) bool { n++; return false }
	if yielded, more := cur.Pass(event.Event{Seq: 3}, stop); yielded || more || n != 1 {
		t.Errorf("Pass with the notice refused = %v, %v after %d yields; want false, false after 1", yielded, more, n)
	}
	cur, n = resume.After(0), 0
	if yielded, more := cur.Pass(event.Event{Seq: 1}, stop); !yielded || more || n != 1 {
		t.Errorf("Pass with the event refused = %v, %v after %d yields; want true, false after 1", yielded, more, n)
	}
	if yielded, more := cur.Pass(event.Event{Seq: 1}, stop); yielded || more || n != 2 {
		t.Errorf("Pass with the notice of a repeat refused = %v, %v after %d yields; want false, false after 2", yielded, more, n)
	}
	cur, n = resume.After(3), 0
	if yielded, more := cur.Pass(event.Event{Seq: 2}, stop); yielded || !more || n != 0 {
		t.Errorf("Pass of an event the reader has = %v, %v after %d yields; want false, true and no yield", yielded, more, n)
	}
}

// TestUndecodable tells of an event that does not decode unless the
// reader has it.
func TestUndecodable(t *testing.T) {
	var got []event.Event
	yield := func(ev event.Event, _ error) bool { got = append(got, ev); return true }
	cur := resume.After(2)
	bad := errors.New("bad")
	cur.Undecodable(1, bad, yield)
	if len(got) != 0 {
		t.Fatalf("Undecodable of an event the reader has yielded %+v", got)
	}
	cur.Pass(event.Event{RequestID: "r", Seq: 3}, yield)
	cur.Undecodable(4, bad, yield)
	cur.Undecodable(0, bad, yield)
	cur.Pass(event.Event{RequestID: "r", Seq: 5}, yield)
	var seqs []string
	for _, ev := range got {
		s := strconv.FormatUint(ev.Seq, 10)
		if e, ok := ev.Payload.(event.Error); ok {
			if e.Code != "events_lost" || ev.RequestID != "r" {
				t.Errorf("notice %+v, want code events_lost of request r", ev)
			}
			s = "lost " + s
		}
		seqs = append(seqs, s)
	}
	if want := []string{"3", "lost 4", "lost 4", "5"}; !cmp.Equal(seqs, want) {
		t.Errorf("yielded %v, want %v", seqs, want)
	}
}
