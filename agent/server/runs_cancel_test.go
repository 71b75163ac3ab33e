package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"slices"
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
	tid := newThread(t, ts.URL)
	runs := ts.URL + "/threads/" + tid + "/runs"
	rid := ts.heldRun(t, tid, "run")
	st.arm(1, 3) // the cancel's lock passes, the rollback's fails three times
	if code := do(t, "POST", runs+"/"+rid+"/cancel?action=rollback", nil, nil, nil); code != http.StatusNoContent && code != http.StatusAccepted {
		t.Fatalf("rollback: %d", code)
	}
	waitUntil(t, "the rolled-back run to be deleted", func() bool {
		return do(t, "GET", runs+"/"+rid, nil, nil, nil) == http.StatusNotFound
	})
	st.mu.Lock()
	failed := st.calls
	st.mu.Unlock()
	if failed != 3 {
		t.Errorf("%d lock calls failed; want 3 (the test's failures did not reach the rollback)", failed)
	}
	if got := threadStatus(t, ts.URL, tid); got != "idle" {
		t.Errorf("thread status after the rollback: %s; want idle", got)
	}
	var state struct {
		Values map[string]any `json:"values"`
	}
	do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &state)
	if len(state.Values) != 0 {
		t.Errorf("state after the rollback of the thread's first run: %v; want empty", state.Values)
	}
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
	tid := newThread(t, ts.URL)
	runs := ts.URL + "/threads/" + tid + "/runs"
	rid := startRun(t, ts.URL, tid, map[string]any{"assistant_id": "slow", "input": humanInput("x"), "after_seconds": 3600}, "delayed run")
	st.mu.Lock()
	st.run = rid
	st.mu.Unlock()
	if code := do(t, "POST", runs+"/"+rid+"/cancel", nil, nil, nil); code != http.StatusNoContent && code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	var r struct {
		Status string `json:"status"`
	}
	do(t, "GET", runs+"/"+rid, nil, nil, &r)
	if thread := threadStatus(t, ts.URL, tid); r.Status != "running" || thread != "busy" {
		t.Errorf("run %s, thread %s after the cancellation of a run claimed elsewhere; want running, busy", r.Status, thread)
	}
}

// TestConcurrentStrategiesCancelsAndEdits: on one thread, runs created
// with each multitask strategy, cancellations (interrupt and rollback) of
// whatever runs are active, a PATCH of the state and a copy, all at once
// and over several rounds, answer only success or a documented refusal
// (404 for a run rolled back meanwhile, 409 for a busy thread or a run
// that ended), leave no run pending or running, the thread idle with the
// values of its state, and the thread usable.
func TestConcurrentStrategiesCancelsAndEdits(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			tid := newThread(t, ts.URL)
			in := humanInput("x")
			var mu sync.Mutex
			bad := []string{}
			check := func(what string, code int, ok ...int) {
				if !slices.Contains(ok, code) {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: %d", what, code))
					mu.Unlock()
				}
			}
			for round := range 4 {
				do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in}, nil, nil)
				var wg sync.WaitGroup
				for _, strategy := range []string{"interrupt", "rollback", "enqueue", "reject"} {
					wg.Go(func() {
						check("run "+strategy, do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in, "multitask_strategy": strategy}, nil, nil), 200, 409)
					})
				}
				for _, action := range []string{"interrupt", "rollback"} {
					wg.Go(func() {
						var runs []struct {
							RunID  string `json:"run_id"`
							Status string `json:"status"`
						}
						do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=100", nil, nil, &runs)
						for _, r := range runs {
							if r.Status == "pending" || r.Status == "running" {
								check("cancel "+action, do(t, "POST", ts.URL+"/threads/"+tid+"/runs/"+r.RunID+"/cancel?action="+action, nil, nil, nil), 202, 404, 409)
							}
						}
					})
				}
				wg.Go(func() {
					check("patch state", do(t, "PATCH", ts.URL+"/threads/"+tid+"/state", map[string]any{"metadata": map[string]any{"round": fmt.Sprint(round)}}, nil, nil), 204, 409)
					check("copy", do(t, "POST", ts.URL+"/threads/"+tid+"/copy", nil, nil, nil), 200, 409)
				})
				for range 20 {
					ts.gates.release(tid)
					runtime.Gosched()
				}
				wg.Wait()
			}
			for end := time.Now().Add(30 * time.Second); ; {
				var runs []struct {
					Status string `json:"status"`
				}
				do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=1000", nil, nil, &runs)
				active := 0
				for _, r := range runs {
					if r.Status == "pending" || r.Status == "running" {
						active++
					}
				}
				if active == 0 {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("%d runs still active after 30 s", active)
				}
				ts.gates.release(tid)
				time.Sleep(5 * time.Millisecond)
			}
			if len(bad) > 0 {
				t.Errorf("answers out of the documented ones: %v", bad)
			}
			idleWithItsState(t, ts.URL, tid, "after the rounds")
			ts.gates.release(tid)
			var out chat
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "slow", "input": in}, nil, &out); code != 200 || last(out) != "slow done: x" {
				t.Errorf("a run after the rounds: %d %+v", code, out)
			}
		})
	}
}

// TestRollbackToPausedStateThenInput is the interleaving of issue #21,
// one step at a time: a run cancelled with interrupt inside its node
// leaves its step pending (the thread's state has next [slow]); the next
// run starts from that state and is cancelled with rollback, which
// returns the thread to it; a run with new input then starts a new run
// from START, as on any thread whose latest state is paused, instead of
// failing with "thread is paused", and leaves the thread idle with the
// values of its state.
func TestRollbackToPausedStateThenInput(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			tid := newThread(t, ts.URL)
			runs := ts.URL + "/threads/" + tid + "/runs"
			in := map[string]any{"assistant_id": "slow", "input": humanInput("x")}
			next := func() []string {
				var st struct {
					Next []string `json:"next"`
				}
				if code := do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &st); code != 200 {
					t.Fatalf("state: %d", code)
				}
				return st.Next
			}
			rid := ts.heldRun(t, tid, "first run")
			if code := do(t, "POST", runs+"/"+rid+"/cancel?action=interrupt&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("cancel the first run (interrupt): %d", code)
			}
			if n := next(); !slices.Equal(n, []string{"slow"}) {
				t.Fatalf("next after the interrupted run: %v; want [slow]", n)
			}
			rid = ts.heldRun(t, tid, "second run")
			if code := do(t, "POST", runs+"/"+rid+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("cancel the second run (rollback): %d", code)
			}
			if n := next(); !slices.Equal(n, []string{"slow"}) {
				t.Fatalf("next after the rollback: %v; want [slow], the state the rolled-back run started from", n)
			}
			ts.gates.release(tid)
			var out map[string]any
			if code := do(t, "POST", runs+"/wait", in, nil, &out); code != 200 || out["__error__"] != nil {
				t.Fatalf("a run with input after the rollback: %d %v; want it to run from START", code, out)
			}
			msgs, _ := out["messages"].([]any)
			if len(msgs) != 3 || !strings.Contains(fmt.Sprint(msgs[2]), "slow done: x") {
				t.Errorf("messages after the run: %v; want the two inputs and slow done: x", msgs)
			}
			if next := idleWithItsState(t, ts.URL, tid, "after the run"); len(next) != 0 {
				t.Errorf("next after the run: %v; want none", next)
			}
		})
	}
}

// idleWithItsState checks that thread tid is idle and that its values are
// those of its state; it answers the state's next nodes. when says at
// which point of the test.
func idleWithItsState(t *testing.T, url, tid, when string) []string {
	t.Helper()
	var thread struct {
		Status string          `json:"status"`
		Values json.RawMessage `json:"values"`
	}
	var state struct {
		Values json.RawMessage `json:"values"`
		Next   []string        `json:"next"`
	}
	do(t, "GET", url+"/threads/"+tid, nil, nil, &thread)
	do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &state)
	if thread.Status != "idle" {
		t.Errorf("thread status %s: %s; want idle", when, thread.Status)
	}
	if !jsonSame(thread.Values, state.Values) {
		t.Errorf("thread values %s: %s; its state's %s", when, thread.Values, state.Values)
	}
	return state.Next
}

// jsonSame reports whether a and b hold the same JSON value.
func jsonSame(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
