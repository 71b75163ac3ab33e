package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestRunListStatusIsChecked: a run list filtered by a status no run can
// have is refused naming status, instead of an empty list that reads as
// "no such runs"; a real status still filters.
func TestRunListStatusIsChecked(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	var e struct{ Detail string }
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?status=succes", nil, nil, &e); code != 422 || !strings.HasPrefix(e.Detail, `status: "succes" is not one of pending, running, success`) {
		t.Fatalf("status=succes: %d %q; want 422 naming status", code, e.Detail)
	}
	var runs []map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?status=success", nil, nil, &runs); code != 200 || len(runs) != 1 {
		t.Fatalf("status=success: %d %v; want the one run", code, runs)
	}
}

// TestRunListPagesAreBounded: a thread's run list comes in pages of at
// most 1000 runs, with X-Pagination-Next while more follow; limit=0,
// which used to return every run of the thread, and a limit past the
// bound are refused naming limit.
func TestRunListPagesAreBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	for range 3 {
		var run map[string]any
		if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Content: "x"}}}}, nil, &run); code != 200 {
			t.Fatalf("run: %d %v", code, run)
		}
	}
	var runs []map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=2", nil, nil, &runs); code != 200 || len(runs) != 2 {
		t.Fatalf("limit=2: %d, %d runs; want 200 and 2", code, len(runs))
	}
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=2&offset=2", nil, nil, &runs); code != 200 || len(runs) != 1 {
		t.Fatalf("limit=2&offset=2: %d, %d runs; want 200 and 1", code, len(runs))
	}
	// X-Pagination-Next names the next page's offset while more runs
	// follow.
	for _, c := range []struct{ query, next string }{{"limit=2", "2"}, {"limit=2&offset=1", ""}, {"limit=3", ""}, {"limit=1&offset=1", "2"}} {
		if _, h, _ := call(t, "GET", ts.URL+"/threads/"+tid+"/runs?"+c.query, nil); h.Get("X-Pagination-Next") != c.next {
			t.Errorf("%s: X-Pagination-Next %q; want %q", c.query, h.Get("X-Pagination-Next"), c.next)
		}
	}
	for _, limit := range []string{"0", "1001", "-1", "x"} {
		var e map[string]any
		if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit="+limit, nil, nil, &e); code != 422 || !strings.Contains(fmt.Sprint(e), "limit") {
			t.Errorf("limit=%s: %d %v; want 422 naming limit", limit, code, e)
		}
	}
}
