package server_test

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// parallelAsk registers graph "pask" on ts: START fans out to a and b,
// which each ask an interrupt and append "<node>:<answer>", then work,
// which the first time it runs says so on entered and waits until its run
// is cancelled, and otherwise appends "worked".
func parallelAsk(t *testing.T, ts *testServer) (entered <-chan struct{}) {
	t.Helper()
	in := make(chan struct{}, 1)
	var blocked atomic.Bool
	g := graph.New[chat]()
	for _, name := range []string{"a", "b"} {
		g.AddNode(name, func(ctx context.Context, s chat) (graph.Update[chat], error) {
			answer, err := graph.Interrupt[string](ctx, "answer "+name+"?")
			if err != nil {
				return graph.Update[chat]{}, err
			}
			return chatMessages.Set([]msg{{Type: "ai", Content: name + ":" + answer}}), nil
		})
		g.AddEdge(graph.START, name).AddEdge(name, "work")
	}
	g.AddNode("work", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if blocked.CompareAndSwap(false, true) {
			in <- struct{}{}
			<-ctx.Done()
			return graph.Update[chat]{}, ctx.Err()
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "worked"}}), nil
	})
	g.AddEdge("work", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(ts.Server, "pask", app); err != nil {
		t.Fatal(err)
	}
	return in
}

// TestParallelPausedRollback: a run that resumes a paused step of two
// tasks and is rolled back leaves the paused checkpoint as it was: the
// writes of the tasks the run finished (saved one by one, durability
// sync or async) do not stay with the checkpoint the rollback returns to,
// so a run resuming the head with other answers takes those answers, on
// every store.
func TestParallelPausedRollback(t *testing.T) {
	for name, open := range backendConfigs {
		for _, durability := range []string{"sync", "async"} {
			t.Run(name+"/"+durability, func(t *testing.T) {
				ts := newTestServer(t, open(t))
				entered := parallelAsk(t, ts)
				tid := newThread(t, ts.URL)
				runs := ts.URL + "/threads/" + tid + "/runs"
				if code := do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "pask", "input": map[string]any{}}, nil, nil); code != 200 {
					t.Fatalf("first run: %d", code)
				}
				var st struct {
					Interrupts []server.Interrupt `json:"interrupts"`
					Checkpoint struct {
						CheckpointID string `json:"checkpoint_id"`
					} `json:"checkpoint"`
				}
				do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &st)
				if len(st.Interrupts) != 2 {
					t.Fatalf("interrupts after the first run: %+v; want two", st.Interrupts)
				}
				paused := st.Checkpoint.CheckpointID
				answers := func(v string) map[string]any {
					m := map[string]any{}
					for _, in := range st.Interrupts {
						m[in.ID] = v
					}
					return m
				}
				var run struct {
					RunID string `json:"run_id"`
				}
				if code := do(t, "POST", runs, map[string]any{"assistant_id": "pask", "durability": durability, "command": map[string]any{"resume": answers("one")}}, nil, &run); code != 200 {
					t.Fatalf("resuming run: %d", code)
				}
				<-entered
				if code := do(t, "POST", runs+"/"+run.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
					t.Fatalf("rollback: %d", code)
				}
				if h := readHeadState(t, ts.URL, tid); h.Checkpoint.CheckpointID != paused {
					t.Fatalf("checkpoint after the rollback: %s; want the paused %s", h.Checkpoint.CheckpointID, paused)
				}
				if code := do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "pask", "durability": durability, "command": map[string]any{"resume": answers("two")}}, nil, nil); code != 200 {
					t.Fatalf("resuming the head: %d", code)
				}
				h := readHeadState(t, ts.URL, tid)
				var contents []string
				for _, m := range h.Values.Messages {
					contents = append(contents, m.Content)
				}
				slices.Sort(contents)
				if len(h.Next) != 0 || !slices.Equal(contents, []string{"a:two", "b:two", "worked"}) {
					t.Errorf("after resuming the head with two: next %v, messages %v; want none, [a:two b:two worked]", h.Next, contents)
				}
			})
		}
	}
}
