package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/google/uuid"
)

// TestRunCheckpointRefusedWithoutThread: a run that names a checkpoint
// is refused before anything is made when it cannot start from it: on a
// thread that does not exist (if_not_exists create created the thread,
// and the run failed when it started, leaving the thread in status
// error), and as a stateless run, which starts on a new thread.
func TestRunCheckpointRefusedWithoutThread(t *testing.T) {
	s := newTestServer(t, server.Config{})
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	for _, field := range []string{"checkpoint_id", "checkpoint.checkpoint_id"} {
		body := map[string]any{"assistant_id": "agent", "input": input, "if_not_exists": "create"}
		if field == "checkpoint_id" {
			body["checkpoint_id"] = "x"
		} else {
			body["checkpoint"] = map[string]any{"checkpoint_id": "x"}
		}
		tid := uuid.NewString()
		for _, path := range []string{"/threads/" + tid + "/runs", "/threads/" + tid + "/runs/wait"} {
			var e struct{ Detail string }
			if code := do(t, "POST", s.URL+path, body, nil, &e); code != http.StatusNotFound || !strings.HasPrefix(e.Detail, "checkpoint_id: ") {
				t.Errorf("POST %s with %s of a new thread: %d %+v, want 404 naming %s", path, field, code, e, field)
			}
			if code := do(t, "GET", s.URL+"/threads/"+tid, nil, nil, nil); code != http.StatusNotFound {
				t.Errorf("GET the thread after POST %s: %d, want 404 (not created)", path, code)
			}
		}
		delete(body, "if_not_exists")
		for _, path := range []string{"/runs", "/runs/wait", "/runs/stream"} {
			var e struct{ Detail string }
			if code := do(t, "POST", s.URL+path, body, nil, &e); code != http.StatusUnprocessableEntity || !strings.HasPrefix(e.Detail, "checkpoint_id: ") {
				t.Errorf("POST %s with %s: %d %+v, want 422 naming %s", path, field, code, e, field)
			}
		}
	}
	var ts []map[string]any
	if code := do(t, "POST", s.URL+"/threads/search", map[string]any{}, nil, &ts); code != http.StatusOK || len(ts) != 0 {
		t.Errorf("threads after the refused runs: %d %v, want none", code, ts)
	}
}

// TestRunFromOldestCheckpoint: a run may start from any checkpoint of its
// thread, its first one too (the existence check lists the checkpoints
// before the one named, of which there are none).
func TestRunFromOldestCheckpoint(t *testing.T) {
	s := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, s.URL, nil)
	hist := historyIDs(t, s.URL, tid, map[string]any{"limit": 100})
	if len(hist) < 2 {
		t.Fatalf("history: %d states", len(hist))
	}
	oldest := hist[len(hist)-1]
	for _, cid := range []string{oldest, hist[0]} {
		var out map[string]any
		if code := do(t, "POST", s.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "checkpoint_id": cid}, nil, &out); code != http.StatusOK || out["__error__"] != nil {
			t.Errorf("run from checkpoint %s: %d %v", cid, code, out)
		}
	}
}

// TestRunFromAnotherThreadsCheckpoint: a run that names a checkpoint its
// thread does not have (another thread's, given as checkpoint_id or in
// checkpoint, or none at all) is refused with 404 naming checkpoint_id,
// and the thread stays as it was. The run was created and failed when it
// started, leaving the thread in status error. The state, history and
// update endpoints refuse such a checkpoint too.
func TestRunFromAnotherThreadsCheckpoint(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	other, _ := interruptedThread(t, ts.URL, nil)
	var st struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	do(t, "GET", ts.URL+"/threads/"+other+"/state", nil, nil, &st)
	foreign := st.Checkpoint.CheckpointID
	do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &st)
	own := st.Checkpoint.CheckpointID
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/runs/wait", map[string]any{"assistant_id": "agent", "checkpoint_id": foreign, "command": map[string]any{"resume": "ok"}}},
		{"/runs", map[string]any{"assistant_id": "agent", "checkpoint": map[string]any{"checkpoint_id": foreign, "thread_id": other}, "command": map[string]any{"resume": "ok"}}},
		{"/runs/stream", map[string]any{"assistant_id": "agent", "checkpoint_id": "0ddddddd-46ac-7f1b-956c-95867187d56e", "input": map[string]any{}}},
		{"/runs", map[string]any{"assistant_id": "agent", "config": map[string]any{"configurable": map[string]any{"checkpoint_id": foreign}}, "input": map[string]any{}}},
	} {
		b, err := json.Marshal(c.body)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Detail string }
		code, body := raw(t, "POST", ts.URL+"/threads/"+tid+c.path, string(b), nil)
		if code != 404 || json.Unmarshal([]byte(body), &e) != nil || !strings.HasPrefix(e.Detail, "checkpoint_id: ") {
			t.Errorf("run%s from a checkpoint the thread does not have: %d %.300s; want 404 naming checkpoint_id", c.path, code, body)
		}
	}
	if got := threadStatus(t, ts.URL, tid); got != "interrupted" {
		t.Errorf("thread after the refused runs: %s; want interrupted, as it was", got)
	}
	var runs []map[string]any
	if do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); len(runs) != 1 {
		t.Errorf("thread has %d runs after the refused ones; want its first only", len(runs))
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/state/" + foreign, ""},
		{"POST", "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"` + foreign + `"}}`},
		{"POST", "/state", `{"values":{"approved":"x"},"checkpoint_id":"` + foreign + `"}`},
		{"POST", "/history", `{"before":{"configurable":{"checkpoint_id":"` + foreign + `"}}}`},
	} {
		if code, body := raw(t, c.method, ts.URL+"/threads/"+tid+c.path, c.body, nil); code != 404 {
			t.Errorf("%s %s with another thread's checkpoint: %d %s; want 404", c.method, c.path, code, body)
		}
	}
	// The thread's own checkpoint still starts a run.
	var out map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "checkpoint_id": own, "command": map[string]any{"resume": "yes"}}, nil, &out); code != 200 || out["approved"] != "yes" {
		t.Errorf("run from the thread's own checkpoint: %d %v; want approved yes", code, out)
	}
}
