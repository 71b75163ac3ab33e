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
