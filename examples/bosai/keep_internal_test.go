package bosai

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// threads counts the threads of a checkpoint.Memory (deleting them all).
func threads(t *testing.T, s checkpoint.Saver) int {
	t.Helper()
	p, err := checkpoint.Prune(context.Background(), s, checkpoint.Retention{MaxIdle: time.Nanosecond, Now: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return p.Threads
}

// TestOwnSaverBounded: the Bot's own in-memory saver keeps the threads of
// the KeepRuns latest finished runs, and none of a run stopped before its
// response, however many runs it serves.
func TestOwnSaverBounded(t *testing.T) {
	const keep = 3
	b, err := New(Config{Offline: true, KeepRuns: keep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	if b.saver == nil {
		t.Fatal("no own saver with Checkpointer nil")
	}
	req := Request{Question: "What is 12 * 49?"}
	var asked []string
	for i := range 2*keep + 1 {
		resp, err := b.Ask(t.Context(), req)
		if err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
		asked = append(asked, resp.Thread)
		// A run the caller stops after its first event: its thread is
		// never returned.
		for _, err := range b.Run(t.Context(), req) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := b.State(t.Context(), asked[0]); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("State of the first of %d runs with KeepRuns %d: %v, want ErrNotFound", len(asked), keep, err)
	}
	if st, err := b.State(t.Context(), asked[len(asked)-1]); err != nil || st.Response.Answer == "" {
		t.Errorf("State of the latest run: %v, answer %q", err, st.Response.Answer)
	}
	if n := threads(t, b.saver); n != keep {
		t.Errorf("own saver holds %d threads after %d finished and %d stopped runs, want KeepRuns = %d", n, len(asked), len(asked), keep)
	}
}

// TestGivenSaverUntouched: a Config.Checkpointer is the caller's: the Bot
// deletes none of its threads.
func TestGivenSaverUntouched(t *testing.T) {
	saver := checkpoint.NewMemory()
	b, err := New(Config{Offline: true, Checkpointer: saver, KeepRuns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	for range 3 {
		if _, err := b.Ask(t.Context(), Request{Question: "What is 12 * 49?"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := threads(t, saver); n != 3 {
		t.Errorf("given saver holds %d threads after 3 runs, want 3", n)
	}
}

// TestKeepRunsDefault: the zero Config bounds the own saver by
// DefaultKeepRuns, and a negative KeepRuns keeps none.
func TestKeepRunsDefault(t *testing.T) {
	for keepRuns, want := range map[int]int{0: DefaultKeepRuns, -1: 0, 5: 5} {
		b, err := New(Config{Offline: true, KeepRuns: keepRuns})
		if err != nil {
			t.Fatal(err)
		}
		if b.keep != want {
			t.Errorf("KeepRuns %d: bound %d, want %d", keepRuns, b.keep, want)
		}
		_ = b.Close(context.Background())
	}
}
