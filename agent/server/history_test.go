package server_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestHistoryBeforeAsConfig: the JS SDK's getHistory sends before as a
// config ({"configurable": {"checkpoint_id": ...}}); it pages like the
// checkpoint id, and a before that names no checkpoint is refused instead
// of answering the first page again (a client paging on it never ends).
func TestHistoryBeforeAsConfig(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	type state struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	var all []state
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/history", map[string]any{"limit": 10}, nil, &all); code != 200 || len(all) < 3 {
		t.Fatalf("history: %d, %d states; want at least 3", code, len(all))
	}
	for _, before := range []any{
		all[0].Checkpoint.CheckpointID,
		map[string]any{"checkpoint_id": all[0].Checkpoint.CheckpointID},
		map[string]any{"configurable": map[string]any{"checkpoint_id": all[0].Checkpoint.CheckpointID}},
	} {
		var page []state
		if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/history", map[string]any{"limit": 1, "before": before}, nil, &page); code != 200 || len(page) != 1 || page[0].Checkpoint.CheckpointID != all[1].Checkpoint.CheckpointID {
			t.Fatalf("before %v: %d %v; want the second checkpoint %s", before, code, page, all[1].Checkpoint.CheckpointID)
		}
	}
	var e struct{ Detail string }
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/history", map[string]any{"before": map[string]any{"thread_id": th.ThreadID}}, nil, &e); code != 422 || !strings.HasPrefix(e.Detail, "before: names no checkpoint") {
		t.Fatalf("before without a checkpoint id: %d %q; want 422 naming before", code, e.Detail)
	}
}
