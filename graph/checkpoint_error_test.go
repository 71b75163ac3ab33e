package graph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// brokenSaver fails its saves (Put, PutWrites) or its reads (Get, List)
// with errBroken.
type brokenSaver struct {
	checkpoint.Saver
	saves, reads bool
}

var errBroken = errors.New("brokenSaver: the database is gone")

func (s *brokenSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if s.saves {
		return errBroken
	}
	return s.Saver.Put(ctx, expect, cp, blobs, writes)
}

func (s *brokenSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	if s.saves {
		return errBroken
	}
	return s.Saver.PutWrites(ctx, thread, id, writes)
}

func (s *brokenSaver) Get(ctx context.Context, thread, id string) (*checkpoint.Snapshot, error) {
	if s.reads {
		return nil, errBroken
	}
	return s.Saver.Get(ctx, thread, id)
}

func (s *brokenSaver) List(ctx context.Context, thread string, o checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if s.reads {
		return nil, errBroken
	}
	return s.Saver.List(ctx, thread, o)
}

// TestCheckpointErrorOfSaverFailures: a run whose checkpointer fails,
// saving in each durability mode or loading the thread, and a read of a
// thread's state or history that fails, end with a *graph.CheckpointError naming
// the operation and the thread and wrapping the Saver's error; a node's
// failure is no CheckpointError, and a missing checkpoint still matches
// checkpoint.ErrNotFound.
func TestCheckpointErrorOfSaverFailures(t *testing.T) {
	check := func(t *testing.T, err error, op, thread string) {
		t.Helper()
		var ce *graph.CheckpointError
		if !errors.As(err, &ce) || ce.Op != op || ce.Thread != thread || !errors.Is(err, errBroken) || !strings.HasSuffix(err.Error(), ": "+errBroken.Error()) {
			t.Fatalf("error %v (%T); want a *graph.CheckpointError of %s on thread %s wrapping the saver's error", err, err, op, thread)
		}
	}
	for _, mode := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(fmt.Sprint("save ", mode), func(t *testing.T) {
			s := &brokenSaver{Saver: checkpoint.NewMemory(), saves: true}
			_, err := echoGraph(t, s).Invoke(onThread("t1"), chat{Messages: []string{"hi"}}, graph.WithDurability(mode))
			check(t, err, "save", "t1")
		})
	}
	t.Run("load", func(t *testing.T) {
		s := &brokenSaver{Saver: checkpoint.NewMemory()}
		c := echoGraph(t, s)
		if _, err := c.Invoke(onThread("t1"), chat{Messages: []string{"hi"}}); err != nil {
			t.Fatal(err)
		}
		s.reads = true
		_, err := c.Invoke(onThread("t1"), chat{Messages: []string{"again"}})
		check(t, err, "load", "t1")
		_, err = c.Thread("t1").State(context.Background())
		check(t, err, "load", "t1")
		n := 0
		for _, err := range c.Thread("t1").History(context.Background(), checkpoint.ListOptions{}) {
			n++
			check(t, err, "load", "t1")
		}
		if n != 1 {
			t.Fatalf("History yielded %d times, want the error once", n)
		}
	})
	t.Run("not a saver's", func(t *testing.T) {
		g := graph.New[chat]()
		g.AddNode("fail", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, errBroken })
		g.AddEdge(graph.START, "fail").AddEdge("fail", graph.END)
		c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Invoke(onThread("t1"), chat{})
		if errors.As(err, new(*graph.CheckpointError)) || !errors.Is(err, errBroken) {
			t.Fatalf("node's failure: %v; want the node's error, no CheckpointError", err)
		}
		_, err = c.Thread("nope").State(context.Background())
		if !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("state of a thread without checkpoints: %v; want checkpoint.ErrNotFound", err)
		}
	})
}
