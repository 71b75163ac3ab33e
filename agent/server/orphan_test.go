package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestOrphanCheckpointsDropped: a thread deleted while a run of it still
// runs (as a deletion does that stops waiting for a run of another
// instance: at Close, or after a lease) loses the checkpoints that run
// saves after the deletion: the run's instance deletes them once the run
// finds its record gone (here, when it records its end). They stayed, with
// no thread to delete them with.
func TestOrphanCheckpointsDropped(t *testing.T) {
	st, saver := server.NewMemoryStore(), checkpoint.NewMemory()
	ts := newTestServer(t, server.Config{Store: st, Checkpointer: saver, Worker: "w1", Lease: 300 * time.Millisecond, SweepInterval: time.Hour})
	g := graph.New[chat]()
	g.AddNode("a", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if err := ts.gates.wait(ctx, graph.ConfigFrom(ctx).ThreadID); err != nil {
			return graph.Update[chat]{}, err
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "a"}}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	saved := make(chan error, 1)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()), graph.WithHooks(graph.Hooks{
		Saved: func(_ context.Context, _ graph.SaveInfo, _ time.Duration, err error) { saved <- err },
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(ts.Server, "twogates", app); err != nil {
		t.Fatal(err)
	}
	tid := newThread(t, ts.URL)
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "twogates", "input": map[string]any{}, "durability": "exit"}, nil, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	waitUntil(t, "the run to wait in a", func() bool { return ts.gates.waiting(tid) })
	// The thread is deleted as another instance deletes it once it stops
	// waiting for the run: its record (with its runs') and its checkpoints.
	ctx := t.Context()
	if err := st.DeleteThread(ctx, tid); err != nil {
		t.Fatal(err)
	}
	if err := saver.DeleteThread(ctx, tid); err != nil {
		t.Fatal(err)
	}
	// The run goes on and ends, saving its only checkpoint (durability
	// exit) after the deletion; its end finds its record gone. A save
	// checks the thread's latest checkpoint: a run that saved one before
	// the deletion fails its next save instead.
	ts.gates.release(tid)
	if err := <-saved; err != nil {
		t.Fatalf("the run's save after the deletion: %v", err)
	}
	waitUntil(t, "the checkpoints saved after the deletion to be deleted", func() bool {
		cps, err := saver.List(ctx, tid, checkpoint.ListOptions{})
		return err == nil && len(cps) == 0
	})
}

// TestOrphanCallsThreadDeleted: when a run of a thread deleted without
// waiting for it (by another instance) finds its thread gone, its
// instance calls the graph's WithThreadDeleted function again, for the
// run's owner: what the run's nodes stored since the deletion's call goes
// too.
func TestOrphanCallsThreadDeleted(t *testing.T) {
	cfg, alice, _ := aliceBob()
	st := server.NewMemoryStore()
	cfg.Store, cfg.Worker, cfg.Lease, cfg.SweepInterval = st, "w1", 300*time.Millisecond, time.Hour
	ts := newTestServer(t, cfg)
	g := graph.New[chat]()
	g.AddNode("a", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if err := ts.gates.wait(ctx, graph.ConfigFrom(ctx).ThreadID); err != nil {
			return graph.Update[chat]{}, err
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "a"}}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan deleted, 4)
	hook := func(ctx context.Context, threadID string) error {
		calls <- deleted{threadID, guard.Principal(ctx)}
		return nil
	}
	if err := server.Register(ts.Server, "gated", app, server.WithThreadDeleted[chat](hook)); err != nil {
		t.Fatal(err)
	}
	tid := newWhoamiThread(t, ts.URL, alice)
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "gated", "input": map[string]any{}, "durability": "exit"}, alice, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	waitUntil(t, "the run to wait in a", func() bool { return ts.gates.waiting(tid) })
	// Deleted as another instance deletes it once it stops waiting for
	// the run (that instance called its own hook).
	if err := st.DeleteThread(t.Context(), tid); err != nil {
		t.Fatal(err)
	}
	ts.gates.release(tid)
	if got, want := nextDeleted(t, calls), (deleted{tid, "alice"}); got != want {
		t.Errorf("after the orphaned run: %+v, want %+v", got, want)
	}
}
