package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// askHold serves the graph "askhold": ask (an interrupt whose answer
// becomes approved) -> hold -> END, where hold, for the answer "block",
// says so on entered and waits until its run ends. A resume with "block"
// thus leaves a run running on a checkpoint past the interrupt.
func askHold(t *testing.T) (url string, entered <-chan struct{}) {
	t.Helper()
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan struct{}, 8)
	registerAsk(t, srv, "askhold", "hold", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if s.Approved == "block" {
			in <- struct{}{}
			<-ctx.Done()
			return graph.Update[chat]{}, ctx.Err()
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "held: " + s.Approved}}), nil
	})
	return newHTTPServer(t, srv), in
}

// interrupted runs askhold on a new thread until its interrupt and
// answers the thread, the checkpoint it waits at and the interrupt's id.
func interrupted(t *testing.T, url string) (tid, cid, iid string) {
	t.Helper()
	tid = newThread(t, url)
	do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "askhold", "input": map[string]any{}}, nil, nil)
	var st struct {
		Interrupts []server.Interrupt `json:"interrupts"`
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &st)
	if len(st.Interrupts) != 1 || st.Checkpoint.CheckpointID == "" {
		t.Fatalf("state after the first run: %+v; want one interrupt", st)
	}
	return tid, st.Checkpoint.CheckpointID, st.Interrupts[0].ID
}

// TestStrictResumeFromItsCheckpoint: a strict resume is checked against
// the interrupts of the checkpoint its run starts from, not the thread's
// latest: the one a rollback returned the thread to (the resume is
// checked when the run starts), and the one the request names, with
// checkpoint_id or checkpoint.checkpoint_id (checked when the run is
// created, so that a refusal is a 422). Without strict_resume, a resume
// by interrupt id answers the interrupts of that checkpoint as well.
func TestStrictResumeFromItsCheckpoint(t *testing.T) {
	url, entered := askHold(t)
	tid, c1, iid := interrupted(t, url)
	runs := url + "/threads/" + tid + "/runs"

	// A resume that runs on past the interrupt, rolled back by a strict
	// resume of the same interrupt: it starts from c1, where the
	// interrupt waits (the latest checkpoint, past it, waits on none).
	var second struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": "block"}}, nil, &second); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	<-entered
	var out map[string]any
	code := do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": map[string]any{iid: "again"}},
		"strict_resume": true, "multitask_strategy": "rollback"}, nil, &out)
	if code != 200 || out["approved"] != "again" {
		t.Fatalf("strict resume after a rollback: %d %v; want approved again", code, out)
	}
	if code := do(t, "GET", runs+"/"+second.RunID, nil, nil, nil); code != http.StatusNotFound {
		t.Errorf("the rolled-back run: %d; want 404 (deleted)", code)
	}

	// The thread waits on nothing now; a strict resume of c1's interrupt
	// naming c1 goes on from there, one naming another is refused.
	for _, named := range []map[string]any{{"checkpoint_id": c1}, {"checkpoint": map[string]any{"checkpoint_id": c1}}} {
		body := map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": map[string]any{"stale": "x"}}, "strict_resume": true}
		for k, v := range named {
			body[k] = v
		}
		out = nil
		code = do(t, "POST", runs+"/wait", body, nil, &out)
		if detail, _ := out["detail"].(string); code != 422 || !strings.Contains(detail, "stale") || !strings.Contains(detail, iid) {
			t.Errorf("strict resume of an unknown interrupt at %v: %d %v; want 422 naming it and %s", named, code, out, iid)
		}
		body["command"] = map[string]any{"resume": map[string]any{iid: "third"}}
		out = nil
		if code = do(t, "POST", runs+"/wait", body, nil, &out); code != 200 || out["approved"] != "third" {
			t.Errorf("strict resume of c1's interrupt at %v: %d %v; want approved third", named, code, out)
		}
	}
	// Without strict_resume, an object keyed by the interrupts of the
	// checkpoint named answers them by id too.
	out = nil
	code = do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": map[string]any{iid: "fourth"}}, "checkpoint_id": c1}, nil, &out)
	if code != 200 || out["approved"] != "fourth" {
		t.Errorf("resume by id at c1: %d %v; want approved fourth", code, out)
	}
	out = nil
	code = do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": map[string]any{iid: "x"}}, "strict_resume": true}, nil, &out)
	if detail, _ := out["detail"].(string); code != 422 || !strings.Contains(detail, "waits on no interrupt") {
		t.Errorf("strict resume naming no checkpoint of a thread that waits on none: %d %v; want 422", code, out)
	}
}

// TestPatchStateBusyAndRolledBack: PATCH /threads/{thread_id}/state is
// refused with 409 while a run of the thread is pending or running, and
// patches nothing; after a rollback it patches the checkpoint the thread
// was returned to, which its state shows, not the latest.
func TestPatchStateBusyAndRolledBack(t *testing.T) {
	url, entered := askHold(t)
	tid, c1, _ := interrupted(t, url)
	runs, path := url+"/threads/"+tid+"/runs", url+"/threads/"+tid+"/state"
	labelled := func() []string {
		t.Helper()
		var hist []struct {
			Checkpoint struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
		}
		if code := do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"metadata": map[string]any{"label": "x"}}, nil, &hist); code != 200 {
			t.Fatalf("history: %d", code)
		}
		var ids []string
		for _, h := range hist {
			ids = append(ids, h.Checkpoint.CheckpointID)
		}
		return ids
	}
	patch := map[string]any{"metadata": map[string]any{"label": "x"}}

	var pending struct {
		RunID string `json:"run_id"`
	}
	do(t, "POST", runs, map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": "later"}, "after_seconds": 3600}, nil, &pending)
	var e struct{ Detail string }
	if code := do(t, "PATCH", path, patch, nil, &e); code != http.StatusConflict || !strings.Contains(e.Detail, pending.RunID) {
		t.Errorf("patch with a run pending: %d %q; want 409 naming the run", code, e.Detail)
	}
	if code := do(t, "POST", runs+"/"+pending.RunID+"/cancel?wait=1", nil, nil, nil); code != http.StatusNoContent {
		t.Fatalf("cancel the pending run: %d", code)
	}

	var running struct {
		RunID string `json:"run_id"`
	}
	do(t, "POST", runs, map[string]any{"assistant_id": "askhold", "command": map[string]any{"resume": "block"}}, nil, &running)
	<-entered
	if code := do(t, "PATCH", path, patch, nil, &e); code != http.StatusConflict || !strings.Contains(e.Detail, running.RunID) {
		t.Errorf("patch with a run running: %d %q; want 409 naming the run", code, e.Detail)
	}
	if ids := labelled(); len(ids) != 0 {
		t.Errorf("checkpoints labelled after the refused patches: %v; want none", ids)
	}

	if code := do(t, "POST", runs+"/"+running.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
		t.Fatalf("rollback: %d", code)
	}
	if code := do(t, "PATCH", path, patch, nil, nil); code != http.StatusNoContent {
		t.Fatalf("patch after the rollback: %d; want 204", code)
	}
	var st labelledState
	do(t, "GET", path, nil, nil, &st)
	if st.Checkpoint.CheckpointID != c1 || st.Metadata["label"] != "x" {
		t.Errorf("state after the rollback and patch: checkpoint %s metadata %v; want %s labelled x", st.Checkpoint.CheckpointID, st.Metadata, c1)
	}
	if ids := labelled(); len(ids) != 1 || ids[0] != c1 {
		t.Errorf("checkpoints labelled: %v; want %s alone", ids, c1)
	}
}
