package agent_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
)

// Turn is the state of a one-node chat graph.
type Turn struct {
	Question string
	Answer   string
	Usage    model.Usage // sums itself: model.Usage has a Merge method
}

var (
	turnAnswer = graph.Declare(func(t *Turn) *string { return &t.Answer })
	turnUsage  = graph.Declare(func(t *Turn) *model.Usage { return &t.Usage })
)

// A node that streams its model call forwards the chunks into the graph
// run's stream with graph.Emit, where the caller reads them (and sends them
// on as chat events, say), and its usage accumulates in the state. The
// client never writes into the run's stream by itself.
func Example_streamingInAGraph() {
	llm := llmtest.New(llmtest.Reply{
		Text: "Paris.", Chunks: []string{"Par", "is."},
		Usage: model.Usage{InputTokens: 9, OutputTokens: 2},
	})
	client, err := agent.New(agent.Config{Model: llm})
	if err != nil {
		panic(err)
	}

	g := graph.New[Turn]()
	g.AddNode("write", func(ctx context.Context, t Turn) (graph.Update[Turn], error) {
		resp, err := agent.Complete(ctx, client, t.Question, agent.WithModel("haiku"),
			agent.WithStreaming(func(ctx context.Context, c model.Chunk) error { return graph.Emit(ctx, c) }))
		if err != nil {
			return graph.Update[Turn]{}, err
		}
		return graph.Updates(turnAnswer.Set(resp.Text), turnUsage.Set(resp.Usage)), nil
	})
	g.AddEdge(graph.START, "write").AddEdge("write", graph.END)
	app, err := g.Compile()
	if err != nil {
		panic(err)
	}

	for ev, err := range app.Stream(context.Background(), Turn{Question: "Capital of France?"},
		graph.WithModes(graph.StreamCustom, graph.StreamValues)) {
		if err != nil {
			panic(err)
		}
		switch ev.Mode {
		case graph.StreamCustom:
			if c, ok := ev.Payload.(model.Chunk); ok && c.Kind == model.ChunkText {
				fmt.Printf("chunk %q\n", c.Text)
			}
		case graph.StreamValues:
			fmt.Printf("answer %q, %d tokens\n", ev.State.Answer, ev.State.Usage.Total())
		}
	}
	// Output:
	// chunk "Par"
	// chunk "is."
	// answer "Paris.", 11 tokens
}
