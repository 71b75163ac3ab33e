package graph_test

import (
	"context"
	"fmt"
	"strings"
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

type inPlaceState struct{ In []string }

// ResumesInPlace is true in a node of a checkpointed graph run on a thread
// and in a subgraph with a checkpointer of its own, and false in a
// subgraph without one (whose resume runs it again from its input) and
// where no run can pause.
func TestResumesInPlace(t *testing.T) {
	in := graph.Append(func(s *inPlaceState) *[]string { return &s.In })
	node := func(name string) graph.NodeFunc[inPlaceState] {
		return func(ctx context.Context, _ inPlaceState) (graph.Update[inPlaceState], error) {
			return in.Set([]string{fmt.Sprintf("%s=%v", name, graph.ResumesInPlace(ctx))}), nil
		}
	}
	child := func(name string, opts ...graph.CompileOption) *graph.Compiled[inPlaceState] {
		g := graph.New[inPlaceState]()
		g.AddNode("n", node(name))
		g.AddEdge(graph.START, "n").AddEdge("n", graph.END)
		c, err := g.Compile(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	saver := checkpoint.NewMemory()
	build := func(opts ...graph.CompileOption) *graph.Compiled[inPlaceState] {
		g := graph.New[inPlaceState]()
		g.AddNode("n", node("top"))
		out := func(s inPlaceState) graph.Update[inPlaceState] { return in.Set(s.In) }
		graph.AddSubgraph(g, "plain", child("plain"), func(inPlaceState) inPlaceState { return inPlaceState{} }, out)
		graph.AddSubgraph(g, "durable", child("durable", graph.WithCheckpointer(saver)), func(inPlaceState) inPlaceState { return inPlaceState{} }, out)
		g.AddEdge(graph.START, "n").AddEdge("n", "plain").AddEdge("plain", "durable").AddEdge("durable", graph.END)
		c, err := g.Compile(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	s, err := build().Invoke(ctx, inPlaceState{})
	if got := strings.Join(s.In, " "); err != nil || got != "top=false plain=false durable=false" {
		t.Fatalf("without a checkpointer: %q, %v", got, err)
	}
	s, err = build(graph.WithCheckpointer(saver)).Thread("t").Invoke(ctx, inPlaceState{})
	if got := strings.Join(s.In, " "); err != nil || got != "top=true plain=false durable=true" {
		t.Fatalf("on a thread: %q, %v; want the subgraph without a checkpointer false", got, err)
	}
}
