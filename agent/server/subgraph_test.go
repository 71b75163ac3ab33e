package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

type inner struct {
	Steps []string `json:"steps"`
}

var innerSteps = graph.Append(func(s *inner) *[]string { return &s.Steps })

// serveNested registers on srv "nested", a graph whose one node is child
// as a subgraph (its steps joined into one message), checkpointed by
// srv, and serves srv; it returns the server's URL.
func serveNested(t *testing.T, srv *server.Server, child *graph.Compiled[inner]) string {
	t.Helper()
	pg := graph.New[chat]()
	graph.AddSubgraph(pg, "child", child, func(chat) inner { return inner{} }, func(c inner) graph.Update[chat] {
		return chatMessages.Set([]msg{{Type: "ai", Content: strings.Join(c.Steps, ",")}})
	})
	pg.AddEdge(graph.START, "child").AddEdge("child", graph.END)
	parent, err := pg.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "nested", parent); err != nil {
		t.Fatal(err)
	}
	return newHTTPServer(t, srv)
}

// Events of a subgraph are streamed, with stream_subgraphs, under
// mode|node:id names; without it only the root graph's events come.
func TestSubgraphEventsAreNamespaced(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ig := graph.New[inner]()
	ig.AddNode("inner_node", func(ctx context.Context, s inner) (graph.Update[inner], error) {
		if err := graph.Emit(ctx, map[string]string{"from": "inner"}); err != nil {
			return graph.Update[inner]{}, err
		}
		return innerSteps.Set([]string{"inner ran"}), nil
	})
	ig.AddEdge(graph.START, "inner_node").AddEdge("inner_node", graph.END)
	child, err := ig.Compile()
	if err != nil {
		t.Fatal(err)
	}
	hs := serveNested(t, srv, child)
	for _, sub := range []bool{true, false} {
		body := `{"assistant_id":"nested","input":{"messages":[{"content":"go"}]},"stream_mode":["values","updates","custom"],"stream_subgraphs":` + map[bool]string{true: "true", false: "false"}[sub] + `}`
		resp, err := http.Post(hs+"/runs/stream", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		evs := readSSE(t, resp.Body)
		resp.Body.Close()
		var nested []string
		for _, e := range evs {
			if strings.Contains(e.Name, "|") {
				nested = append(nested, e.Name)
			}
		}
		if !sub {
			if len(nested) != 0 {
				t.Fatalf("without stream_subgraphs: %v", nested)
			}
			continue
		}
		found := map[string]bool{}
		for _, n := range nested {
			mode, ns, _ := strings.Cut(n, "|")
			if !strings.HasPrefix(ns, "child:") || strings.Count(ns, ":") != 1 {
				t.Fatalf("event %q: namespace is not node:id", n)
			}
			found[mode] = true
		}
		if !found["custom"] || !found["updates"] {
			t.Fatalf("subgraph events %v; want custom and updates", nested)
		}
		for _, e := range evs {
			if strings.HasPrefix(e.Name, "updates|") && !strings.Contains(string(e.Data), `"inner_node":{"steps":["inner ran"]}`) {
				t.Fatalf("subgraph update %s", e.Data)
			}
		}
	}
}
