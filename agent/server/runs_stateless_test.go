package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// streamDelayedRun streams a stateless run of the graph slow, delayed an
// hour, from the server at url, and returns the open stream (closed when
// the test ends) and the run's id.
func streamDelayedRun(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	body := `{"assistant_id":"slow","input":{"messages":[{"role":"user","content":"x"}]},"after_seconds":3600}`
	resp, err := http.Post(url+"/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /runs/stream: %d", resp.StatusCode)
	}
	loc := resp.Header.Get("Content-Location")
	return resp, loc[strings.LastIndex(loc, "/")+1:]
}

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

var errFlaky = errors.New("flaky store: read failed")

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
			resp, rid := streamDelayedRun(t, s.URL)
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
				cfg := sqliteConfigIn(t, dir)
				cfg.SweepInterval = 10 * time.Millisecond
				return cfg, cfg.Store
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

// TestLeftStatelessWaitGivesBackItsSlot: a client of a stateless
// /runs/wait with on_disconnect continue that goes away gives back its
// MaxStreams slot at once, while its run goes on; the handler waited for
// the run to end to delete its thread, holding the slot. The thread goes
// when the run ends.
func TestLeftStatelessWaitGivesBackItsSlot(t *testing.T) {
	ts := newTestServer(t, server.Config{MaxStreams: 1})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/runs/wait", strings.NewReader(`{"assistant_id":"slow","input":{"messages":[{"type":"human","content":"x"}]},"on_disconnect":"continue"}`))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		done <- err
	}()
	var tid string
	waitUntil(t, "the stateless run's node to wait", func() bool {
		var found []struct {
			ThreadID string `json:"thread_id"`
		}
		do(t, "POST", ts.URL+"/threads/search", map[string]any{}, nil, &found)
		if len(found) == 1 {
			tid = found[0].ThreadID
		}
		return tid != "" && ts.gates.waiting(tid)
	})
	// Let the run go at the end whatever happens, before the server
	// closes (cleanups run last first): a handler that waits for the run
	// would hold the HTTP server's Close.
	t.Cleanup(func() { ts.gates.release(tid) })
	cancel()
	<-done
	waitForSlot(t, ts.URL, `{"assistant_id":"agent","input":{}}`, "the left stateless wait to give back its slot (MaxStreams 1) while its run runs")
	var runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("the left run (on_disconnect continue): %+v; want running", runs)
	}
	ts.gates.release(tid)
	waitThreadGone(t, ts.URL, tid, runs[0].RunID)
}

// refusingStore refuses every run's creation, as a store that fails
// (full, unreachable) does.
type refusingStore struct{ server.Store }

var errRefused = errors.New("refusing store: run not created")

func (r refusingStore) CreateRun(context.Context, *server.Run) error { return errRefused }

// TestStatelessRunRefusedLeavesNoThread: a stateless run (/runs,
// /runs/wait, /runs/stream) whose creation fails leaves no thread behind:
// its thread was made first and stayed, unknown to the client and
// counting against its MaxThreads. (It is deleted after the answer.)
func TestStatelessRunRefusedLeavesNoThread(t *testing.T) {
	for _, path := range []string{"/runs", "/runs/wait", "/runs/stream"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			mem := server.NewMemoryStore()
			ts := newTestServer(t, server.Config{Store: refusingStore{mem}})
			var e map[string]string
			code := do(t, "POST", ts.URL+path, map[string]any{"assistant_id": "agent", "input": map[string]any{}}, nil, &e)
			if code != http.StatusInternalServerError || !strings.Contains(e["detail"], "error_id") || strings.Contains(e["detail"], errRefused.Error()) {
				t.Fatalf("POST %s: %d %v; want 500 with an error_id, not the store's error", path, code, e)
			}
			// The thread is deleted in the background, the request
			// answered without waiting for it.
			waitUntil(t, "no thread left after the refused stateless run", func() bool {
				_, n, err := mem.SearchThreads(t.Context(), server.ThreadQuery{})
				return err == nil && n == 0
			})
		})
	}
}
