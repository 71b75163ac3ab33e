package server_test

import (
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestTakeoverOfRunFromHead: a run started with input from a rollback's
// head that has no pending step, taken over before it saved a checkpoint
// (durability exit: none until it ends), runs its own input on the
// head's state, on every store. It resumed the run rolled back from that
// head instead (the thread's latest checkpoint, left by that run, once
// the head was cleared), and ended without running its input (issue #21).
// R1's instance is closed before R2 is made, so that R2 runs on the
// instance that stalls (R1's worker claimed it now and then: the test
// timed out waiting for it there).
func TestTakeoverOfRunFromHead(t *testing.T) {
	testTakeoverOfRunFromHead(t, false)
}

// TestTakeoverOfRunFromNamedCheckpoint: as TestTakeoverOfRunFromHead, R2
// naming the checkpoint it runs from (checkpoint_id, the head's). R2
// made no copy of it before it cleared the head: its takeover resumed
// the run rolled back and ended without running R2's input.
func TestTakeoverOfRunFromNamedCheckpoint(t *testing.T) {
	testTakeoverOfRunFromHead(t, true)
}

func testTakeoverOfRunFromHead(t *testing.T, named bool) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			st, saver := backendOf(open(t))
			ts0 := newTestServer(t, server.Config{Store: st, Checkpointer: saver, Worker: "w0", Lease: time.Minute, SweepInterval: time.Hour})
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts0.URL+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "slow"}}, nil, &th)
			tid := th.ThreadID
			// S: a checkpoint with no pending step.
			if code := do(t, "POST", ts0.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"messages": []msg{{Type: "human", Content: "s"}}}}, nil, nil); code != 200 {
				t.Fatalf("update_state: %d", code)
			}
			head := readHeadState(t, ts0.URL, tid).Checkpoint.CheckpointID
			// R1 runs from S, saves its input checkpoint, waits in its
			// node and is rolled back: the head is S, R1's checkpoints stay.
			var r1 struct {
				RunID string `json:"run_id"`
			}
			in1 := map[string]any{"messages": []msg{{Type: "human", Content: "one"}}}
			if code := do(t, "POST", ts0.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in1}, nil, &r1); code != 200 {
				t.Fatalf("R1: %d", code)
			}
			waitUntil(t, "R1 to wait in its node", func() bool { return ts0.gates.waiting(tid) })
			if code := do(t, "POST", ts0.URL+"/threads/"+tid+"/runs/"+r1.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != 204 {
				t.Fatalf("rollback of R1: %d", code)
			}
			// R1's instance stops here: its thread's worker, still there
			// after the rollback, claimed R2 when R2 came before it left
			// (a run queued on a thread is any instance's to run), and R2
			// then waited on that instance, not on the one meant to stall.
			if err := ts0.Server.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			// R2 starts from the head on an instance that stalls.
			ts1 := stallingServer(t, st, saver)
			var r2 struct {
				RunID string `json:"run_id"`
			}
			in2 := map[string]any{"messages": []msg{{Type: "human", Content: "two"}}}
			body := map[string]any{"assistant_id": "slow", "input": in2, "durability": "exit"}
			if named {
				body["checkpoint_id"] = head
			}
			if code := do(t, "POST", ts1.URL+"/threads/"+tid+"/runs", body, nil, &r2); code != 200 {
				t.Fatalf("R2: %d", code)
			}
			waitUntil(t, "R2 to wait in its node", func() bool { return ts1.gates.waiting(tid) })
			ts2 := takeoverServer(t, st, saver)
			ts2.gates.release(tid)
			status := waitRunEnd(t, ts2.URL, tid, r2.RunID, "R2 taken over to end")
			var state struct {
				Values chat `json:"values"`
			}
			do(t, "GET", ts2.URL+"/threads/"+tid+"/state", nil, nil, &state)
			var got []string
			for _, m := range state.Values.Messages {
				got = append(got, m.Content)
			}
			if status != "success" || !equalStrings(got, []string{"s", "two", "slow done: two"}) {
				t.Errorf("R2 taken over: %s, messages %q; want success, [s two slow done: two] (its input run on the head)", status, got)
			}
		})
	}
}
