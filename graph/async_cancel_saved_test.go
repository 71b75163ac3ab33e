package graph_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// gatedSaver holds every Put until gate is closed, or fails it when the
// Put's context is done first.
type gatedSaver struct {
	checkpoint.Saver
	gate chan struct{}
}

func (s *gatedSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	select {
	case <-s.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Saver.Put(ctx, expect, cp, blobs, writes)
}

// A run in DurabilityAsync whose context is cancelled still makes the
// saves it queued when its Saver completes them promptly: the checkpoint
// before the step and the writes of a task that finished in it are kept,
// so the task does not run again (LangGraph keeps a finished task's
// writes however its step ends).
func TestAsyncCancelledRunKeepsQueuedSaves(t *testing.T) {
	saver := &gatedSaver{Saver: checkpoint.NewMemory(), gate: make(chan struct{})}
	var aRuns, bRuns atomic.Int32
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) {
		aRuns.Add(1)
		return graph.Updates(chatMessages.Set([]string{"a"})), nil
	})
	g.AddNode("b", func(ctx context.Context, _ chat) (graph.Update[chat], error) {
		if bRuns.Add(1) == 1 {
			<-ctx.Done()
			return graph.Update[chat]{}, ctx.Err()
		}
		return graph.Updates(chatMessages.Set([]string{"b"})), nil
	})
	g.AddEdge(graph.START, "a")
	g.AddEdge(graph.START, "b")
	g.AddEdge("a", graph.END)
	g.AddEdge("b", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithDurability(graph.DurabilityAsync))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("async-cancel")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runErr error
	for ev, err := range th.Stream(ctx, chat{}, graph.WithModes(graph.StreamUpdates)) {
		if err != nil {
			runErr = err
			break
		}
		if ev.Mode == graph.StreamUpdates && ev.Node == "a" {
			// a's writes are queued behind the first checkpoint, which
			// the Saver holds: the run is cancelled before either is made.
			cancel()
			close(saver.gate)
		}
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", runErr)
	}
	s, err := th.Invoke(context.Background(), chat{})
	if err != nil {
		t.Fatal(err)
	}
	if aRuns.Load() != 1 || bRuns.Load() != 2 {
		t.Fatalf("a ran %d times, b %d; want 1 and 2 (a's saved writes kept)", aRuns.Load(), bRuns.Load())
	}
	if got := s.Messages; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("messages = %q, want [a b]", got)
	}
}
