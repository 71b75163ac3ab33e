package server_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestCancelEndedRun: a cancel of a run that ended is answered as a cancel
// (202, or 204 with wait=1), as LangGraph's servers answer it, and leaves
// the run's status and the thread's state as they were; an unknown run
// is still 404.
func TestCancelEndedRun(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	var run struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	input := map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": input}, nil, &run)
	do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, nil)
	base := ts.URL + "/threads/" + tid + "/runs/" + run.RunID
	for _, c := range []struct {
		query string
		want  int
	}{{"", 202}, {"?wait=1", 204}, {"?action=rollback", 202}} {
		if code := do(t, "POST", base+"/cancel"+c.query, nil, nil, nil); code != c.want {
			t.Errorf("cancel%s of an ended run: %d; want %d", c.query, code, c.want)
		}
	}
	do(t, "GET", base, nil, nil, &run)
	if run.Status != "success" {
		t.Errorf("run after the cancels: %s; want success", run.Status)
	}
	var th struct {
		Status string `json:"status"`
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th.Status != "interrupted" {
		t.Errorf("thread after the cancels: %s; want interrupted (as the run left it)", th.Status)
	}
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/00000000-0000-0000-0000-000000000000/cancel", nil, nil, nil); code != 404 {
		t.Errorf("cancel of an unknown run: %d; want 404", code)
	}
}
