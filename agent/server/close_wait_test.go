package server_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// runReads is a Store that counts the reads of a run's record, once
// armed with the id of a run whose reads it does not count, and whose
// claims find nothing once noClaims is set.
type runReads struct {
	server.Store
	not      atomic.Pointer[string]
	n        atomic.Int64
	noClaims atomic.Bool
}

func (r *runReads) Claim(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, error) {
	if r.noClaims.Load() {
		return nil, nil
	}
	return r.Store.Claim(ctx, threadID, worker, lease)
}

func (r *runReads) Run(ctx context.Context, id string) (*server.Run, error) {
	if p := r.not.Load(); p != nil && *p != id {
		r.n.Add(1)
	}
	return r.Store.Run(ctx, id)
}

// TestCloseEndsWaitWhenWorkerEnds: a /runs/wait on a run queued behind
// its thread's running one ends once Close is called and the thread's
// worker ends without claiming it, not a heartbeat later (issue #21). The
// running run's node ignores its context until the test lets it return,
// after the wait read the queued run on Close (the worker was still
// there, so the run was not yet abandoned); the heartbeat is an hour, so
// only the worker's end can end the wait before the test's deadline.
func TestCloseEndsWaitWhenWorkerEnds(t *testing.T) {
	st := &runReads{Store: server.NewMemoryStore()}
	ts := newTestServer(t, server.Config{Store: st, Heartbeat: time.Hour, SweepInterval: time.Hour})
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server's Close, which waits for the node
	g := graph.New[chat]()
	g.AddNode("stubborn", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		entered <- struct{}{}
		<-release // not ctx: the worker outlives Close's cancellation
		return chatMessages.Set([]msg{{Type: "ai", Content: "done"}}), nil
	})
	g.AddEdge(graph.START, "stubborn").AddEdge("stubborn", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(ts.Server, "stubborn", app); err != nil {
		t.Fatal(err)
	}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	runs := ts.URL + "/threads/" + th.ThreadID + "/runs"
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	var running struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "stubborn", "input": in}, nil, &running); code != 200 {
		t.Fatalf("running run: %d", code)
	}
	<-entered
	// From here, the reads of another run's record are the wait's (the
	// creation of the queued run reads the thread's active runs).
	st.not.Store(&running.RunID)
	// The deadline only ends a wait that would last the heartbeat, so
	// that the test fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waited := postLater(ctx, runs+"/wait", map[string]any{"assistant_id": "stubborn", "input": in, "multitask_strategy": "enqueue"})
	waitUntil(t, "the wait to read the queued run", func() bool { return st.n.Load() >= 1 })
	st.n.Store(0)
	// The worker, once its run ends, finds nothing to claim (it may claim
	// the queued run, and end it interrupted, when its lock is free).
	st.noClaims.Store(true)
	closed := make(chan error, 1)
	go func() { closed <- ts.Server.Close(ctx) }()
	waitUntil(t, "the wait to read the queued run on Close", func() bool { return st.n.Load() >= 1 })
	free()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	a := <-waited
	if a.code != 200 || !strings.Contains(a.body, `"ServiceUnavailable"`) {
		t.Errorf("/runs/wait on the queued run across Close: %d %q; want its body's __error__ ServiceUnavailable before the test's deadline", a.code, a.body)
	}
}
