package graph_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
)

// A node calls its model through graph.Generate; a stream with the
// messages mode receives the reply's chunks as they arrive, with the node
// that called the model. Invoke, or a stream without the mode, makes the
// same node call Generate instead.
func ExampleGenerate() {
	type Chat struct {
		Messages model.Messages
	}
	msgs := graph.Declare(func(s *Chat) *model.Messages { return &s.Messages })

	m := &wordModel{prefix: "you said:"} // a language model in a program
	g := graph.New[Chat]()
	g.AddNode("reply", func(ctx context.Context, s Chat) (graph.Update[Chat], error) {
		resp, err := graph.Generate(ctx, m, &model.Request{Messages: s.Messages})
		if err != nil {
			return graph.Update[Chat]{}, err
		}
		return msgs.Set(model.Messages{resp.Message}), nil
	})
	g.AddEdge(graph.START, "reply")
	g.AddEdge("reply", graph.END)
	c, err := g.Compile()
	if err != nil {
		panic(err)
	}
	in := Chat{Messages: model.Messages{model.User("hello")}}
	for ev, err := range c.Stream(context.Background(), in, graph.WithModes(graph.StreamMessages)) {
		if err != nil {
			panic(err)
		}
		if ch, ok := ev.Chunk(); ok {
			switch ch.Kind {
			case model.ChunkText:
				fmt.Printf("%s: %q\n", ev.Node, ch.Text)
			case model.ChunkDone:
				fmt.Printf("%s: done, %d tokens\n", ev.Node, ch.Response.Usage.Total())
			}
		}
	}
	// Output:
	// reply: "you "
	// reply: "said: "
	// reply: "hello"
	// reply: done, 3 tokens
}
