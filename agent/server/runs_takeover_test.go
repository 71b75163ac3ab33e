package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

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
	tid := newThread(t, ts1.URL)
	in := humanInput("x")
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
	rid := startRun(t, ts1.URL, tid, map[string]any{"assistant_id": "slow", "input": humanInput("y"), "durability": "exit"}, "run")
	waitUntil(t, "the run to wait in its node on the first instance", func() bool { return ts1.gates.waiting(tid) })
	ts2 := takeoverServer(t, mem, ts1.Checkpointer())
	ts2.gates.release(tid)
	if status := waitRunEnd(t, ts2.URL, tid, rid, "the run taken over to end"); status != "success" {
		t.Fatalf("run taken over ended %s; want success", status)
	}
	do(t, "GET", ts2.URL+"/threads/"+tid+"/state", nil, nil, &state)
	if got := last(state.Values); got != "slow done: y" {
		t.Errorf("last message after the run taken over: %q; want %q (the input was not run)", got, "slow done: y")
	}
	ts1.gates.release(tid)
}
