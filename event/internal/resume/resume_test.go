package resume_test

import (
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
			got = append(got, "lost "+itoa(ev.Seq))
			return true
		}
		got = append(got, itoa(ev.Seq))
		return true
	}
	cur := resume.After(after)
	for _, s := range seqs {
		cur.Pass(event.Event{RequestID: "r", Seq: s}, yield)
	}
	return got
}

func itoa(n uint64) string { return string(rune('0' + n)) }

// TestPass skips what the reader has and repeats, and tells of dropped
// events once, before the first event read.
func TestPass(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after uint64
		seqs  []uint64
		want  []string
	}{
		{"from the start", 0, []uint64{1, 2, 3}, []string{"1", "2", "3"}},
		{"resumed", 2, []uint64{1, 2, 3, 4}, []string{"3", "4"}},
		{"repeats skipped", 0, []uint64{1, 2, 2, 1, 3}, []string{"1", "2", "3"}},
		{"dropped before the start", 0, []uint64{3, 4}, []string{"lost 2", "3", "4"}},
		{"dropped after resuming", 2, []uint64{5, 6}, []string{"lost 4", "5", "6"}},
		{"nothing dropped that the reader needs", 4, []uint64{3, 4, 5}, []string{"5"}},
		{"a gap later is no loss", 0, []uint64{1, 5}, []string{"1", "5"}},
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
	if yielded, more := cur.Pass(event.Event{Seq: 1}, stop); yielded || !more || n != 1 {
		t.Errorf("Pass of a repeat = %v, %v after %d yields; want false, true and no yield", yielded, more, n)
	}
}
