package server_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// failLatestOnce is a checkpointer whose next read of a thread's latest
// checkpoint, once armed, fails with a transient error.
type failLatestOnce struct {
	checkpoint.Saver
	armed atomic.Bool
}

func (f *failLatestOnce) Get(ctx context.Context, tid, id string) (*checkpoint.Snapshot, error) {
	if id == "" && f.armed.CompareAndSwap(true, false) {
		return nil, errors.New("failLatestOnce: transient error")
	}
	return f.Saver.Get(ctx, tid, id)
}

// TestRunStartLatestError: a run whose read of the thread's latest
// checkpoint fails at its start ends with an error, and
// leaves the thread's state as it was, on every store. It recorded its
// start as "" and went on: a rollback of it then deleted the thread's
// whole history (issue #21).
func TestRunStartLatestError(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			st, saver := backendOf(open(t))
			f := &failLatestOnce{Saver: saver}
			ts := newTestServer(t, server.Config{Store: st, Checkpointer: f, Lease: time.Minute})
			tid := pausedThread(t, ts.URL)
			before := readTakeoverState(t, ts.URL, tid)
			f.armed.Store(true)
			var run struct {
				RunID string `json:"run_id"`
			}
			in := map[string]any{"messages": []msg{{Type: "human", Content: "y"}}}
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in}, nil, &run); code != 200 {
				t.Fatalf("run: %d", code)
			}
			var out struct {
				Status string `json:"status"`
			}
			waitUntil(t, "the run to wait in its node or end", func() bool {
				do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+run.RunID, nil, nil, &out)
				return ts.gates.waiting(tid) || out.Status != "pending" && out.Status != "running"
			})
			if ts.gates.waiting(tid) {
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != 204 {
					t.Fatalf("rollback: %d", code)
				}
				out.Status = "rolled back"
			}
			after := readTakeoverState(t, ts.URL, tid)
			if out.Status != "error" {
				t.Errorf("run whose start read failed: %s; want error", out.Status)
			}
			if !jsonSame(after.Values, before.Values) || after.Checkpoint != before.Checkpoint || !equalStrings(after.Next, before.Next) {
				t.Errorf("thread after the run: %v; want it as before %v", after, before)
			}
		})
	}
}
