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
	tid, _ := interruptedThread(t, ts.URL, nil)
	all := historyIDs(t, ts.URL, tid, map[string]any{"limit": 10})
	if len(all) < 3 {
		t.Fatalf("history: %d states; want at least 3", len(all))
	}
	for _, before := range []any{
		all[0],
		map[string]any{"checkpoint_id": all[0]},
		map[string]any{"configurable": map[string]any{"checkpoint_id": all[0]}},
	} {
		if page := historyIDs(t, ts.URL, tid, map[string]any{"limit": 1, "before": before}); len(page) != 1 || page[0] != all[1] {
			t.Fatalf("before %v: %v; want the second checkpoint %s", before, page, all[1])
		}
	}
	var e struct{ Detail string }
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"before": map[string]any{"thread_id": tid}}, nil, &e); code != 422 || !strings.HasPrefix(e.Detail, "before: names no checkpoint") {
		t.Fatalf("before without a checkpoint id: %d %q; want 422 naming before", code, e.Detail)
	}
}
