package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode"

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
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
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

// A body of the wrong JSON type is refused with the kind expected, not
// the Go type the server decodes it into.
func TestBodyOfWrongType(t *testing.T) {
	url := serveChain(t, server.Config{})
	for _, path := range []string{"/threads", "/threads/search", "/threads/count", "/threads/prune", "/runs/wait"} {
		for _, b := range []string{`[]`, `"x"`, `12`, `true`} {
			resp, err := http.Post(url+path, "application/json", strings.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 422 || !strings.Contains(string(got), "the body must be an object") || strings.Contains(string(got), "Go value") {
				t.Fatalf("POST %s %s: %d %s; want 422 saying the body must be an object", path, b, resp.StatusCode, got)
			}
		}
	}
}

// A run that fails on an error of an unexported type (the "fail"
// graph's node returns an *errors.errorString) reports a kind of error a
// client can match, not the name of an implementation type. (A run from
// a missing checkpoint failed so; it is now refused when created.)
func TestErrorNameNotInternal(t *testing.T) {
	url := newTestServer(t, server.Config{}).URL
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create: %d %v", code, th)
	}
	var out map[string]any
	body := map[string]any{"assistant_id": "fail", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
	if code := do(t, "POST", url+"/threads/"+th["thread_id"].(string)+"/runs/wait", body, nil, &out); code != 200 {
		t.Fatalf("run: %d %v", code, out)
	}
	e, _ := out["__error__"].(map[string]any)
	name, _ := e["error"].(string)
	if name == "" || !unicode.IsUpper([]rune(name)[0]) {
		t.Fatalf("run from a missing checkpoint: %v; want an error whose name is exported (such as Error), not %q", out, name)
	}
}

// A path served with other methods answers 405 naming them in Allow; a
// path served with none answers 404.
func TestMethodNotAllowed(t *testing.T) {
	url := serveChain(t, server.Config{})
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/threads", "POST"},
		{"GET", "/runs/wait", "POST"},
		{"PATCH", "/threads/0aaaaaaa-46ac-7f1b-956c-95867187d56d/copy", "POST"},
		{"PUT", "/threads/0aaaaaaa-46ac-7f1b-956c-95867187d56d", "GET, PATCH, DELETE"},
		{"DELETE", "/ok", "GET"},
	} {
		req, err := http.NewRequest(c.method, url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow || !strings.Contains(string(b), c.allow) {
			t.Fatalf("%s %s: %d Allow %q %s; want 405 with Allow %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), b, c.allow)
		}
	}
	if code := do(t, "GET", url+"/no/such/path", nil, nil, nil); code != 404 {
		t.Fatalf("GET /no/such/path: %d; want 404", code)
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

// PATCH /threads/{id} cannot make a thread's metadata name a graph other
// than the one that runs it: a search by graph_id would find it under a
// graph that refuses to run it.
func TestPatchThreadGraphID(t *testing.T) {
	url := serveChain(t, server.Config{})
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create: %d %v", code, th)
	}
	id := th["thread_id"].(string)
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
	if code := do(t, "POST", url+"/threads/"+id+"/runs/wait", body, nil, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	var out map[string]any
	for _, md := range []map[string]any{{"graph_id": "other"}, {"graph_id": nil}, {"assistant_id": "00000000-0000-0000-0000-000000000000"}} {
		if code := do(t, "PATCH", url+"/threads/"+id, map[string]any{"metadata": md}, nil, &out); code != 422 {
			t.Fatalf("PATCH metadata %v on a thread of graph chain: %d %v; want 422", md, code, out)
		}
	}
	if code := do(t, "GET", url+"/threads/"+id, nil, nil, &th); code != 200 || th["metadata"].(map[string]any)["graph_id"] != "chain" {
		t.Fatalf("after refused patches: %d %v; want metadata.graph_id chain", code, th)
	}
	md := map[string]any{"graph_id": "chain", "assistant_id": server.AssistantID("chain"), "tag": "x"}
	if code := do(t, "PATCH", url+"/threads/"+id, map[string]any{"metadata": md}, nil, &out); code != 200 {
		t.Fatalf("PATCH with the thread's own graph: %d %v; want 200", code, out)
	}
	var n int
	if code := do(t, "POST", url+"/threads/count", map[string]any{"metadata": map[string]any{"graph_id": "other"}}, nil, &n); code != 200 || n != 0 {
		t.Fatalf("count of graph other: %d %d; want 0", code, n)
	}
}

// A join stream names the stream modes it wants; a mode the server does
// not know is refused, as at run creation, not streamed as no events.
func TestJoinStreamRefusesUnknownMode(t *testing.T) {
	url := serveChain(t, server.Config{})
	var run map[string]any
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d %v", code, th)
	}
	tid, _ := th["thread_id"].(string)
	if code := do(t, "POST", url+"/threads/"+tid+"/runs", body, nil, &run); code != 200 {
		t.Fatalf("create run: %d %v", code, run)
	}
	rid, _ := run["run_id"].(string)
	for _, q := range []string{"stream_mode=bogus", "stream_mode=values&stream_mode=Values", "stream_mode="} {
		var e map[string]any
		if code := do(t, "GET", url+"/threads/"+tid+"/runs/"+rid+"/stream?"+q, nil, nil, &e); code != 422 || !strings.Contains(e["detail"].(string), "stream_mode") {
			t.Errorf("join stream ?%s: %d %v; want 422 naming stream_mode", q, code, e)
		}
	}
	req, err := http.NewRequest("GET", url+"/threads/"+tid+"/runs/"+rid+"/stream?stream_mode=values", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Last-Event-ID", "-1") // the whole log
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "event: values") {
		t.Errorf("join stream ?stream_mode=values: %d %q; want the run's values events", resp.StatusCode, b)
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
