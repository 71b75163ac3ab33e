package chatbot

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
)

// endedStream returns a stream whose run has ended.
func endedStream(t *testing.T) *sse.Stream {
	t.Helper()
	s := sse.NewStream(sse.Config{Replay: 4})
	if err := s.Run(context.Background(), func(func(event.Event, error) bool) {}); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	return s
}

// TestResumableShareCountsLingering: a principal's share of the
// resumable turns counts its ended, lingering streams too (each holds a
// replay buffer); at its share, its own turn that ended first makes room.
// When the registry is full, the turn that ended first makes room, the
// requester's own before another principal's, even when that one ended
// earlier.
func TestResumableShareCountsLingering(t *testing.T) {
	sr := &streamRegistry{max: 5, linger: time.Hour}
	defer sr.close()
	noop := func(error) {}
	add := func(id, owner string, perOwner int, s *sse.Stream) error {
		return sr.add(id, owner, perOwner, s, noop)
	}
	end := func(id, owner string, s *sse.Stream) {
		if err := add(id, owner, 3, s); err != nil {
			t.Fatalf("add %s: %v", id, err)
		}
		sr.ended(id, s)
		time.Sleep(time.Millisecond) // distinct end times, in order
	}
	// Bob's ended turn is the oldest of all.
	end("bob/1", "bob", endedStream(t))
	// Mallory holds her share (3) with ended turns.
	for i := range 3 {
		end(fmt.Sprint("mallory/", i), "mallory", endedStream(t))
	}
	running := sse.NewStream(sse.Config{Replay: 4})
	if err := add("mallory/new", "mallory", 3, running); err != nil {
		t.Fatalf("mallory's turn at her share with ended turns: %v, want her oldest to make room", err)
	}
	if _, ok := sr.get("mallory/0"); ok {
		t.Error("mallory's turn that ended first is still kept")
	}
	if _, ok := sr.get("mallory/1"); !ok {
		t.Error("mallory's second ended turn was dropped")
	}
	// The registry holds bob/1, mallory/1, mallory/2, mallory/new; one
	// more of carol fills it.
	if err := add("carol/1", "carol", 3, sse.NewStream(sse.Config{Replay: 4})); err != nil {
		t.Fatal(err)
	}
	// Full: mallory's next turn makes room from her own ended turns, not
	// bob's older one.
	if err := add("mallory/next", "mallory", 10, sse.NewStream(sse.Config{Replay: 4})); err != nil {
		t.Fatalf("mallory's turn in a full registry: %v", err)
	}
	if _, ok := sr.get("bob/1"); !ok {
		t.Error("bob's ended turn made room for mallory's, who had ended turns of her own")
	}
	if _, ok := sr.get("mallory/1"); ok {
		t.Error("mallory's turn that ended first is still kept")
	}
	// Her last ended turn makes room once more; then her share holds
	// running turns only: refused.
	if err := add("mallory/x", "mallory", 3, sse.NewStream(sse.Config{Replay: 4})); err != nil {
		t.Fatalf("mallory at her share with one ended turn: %v", err)
	}
	if err := add("mallory/y", "mallory", 3, sse.NewStream(sse.Config{Replay: 4})); !errors.Is(err, errTooManyResumable) {
		t.Errorf("mallory beyond her share of running turns: %v, want errTooManyResumable", err)
	}
}
