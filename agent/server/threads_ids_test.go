package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// A thread id is kept in its canonical form: the same UUID written in
// upper case, in braces, as a URN or without hyphens creates no second
// thread, and names the thread in every path that takes its id.
func TestThreadIDCanonicalForm(t *testing.T) {
	url := serveChain(t, server.Config{})
	const canon = "0aaaaaaa-46ac-7f1b-956c-95867187d56d"
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{"thread_id": strings.ToUpper(canon)}, nil, &th); code != 200 || th["thread_id"] != canon {
		t.Fatalf("create with an upper-case id: %d %v; want 200 and thread_id %s", code, th, canon)
	}
	for _, spelling := range []string{canon, "{" + canon + "}", "urn:uuid:" + canon, strings.ReplaceAll(canon, "-", "")} {
		var out map[string]any
		if code := do(t, "POST", url+"/threads", map[string]any{"thread_id": spelling}, nil, &out); code != http.StatusConflict {
			t.Fatalf("create %q after %q: %d %v; want 409, the same thread", spelling, canon, code, out)
		}
	}
	var n int
	if code := do(t, "POST", url+"/threads/count", map[string]any{}, nil, &n); code != 200 || n != 1 {
		t.Fatalf("count: %d %d; want 1 thread", code, n)
	}
	upper := strings.ToUpper(canon)
	if code := do(t, "GET", url+"/threads/"+upper, nil, nil, &th); code != 200 || th["thread_id"] != canon {
		t.Fatalf("GET /threads/%s: %d %v; want the thread", upper, code, th)
	}
	var run map[string]any
	body := map[string]any{"assistant_id": "chain", "input": humanInput("go")}
	if code := do(t, "POST", url+"/threads/"+upper+"/runs", body, nil, &run); code != 200 || run["thread_id"] != canon {
		t.Fatalf("run on /threads/%s: %d %v; want a run of thread %s", upper, code, run, canon)
	}
	rid, _ := run["run_id"].(string)
	var joined map[string]any
	if code := do(t, "GET", url+"/threads/"+upper+"/runs/"+strings.ToUpper(rid)+"/join", nil, nil, &joined); code != 200 {
		t.Fatalf("join with upper-case ids: %d %v", code, joined)
	}
	var hist []map[string]any
	if code := do(t, "POST", url+"/threads/"+canon+"/history", map[string]any{"checkpoint": map[string]any{"thread_id": upper}}, nil, &hist); code != 200 || len(hist) == 0 {
		t.Fatalf("history with checkpoint.thread_id in upper case: %d %v; want the thread's history", code, hist)
	}
	var pruned map[string]int
	if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": []string{upper, canon}}, nil, &pruned); code != 200 || pruned["pruned_count"] != 1 {
		t.Fatalf("prune the thread named twice: %d %v; want pruned_count 1", code, pruned)
	}
	if code := do(t, "GET", url+"/threads/"+canon, nil, nil, nil); code != 404 {
		t.Fatalf("GET after prune: %d; want 404", code)
	}
}

// Ids in a search or count body name threads however the UUID is
// written, as the paths do.
func TestSearchIDsCanonicalForm(t *testing.T) {
	url := serveChain(t, server.Config{})
	const canon = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
	if code := do(t, "POST", url+"/threads", map[string]any{"thread_id": canon}, nil, nil); code != 200 {
		t.Fatalf("create: %d", code)
	}
	upper := strings.ToUpper(canon)
	var found []map[string]any
	if code := do(t, "POST", url+"/threads/search", map[string]any{"ids": []string{upper}}, nil, &found); code != 200 || len(found) != 1 {
		t.Errorf("search ids [%s]: %d %v; want the thread", upper, code, found)
	}
	var n int
	if code := do(t, "POST", url+"/threads/count", map[string]any{"ids": []string{"{" + canon + "}"}}, nil, &n); code != 200 || n != 1 {
		t.Errorf("count ids [{%s}]: %d %d; want 1", canon, code, n)
	}
	var e map[string]any
	if code := do(t, "POST", url+"/threads/search", map[string]any{"ids": []string{canon, "nope"}}, nil, &e); code != 422 || !strings.Contains(e["detail"].(string), "ids[1]") {
		t.Errorf("search ids with a non-UUID: %d %v; want 422 naming ids[1]", code, e)
	}
}
