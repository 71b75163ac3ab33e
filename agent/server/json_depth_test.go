package server_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// nested is JSON of n arrays, one inside the other.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestJSONNestedTooDeepIsRefused: a body nesting deeper than
// server.MaxJSONDepth is refused with 422 naming its field and the bound
// (thread metadata, a run's input, a state update's values), and
// nothing is stored: the principal's filtered searches go on answering.
// A body exactly at the bound is taken.
func TestJSONNestedTooDeepIsRefused(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	// The body is one level, "metadata"'s object another.
	code, body := raw(t, "POST", ts.URL+"/threads", `{"metadata":{"x":`+nested(server.MaxJSONDepth-2)+`}}`, nil)
	if code != 200 {
		t.Fatalf("metadata at the bound: %d %s", code, body)
	}
	_, tid, _ := strings.Cut(body, `"thread_id":"`)
	tid, _, _ = strings.Cut(tid, `"`)
	for _, c := range []struct{ path, body, field string }{
		{"/threads", `{"metadata":{"x":` + nested(999) + `}}`, "metadata"},
		{"/threads", `{"metadata":{"x":` + nested(server.MaxJSONDepth-1) + `}}`, "metadata"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi","x":` + nested(999) + `}]}}`, "input"},
		{"/threads/" + tid + "/state", `{"values":{"approved":"x","y":` + nested(999) + `}}`, "values"},
		{"/threads/search", `{"metadata":{"x":` + nested(999) + `}}`, "metadata"},
	} {
		code, body := raw(t, "POST", ts.URL+c.path, c.body, nil)
		if code != 422 || !strings.Contains(body, c.field+": nests objects and arrays deeper than 256 levels") {
			t.Errorf("POST %s: %d %s; want 422 naming %s and the bound", c.path, code, clipBody(body), c.field)
		}
	}
	for _, path := range []string{"/threads/search", "/threads/count"} {
		if code, body := raw(t, "POST", ts.URL+path, `{"metadata":{"k":"v"}}`, nil); code != 200 {
			t.Errorf("POST %s filtered: %d %s", path, code, body)
		}
	}
}

func clipBody(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
