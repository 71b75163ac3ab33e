package graph_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestThreadIDRefusedBeforeRunning: a thread id no Saver can store (a NUL
// byte, invalid UTF-8, longer than checkpoint.MaxIDLen) fails the run with
// checkpoint.ErrInvalid naming the limit when the thread is loaded, before
// any node runs, and fails a read or update of the thread alike; with
// every Saver, not only with the one whose database refuses it.
func TestThreadIDRefusedBeforeRunning(t *testing.T) {
	var ran atomic.Int32
	g := graph.New[chat]()
	g.AddNode("reply", func(_ context.Context, s chat) (graph.Update[chat], error) {
		ran.Add(1)
		return graph.Updates(chatTurns.Set(1)), nil
	})
	g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"a\x00b", "\xff\xfe", strings.Repeat("x", checkpoint.MaxIDLen+1)} {
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, checkpoint.ErrInvalid) || !strings.Contains(err.Error(), "MaxIDLen") {
				t.Errorf("%s on thread %.10q: got %v; want an error wrapping checkpoint.ErrInvalid naming MaxIDLen", what, id, err)
			}
		}
		for _, mode := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
			_, err := c.Thread(id).Invoke(ctx, chat{Messages: []string{"hi"}}, graph.WithDurability(mode))
			check("Invoke "+mode.String(), err)
		}
		_, err := c.Thread(id).State(ctx)
		check("State", err)
		_, err = c.Thread(id).Update(ctx, graph.Updates(chatTurns.Set(1)))
		check("Update", err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the node ran %d times; want none", n)
	}
}
