package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// waitUntil polls cond until it holds; the minute is a failure guard, not
// a timing assumption.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRestartResumesQueuedRuns creates a delayed run, stops the server
// before the run's time, and starts another server on the same SQLite
// files: its sweeper runs the queued run.
func TestRestartResumesQueuedRuns(t *testing.T) {
	dir := t.TempDir()
	open := func() server.Config {
		cfg := sqliteConfigIn(t, dir)
		cfg.SweepInterval = 10 * time.Millisecond
		return cfg
	}
	a := newTestServer(t, open())
	var th map[string]any
	do(t, "POST", a.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	var run map[string]any
	if code := do(t, "POST", a.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Role: "user", Content: "later"}}}, "after_seconds": 0.5}, nil, &run); code != 200 {
		t.Fatalf("create run: %d", code)
	}
	rid := run["run_id"].(string)
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	do(t, "GET", a.URL+"/threads/"+tid+"/runs/"+rid, nil, nil, &got)
	if got["status"] != server.RunPending {
		t.Fatalf("after the first server closed, the run is %v; want pending", got["status"])
	}
	b := newTestServer(t, open())
	waitUntil(t, "the second server to run the queued run", func() bool {
		do(t, "GET", b.URL+"/threads/"+tid+"/runs/"+rid, nil, nil, &got)
		return got["status"] == server.RunSuccess
	})
	var state struct {
		Values chat     `json:"values"`
		Next   []string `json:"next"`
	}
	do(t, "GET", b.URL+"/threads/"+tid+"/state", nil, nil, &state)
	if len(state.Values.Messages) != 2 || state.Values.Messages[1].Content != "draft for: later" || len(state.Next) != 1 || state.Next[0] != "review" {
		t.Fatalf("thread state after the resumed run: %+v", state)
	}
}

// TestLimits checks Config.MaxQueuedRuns and Config.MaxThreads: the run or
// thread past the bound is refused with 429, saying which bound.
func TestLimits(t *testing.T) {
	s := newTestServer(t, server.Config{MaxQueuedRuns: 1, MaxThreads: 2})
	var th map[string]any
	do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	body := map[string]any{"assistant_id": "slow", "input": map[string]any{"messages": []msg{{Role: "user", Content: "x"}}}}
	for i, want := range []int{200, 200, http.StatusTooManyRequests} {
		var out map[string]any
		if code := do(t, "POST", s.URL+"/threads/"+tid+"/runs", body, nil, &out); code != want {
			t.Fatalf("run %d: %d %v; want %d", i, code, out, want)
		}
		if i == 0 {
			waitUntil(t, "the first run to start", func() bool { return s.gates.waiting(tid) })
		}
		if want == http.StatusTooManyRequests && fmt.Sprint(out["detail"]) == "" {
			t.Fatalf("429 without a detail: %v", out)
		}
	}
	var out map[string]any
	if code := do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &out); code != 200 {
		t.Fatalf("second thread: %d %v", code, out)
	}
	if code := do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &out); code != http.StatusTooManyRequests {
		t.Fatalf("third thread: %d %v; want 429 (MaxThreads 2)", code, out)
	}
	if code := do(t, "POST", s.URL+"/runs/wait", body, nil, &out); code != http.StatusTooManyRequests {
		t.Fatalf("stateless run (a new thread): %d %v; want 429", code, out)
	}
	s.gates.release(tid)
	s.gates.release(tid)
}

// TestRetentionPrunesEndedRuns ends a run and waits for the sweeper to
// drop its event log and kwargs (RunRetention 1ms); the run's record
// stays.
func TestRetentionPrunesEndedRuns(t *testing.T) {
	st := server.NewMemoryStore()
	s := newTestServer(t, server.Config{Store: st, RunRetention: time.Millisecond, SweepInterval: 10 * time.Millisecond})
	var th map[string]any
	do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	var out map[string]any
	do(t, "POST", s.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "fail"}, nil, &out)
	runs, err := st.Runs(t.Context(), server.RunQuery{ThreadID: tid})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	rid := runs[0].ID
	waitUntil(t, "the run's events to be pruned", func() bool {
		evs, _, err := st.Events(t.Context(), rid, -1, 0)
		return err == nil && len(evs) == 0
	})
	var run map[string]any
	if code := do(t, "GET", s.URL+"/threads/"+tid+"/runs/"+rid, nil, nil, &run); code != 200 || run["status"] != server.RunError {
		t.Fatalf("pruned run: %d %v; want its record, status error", code, run)
	}
	if kw, _ := json.Marshal(run["kwargs"]); string(kw) != "{}" {
		t.Fatalf("pruned run's kwargs: %s; want {}", kw)
	}
}

// TestMaxRunRecordsDropsOldestRuns runs four runs on a thread with
// MaxRunRecords 2 and waits for the sweeper to delete the two oldest:
// their records answer 404, the newest two stay.
func TestMaxRunRecordsDropsOldestRuns(t *testing.T) {
	st := server.NewMemoryStore()
	s := newTestServer(t, server.Config{Store: st, MaxRunRecords: 2, RunRetention: time.Millisecond, SweepInterval: 10 * time.Millisecond})
	var th map[string]any
	do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	var ids []string
	for range 4 {
		var run map[string]any
		do(t, "POST", s.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "fail"}, nil, &run)
		id, _ := run["run_id"].(string)
		var out any
		do(t, "GET", s.URL+"/threads/"+tid+"/runs/"+id+"/join", nil, nil, &out)
		ids = append(ids, id)
	}
	waitUntil(t, "the oldest runs to be deleted", func() bool {
		runs, err := st.Runs(t.Context(), server.RunQuery{ThreadID: tid})
		return err == nil && len(runs) == 2
	})
	runs, _ := st.Runs(t.Context(), server.RunQuery{ThreadID: tid})
	if runs[0].ID != ids[2] || runs[1].ID != ids[3] {
		t.Errorf("kept runs %s, %s; want the newest two, %s and %s", runs[0].ID, runs[1].ID, ids[2], ids[3])
	}
	for _, id := range ids[:2] {
		var out map[string]any
		if code := do(t, "GET", s.URL+"/threads/"+tid+"/runs/"+id, nil, nil, &out); code != http.StatusNotFound {
			t.Errorf("GET the old run %s: %d %v; want 404", id, code, out)
		}
	}
}

// BenchmarkMemoryStoreEvents reads the last event of logs of growing
// length: the cost does not grow with the log.
func BenchmarkMemoryStoreEvents(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			st := server.NewMemoryStore()
			ctx := context.Background()
			if err := st.CreateThread(ctx, &server.Thread{ID: "t"}); err != nil {
				b.Fatal(err)
			}
			if err := st.CreateRun(ctx, &server.Run{ID: "r", ThreadID: "t", Status: server.RunRunning}); err != nil {
				b.Fatal(err)
			}
			for range n {
				if _, err := st.AppendEvent(ctx, "r", "values", json.RawMessage(`{}`), 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if evs, _, _ := st.Events(ctx, "r", int64(n-2), 256); len(evs) != 1 {
					b.Fatal("wrong events")
				}
			}
		})
	}
}

// claimCounter counts the claims of a store's runs.
type claimCounter struct {
	server.Store
	mu     sync.Mutex
	claims int
}

func (c *claimCounter) count(r *server.Run, err error) (*server.Run, error) {
	if r != nil {
		c.mu.Lock()
		c.claims++
		c.mu.Unlock()
	}
	return r, err
}

func (c *claimCounter) Claim(ctx context.Context, tid, worker string, lease time.Duration) (*server.Run, error) {
	return c.count(c.Store.Claim(ctx, tid, worker, lease))
}

func (c *claimCounter) ClaimDue(ctx context.Context, worker string, lease time.Duration) (*server.Run, error) {
	return c.count(c.Store.ClaimDue(ctx, worker, lease))
}

// TestUnservedRunFails starts a server on a store holding a pending run of
// an assistant no instance serves, and registers graphs meanwhile (which
// raced with the sweeper's lookups before graphs had their own lock; run
// with -race). The server gives the run back with a growing delay instead
// of claiming it again at once, and fails it, naming the assistant, after
// a bounded number of claims.
func TestUnservedRunFails(t *testing.T) {
	ctx := t.Context()
	mem := server.NewMemoryStore()
	created := time.Now()
	if err := mem.CreateThread(ctx, &server.Thread{ID: "t1", CreatedAt: created, UpdatedAt: created, Status: server.ThreadIdle, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := mem.CreateRun(ctx, &server.Run{ID: "r1", ThreadID: "t1", AssistantID: "nowhere", CreatedAt: created, UpdatedAt: created,
		Status: server.RunPending, Metadata: map[string]any{}, Kwargs: json.RawMessage(`{"assistant_id":"nowhere"}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	st := &claimCounter{Store: mem}
	srv, err := server.New(server.Config{Store: st, SweepInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	for i := range 20 {
		g := graph.New[chat]()
		g.AddNode("n", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
		g.AddEdge(graph.START, "n").AddEdge("n", graph.END)
		c, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
		if err != nil {
			t.Fatal(err)
		}
		if err := server.Register(srv, fmt.Sprintf("g%d", i), c); err != nil {
			t.Fatal(err)
		}
	}
	var run *server.Run
	waitUntil(t, "the unserved run to fail", func() bool {
		run, err = mem.Run(ctx, "r1")
		return err == nil && run.Status == server.RunError
	})
	if !strings.Contains(run.Error, `"nowhere"`) {
		t.Errorf("run error %q does not name the assistant", run.Error)
	}
	st.mu.Lock()
	claims := st.claims
	st.mu.Unlock()
	if claims > 11 {
		t.Errorf("the unserved run was claimed %d times; want at most 11", claims)
	}
}
