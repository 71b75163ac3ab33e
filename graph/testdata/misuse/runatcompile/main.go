// Command runatcompile must not compile: it passes run options to New and
// Compile. TestOptionMisuseDoesNotCompile checks the compiler's message.
package main

import (
	"context"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type state struct{ N int }

func main() {
	g := graph.New[state](graph.FromCheckpoint("nope")) // want: RunOption is not a CompileOption
	g.AddNode("a", func(context.Context, state) (graph.Update[state], error) { return graph.Update[state]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	_, _ = g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()), graph.Resume(true)) // want: RunOption is not a CompileOption
}
