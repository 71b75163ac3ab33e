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

// lockFlake is a Store and ThreadLocker whose LockThread, once armed,
// lets skip calls pass then fails fails times, counting only the calls
// made with a context that cannot end (the server's own work, not a
// request's).
type lockFlake struct {
	server.Store
	mu    sync.Mutex
	skip  int
	fails int
	calls int // failed calls
}

func (l *lockFlake) LockThread(ctx context.Context, threadID string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx.Done() == nil && l.skip > 0 {
		l.skip--
		return func() {}, nil
	}
	if ctx.Done() == nil && l.fails > 0 {
		l.fails--
		l.calls++
		return nil, errors.New("lockFlake: transient error")
	}
	return func() {}, nil
}

func (l *lockFlake) arm(skip, fails int) {
	l.mu.Lock()
	l.skip, l.fails = skip, fails
	l.mu.Unlock()
}

// TestRollbackRetriesItsLock: a rollback whose thread lock fails (a
// transient error of the store) tries again instead of leaving the run
// running (issue #21 A1): the run is deleted and the thread is back at
// the checkpoint the run started from.
func TestRollbackRetriesItsLock(t *testing.T) {
	st := &lockFlake{Store: server.NewMemoryStore()}
	ts := newTestServer(t, server.Config{Store: st})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	runs := ts.URL + "/threads/" + th.ThreadID + "/runs"
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "slow", "input": in}, nil, &run); code != 200 {
		t.Fatalf("run: %d", code)
	}
	waitUntil(t, "the run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
	st.arm(1, 3) // the cancel's lock passes, the rollback's fails three times
	if code := do(t, "POST", runs+"/"+run.RunID+"/cancel?action=rollback", nil, nil, nil); code != http.StatusNoContent && code != http.StatusAccepted {
		t.Fatalf("rollback: %d", code)
	}
	waitUntil(t, "the rolled-back run to be deleted", func() bool {
		return do(t, "GET", runs+"/"+run.RunID, nil, nil, nil) == http.StatusNotFound
	})
	st.mu.Lock()
	failed := st.calls
	st.mu.Unlock()
	if failed != 3 {
		t.Errorf("%d lock calls failed; want 3 (the test's failures did not reach the rollback)", failed)
	}
	var thread struct {
		Status string `json:"status"`
	}
	if do(t, "GET", ts.URL+"/threads/"+th.ThreadID, nil, nil, &thread); thread.Status != "idle" {
		t.Errorf("thread status after the rollback: %s; want idle", thread.Status)
	}
	var state struct {
		Values map[string]any `json:"values"`
	}
	do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/state", nil, nil, &state)
	if len(state.Values) != 0 {
		t.Errorf("state after the rollback of the thread's first run: %v; want empty", state.Values)
	}
}

// renewFlake is a Store whose Renew always fails with a transient error:
// its instance keeps running a run whose lease expires, as a stalled
// instance would.
type renewFlake struct{ server.Store }

func (renewFlake) Renew(context.Context, string, string, time.Duration) error {
	return errors.New("renewFlake: transient error")
}

// TestTakeoverAfterDropRunsInput: a run with input on a paused thread
// drops the pending step (a checkpoint on top of the paused one) before
// its graph runs; when another instance takes the run over, it runs the
// input instead of taking the dropped step's checkpoint for the graph's
// progress and ending the run "success" without running it (issue #21 A2).
// The run's durability is exit, so that the drop's checkpoint is the
// thread's latest while the first instance runs the node.
func TestTakeoverAfterDropRunsInput(t *testing.T) {
	mem := server.NewMemoryStore()
	ts1 := newTestServer(t, server.Config{Store: renewFlake{mem}, Worker: "w1", Lease: 300 * time.Millisecond, SweepInterval: time.Hour})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts1.URL+"/threads", map[string]any{}, nil, &th)
	tid := th.ThreadID
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	if code := do(t, "POST", ts1.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "slow", "input": in, "interrupt_before": []string{"slow"}}, nil, nil); code != 200 {
		t.Fatalf("paused run: %d", code)
	}
	var state struct {
		Values chat     `json:"values"`
		Next   []string `json:"next"`
	}
	if do(t, "GET", ts1.URL+"/threads/"+tid+"/state", nil, nil, &state); len(state.Next) != 1 {
		t.Fatalf("next after the paused run: %v; want [slow]", state.Next)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	in2 := map[string]any{"messages": []msg{{Type: "human", Content: "y"}}}
	if code := do(t, "POST", ts1.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in2, "durability": "exit"}, nil, &run); code != 200 {
		t.Fatalf("run: %d", code)
	}
	waitUntil(t, "the run to wait in its node on the first instance", func() bool { return ts1.gates.waiting(tid) })
	ts2 := newTestServer(t, server.Config{Store: mem, Checkpointer: ts1.Checkpointer(), Worker: "w2", Lease: time.Minute, SweepInterval: 20 * time.Millisecond})
	ts2.gates.release(tid)
	var out struct {
		Status string `json:"status"`
	}
	waitUntil(t, "the run taken over to end", func() bool {
		do(t, "GET", ts2.URL+"/threads/"+tid+"/runs/"+run.RunID, nil, nil, &out)
		return out.Status != "pending" && out.Status != "running"
	})
	if out.Status != "success" {
		t.Fatalf("run taken over ended %s; want success", out.Status)
	}
	do(t, "GET", ts2.URL+"/threads/"+tid+"/state", nil, nil, &state)
	if got := last(state.Values); got != "slow done: y" {
		t.Errorf("last message after the run taken over: %q; want %q (the input was not run)", got, "slow done: y")
	}
	ts1.gates.release(tid)
}

// claimBetween is a Store that, once armed, has another instance claim
// the run (its record set running under worker "other") at the next
// update of a thread's record: between the refresh of a pending run's
// thread and the run's cancellation.
type claimBetween struct {
	server.Store
	mu  sync.Mutex
	run string
}

func (c *claimBetween) UpdateThread(ctx context.Context, id string, fn func(*server.Thread) error) (*server.Thread, error) {
	t, err := c.Store.UpdateThread(ctx, id, fn)
	c.mu.Lock()
	rid := c.run
	c.run = ""
	c.mu.Unlock()
	if rid != "" {
		if _, err := c.Store.UpdateRun(ctx, rid, func(r *server.Run) error {
			r.Status, r.Worker, r.Attempt, r.LeaseUntil = server.RunRunning, "other", 1, time.Now().Add(time.Hour)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return t, err
}

// TestCancelPendingClaimedElsewhere: a pending run that another instance
// claims while it is being cancelled here runs there; the cancellation is
// only asked of that instance, and the thread's record counts the run
// (busy), not idle as if the run had ended (issue #21 A5).
func TestCancelPendingClaimedElsewhere(t *testing.T) {
	st := &claimBetween{Store: server.NewMemoryStore()}
	ts := newTestServer(t, server.Config{Store: st, SweepInterval: time.Hour})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	runs := ts.URL + "/threads/" + th.ThreadID + "/runs"
	var run struct {
		RunID string `json:"run_id"`
	}
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "slow", "input": in, "after_seconds": 3600}, nil, &run); code != 200 {
		t.Fatalf("delayed run: %d", code)
	}
	st.mu.Lock()
	st.run = run.RunID
	st.mu.Unlock()
	if code := do(t, "POST", runs+"/"+run.RunID+"/cancel", nil, nil, nil); code != http.StatusNoContent && code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	var r struct {
		Status string `json:"status"`
	}
	do(t, "GET", runs+"/"+run.RunID, nil, nil, &r)
	var thread struct {
		Status string `json:"status"`
	}
	do(t, "GET", ts.URL+"/threads/"+th.ThreadID, nil, nil, &thread)
	if r.Status != "running" || thread.Status != "busy" {
		t.Errorf("run %s, thread %s after the cancellation of a run claimed elsewhere; want running, busy", r.Status, thread.Status)
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
	newThread := func() string {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
		return th.ThreadID
	}
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	delayed, queued := newThread(), newThread()
	var running struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads/"+queued+"/runs", map[string]any{"assistant_id": "slow", "input": in}, nil, &running); code != 200 {
		t.Fatalf("running run: %d", code)
	}
	waitUntil(t, "the running run to wait in its node", func() bool { return ts.gates.waiting(queued) })
	// The deadline only ends a request that would wait for ever, so that
	// the test fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	type answer struct {
		code int
		body string
	}
	post := func(path string, body map[string]any, out chan<- answer) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- answer{0, err.Error()}
			return
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		out <- answer{resp.StatusCode, string(rb)}
	}
	waited, streamed := make(chan answer, 1), make(chan answer, 1)
	go post("/threads/"+delayed+"/runs/wait", map[string]any{"assistant_id": "slow", "input": in, "after_seconds": 3600}, waited)
	go post("/threads/"+queued+"/runs/stream", map[string]any{"assistant_id": "slow", "input": in, "multitask_strategy": "enqueue"}, streamed)
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
