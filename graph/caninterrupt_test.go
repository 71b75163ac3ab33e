package graph_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type canState struct{ Can []bool }

// CanInterrupt is true in a node of a checkpointed graph run on a thread,
// and in a subgraph of one, and false elsewhere.
func TestCanInterrupt(t *testing.T) {
	can := graph.Append(func(s *canState) *[]bool { return &s.Can })
	node := func(ctx context.Context, _ canState) (graph.Update[canState], error) {
		return can.Set([]bool{graph.CanInterrupt(ctx)}), nil
	}
	child := graph.New[canState]()
	child.AddNode("n", node)
	child.AddEdge(graph.START, "n").AddEdge("n", graph.END)
	sub, err := child.Compile()
	if err != nil {
		t.Fatal(err)
	}
	build := func(opts ...graph.CompileOption) *graph.Compiled[canState] {
		g := graph.New[canState]()
		g.AddNode("n", node)
		graph.AddSubgraph(g, "sub", sub, func(s canState) canState { return canState{} },
			func(s canState) graph.Update[canState] { return can.Set(s.Can) })
		g.AddEdge(graph.START, "n").AddEdge("n", "sub").AddEdge("sub", graph.END)
		c, err := g.Compile(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	s, err := build().Invoke(ctx, canState{})
	if err != nil || len(s.Can) != 2 || s.Can[0] || s.Can[1] {
		t.Fatalf("without a checkpointer: %v, %v; want false, false", s.Can, err)
	}
	s, err = build(graph.WithCheckpointer(checkpoint.NewMemory())).Thread("t").Invoke(ctx, canState{})
	if err != nil || len(s.Can) != 2 || !s.Can[0] || !s.Can[1] {
		t.Fatalf("on a thread: %v, %v; want true, true", s.Can, err)
	}
}
