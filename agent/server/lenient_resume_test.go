package server_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestResumeAnsweringNoInterrupt: without strict_resume, a resume that
// answers no pending interrupt is ignored, as LangGraph ignores it: after
// POST /state with as_node moved the thread past its interrupt the run
// goes on with the next step, and on a finished thread the run takes no
// step; both succeed and leave the thread idle.
func TestResumeAnsweringNoInterrupt(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	runs := ts.URL + "/threads/" + tid + "/runs/wait"
	input := map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}
	do(t, "POST", runs, map[string]any{"assistant_id": "agent", "input": input}, nil, nil)
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": "edited"}, "as_node": "review"}, nil, nil); code != 200 {
		t.Fatalf("update_state as review: %d", code)
	}
	var out map[string]any
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "ignored"}}, nil, &out); code != 200 || out["__error__"] != nil || out["approved"] != "edited" {
		t.Fatalf("resume after the interrupt was answered by update_state: %d %v; want the run to go on to finish with approved edited", code, out)
	}
	msgs, _ := out["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages after the resumed run: %v; want human, draft and final", msgs)
	}
	var th struct {
		Status string `json:"status"`
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th.Status != "idle" {
		t.Fatalf("thread status: %s; want idle", th.Status)
	}
	out = nil
	if code := do(t, "POST", runs, map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "again"}}, nil, &out); code != 200 || out["__error__"] != nil {
		t.Fatalf("resume of a finished thread: %d %v; want its values", code, out)
	}
	if msgs, _ := out["messages"].([]any); len(msgs) != 3 || out["approved"] != "edited" {
		t.Fatalf("values after a resume of a finished thread: %v; want them unchanged", out)
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th.Status != "idle" {
		t.Fatalf("thread status after the ignored resume: %s; want idle", th.Status)
	}
	// On a thread without a checkpoint too.
	fresh := newThread(t, ts.URL)
	out = nil
	if code := do(t, "POST", ts.URL+"/threads/"+fresh+"/runs/wait", map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "x"}}, nil, &out); code != 200 || out["__error__"] != nil {
		t.Fatalf("resume of a thread without a state: %d %v; want no error", code, out)
	}
}
