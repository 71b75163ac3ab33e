package event

import "testing"

// TestRingGrowsInOrder fills a ring past its first buffer with its head
// moved (wrapped), then drains it: the events come out in order, and the
// ring never holds more than its capacity.
func TestRingGrowsInOrder(t *testing.T) {
	r := newRing(40)
	next, want := uint64(1), uint64(1)
	for range 10 { // move the head
		r.push(Event{Seq: next})
		next++
	}
	for range 5 {
		if ev := r.remove(0); ev.Seq != want {
			t.Fatalf("removed seq %d, want %d", ev.Seq, want)
		}
		want++
	}
	for r.n < r.cap() {
		r.push(Event{Seq: next})
		next++
	}
	if len(r.buf) != 40 || r.n != 40 {
		t.Fatalf("buffer %d, %d queued; want both 40", len(r.buf), r.n)
	}
	for _, ev := range r.drain(nil, true) {
		if ev.Seq != want {
			t.Fatalf("drained seq %d, want %d", ev.Seq, want)
		}
		want++
	}
	if want != next {
		t.Fatalf("drained up to %d, pushed up to %d", want, next)
	}
}
