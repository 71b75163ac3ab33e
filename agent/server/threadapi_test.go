package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// serveChain serves "chain", a graph of three nodes one after the other
// (three super-steps), each appending its name to the messages.
func serveChain(t *testing.T, cfg server.Config) string {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	prev := graph.START
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, func(ctx context.Context, s chat) (graph.Update[chat], error) {
			return chatMessages.Set([]msg{{Type: "ai", Content: n}}), nil
		})
		g.AddEdge(prev, n)
		prev = n
	}
	g.AddEdge(prev, graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "chain", app); err != nil {
		t.Fatal(err)
	}
	return newHTTPServer(t, srv)
}

// config.recursion_limit bounds the run's super-steps: a run that needs
// more fails with GraphRecursionError naming the field; one within it
// succeeds; a limit out of range is refused before any run is created.
func TestRecursionLimit(t *testing.T) {
	url := serveChain(t, server.Config{})
	input := map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}
	wait := func(limit any) map[string]any {
		var out map[string]any
		body := map[string]any{"assistant_id": "chain", "input": input, "config": map[string]any{"recursion_limit": limit}}
		if code := do(t, "POST", url+"/runs/wait", body, nil, &out); code != 200 {
			t.Fatalf("recursion_limit %v: %d %v", limit, code, out)
		}
		return out
	}
	out := wait(2)
	e, _ := out["__error__"].(map[string]any)
	if e["error"] != "GraphRecursionError" || !strings.Contains(fmt.Sprint(e["message"]), "config.recursion_limit") {
		t.Fatalf("recursion_limit 2 on a 3-step graph: %v; want a GraphRecursionError naming config.recursion_limit", out)
	}
	out = wait(3)
	if out["__error__"] != nil || len(out["messages"].([]any)) != 4 {
		t.Fatalf("recursion_limit 3 on a 3-step graph: %v; want the three nodes' messages", out)
	}
	for _, bad := range []any{0, -1, server.MaxRecursionLimit + 1} {
		var e map[string]string
		body := map[string]any{"assistant_id": "chain", "input": input, "config": map[string]any{"recursion_limit": bad}}
		if code := do(t, "POST", url+"/runs/wait", body, nil, &e); code != 422 || !strings.Contains(e["detail"], "config.recursion_limit") {
			t.Fatalf("recursion_limit %v: %d %v; want 422 naming config.recursion_limit", bad, code, e)
		}
	}
}

// chainThread runs "chain" once on a new thread and returns the thread's id.
func chainThread(t *testing.T, url string) string {
	t.Helper()
	var th struct {
		ID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"topic": "chain"}}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
	var out map[string]any
	if code := do(t, "POST", url+"/threads/"+th.ID+"/runs/wait", body, nil, &out); code != 200 || out["__error__"] != nil {
		t.Fatalf("run: %d %v", code, out)
	}
	return th.ID
}

type historyEntry struct {
	Metadata   map[string]any `json:"metadata"`
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
}

// POST /threads/{id}/history applies every filter it accepts (metadata,
// checkpoint, select) and refuses, naming the field, those it cannot
// apply.
func TestHistoryFilters(t *testing.T) {
	url := serveChain(t, server.Config{})
	tid := chainThread(t, url)
	hist := func(body map[string]any) ([]historyEntry, int) {
		var out []historyEntry
		code := do(t, "POST", url+"/threads/"+tid+"/history", body, nil, &out)
		return out, code
	}
	all, code := hist(map[string]any{"limit": 100})
	if code != 200 || len(all) < 4 {
		t.Fatalf("whole history: %d, %d entries", code, len(all))
	}
	// metadata: step (a number, not a label of the checkpoint) and a label.
	got, code := hist(map[string]any{"metadata": map[string]any{"step": 1}})
	if code != 200 || len(got) != 1 || got[0].Metadata["step"] != 1.0 {
		t.Fatalf("metadata {step: 1}: %d %+v; want the one checkpoint of step 1", code, got)
	}
	source, _ := all[0].Metadata["source"].(string)
	if source == "" {
		t.Fatalf("the latest checkpoint has no source label: %+v", all[0].Metadata)
	}
	want := 0
	for _, e := range all {
		if e.Metadata["source"] == source {
			want++
		}
	}
	got, _ = hist(map[string]any{"limit": 100, "metadata": map[string]any{"source": source}})
	if len(got) != want || want == len(all) {
		t.Fatalf("metadata {source: %q}: %d entries; want %d of %d", source, len(got), want, len(all))
	}
	if got, _ := hist(map[string]any{"metadata": map[string]any{"source": "nothing-has-this"}}); len(got) != 0 {
		t.Fatalf("a metadata filter nothing matches gave %d entries", len(got))
	}
	// checkpoint selects one checkpoint.
	mid := all[2].Checkpoint.CheckpointID
	got, code = hist(map[string]any{"checkpoint": map[string]any{"checkpoint_id": mid, "checkpoint_ns": "", "thread_id": tid}})
	if code != 200 || len(got) != 1 || got[0].Checkpoint.CheckpointID != mid {
		t.Fatalf("checkpoint %s: %d %+v; want that checkpoint alone", mid, code, got)
	}
	// select narrows each entry to the fields named.
	var sel []map[string]any
	if code := do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"limit": 2, "select": []string{"values", "checkpoint"}}, nil, &sel); code != 200 || len(sel) != 2 || len(sel[0]) != 2 || sel[0]["values"] == nil || sel[0]["checkpoint"] == nil {
		t.Fatalf("select [values checkpoint]: %d %v", code, sel)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"checkpoint": map[string]any{"checkpoint_ns": "sub:1"}}, "checkpoint.checkpoint_ns"},
		{map[string]any{"checkpoint": map[string]any{"checkpoint_id": mid}, "before": mid}, "checkpoint.checkpoint_id"},
		{map[string]any{"checkpoint": map[string]any{"thread_id": "00000000-0000-0000-0000-000000000000"}}, "checkpoint.thread_id"},
		{map[string]any{"select": []string{"values", "bogus"}}, "select[1]"},
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 1001}, "limit"},
	} {
		var e map[string]string
		if code := do(t, "POST", url+"/threads/"+tid+"/history", c.body, nil, &e); code != 422 || !strings.HasPrefix(e["detail"], c.field+":") {
			t.Errorf("%v: %d %v; want 422 naming %s", c.body, code, e, c.field)
		}
	}
}
