package graph_test

// This file mirrors the quick start of the repository's README.md, so the
// code shown there is known to compile and to print what it says.

import (
	"context"
	"fmt"
	"log"

	"github.com/agentgraph/agentgraph/graph"
)

type State struct {
	Log []string
	N   int
}

var (
	Log = graph.Append(func(s *State) *[]string { return &s.Log }) // appends
	N   = graph.Replace(func(s *State) *int { return &s.N })       // overwrites
)

func step(ctx context.Context, s State) (graph.Update[State], error) {
	return graph.Updates(Log.Set([]string{fmt.Sprint("step ", s.N)}), N.Set(s.N+1)), nil
}

func quickStart() {
	g := graph.New[State]()
	g.AddNode("step", step)
	g.AddEdge(graph.START, "step")
	g.AddConditionalEdges("step", func(ctx context.Context, s State) (graph.Route, error) {
		if s.N < 3 {
			return graph.To("step"), nil // loop
		}
		return graph.To(graph.END), nil
	}, "step", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), State{})
	fmt.Println(out.Log, out.N, err) // [step 0 step 1 step 2] 3 <nil>
}

// The README's quick start: a typed state, two reducers and a conditional
// edge that loops.
func Example_quickStart() {
	quickStart()
	// Output: [step 0 step 1 step 2] 3 <nil>
}
