package server

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// A run that started at a checkpoint its thread no longer has, the
// thread having none left (deleted or lost with the checkpoint
// database), is not resumed from a state that does not exist: progress
// reports no progress, and the run starts again from its input, rather
// than resumeAt reading a nil state.
func TestProgressWithoutCheckpoint(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	n := graph.Replace(func(h *held) *int { return &h.N })
	g := graph.New[held]()
	g.AddNode("a", func(ctx context.Context, h held) (graph.Update[held], error) { return n.Set(h.N + 1), nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(s.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(s, "one", app); err != nil {
		t.Fatal(err)
	}
	resume, st, err := progress(context.Background(), s.graph("one"), "no-such-thread", "a-start-since-lost")
	if err != nil || resume {
		t.Fatalf("progress on a thread without checkpoints: resume %v, state %+v, %v; want no resume, no error", resume, st, err)
	}
}
