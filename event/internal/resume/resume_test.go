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
	return readCoalesced(after, nil, seqs...)
}

// readCoalesced is read with the events' Coalesced counts taken from
// coalesced by Seq.
func readCoalesced(after uint64, coalesced map[uint64]int, seqs ...uint64) []string {
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
	cur := resume.After("r", after)
	for _, s := range seqs {
		cur.Pass(event.Event{RequestID: "r", Seq: s, Coalesced: coalesced[s]}, yield)
	}
	return got
}

// TestPass skips what the reader has, repeats and events out of order, and
// tells of events dropped before the first one read.
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
		// A replayed copy of event 2 after 10 is neither shown again nor
		// taken for a loss of 3..10.
		{"replayed copy skipped", 0, []uint64{1, 2, 10, 2, 11}, []string{"1", "2", "10", "11"}},
		{"dropped before the start", 0, []uint64{3, 4}, []string{"lost 2", "3", "4"}},
		{"dropped after resuming", 2, []uint64{5, 6}, []string{"lost 4", "5", "6"}},
		{"nothing dropped that the reader needs", 4, []uint64{3, 4, 5}, []string{"5"}},
		{"a gap later is no loss", 0, []uint64{1, 5}, []string{"1", "5"}},
		{"a gap later after resuming is no loss", 2, []uint64{3, 5, 6}, []string{"3", "5", "6"}},
		{"below the resume point later", 3, []uint64{4, 2, 5}, []string{"4", "5"}},
		// One event with a wrong Seq far on is shown after a notice and
		// hides nothing.
		{"largest seq", 0, []uint64{1, 2, math.MaxUint64, 3}, []string{"1", "2", "lost 2", "18446744073709551615", "3"}},
		{"gap of MaxGap", 0, []uint64{1, 1 + resume.MaxGap, 2 + resume.MaxGap}, []string{"1", "1048577", "1048578"}},
		// A wrong Seq first: the ids that follow it in a row are read on
		// from, after a notice, once ResyncAfter came.
		{"resync after a wrong first seq", 0, []uint64{math.MaxUint64, 1, 2, 3, 4, 5, 6, 7, 8, 9},
			[]string{"lost 18446744073709551614", "18446744073709551615", "lost 18446744073709551615", "8", "9"}},
		// Copies replayed close below the position are only repeats.
		{"replay near the position", 0, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
			[]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}},
	} {
		if got := read(tc.after, tc.seqs...); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: yielded %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPassCoalesced takes no gap after the first event read for a loss:
// the Emitter removed coalesced events from their place and the survivor,
// with its Coalesced count, comes later.
func TestPassCoalesced(t *testing.T) {
	// Progress event 2 was replaced by 4 (Coalesced 1), which came after 3.
	got := readCoalesced(0, map[uint64]int{4: 1}, 1, 3, 4, 5)
	if want := []string{"1", "3", "4", "5"}; !cmp.Equal(got, want) {
		t.Errorf("yielded %v, want %v", got, want)
	}
	got = readCoalesced(1, map[uint64]int{5: 2}, 2, 5, 6)
	if want := []string{"2", "5", "6"}; !cmp.Equal(got, want) {
		t.Errorf("resumed: yielded %v, want %v", got, want)
	}
}

// TestUndecodableFirst tells of the events the retention dropped before
// an undecodable first event, as Pass does.
func TestUndecodableFirst(t *testing.T) {
	var got []string
	yield := func(ev event.Event, _ error) bool {
		got = append(got, "lost "+strconv.FormatUint(ev.Seq, 10))
		return true
	}
	cur := resume.After("r", 1)
	cur.Undecodable(4, errors.New("bad"), yield)
	if want := []string{"lost 3", "lost 4"}; !cmp.Equal(got, want) {
		t.Errorf("yielded %v, want %v", got, want)
	}
}

// TestPassStops reports what was yielded and stops when yield does.
func TestPassStops(t *testing.T) {
	cur := resume.After("r", 0)
	n := 0
	stop := func(event.Event, error) bool { n++; return false }
	if yielded, more := cur.Pass(event.Event{Seq: 3}, stop); yielded || more || n != 1 {
		t.Errorf("Pass with the notice refused = %v, %v after %d yields; want false, false after 1", yielded, more, n)
	}
	cur, n = resume.After("r", 0), 0
	if yielded, more := cur.Pass(event.Event{Seq: 1}, stop); !yielded || more || n != 1 {
		t.Errorf("Pass with the event refused = %v, %v after %d yields; want true, false after 1", yielded, more, n)
	}
	if yielded, more := cur.Pass(event.Event{Seq: 1}, stop); yielded || !more || n != 1 || cur.Repeats() != 1 {
		t.Errorf("Pass of a repeat = %v, %v after %d yields, %d repeats; want false, true, no yield, 1 repeat", yielded, more, n, cur.Repeats())
	}
	cur, n = resume.After("r", 3), 0
	if yielded, more := cur.Pass(event.Event{Seq: 2}, stop); yielded || !more || n != 0 {
		t.Errorf("Pass of an event the reader has = %v, %v after %d yields; want false, true and no yield", yielded, more, n)
	}
}

// TestUndecodable tells of an event that does not decode unless the
// reader has it.
func TestUndecodable(t *testing.T) {
	var got []event.Event
	yield := func(ev event.Event, _ error) bool { got = append(got, ev); return true }
	cur := resume.After("r", 2)
	bad := errors.New("bad")
	cur.Undecodable(1, bad, yield)
	if len(got) != 0 {
		t.Fatalf("Undecodable of an event the reader has yielded %+v", got)
	}
	cur.Pass(event.Event{RequestID: "r", Seq: 3}, yield)
	cur.Undecodable(4, bad, yield)
	cur.Undecodable(4, bad, yield) // a copy: told once
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

// TestUndecodableBeforeEvents names the key in notices told before any
// event, and takes an undecodable event with no known Seq for the first
// read: the next is no loss.
func TestUndecodableBeforeEvents(t *testing.T) {
	var got []event.Event
	yield := func(ev event.Event, _ error) bool { got = append(got, ev); return true }
	cur := resume.After("key1", 0)
	cur.Undecodable(0, errors.New("bad"), yield)
	cur.Pass(event.Event{RequestID: "key1", Seq: 2}, yield)
	if len(got) != 2 || got[0].RequestID != "key1" || got[1].Payload != nil {
		t.Fatalf("yielded %+v, want the notice of request key1 then event 2", got)
	}
}

// TestUndecodableFar does not move the position for a Seq header far past
// it.
func TestUndecodableFar(t *testing.T) {
	var seqs []uint64
	yield := func(ev event.Event, _ error) bool { seqs = append(seqs, ev.Seq); return true }
	cur := resume.After("r", 0)
	cur.Pass(event.Event{RequestID: "r", Seq: 1}, yield)
	cur.Undecodable(math.MaxUint64, errors.New("bad"), yield)
	if yielded, _ := cur.Pass(event.Event{RequestID: "r", Seq: 2}, yield); !yielded {
		t.Errorf("event 2 after an undecodable one numbered %d was skipped; yielded %v", uint64(math.MaxUint64), seqs)
	}
}

// TestDropped tells of events dropped in the middle of a read unless the
// reader has them, without moving the position.
func TestDropped(t *testing.T) {
	var got []string
	yield := func(ev event.Event, _ error) bool {
		got = append(got, strconv.FormatUint(ev.Seq, 10))
		return true
	}
	cur := resume.After("r", 3)
	cur.Dropped(3, yield) // the reader has 1 and 2
	cur.Pass(event.Event{RequestID: "r", Seq: 4}, yield)
	cur.Dropped(7, yield)
	cur.Dropped(0, yield)
	cur.Pass(event.Event{RequestID: "r", Seq: 5}, yield)
	if want := []string{"4", "6", "4", "5"}; !cmp.Equal(got, want) {
		t.Errorf("yielded %v, want %v", got, want)
	}
}
