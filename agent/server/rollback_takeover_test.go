package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// deafStore is the Store of an instance that stalls: its lease renewals
// fail (the run's lease expires, and another instance takes the run
// over), and its reads of a run do not see a cancellation recorded on it
// (so that the cancellation is left to the takeover, as one recorded by
// deferRollback is).
type deafStore struct{ server.Store }

func (deafStore) Renew(context.Context, string, string, time.Duration) error {
	return errors.New("deafStore: transient error")
}

func (d deafStore) Run(ctx context.Context, id string) (*server.Run, error) {
	r, err := d.Store.Run(ctx, id)
	if r != nil {
		c := *r
		c.Cancel = ""
		r = &c
	}
	return r, err
}

// backendOf returns cfg's store and checkpointer: memory ones where cfg
// names no store.
func backendOf(cfg server.Config) (server.Store, checkpoint.Saver) {
	if cfg.Store == nil {
		return server.NewMemoryStore(), checkpoint.NewMemory()
	}
	return cfg.Store, cfg.Checkpointer
}

// stallingServer starts an instance (worker w1) on st and saver whose
// lease renewals fail (deafStore): a run it starts is taken over once its
// lease of 300ms expired. It does not sweep.
func stallingServer(t *testing.T, st server.Store, saver checkpoint.Saver) *testServer {
	t.Helper()
	return newTestServer(t, server.Config{Store: deafStore{st}, Checkpointer: saver, Worker: "w1", Lease: 300 * time.Millisecond, SweepInterval: time.Hour})
}

// takeoverServer starts an instance (worker w2) on st and saver that
// sweeps every 20ms: it takes over the runs whose leases expired.
func takeoverServer(t *testing.T, st server.Store, saver checkpoint.Saver) *testServer {
	t.Helper()
	return newTestServer(t, server.Config{Store: st, Checkpointer: saver, Worker: "w2", Lease: time.Minute, SweepInterval: 20 * time.Millisecond})
}

// waitRunEnd waits until run rid of thread tid, read at url, is neither
// pending nor running (what names the wait), and returns its status.
func waitRunEnd(t *testing.T, url, tid, rid, what string) string {
	t.Helper()
	var out struct {
		Status string `json:"status"`
	}
	waitUntil(t, what, func() bool {
		do(t, "GET", url+"/threads/"+tid+"/runs/"+rid, nil, nil, &out)
		return out.Status != "pending" && out.Status != "running"
	})
	return out.Status
}

// crashAfterDrop is a checkpointer that, once armed, stalls after it saved
// a checkpoint of source update (a run's drop of a pending step) until
// its context ends: the instance crashes between the drop and anything
// the run records after it.
type crashAfterDrop struct {
	checkpoint.Saver
	armed   atomic.Bool
	crashed atomic.Bool
}

func (c *crashAfterDrop) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if err := c.Saver.Put(ctx, expect, cp, blobs, writes); err != nil {
		return err
	}
	if c.armed.Load() && cp.Metadata[graph.MetaSource] == "update" {
		c.crashed.Store(true)
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// takeoverState is what a client reads of a thread to compare two
// rollbacks: its state (values, next, the names of its tasks, its
// checkpoint) and the head of its history.
type takeoverState struct {
	Values     json.RawMessage
	Next       []string
	Tasks      []string
	Checkpoint string
	// The history's first entry: its next, values and source.
	HeadNext   []string
	HeadValues json.RawMessage
	HeadSource string
}

// String shows s as JSON (its values as they were read).
func (s takeoverState) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

type stateBody struct {
	Values json.RawMessage `json:"values"`
	Next   []string        `json:"next"`
	Tasks  []struct {
		Name string `json:"name"`
	} `json:"tasks"`
	Metadata   map[string]any `json:"metadata"`
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
}

func readTakeoverState(t *testing.T, url, tid string) takeoverState {
	t.Helper()
	var st stateBody
	if code := do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &st); code != 200 {
		t.Fatalf("GET state: %d", code)
	}
	var hist []stateBody
	if code := do(t, "GET", url+"/threads/"+tid+"/history?limit=1", nil, nil, &hist); code != 200 || len(hist) != 1 {
		t.Fatalf("GET history: %d, %d entries", code, len(hist))
	}
	out := takeoverState{Values: st.Values, Next: st.Next, Checkpoint: st.Checkpoint.CheckpointID,
		HeadNext: hist[0].Next, HeadValues: hist[0].Values}
	for _, task := range st.Tasks {
		out.Tasks = append(out.Tasks, task.Name)
	}
	out.HeadSource, _ = hist[0].Metadata["source"].(string)
	return out
}

// pausedThread makes a thread on url whose run paused before node slow,
// and returns its id.
func pausedThread(t *testing.T, url string) string {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", url+"/threads", map[string]any{}, nil, &th)
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	if code := do(t, "POST", url+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "slow", "input": in, "interrupt_before": []string{"slow"}}, nil, nil); code != 200 {
		t.Fatalf("paused run: %d", code)
	}
	return th.ThreadID
}

// startOnPaused starts a run with new input on paused thread tid (it
// drops the pending step, then waits in node slow) and returns its id.
func startOnPaused(t *testing.T, ts *testServer, tid string) string {
	t.Helper()
	var run struct {
		RunID string `json:"run_id"`
	}
	in := map[string]any{"messages": []msg{{Type: "human", Content: "y"}}}
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in, "durability": "exit"}, nil, &run); code != 200 {
		t.Fatalf("run: %d", code)
	}
	waitUntil(t, "the run to wait in its node", func() bool { return ts.gates.waiting(tid) })
	return run.RunID
}

// TestRollbackTakeoverMatchesLocal: a run with input on a paused thread
// drops the pending step, then is rolled back, by the instance that runs
// it (a local rollback) or by the instance that takes it over with the
// rollback recorded on it (Run.Cancel, as deferRollback leaves it). Both
// return the thread to the state before the run (the paused checkpoint:
// values, next, tasks) with the same history head, on every store. The
// takeover returned it to the drop's checkpoint, with no next task
// (issue #21).
func TestRollbackTakeoverMatchesLocal(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			cfg := open(t)
			st, _ := backendOf(cfg)
			ts1 := stallingServer(t, st, cfg.Checkpointer)

			// The takeover's rollback.
			taken := pausedThread(t, ts1.URL)
			before := readTakeoverState(t, ts1.URL, taken)
			rid := startOnPaused(t, ts1, taken)
			if _, err := st.UpdateRun(t.Context(), rid, func(r *server.Run) error { r.Cancel = "rollback"; return nil }); err != nil {
				t.Fatal(err)
			}
			ts2 := takeoverServer(t, st, ts1.Checkpointer())
			waitUntil(t, "the run taken over to be rolled back", func() bool {
				return do(t, "GET", ts2.URL+"/threads/"+taken+"/runs/"+rid, nil, nil, nil) == http.StatusNotFound
			})
			afterTakeover := readTakeoverState(t, ts2.URL, taken)

			// The local rollback, on the instance that runs the run.
			local := pausedThread(t, ts2.URL)
			beforeLocal := readTakeoverState(t, ts2.URL, local)
			lrid := startOnPaused(t, ts2, local)
			if code := do(t, "POST", ts2.URL+"/threads/"+local+"/runs/"+lrid+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("local rollback: %d", code)
			}
			afterLocal := readTakeoverState(t, ts2.URL, local)

			for _, c := range []struct {
				path          string
				before, after takeoverState
			}{{"takeover", before, afterTakeover}, {"local", beforeLocal, afterLocal}} {
				if !jsonSame(c.after.Values, c.before.Values) || !equalStrings(c.after.Next, c.before.Next) ||
					!equalStrings(c.after.Tasks, c.before.Tasks) || c.after.Checkpoint != c.before.Checkpoint {
					t.Errorf("%s rollback: state %v; want the state before the run %v", c.path, c.after, c.before)
				}
			}
			if !equalStrings(afterTakeover.Next, afterLocal.Next) || !equalStrings(afterTakeover.Tasks, afterLocal.Tasks) ||
				!jsonSame(afterTakeover.Values, afterLocal.Values) || !equalStrings(afterTakeover.HeadNext, afterLocal.HeadNext) ||
				!jsonSame(afterTakeover.HeadValues, afterLocal.HeadValues) || afterTakeover.HeadSource != afterLocal.HeadSource {
				t.Errorf("rollback after a takeover left %v; a local one %v", afterTakeover, afterLocal)
			}
			ts1.gates.release(taken)
		})
	}
}

// TestTakeoverAfterCrashAtDrop: an instance that crashes right after a
// run with input dropped its thread's pending step (before it records
// anything more) leaves a run that the instance taking it over runs from
// its input, on every store; it ended the run success without running
// the input, taking the drop for a step of the run's graph (issue #21).
func TestTakeoverAfterCrashAtDrop(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			st, saver := backendOf(open(t))
			crash := &crashAfterDrop{Saver: saver}
			ts1 := stallingServer(t, st, crash)
			tid := pausedThread(t, ts1.URL)
			crash.armed.Store(true)
			var run struct {
				RunID string `json:"run_id"`
			}
			in := map[string]any{"messages": []msg{{Type: "human", Content: "y"}}}
			if code := do(t, "POST", ts1.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in}, nil, &run); code != 200 {
				t.Fatalf("run: %d", code)
			}
			waitUntil(t, "the first instance to crash after the drop", crash.crashed.Load)
			ts2 := takeoverServer(t, st, saver)
			ts2.gates.release(tid)
			status := waitRunEnd(t, ts2.URL, tid, run.RunID, "the run taken over to end")
			var state struct {
				Values chat     `json:"values"`
				Next   []string `json:"next"`
			}
			do(t, "GET", ts2.URL+"/threads/"+tid+"/state", nil, nil, &state)
			if status != "success" || last(state.Values) != "slow done: y" {
				t.Errorf("run taken over after the crash: %s, last message %q; want success, %q (its input run)", status, last(state.Values), "slow done: y")
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
