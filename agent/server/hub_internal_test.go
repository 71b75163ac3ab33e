package server

import "testing"

func ids(evs []Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// TestHubSince checks what a stream may take from the hub instead of the
// store: only events published while the run was watched, from the one
// after the stream's last, with consecutive ids; nil whenever one may be
// missing, so that the stream reads the store.
func TestHubSince(t *testing.T) {
	h := &hub{runs: map[string]*runHub{}}
	h.publish("r", Event{ID: 0}) // not watched: not kept
	ch, release := h.watch("r")
	if evs := h.since("r", -1); evs != nil {
		t.Fatalf("since(-1) before any event published while watched: %v; want nil", ids(evs))
	}
	for id := range int64(3) {
		h.publish("r", Event{ID: id})
	}
	select {
	case <-ch:
	default:
		t.Fatal("publish did not wake the watcher")
	}
	if got := ids(h.since("r", -1)); len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("since(-1) = %v; want 0..2", got)
	}
	if got := ids(h.since("r", 0)); len(got) != 2 || got[0] != 1 {
		t.Fatalf("since(0) = %v; want 1, 2", got)
	}
	if evs := h.since("r", 2); evs != nil {
		t.Fatalf("since(2) = %v; want nil (nothing newer)", ids(evs))
	}
	h.publish("r", Event{ID: 4}) // 3 came from elsewhere
	if evs := h.since("r", 2); evs != nil {
		t.Fatalf("since(2) with 3 missing = %v; want nil", ids(evs))
	}
	if got := ids(h.since("r", 0)); len(got) != 2 || got[1] != 2 {
		t.Fatalf("since(0) with a gap after 2 = %v; want 1, 2", got)
	}
	for id := int64(5); id < 5+2*maxTail; id++ {
		h.publish("r", Event{ID: id})
	}
	if n := len(h.runs["r"].tail); n != maxTail {
		t.Fatalf("tail holds %d events; want the bound %d", n, maxTail)
	}
	if evs := h.since("r", 5); evs != nil {
		t.Fatalf("since(5) after 6 fell out of the tail = %v; want nil", ids(evs))
	}
	last := int64(5 + 2*maxTail - 1)
	if got := ids(h.since("r", last-2)); len(got) != 2 || got[1] != last {
		t.Fatalf("since(%d) = %v; want the last two", last-2, got)
	}
	release()
	if _, ok := h.runs["r"]; ok {
		t.Fatal("the run's entry outlived its last watch")
	}
	if evs := h.since("r", last-2); evs != nil {
		t.Fatalf("since after the watch ended = %v; want nil", ids(evs))
	}
}
