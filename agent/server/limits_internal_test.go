package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

type held struct {
	N int `json:"n"`
}

// TestSweepStopsAtMaxSweptRuns queues five runs no instance executes (as
// after a restart) and sweeps with Config.MaxSweptRuns 2: the sweep starts
// two, and a sweep while both execute claims none; once they end, the
// next sweeps run the rest.
func TestSweepStopsAtMaxSweptRuns(t *testing.T) {
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now().Add(-time.Second)
	const queued = 5
	for i := range queued {
		tid, rid := fmt.Sprintf("t%d", i), fmt.Sprintf("r%d", i)
		if err := st.CreateThread(ctx, &Thread{ID: tid, CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateRun(ctx, &Run{ID: rid, ThreadID: tid, AssistantID: AssistantID("hold"), CreatedAt: at, UpdatedAt: at, Status: RunPending,
			Metadata: map[string]any{}, Kwargs: json.RawMessage(`{"assistant_id":"hold","input":{"n":1}}`), MultitaskStrategy: "enqueue"}); err != nil {
			t.Fatal(err)
		}
	}
	// The background sweeper never fires: the test sweeps.
	s, err := New(Config{Store: st, SweepInterval: time.Hour, MaxSweptRuns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before Close, which waits for the runs
	var mu sync.Mutex
	running, most := 0, 0
	entered := make(chan struct{}, queued)
	g := graph.New[held]()
	g.AddNode("hold", func(ctx context.Context, h held) (graph.Update[held], error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		entered <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return graph.Update[held]{}, nil
	})
	g.AddEdge(graph.START, "hold").AddEdge("hold", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(s.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(s, "hold", app); err != nil {
		t.Fatal(err)
	}
	pending := func() int {
		n := 0
		for i := range queued {
			r, err := st.Run(ctx, fmt.Sprintf("r%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == RunPending {
				n++
			}
		}
		return n
	}
	s.sweep()
	<-entered
	<-entered
	if n := pending(); n != queued-2 {
		t.Fatalf("after a sweep with MaxSweptRuns 2, %d runs are pending; want %d", n, queued-2)
	}
	s.sweep()
	if n := pending(); n != queued-2 {
		t.Fatalf("a sweep while 2 runs (MaxSweptRuns) execute claimed more: %d pending; want %d", n, queued-2)
	}
	free()
	deadline := time.Now().Add(10 * time.Second)
	for {
		done := 0
		for i := range queued {
			if r, err := st.Run(ctx, fmt.Sprintf("r%d", i)); err == nil && r.Status == RunSuccess {
				done++
			}
		}
		if done == queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs ended", done, queued)
		}
		s.sweep()
		time.Sleep(time.Millisecond)
	}
	if most > 2 {
		t.Fatalf("%d runs executed at once; MaxSweptRuns is 2", most)
	}
}

// TestCheckModes: stream modes given more than once (repeated
// stream_mode query keys on a join) are kept once each, in the order
// first given, so that a stream matches each event against each mode
// once; an unknown mode is refused naming stream_mode.
func TestCheckModes(t *testing.T) {
	in := []string{"updates"}
	for range 1000 {
		in = append(in, "values", "updates")
	}
	got, err := checkModes(append(in, "custom"))
	if err != nil || !slices.Equal(got, []string{"updates", "values", "custom"}) {
		t.Errorf("checkModes of 2002 modes: %v, %v; want [updates values custom]", got, err)
	}
	if got, err := checkModes(nil); err != nil || len(got) != 0 {
		t.Errorf("checkModes(nil): %v, %v; want none", got, err)
	}
	if _, err := checkModes([]string{"values", "Values"}); err == nil || !strings.Contains(err.Error(), "stream_mode") {
		t.Errorf("checkModes of an unknown mode: %v; want an error naming stream_mode", err)
	}
}
