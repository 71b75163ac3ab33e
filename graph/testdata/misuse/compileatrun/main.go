// Command compileatrun must not compile: it passes compile options to runs.
// TestOptionMisuseDoesNotCompile checks the compiler's message.
package main

import (
	"context"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type state struct{ N int }

func main() {
	g := graph.New[state]()
	g.AddNode("a", func(context.Context, state) (graph.Update[state], error) { return graph.Update[state]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	c, _ := g.Compile()
	ctx := context.Background()
	_, _ = c.Invoke(ctx, state{}, graph.WithCheckpointer(checkpoint.NewMemory()))         // want: CompileOption is not a RunOption
	for range c.Thread("t").Stream(ctx, state{}, graph.WithSerializer(checkpoint.JSON)) { // want: CompileOption is not a RunOption
	}
}
