package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// pausedHead registers graph "ask" on ts (ask: an interrupt whose answer
// is approved; work: waits until its run is cancelled when approved is
// "block", else says "worked: <approved>"), and makes a thread whose
// head a rollback left at a paused checkpoint: a run with input pauses
// in ask, a run resuming it with "block" waits in work and is rolled
// back. It returns the thread's id and the paused checkpoint's id.
func pausedHead(t *testing.T, ts *testServer) (tid, paused string) {
	t.Helper()
	entered := make(chan struct{}, 1)
	registerAsk(t, ts.Server, "ask", "work", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if s.Approved == "block" {
			entered <- struct{}{}
			<-ctx.Done()
			return graph.Update[chat]{}, ctx.Err()
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "worked: " + s.Approved}}), nil
	})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	tid = th.ThreadID
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "ask", "input": in}, nil, nil); code != 200 {
		t.Fatalf("first run: %d", code)
	}
	st := readHeadState(t, ts.URL, tid)
	if len(st.Next) != 1 || st.Next[0] != "ask" {
		t.Fatalf("next after the first run: %v; want [ask]", st.Next)
	}
	paused = st.Checkpoint.CheckpointID
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "ask", "command": map[string]any{"resume": "block"}}, nil, &run); code != 200 {
		t.Fatalf("resuming run: %d", code)
	}
	<-entered
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
		t.Fatalf("rollback: %d", code)
	}
	if st := readHeadState(t, ts.URL, tid); st.Checkpoint.CheckpointID != paused || len(st.Next) != 1 || st.Next[0] != "ask" {
		t.Fatalf("state after the rollback: checkpoint %s, next %v; want the paused %s, [ask]", st.Checkpoint.CheckpointID, st.Next, paused)
	}
	return tid, paused
}

type headState struct {
	Values     chat     `json:"values"`
	Next       []string `json:"next"`
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	ParentCheckpoint *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"parent_checkpoint"`
	Interrupts []any `json:"interrupts"`
}

func readHeadState(t *testing.T, url, tid string) headState {
	t.Helper()
	var st headState
	if code := do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &st); code != 200 {
		t.Fatalf("GET state: %d", code)
	}
	return st
}

// TestPausedHead: a thread whose head a rollback left at a paused
// checkpoint goes on from there, on every store (issue #21): a
// command.resume answers the paused interrupt; new input drops the
// paused step and starts again from START (pausing in ask again, with
// both messages); an update_state with as_node applies on the paused
// checkpoint, as that node's output.
func TestPausedHead(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			t.Run("resume", func(t *testing.T) {
				ts := newTestServer(t, open(t))
				tid, _ := pausedHead(t, ts)
				var out map[string]any
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "ask", "command": map[string]any{"resume": "ok"}}, nil, &out); code != 200 {
					t.Fatalf("resume: %d %v", code, out)
				}
				st := readHeadState(t, ts.URL, tid)
				if len(st.Next) != 0 || st.Values.Approved != "ok" || last(st.Values) != "worked: ok" {
					t.Errorf("after resuming the paused head: next %v, approved %q, last message %q; want none, ok, %q", st.Next, st.Values.Approved, last(st.Values), "worked: ok")
				}
			})
			t.Run("input", func(t *testing.T) {
				ts := newTestServer(t, open(t))
				tid, _ := pausedHead(t, ts)
				in := map[string]any{"messages": []msg{{Type: "human", Content: "y"}}}
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "ask", "input": in}, nil, nil); code != 200 {
					t.Fatalf("input: %d", code)
				}
				st := readHeadState(t, ts.URL, tid)
				var contents []string
				for _, m := range st.Values.Messages {
					contents = append(contents, m.Content)
				}
				if len(st.Next) != 1 || st.Next[0] != "ask" || !equalStrings(contents, []string{"x", "y"}) || st.Values.Approved != "" {
					t.Errorf("after new input on the paused head: next %v, messages %v, approved %q; want [ask], [x y], none", st.Next, contents, st.Values.Approved)
				}
			})
			t.Run("update_state", func(t *testing.T) {
				ts := newTestServer(t, open(t))
				tid, paused := pausedHead(t, ts)
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": "z"}, "as_node": "ask"}, nil, nil); code != 200 {
					t.Fatalf("update_state: %d", code)
				}
				st := readHeadState(t, ts.URL, tid)
				if len(st.Next) != 1 || st.Next[0] != "work" || st.Values.Approved != "z" || st.ParentCheckpoint == nil || st.ParentCheckpoint.CheckpointID != paused {
					t.Errorf("after update_state as ask on the paused head: next %v, approved %q, parent %+v; want [work], z, %s", st.Next, st.Values.Approved, st.ParentCheckpoint, paused)
				}
				// The thread goes on from the update.
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "ask"}, nil, nil); code != 200 {
					t.Fatalf("run after update_state: %d", code)
				}
				if st := readHeadState(t, ts.URL, tid); len(st.Next) != 0 || last(st.Values) != "worked: z" {
					t.Errorf("after the run that follows update_state: next %v, last message %q; want none, %q", st.Next, last(st.Values), "worked: z")
				}
			})
		})
	}
}
