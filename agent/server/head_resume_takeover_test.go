package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// registerAskGate registers graph "askgate" on ts: ask (an interrupt
// whose answer is approved), then work, which waits for the thread's gate
// of ts and says "worked: <approved>".
func registerAskGate(t *testing.T, ts *testServer) {
	t.Helper()
	registerAsk(t, ts.Server, "askgate", "work", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if err := ts.gates.wait(ctx, graph.ConfigFrom(ctx).ThreadID); err != nil {
			return graph.Update[chat]{}, err
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "worked: " + s.Approved}}), nil
	})
}

// TestTakeoverOfResumeFromHead: a run resuming (command.resume, no input)
// from a rollback's head that is paused, taken over before it saved a
// checkpoint (durability exit: none until it ends), answers the head's
// interrupt with its own resume value, on every store. The run made no
// checkpoint before it cleared the head, so its takeover found the
// thread's latest checkpoint, left by the run rolled back from the head,
// and resumed that run's work with that run's answer instead (issue #21).
func TestTakeoverOfResumeFromHead(t *testing.T) {
	testTakeoverOfResumeFromHead(t, false)
}

// TestTakeoverOfResumeFromNamedCheckpoint: as TestTakeoverOfResumeFromHead,
// R2 naming the checkpoint it resumes (checkpoint_id, the paused one) on
// the thread a rollback left at its head. R2 did not start from the head
// then, and made no copy of it: its takeover found R1's latest checkpoint
// and resumed R1's work with R1's answer, ignoring R2's checkpoint and
// resume value.
func TestTakeoverOfResumeFromNamedCheckpoint(t *testing.T) {
	testTakeoverOfResumeFromHead(t, true)
}

func testTakeoverOfResumeFromHead(t *testing.T, named bool) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			st, saver := backendOf(open(t))
			ts0 := newTestServer(t, server.Config{Store: st, Checkpointer: saver, Worker: "w0", Lease: time.Minute, SweepInterval: time.Hour})
			registerAskGate(t, ts0)
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts0.URL+"/threads", map[string]any{}, nil, &th)
			tid := th.ThreadID
			// P: the thread paused in ask.
			in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
			if code := do(t, "POST", ts0.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "askgate", "input": in}, nil, nil); code != 200 {
				t.Fatalf("first run: %d", code)
			}
			paused := readHeadState(t, ts0.URL, tid).Checkpoint.CheckpointID
			// R1 answers "one", saves the step (durability sync), waits
			// in work and is rolled back: the head is P, and the thread's
			// latest checkpoint is R1's, with work pending.
			var r1 struct {
				RunID string `json:"run_id"`
			}
			if code := do(t, "POST", ts0.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "askgate", "command": map[string]any{"resume": "one"}, "durability": "sync"}, nil, &r1); code != 200 {
				t.Fatalf("R1: %d", code)
			}
			waitUntil(t, "R1 to wait in work", func() bool { return ts0.gates.waiting(tid) })
			if code := do(t, "POST", ts0.URL+"/threads/"+tid+"/runs/"+r1.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != 204 {
				t.Fatalf("rollback of R1: %d", code)
			}
			if got := readHeadState(t, ts0.URL, tid).Checkpoint.CheckpointID; got != paused {
				t.Fatalf("state after the rollback: checkpoint %s; want the paused %s", got, paused)
			}
			// R1's instance stops, so that R2 runs on the one that stalls
			// (see TestTakeoverOfRunFromHead).
			if err := ts0.Server.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			// R2 answers "two" from the head, on an instance whose lease
			// renewals fail, and waits in work, having saved nothing.
			ts1 := stallingServer(t, st, saver)
			registerAskGate(t, ts1)
			var r2 struct {
				RunID string `json:"run_id"`
			}
			body := map[string]any{"assistant_id": "askgate", "command": map[string]any{"resume": "two"}, "durability": "exit"}
			if named {
				body["checkpoint_id"] = paused
			}
			if code := do(t, "POST", ts1.URL+"/threads/"+tid+"/runs", body, nil, &r2); code != 200 {
				t.Fatalf("R2: %d", code)
			}
			waitUntil(t, "R2 to wait in work", func() bool { return ts1.gates.waiting(tid) })
			// Another instance takes R2 over once its lease expired.
			ts2 := takeoverServer(t, st, saver)
			registerAskGate(t, ts2)
			ts2.gates.release(tid)
			status := waitRunEnd(t, ts2.URL, tid, r2.RunID, "R2 taken over to end")
			state := readHeadState(t, ts2.URL, tid)
			var got []string
			for _, m := range state.Values.Messages {
				got = append(got, m.Content)
			}
			if status != "success" || state.Values.Approved != "two" || !equalStrings(got, []string{"x", "worked: two"}) {
				t.Errorf("R2 taken over: %s, approved %q, messages %q; want success, two, [x worked: two] (its own answer to the head's interrupt)", status, state.Values.Approved, got)
			}
		})
	}
}
