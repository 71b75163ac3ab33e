package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// flakyStore fails the next read of one run's events (Events) or of the
// run itself (Run), once armed.
type flakyStore struct {
	server.Store
	mu     sync.Mutex
	run    string // the run whose next reads fail
	events bool   // Events fails, else Run
	n      int    // how many reads fail
	failed chan struct{}
}

var errFlaky = errors.New("flaky store: read failed")

func (f *flakyStore) arm(runID string, events bool, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run, f.events, f.n = runID, events, n
}

func (f *flakyStore) fail(runID string, events bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run == "" || f.run != runID || f.events != events {
		return false
	}
	if f.n--; f.n == 0 {
		f.run = ""
		close(f.failed)
	}
	return true
}

func (f *flakyStore) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	if f.fail(runID, true) {
		return nil, 0, errFlaky
	}
	return f.Store.Events(ctx, runID, after, limit)
}

func (f *flakyStore) Run(ctx context.Context, runID string) (*server.Run, error) {
	if f.fail(runID, false) {
		return nil, errFlaky
	}
	return f.Store.Run(ctx, runID)
}

// TestStatelessStreamStoreErrorKeepsRun: a stateless /runs/stream whose
// stream stops because a read of the store failed (of the run's events,
// or of the run) leaves its run as it was: its client is still there,
// and only a client that leaves cancels the run. The run was interrupted
// (the stream's end was taken for the client's departure). It waits
// (after_seconds) so that the stream polls the store; the poll's read
// fails.
func TestStatelessStreamStoreErrorKeepsRun(t *testing.T) {
	for _, events := range []bool{true, false} {
		name := "Run"
		if events {
			name = "Events"
		}
		t.Run(name, func(t *testing.T) {
			st := &flakyStore{Store: server.NewMemoryStore(), failed: make(chan struct{})}
			s := newTestServer(t, server.Config{Store: st, Heartbeat: 10 * time.Millisecond})
			body := `{"assistant_id":"slow","input":{"messages":[{"role":"user","content":"x"}]},"after_seconds":3600}`
			resp, err := http.Post(s.URL+"/runs/stream", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST /runs/stream: %d", resp.StatusCode)
			}
			loc := resp.Header.Get("Content-Location")
			rid := loc[strings.LastIndex(loc, "/")+1:]
			// Run fails twice: in the stream, then in the read that
			// looks whether the run has ended to delete its thread (a
			// failed read was taken for its end, and the thread's
			// deletion cancelled the run).
			n := 2
			if events {
				n = 1
			}
			st.arm(rid, events, n)
			evs := readSSE(t, resp.Body) // to the stream's end
			<-st.failed
			if len(evs) == 0 || evs[len(evs)-1].Name != "error" {
				t.Errorf("stream: %v, want it to end with an error event", evs)
			}
			run, err := st.Store.Run(context.Background(), rid)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != server.RunPending {
				t.Errorf("run status %q after the stream's store error, want pending", run.Status)
			}
		})
	}
}

// TestRunCheckpointRefusedWithoutThread: a run that names a checkpoint
// is refused before anything is made when it cannot start from it: on a
// thread that does not exist (if_not_exists create created the thread,
// and the run failed when it started, leaving the thread in status
// error), and as a stateless run, which starts on a new thread.
func TestRunCheckpointRefusedWithoutThread(t *testing.T) {
	s := newTestServer(t, server.Config{})
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	for _, field := range []string{"checkpoint_id", "checkpoint.checkpoint_id"} {
		body := map[string]any{"assistant_id": "agent", "input": input, "if_not_exists": "create"}
		if field == "checkpoint_id" {
			body["checkpoint_id"] = "x"
		} else {
			body["checkpoint"] = map[string]any{"checkpoint_id": "x"}
		}
		tid := uuid.NewString()
		for _, path := range []string{"/threads/" + tid + "/runs", "/threads/" + tid + "/runs/wait"} {
			var e struct{ Detail string }
			if code := do(t, "POST", s.URL+path, body, nil, &e); code != http.StatusNotFound || !strings.HasPrefix(e.Detail, "checkpoint_id: ") {
				t.Errorf("POST %s with %s of a new thread: %d %+v, want 404 naming %s", path, field, code, e, field)
			}
			if code := do(t, "GET", s.URL+"/threads/"+tid, nil, nil, nil); code != http.StatusNotFound {
				t.Errorf("GET the thread after POST %s: %d, want 404 (not created)", path, code)
			}
		}
		delete(body, "if_not_exists")
		for _, path := range []string{"/runs", "/runs/wait", "/runs/stream"} {
			var e struct{ Detail string }
			if code := do(t, "POST", s.URL+path, body, nil, &e); code != http.StatusUnprocessableEntity || !strings.HasPrefix(e.Detail, "checkpoint_id: ") {
				t.Errorf("POST %s with %s: %d %+v, want 422 naming %s", path, field, code, e, field)
			}
		}
	}
	var ts []map[string]any
	if code := do(t, "POST", s.URL+"/threads/search", map[string]any{}, nil, &ts); code != http.StatusOK || len(ts) != 0 {
		t.Errorf("threads after the refused runs: %d %v, want none", code, ts)
	}
}

// TestRunFromOldestCheckpoint: a run may start from any checkpoint of its
// thread, its first one too (the existence check lists the checkpoints
// before the one named, of which there are none).
func TestRunFromOldestCheckpoint(t *testing.T) {
	s := newTestServer(t, server.Config{})
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &th); code != http.StatusOK {
		t.Fatalf("POST /threads: %d", code)
	}
	if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": input}, nil, nil); code != http.StatusOK {
		t.Fatalf("first run: %d", code)
	}
	var hist []struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/history", map[string]any{"limit": 100}, nil, &hist); code != http.StatusOK || len(hist) < 2 {
		t.Fatalf("history: %d, %d states", code, len(hist))
	}
	oldest := hist[len(hist)-1].Checkpoint.CheckpointID
	for _, cid := range []string{oldest, hist[0].Checkpoint.CheckpointID} {
		var out map[string]any
		if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "checkpoint_id": cid}, nil, &out); code != http.StatusOK || out["__error__"] != nil {
			t.Errorf("run from checkpoint %s: %d %v", cid, code, out)
		}
	}
}

// blockingStore holds the next read of one thread (Thread), once armed,
// until released.
type blockingStore struct {
	server.Store
	mu      sync.Mutex
	thread  string
	reached chan struct{}
	release chan struct{}
}

func (b *blockingStore) Thread(ctx context.Context, id string) (*server.Thread, error) {
	b.mu.Lock()
	hold := b.thread != "" && b.thread == id
	if hold {
		b.thread = ""
	}
	b.mu.Unlock()
	if hold {
		close(b.reached)
		<-b.release
	}
	return b.Store.Thread(ctx, id)
}

// TestCloseDuringRunCreation: a run request that passed ServeHTTP's
// check before Close, and reaches the run's creation after it, is
// answered 503 and creates no run; it created the run, which stayed
// pending (this server executes no more runs). The request is held in
// the read of its thread that checks its checkpoint_id.
func TestCloseDuringRunCreation(t *testing.T) {
	st := &blockingStore{Store: server.NewMemoryStore(), reached: make(chan struct{}), release: make(chan struct{})}
	s := newTestServer(t, server.Config{Store: st})
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &th); code != http.StatusOK {
		t.Fatalf("POST /threads: %d", code)
	}
	if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": input}, nil, nil); code != http.StatusOK {
		t.Fatalf("first run: %d", code)
	}
	var hist []struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/history", map[string]any{"limit": 1}, nil, &hist); code != http.StatusOK || len(hist) != 1 {
		t.Fatalf("history: %d, %d states", code, len(hist))
	}
	st.mu.Lock()
	st.thread = th.ThreadID
	st.mu.Unlock()
	type answer struct {
		code  int
		retry string
	}
	got := make(chan answer, 1)
	go func() {
		b := `{"assistant_id":"agent","checkpoint_id":"` + hist[0].Checkpoint.CheckpointID + `"}`
		resp, err := http.Post(s.URL+"/threads/"+th.ThreadID+"/runs", "application/json", strings.NewReader(b))
		if err != nil {
			got <- answer{}
			return
		}
		resp.Body.Close()
		got <- answer{resp.StatusCode, resp.Header.Get("Retry-After")}
	}()
	<-st.reached
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(st.release)
	if a := <-got; a.code != http.StatusServiceUnavailable || a.retry == "" {
		t.Errorf("run request across Close: %d (Retry-After %q), want 503 with Retry-After", a.code, a.retry)
	}
	var runs []map[string]any
	if code := do(t, "GET", s.URL+"/threads/"+th.ThreadID+"/runs", nil, nil, &runs); code != http.StatusOK || len(runs) != 1 {
		t.Errorf("runs of the thread: %d %d, want the first one only", code, len(runs))
	}
}

// TestJoinEndedRunAfterClose: after Close, the join (and join stream) of
// a run that has ended answers at once, with its result; it was refused
// with 503, as the join of a run that has not ended still is.
func TestJoinEndedRunAfterClose(t *testing.T) {
	s := newTestServer(t, server.Config{})
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", s.URL+"/threads", map[string]any{}, nil, &th); code != http.StatusOK {
		t.Fatalf("POST /threads: %d", code)
	}
	var ended, pending struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/runs", map[string]any{"assistant_id": "agent", "input": input}, nil, &ended); code != http.StatusOK {
		t.Fatalf("run: %d", code)
	}
	base := s.URL + "/threads/" + th.ThreadID + "/runs/"
	if code := do(t, "GET", base+ended.RunID+"/join", nil, nil, nil); code != http.StatusOK {
		t.Fatalf("join before Close: %d", code)
	}
	if code := do(t, "POST", s.URL+"/threads/"+th.ThreadID+"/runs", map[string]any{"assistant_id": "agent", "input": input, "after_seconds": 3600}, nil, &pending); code != http.StatusOK {
		t.Fatalf("pending run: %d", code)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if code := do(t, "GET", base+ended.RunID+"/join", nil, nil, &out); code != http.StatusOK || out["messages"] == nil {
		t.Errorf("join of an ended run after Close: %d %v, want 200 with its values", code, out)
	}
	resp, err := http.Get(base + ended.RunID + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("join stream of an ended run after Close: %d, want 200", resp.StatusCode)
	}
	for _, p := range []string{"/join", "/stream"} {
		resp, err := http.Get(base + pending.RunID + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s of a pending run after Close: %d, want 503 with Retry-After", p, resp.StatusCode)
		}
	}
}

// TestStatelessThreadGoesAfterClose: the thread of a stateless
// /runs/stream (on_disconnect continue) whose client left goes at the
// run's end even when the server closes first: the deletion is marked in
// the run's stored request, and whichever instance ends the run deletes
// the thread. It stayed in the store (counting against MaxThreads) when
// the run ended after Close: interrupted by Close ("running"), or run by
// the next server on the same SQLite files ("pending").
func TestStatelessThreadGoesAfterClose(t *testing.T) {
	for _, c := range []struct {
		name  string
		graph string
		after float64
	}{{"running", "slow", 0}, {"pending", "agent", 0.5}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			open := func() (server.Config, server.Store) {
				st, err := server.OpenSQLite(t.Context(), filepath.Join(dir, "server.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				saver, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "checkpoints.db")})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { saver.Close() })
				return server.Config{Store: st, Checkpointer: saver, SweepInterval: 10 * time.Millisecond}, st
			}
			cfg, st := open()
			a := newTestServer(t, cfg)
			body := map[string]any{"assistant_id": c.graph, "input": map[string]any{"messages": []msg{{Role: "user", Content: "x"}}},
				"on_disconnect": "continue", "after_seconds": c.after}
			b, _ := json.Marshal(body)
			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, "POST", a.URL+"/runs/stream", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			loc := resp.Header.Get("Content-Location")
			rid := loc[strings.LastIndex(loc, "/")+1:]
			run, err := st.Run(t.Context(), rid)
			if err != nil {
				t.Fatal(err)
			}
			tid := run.ThreadID
			if c.graph == "slow" {
				waitUntil(t, "the run to wait in its node", func() bool { return a.gates.waiting(tid) })
			}
			cancel() // the client leaves; the run goes on
			resp.Body.Close()
			if err := a.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			// The request's handler has returned once the run's request
			// no longer says attached (or the run is gone with its thread).
			waitUntil(t, "the run's request to be detached", func() bool {
				r, err := st.Run(t.Context(), rid)
				return errors.Is(err, server.ErrNotFound) || err == nil && !strings.Contains(string(r.Kwargs), `"attached"`)
			})
			if c.graph == "agent" {
				cfg, _ := open()
				newTestServer(t, cfg)
			}
			waitUntil(t, "the run's thread to be deleted", func() bool {
				_, err := st.Thread(t.Context(), tid)
				return errors.Is(err, server.ErrNotFound)
			})
		})
	}
}
