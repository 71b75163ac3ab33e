package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/memory"
)

// TestStoreTTLBeyondDurationRange: a ttl (minutes) too long for a
// time.Duration is refused naming ttl and its limit, not converted to a
// negative duration reported as "is negative"; the longest one is kept.
func TestStoreTTLBeyondDurationRange(t *testing.T) {
	ts := newTestServer(t, server.Config{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	for _, ttl := range []float64{1e12, 1e300} {
		var e struct{ Detail string }
		code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": map[string]int{"x": 1}, "ttl": ttl}, nil, &e)
		if code != 422 || !strings.HasPrefix(e.Detail, "ttl: ") || !strings.Contains(e.Detail, "more than the most allowed") {
			t.Fatalf("ttl %v: %d %q; want 422 naming ttl and its limit", ttl, code, e.Detail)
		}
	}
	if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": map[string]int{"x": 1}, "ttl": 153722866}, nil, nil); code != http.StatusNoContent {
		t.Fatalf("longest ttl: %d; want 204", code)
	}
	var got map[string]any
	if code := do(t, "GET", ts.URL+"/store/items?namespace=a&key=k", nil, nil, &got); code != 200 || got == nil {
		t.Fatalf("get: %d %v; want the item", code, got)
	}
}

// TestBreakpointOnUnknownNodeIsRefused: interrupt_before or
// interrupt_after naming a node the graph lacks is a 422 naming the field
// and the graph's nodes, and creates no run; "*" and real nodes still
// pause the run.
func TestBreakpointOnUnknownNodeIsRefused(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	input := map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}
	for _, c := range []struct{ field, want string }{
		{"interrupt_before", `interrupt_before[1]: graph "agent" has no node "nonode"; use one of draft, review, finish`},
		{"interrupt_after", `interrupt_after[1]: graph "agent" has no node "nonode"`},
	} {
		var e struct{ Detail string }
		code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs", map[string]any{"assistant_id": "agent", "input": input, c.field: []string{"draft", "nonode"}}, nil, &e)
		if code != 422 || !strings.HasPrefix(e.Detail, c.want) {
			t.Fatalf("%s: %d %q; want 422 %q", c.field, code, e.Detail, c.want)
		}
	}
	var runs []map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs", nil, nil, &runs); code != 200 || len(runs) != 0 {
		t.Fatalf("runs after refused creations: %d %v; want none", code, runs)
	}
	var st map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": input, "interrupt_before": "*"}, nil, &st); code != 200 {
		t.Fatalf(`interrupt_before "*": %d %v`, code, st)
	}
	var state struct{ Next []string }
	if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/state", nil, nil, &state); code != 200 || len(state.Next) != 1 || state.Next[0] != "draft" {
		t.Fatalf(`state after interrupt_before "*": %d %v; want paused before draft`, code, state.Next)
	}
}
