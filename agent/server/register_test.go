package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestRegisterRefusesAnotherCheckpointer: Register refuses a graph
// compiled without a checkpointer (every run failed with an internal
// error, logged nowhere by default) or with a saver other than the
// server's (DELETE /threads/{id} left its checkpoints, and the thread's
// bytes were not counted), naming the fix, and takes one compiled with
// the server's.
func TestRegisterRefusesAnotherCheckpointer(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	compile := func(opts ...graph.CompileOption) *graph.Compiled[chat] {
		g := graph.New[chat]()
		g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
		g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
		c, err := g.Compile(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		id    string
		g     *graph.Compiled[chat]
		wants []string
	}{
		{"plain", compile(), []string{`graph "plain"`, "without a checkpointer", "graph.WithCheckpointer(srv.Checkpointer())"}},
		{"other", compile(graph.WithCheckpointer(checkpoint.NewMemory())), []string{`graph "other"`, "not the server's", "Config.Checkpointer", "graph.WithCheckpointer(srv.Checkpointer())"}},
	} {
		err := server.Register(srv, tc.id, tc.g)
		if err == nil {
			t.Errorf("Register(%s) = nil; want it refused", tc.id)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Register(%s) = %q; want it to say %q", tc.id, err, w)
			}
		}
	}
	if err := server.Register(srv, "own", compile(graph.WithCheckpointer(srv.Checkpointer()))); err != nil {
		t.Errorf("Register of a graph with the server's checkpointer: %v", err)
	}
}
