package server_test

import (
	"io"
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

// TestStateAtCheckpointNeedsTheCheckpoint: POST /state/checkpoint without
// the checkpoint object (e.g. checkpoint_id at the top level) is refused
// naming the field, instead of answering the latest state as if it were
// the checkpoint's; with it, the checkpoint's state is answered.
func TestStateAtCheckpointNeedsTheCheckpoint(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
	var all []struct {
		Values     chat
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/history", map[string]any{"limit": 10}, nil, &all)
	if len(all) < 2 {
		t.Fatalf("history: %d states; want at least 2", len(all))
	}
	old := all[len(all)-1]
	for body, want := range map[string]string{
		`{"checkpoint_id":"` + old.Checkpoint.CheckpointID + `"}`: `checkpoint: required; put checkpoint_id inside checkpoint`,
		`{}`: `checkpoint: required; send {"checkpoint"`,
	} {
		code, got := raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/state/checkpoint", body, nil)
		if code != 422 || !strings.Contains(got, strings.ReplaceAll(want, `"`, `\"`)) {
			t.Fatalf("%s: %d %s; want 422 %q", body, code, got, want)
		}
	}
	var st struct{ Values chat }
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": old.Checkpoint.CheckpointID}}, nil, &st); code != 200 || len(st.Values.Messages) != len(old.Values.Messages) {
		t.Fatalf("state at the first checkpoint: %d %+v; want %+v", code, st.Values, old.Values)
	}
}

// raw sends body as is, as application/json unless header sets another
// Content-Type ("" sends none), and answers the status and the body.
func raw(t *testing.T, method, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Del("Content-Type")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRunListStatusIsChecked: a run list filtered by a status no run can
// have is refused naming status, instead of an empty list that reads as
// "no such runs"; a real status still filters.
func TestRunListStatusIsChecked(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
	var e struct{ Detail string }
	if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs?status=succes", nil, nil, &e); code != 422 || !strings.HasPrefix(e.Detail, `status: "succes" is not one of pending, running, success`) {
		t.Fatalf("status=succes: %d %q; want 422 naming status", code, e.Detail)
	}
	var runs []map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs?status=success", nil, nil, &runs); code != 200 || len(runs) != 1 {
		t.Fatalf("status=success: %d %v; want the one run", code, runs)
	}
}
