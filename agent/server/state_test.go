package server_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestStateAtCheckpointNeedsTheCheckpoint: POST /state/checkpoint without
// the checkpoint object (e.g. checkpoint_id at the top level) is refused
// naming the field, instead of answering the latest state as if it were
// the checkpoint's; with it, the checkpoint's state is answered.
func TestStateAtCheckpointNeedsTheCheckpoint(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	var all []struct {
		Values     chat
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"limit": 10}, nil, &all)
	if len(all) < 2 {
		t.Fatalf("history: %d states; want at least 2", len(all))
	}
	old := all[len(all)-1]
	for body, want := range map[string]string{
		`{"checkpoint_id":"` + old.Checkpoint.CheckpointID + `"}`: `checkpoint: required; put checkpoint_id inside checkpoint`,
		`{}`: `checkpoint: required; send {"checkpoint"`,
	} {
		code, got := raw(t, "POST", ts.URL+"/threads/"+tid+"/state/checkpoint", body, nil)
		if code != 422 || !strings.Contains(got, strings.ReplaceAll(want, `"`, `\"`)) {
			t.Fatalf("%s: %d %s; want 422 %q", body, code, got, want)
		}
	}
	var st struct{ Values chat }
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": old.Checkpoint.CheckpointID}}, nil, &st); code != 200 || len(st.Values.Messages) != len(old.Values.Messages) {
		t.Fatalf("state at the first checkpoint: %d %+v; want %+v", code, st.Values, old.Values)
	}
}

// POST /threads/{id}/state with values that are not an object names the
// kind given and the shape expected, not a Go type.
func TestUpdateStateValuesNotObject(t *testing.T) {
	url := serveChain(t, server.Config{})
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "chain"}}, nil, &th); code != 200 {
		t.Fatalf("create: %d %v", code, th)
	}
	for _, v := range []any{[]int{1, 2}, "str", 5} {
		var out map[string]any
		code := do(t, "POST", url+"/threads/"+th["thread_id"].(string)+"/state", map[string]any{"values": v}, nil, &out)
		d, _ := out["detail"].(string)
		if code != 422 || !strings.HasPrefix(d, "values: must be a JSON object") || strings.Contains(d, "Go value") {
			t.Fatalf("values %v: %d %v; want 422 naming values and the shape, no Go type", v, code, out)
		}
	}
}

// TestUpdateStateAtCheckpoint: POST /threads/{id}/state with checkpoint_id
// (or checkpoint.checkpoint_id) edits that checkpoint's state on a new
// branch, not the latest state; an unknown checkpoint is 404.
func TestUpdateStateAtCheckpoint(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	var paused map[string]any
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Role: "user", Content: "hi"}}}}, nil, &paused)
	type state struct {
		Values     chat     `json:"values"`
		Next       []string `json:"next"`
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
		ParentCheckpoint *struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"parent_checkpoint"`
	}
	var hist []state
	do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"limit": 10}, nil, &hist)
	var before string // the checkpoint with draft next: the input, before the draft
	for _, h := range hist {
		if len(h.Next) == 1 && h.Next[0] == "draft" {
			before = h.Checkpoint.CheckpointID
		}
	}
	if before == "" {
		t.Fatalf("no checkpoint with draft next in %+v", hist)
	}
	for _, body := range []map[string]any{
		{"values": map[string]any{"approved": "edited"}, "checkpoint_id": before},
		{"values": map[string]any{"approved": "edited"}, "checkpoint": map[string]any{"checkpoint_id": before}},
	} {
		var upd struct {
			Checkpoint struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
		}
		if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", body, nil, &upd); code != 200 {
			t.Fatalf("update at %s: %d", before, code)
		}
		var st state
		do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &st)
		if st.Checkpoint.CheckpointID != upd.Checkpoint.CheckpointID || st.ParentCheckpoint == nil || st.ParentCheckpoint.CheckpointID != before {
			t.Fatalf("state after the update: %+v; want the update %s, child of %s", st, upd.Checkpoint.CheckpointID, before)
		}
		if len(st.Values.Messages) != 1 || st.Values.Approved != "edited" || len(st.Next) != 1 || st.Next[0] != "draft" {
			t.Fatalf("state after the update: %+v; want the input alone, approved edited, draft next", st)
		}
	}
	var e map[string]string
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": "x"}, "checkpoint_id": "1f0-nope"}, nil, &e); code != 404 || !strings.Contains(e["detail"], "1f0-nope") {
		t.Fatalf("update at an unknown checkpoint: %d %v; want 404 naming it", code, e)
	}
}
