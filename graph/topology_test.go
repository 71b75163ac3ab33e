package graph_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
)

// TestTopology: a compiled graph's shape lists its nodes (a subgraph's
// with its own shape) and its static, conditional and goto edges.
func TestTopology(t *testing.T) {
	noop := func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil }
	cg := graph.New[chat]()
	cg.AddNode("inner", noop)
	cg.AddEdge(graph.START, "inner").AddEdge("inner", graph.END)
	child, err := cg.Compile()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	g.AddNode("a", noop, graph.Targets("note"))
	g.AddNode("b", noop)
	graph.AddTask(g, "note", func(context.Context, string) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
	graph.AddSubgraph(g, "sub", child, func(s chat) chat { return s }, func(chat) graph.Update[chat] { return graph.Update[chat]{} })
	g.AddEdge(graph.START, "a").AddEdge("b", "sub").AddEdge("sub", graph.END).AddEdge("note", graph.END)
	g.AddConditionalEdges("a", func(context.Context, chat) (graph.Route, error) { return graph.To("b"), nil }, "b", graph.END)
	g.Label("a", "b", "go on")
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	want := graph.Topology{
		State: reflect.TypeFor[chat](),
		Nodes: []graph.TopologyNode{{Name: "a"}, {Name: "b"}, {Name: "note", Task: true}, {Name: "sub", Subgraph: &graph.Topology{
			State: reflect.TypeFor[chat](),
			Nodes: []graph.TopologyNode{{Name: "inner"}},
			Edges: []graph.TopologyEdge{{From: graph.START, To: "inner"}, {From: "inner", To: graph.END}},
		}}},
		Edges: []graph.TopologyEdge{
			{From: graph.START, To: "a"},
			{From: "a", To: "b", Kind: graph.EdgeConditional, Label: "go on"},
			{From: "a", To: graph.END, Kind: graph.EdgeConditional},
			{From: "a", To: "note", Kind: graph.EdgeGoto},
			{From: "b", To: "sub"},
			{From: "note", To: graph.END},
			{From: "sub", To: graph.END},
		},
	}
	if d := cmp.Diff(want, c.Topology(), cmp.Comparer(func(a, b reflect.Type) bool { return a == b })); d != "" {
		t.Fatalf("Topology (-want +got):\n%s", d)
	}
}
