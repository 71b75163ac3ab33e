package server

import "testing"

func ids(evs []Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// since is hub.since without its channel.
func since(h *hub, runID string, after int64) []Event {
	evs, _ := h.since(runID, after)
	return evs
}

// TestHubSince checks what a stream may take from the hub instead of the
// store: only events published while the run was watched, from the one
// after the stream's last, with consecutive ids; nil whenever one may be
// missing, so that the stream reads the store.
func TestHubSince(t *testing.T) {
	h := &hub{runs: map[string]*runHub{}}
	h.publish("r", Event{ID: 0}) // not watched: not kept
	ch, release := h.watch("r", "")
	if evs := since(h, "r", -1); evs != nil {
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
	if got := ids(since(h, "r", -1)); len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("since(-1) = %v; want 0..2", got)
	}
	if got := ids(since(h, "r", 0)); len(got) != 2 || got[0] != 1 {
		t.Fatalf("since(0) = %v; want 1, 2", got)
	}
	if evs := since(h, "r", 2); evs != nil {
		t.Fatalf("since(2) = %v; want nil (nothing newer)", ids(evs))
	}
	h.publish("r", Event{ID: 4}) // 3 came from elsewhere
	if evs := since(h, "r", 2); evs != nil {
		t.Fatalf("since(2) with 3 missing = %v; want nil", ids(evs))
	}
	if got := ids(since(h, "r", 0)); len(got) != 2 || got[1] != 2 {
		t.Fatalf("since(0) with a gap after 2 = %v; want 1, 2", got)
	}
	for id := int64(5); id < 5+2*maxTail; id++ {
		h.publish("r", Event{ID: id})
	}
	if n := len(h.runs["r"].tail); n != maxTail {
		t.Fatalf("tail holds %d events; want the bound %d", n, maxTail)
	}
	if evs := since(h, "r", 5); evs != nil {
		t.Fatalf("since(5) after 6 fell out of the tail = %v; want nil", ids(evs))
	}
	last := int64(5 + 2*maxTail - 1)
	if got := ids(since(h, "r", last-2)); len(got) != 2 || got[1] != last {
		t.Fatalf("since(%d) = %v; want the last two", last-2, got)
	}
	release()
	if _, ok := h.runs["r"]; ok {
		t.Fatal("the run's entry outlived its last watch")
	}
	if evs := since(h, "r", last-2); evs != nil {
		t.Fatalf("since after the watch ended = %v; want nil", ids(evs))
	}
}

// TestHubSinceChannel checks the channel since returns with the events: it
// is closed by the run's next change after them (an event or a
// notification), not by the events it came with, which a watcher has.
func TestHubSinceChannel(t *testing.T) {
	h := &hub{runs: map[string]*runHub{}}
	if evs, ch := h.since("r", -1); evs != nil || ch != nil {
		t.Fatalf("since on a run nobody watches = %v, %v; want nil, nil", evs, ch)
	}
	ch, release := h.watch("r", "")
	defer release()
	h.publish("r", Event{ID: 0})
	<-ch
	// Event 1 comes after the wake-up and before the read: the read
	// returns it.
	h.publish("r", Event{ID: 1})
	evs, changed := h.since("r", -1)
	if got := ids(evs); len(got) != 2 {
		t.Fatalf("since(-1) = %v; want 0, 1", got)
	}
	select {
	case <-changed:
		t.Fatal("the channel since returned with events 0 and 1 is closed: the watcher would wake for events it has")
	default:
	}
	h.publish("r", Event{ID: 2})
	select {
	case <-changed:
	default:
		t.Fatal("the next event did not close the channel since returned")
	}
	evs, changed = h.since("r", 2)
	if evs != nil || changed == nil {
		t.Fatalf("since(2) with nothing newer = %v, %v; want no events and a channel", ids(evs), changed)
	}
	h.notify("r")
	select {
	case <-changed:
	default:
		t.Fatal("a notification did not close the channel since returned")
	}
}

// TestHubPublishAllocs checks that a watched run's first events take one
// allocation for the tail, and one channel each to wake the watchers.
func TestHubPublishAllocs(t *testing.T) {
	h := &hub{runs: map[string]*runHub{}}
	_, release := h.watch("r", "")
	defer release()
	n := testing.AllocsPerRun(100, func() {
		h.runs["r"].tail = nil
		for id := range int64(4) {
			h.publish("r", Event{ID: id, Name: "values"})
		}
	})
	if n > 5 {
		t.Errorf("publishing 4 events allocates %v times, want at most 5 (a tail, 4 channels)", n)
	}
}
