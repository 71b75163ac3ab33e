// Command both compiles: options valid at Compile and at a run are accepted
// in both places. TestOptionMisuseDoesNotCompile builds it as a control.
package main

import (
	"context"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type state struct{ N int }

func main() {
	shared := []graph.Option{graph.WithStepLimit(5), graph.WithDurability(graph.DurabilityExit), graph.InterruptBefore("a")}
	g := graph.New[state](shared[0])
	g.AddNode("a", func(context.Context, state) (graph.Update[state], error) { return graph.Update[state]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	c, _ := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()), shared[1], shared[2])
	_, _ = c.Thread("t").Invoke(context.Background(), state{}, shared[0], shared[1], graph.Resume(true), graph.FromCheckpoint("x"))
}
