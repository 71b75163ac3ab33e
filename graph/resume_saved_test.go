package graph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type asked struct {
	Answer string
	Done   bool
}

var (
	askedAnswer = graph.Replace(func(s *asked) *string { return &s.Answer })
	askedDone   = graph.Replace(func(s *asked) *bool { return &s.Done })
)

// A resume value survives the resumed node's crash: a run given
// graph.Resume that stops while the node runs (its context cancelled, as
// a killed process stops) leaves the value saved, so running the thread
// again with a zero input gives the node the value instead of pausing it
// again (LangGraph saves the resume value as a pending write first).
func TestResumeValueSurvivesCrashOfResumedNode(t *testing.T) {
	for _, mode := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(mode.String(), func(t *testing.T) {
			var crash func()
			g := graph.New[asked]()
			g.AddNode("ask", func(ctx context.Context, s asked) (graph.Update[asked], error) {
				v, err := graph.Interrupt[string](ctx, "proceed?")
				if err != nil {
					return graph.Update[asked]{}, err
				}
				if crash != nil {
					crash()
					crash = nil
					<-ctx.Done()
					return graph.Update[asked]{}, ctx.Err()
				}
				return graph.Updates(askedAnswer.Set(v)), nil
			})
			g.AddNode("after", func(context.Context, asked) (graph.Update[asked], error) {
				return graph.Updates(askedDone.Set(true)), nil
			})
			g.AddEdge(graph.START, "ask")
			g.AddEdge("ask", "after")
			g.AddEdge("after", graph.END)
			c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithDurability(mode))
			if err != nil {
				t.Fatal(err)
			}
			th := c.Thread("resume-crash")
			if _, err := th.Invoke(context.Background(), asked{}); !errors.Is(err, graph.ErrInterrupted) {
				t.Fatalf("first run: %v, want a pause", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			crash = cancel
			if _, err := th.Invoke(ctx, asked{}, graph.Resume("yes")); !errors.Is(err, context.Canceled) {
				t.Fatalf("resumed run: %v, want context.Canceled", err)
			}
			s, err := th.Invoke(context.Background(), asked{})
			if err != nil {
				t.Fatalf("run after the crash: %v, want the saved resume value used", err)
			}
			if s.Answer != "yes" || !s.Done {
				t.Fatalf("state = %+v, want Answer yes and Done", s)
			}
		})
	}
}
