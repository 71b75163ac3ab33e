package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

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
	tid, _ := interruptedThread(t, s.URL, nil)
	hist := historyIDs(t, s.URL, tid, map[string]any{"limit": 1})
	if len(hist) != 1 {
		t.Fatalf("history: %d states", len(hist))
	}
	st.mu.Lock()
	st.thread = tid
	st.mu.Unlock()
	type answer struct {
		code  int
		retry string
	}
	got := make(chan answer, 1)
	go func() {
		b := `{"assistant_id":"agent","checkpoint_id":"` + hist[0] + `"}`
		resp, err := http.Post(s.URL+"/threads/"+tid+"/runs", "application/json", strings.NewReader(b))
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
	if code := do(t, "GET", s.URL+"/threads/"+tid+"/runs", nil, nil, &runs); code != http.StatusOK || len(runs) != 1 {
		t.Errorf("runs of the thread: %d %d, want the first one only", code, len(runs))
	}
}

// TestJoinEndedRunAfterClose: after Close, the join (and join stream) of
// a run that has ended answers at once, with its result; it was refused
// with 503, as the join of a run that has not ended still is.
func TestJoinEndedRunAfterClose(t *testing.T) {
	s := newTestServer(t, server.Config{})
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	tid := newThread(t, s.URL)
	var ended, pending struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", s.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": input}, nil, &ended); code != http.StatusOK {
		t.Fatalf("run: %d", code)
	}
	base := s.URL + "/threads/" + tid + "/runs/"
	if code := do(t, "GET", base+ended.RunID+"/join", nil, nil, nil); code != http.StatusOK {
		t.Fatalf("join before Close: %d", code)
	}
	if code := do(t, "POST", s.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": input, "after_seconds": 3600}, nil, &pending); code != http.StatusOK {
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

// TestCloseEndsWaitsOnUnstartedRuns: a /runs/wait on a delayed run ends
// when the server closes (the delayed run's timer is stopped), with an
// error saying so, instead of waiting until the client leaves (issue #21
// C1); a /runs/stream on a run queued behind its thread's running one
// ends too.
func TestCloseEndsWaitsOnUnstartedRuns(t *testing.T) {
	mem := server.NewMemoryStore()
	ts := newTestServer(t, server.Config{Store: mem, SweepInterval: time.Hour})
	in := humanInput("x")
	delayed, queued := newThread(t, ts.URL), newThread(t, ts.URL)
	ts.heldRun(t, queued, "running run")
	// The deadline only ends a request that would wait for ever, so that
	// the test fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	waited := postLater(ctx, ts.URL+"/threads/"+delayed+"/runs/wait", map[string]any{"assistant_id": "slow", "input": in, "after_seconds": 3600})
	streamed := postLater(ctx, ts.URL+"/threads/"+queued+"/runs/stream", map[string]any{"assistant_id": "slow", "input": in, "multitask_strategy": "enqueue"})
	pending := func(tid string) bool {
		var runs []struct {
			Status string `json:"status"`
		}
		do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs)
		for _, r := range runs {
			if r.Status == "pending" {
				return true
			}
		}
		return false
	}
	waitUntil(t, "both runs to be pending", func() bool { return pending(delayed) && pending(queued) })
	if err := ts.Server.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a := <-waited; a.code != 200 || !strings.Contains(a.body, `"ServiceUnavailable"`) {
		t.Errorf("/runs/wait on the delayed run across Close: %d %q; want its body's __error__ ServiceUnavailable", a.code, a.body)
	}
	// The queued run: the thread's worker, interrupting the running run,
	// may claim it and end it interrupted before it stops; else the
	// stream ends with the error.
	if a := <-streamed; a.code != 200 || !strings.Contains(a.body, `"ServiceUnavailable"`) && !strings.Contains(a.body, `"status":"interrupted"`) {
		t.Errorf("/runs/stream on the queued run across Close: %d %q; want an error event ServiceUnavailable or its interrupted end", a.code, a.body)
	}
}

// TestRunRequestsAfterClose: once Server.Close was called, a request that
// creates a run or waits on one is answered 503 at once with Retry-After;
// it was accepted, and then waited for ever (a /wait or /stream, holding
// its stream slot) or left a pending run and a busy thread that no
// worker of this server would take (a background run). Reads are still
// served.
func TestRunRequestsAfterClose(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	if err := ts.Server.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	resume := `{"assistant_id":"agent","command":{"resume":"ok"}}`
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/threads/" + tid + "/runs/wait", resume},
		{"POST", "/threads/" + tid + "/runs/stream", resume},
		{"POST", "/threads/" + tid + "/runs", resume},
		{"POST", "/runs/wait", `{"assistant_id":"agent","input":{}}`},
		{"POST", "/runs", `{"assistant_id":"agent","input":{}}`},
		// The joins of run rid, which has ended, are served (see
		// TestJoinEndedRunAfterClose); those of a run that has not are
		// refused.
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		req, err := http.NewRequestWithContext(ctx, c.method, ts.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s %s after Close: %v; want 503 at once", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "Close") {
			t.Errorf("%s %s after Close: %d %s; want 503 with Retry-After", c.method, c.path, resp.StatusCode, b)
		}
	}
	var thread struct{ Status string }
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &thread); code != 200 || thread.Status != "interrupted" {
		t.Errorf("the thread after Close: %d %s; want it served, interrupted as it was", code, thread.Status)
	}
	var runs []map[string]any
	if do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); len(runs) != 1 {
		t.Errorf("the thread has %d runs after Close; want its first only", len(runs))
	}
}
