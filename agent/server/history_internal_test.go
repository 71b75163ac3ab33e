package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// A history filtered on step reads at most maxHistoryScan checkpoints:
// past them it answers 422 naming the checkpoint to page on from, and a
// match within them is found.
func TestHistoryScanBound(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	n := graph.Replace(func(h *held) *int { return &h.N })
	g := graph.New[held]()
	prev := graph.START
	for _, name := range []string{"a", "b", "c", "d"} {
		g.AddNode(name, func(ctx context.Context, h held) (graph.Update[held], error) { return n.Set(h.N + 1), nil })
		g.AddEdge(prev, name)
		prev = name
	}
	g.AddEdge(prev, graph.END)
	app, err := g.Compile(graph.WithCheckpointer(s.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(s, "four", app); err != nil {
		t.Fatal(err)
	}
	call := func(path, body string, out any) int {
		t.Helper()
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.RemoteAddr, req.Host = "127.0.0.1:1", "localhost"
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if out != nil {
			if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
				t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
		}
		return rec.Code
	}
	var th map[string]any
	if code := call("/threads", `{}`, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	tid := th["thread_id"].(string)
	if code := call("/threads/"+tid+"/runs/wait", `{"assistant_id":"four","input":{"n":0}}`, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	defer func(old int) { maxHistoryScan = old }(maxHistoryScan)
	maxHistoryScan = 2
	var found []map[string]any
	if code := call("/threads/"+tid+"/history", `{"limit":1,"metadata":{"step":3}}`, &found); code != 200 || len(found) != 1 {
		t.Fatalf("step 3, the latest: %d %v; want it", code, found)
	}
	// A match found before the bound is answered, as a page.
	if code := call("/threads/"+tid+"/history", `{"limit":5,"metadata":{"step":3}}`, &found); code != 200 || len(found) != 1 {
		t.Fatalf("step 3 with limit 5, the bound reached after it: %d %v; want it", code, found)
	}
	// Without a match, the 422 names the checkpoint to page on from;
	// paging so reaches the oldest checkpoint, step 0, and skips none.
	before := ""
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("paging on with before never reached step 0")
		}
		body := `{"metadata":{"step":0}}`
		if before != "" {
			body = `{"metadata":{"step":0},"before":{"configurable":{"checkpoint_id":"` + before + `"}}}`
		}
		var raw json.RawMessage
		code := call("/threads/"+tid+"/history", body, &raw)
		if code == 200 {
			if err := json.Unmarshal(raw, &found); err != nil || len(found) != 1 {
				t.Fatalf("page %d: %s; want step 0's checkpoint", page, raw)
			}
			break
		}
		var e map[string]string
		if err := json.Unmarshal(raw, &e); err != nil || code != 422 || !strings.HasPrefix(e["detail"], "metadata.step:") {
			t.Fatalf("page %d, past the scan bound: %d %s; want 422 naming metadata.step", page, code, raw)
		}
		i := strings.Index(e["detail"], "before \"")
		if i < 0 {
			t.Fatalf("page %d: %q names no checkpoint to page on from", page, e["detail"])
		}
		rest := e["detail"][i+len("before \""):]
		before = rest[:strings.Index(rest, "\"")]
	}
}
