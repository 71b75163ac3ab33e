package graph_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

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
// saves it queued when its Saver completes them: the checkpoint before the
// step and the writes of a task that finished in it, before the
// cancellation or after it, are kept, so the task does not run again
// (LangGraph keeps a finished task's writes however its step ends). The
// Saver is held until after the cancellation and the grace is an hour, so
// the outcome does not depend on the machine's speed.
func TestAsyncCancelledRunKeepsQueuedSaves(t *testing.T) {
	for _, tc := range []struct {
		name string
		// afterCancel: a finishes once the run is cancelled, instead of
		// before.
		afterCancel bool
	}{{"task finished before cancel", false}, {"task finished after cancel", true}} {
		t.Run(tc.name, func(t *testing.T) {
			saver := &gatedSaver{Saver: checkpoint.NewMemory(), gate: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var aRuns, bRuns atomic.Int32
			g := graph.New[chat]()
			g.AddNode("a", func(actx context.Context, _ chat) (graph.Update[chat], error) {
				if aRuns.Add(1) == 1 && tc.afterCancel {
					<-actx.Done()
				}
				return graph.Updates(chatMessages.Set([]string{"a"})), nil
			})
			g.AddNode("b", func(bctx context.Context, _ chat) (graph.Update[chat], error) {
				if bRuns.Add(1) == 1 {
					if tc.afterCancel {
						cancel()
					}
					<-bctx.Done()
					return graph.Update[chat]{}, bctx.Err()
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
			graph.SetSaveGrace(c, time.Hour)
			th := c.Thread("async-cancel")
			var runErr error
			for ev, err := range th.Stream(ctx, chat{}, graph.WithModes(graph.StreamUpdates)) {
				if err != nil {
					runErr = err
					break
				}
				if ev.Mode == graph.StreamUpdates && ev.Node == "a" {
					// a's writes are queued behind the first checkpoint,
					// which the Saver holds: the run is cancelled (it
					// already is if a finished after the cancellation)
					// before either is made.
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
		})
	}
}

// enteredSaver signals on entered each Put of a checkpoint with no next
// task (a finished run's last) and holds it until gate is closed.
type enteredSaver struct {
	checkpoint.Saver
	entered chan struct{}
	gate    chan struct{}
}

func (s *enteredSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if len(cp.Next) == 0 {
		s.entered <- struct{}{}
		<-s.gate
	}
	return s.Saver.Put(ctx, expect, cp, blobs, writes)
}

// A run in DurabilityAsync that finished, whose context is cancelled while
// its last checkpoint is being saved, returns no error once the save
// completes in its grace: the run is done and saved (a caller retrying a
// cancelled run would run the finished thread again). The last node
// cancels the run, and the Saver holds the last checkpoint until then; the
// run may see its saves done before it sees the cancellation or after it
// (both must return no error), so the scenario is run on several threads.
func TestAsyncFinishedRunCancelledWhileSavingSucceeds(t *testing.T) {
	saver := &enteredSaver{Saver: checkpoint.NewMemory(), entered: make(chan struct{}), gate: make(chan struct{})}
	var cancelRun atomic.Pointer[context.CancelFunc]
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) {
		(*cancelRun.Load())()
		return graph.Updates(chatMessages.Set([]string{"a"})), nil
	})
	g.AddEdge(graph.START, "a")
	g.AddEdge("a", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithDurability(graph.DurabilityAsync))
	if err != nil {
		t.Fatal(err)
	}
	graph.SetSaveGrace(c, time.Hour)
	for i := range 20 {
		saver.gate = make(chan struct{})
		th := c.Thread("async-finished-" + strconv.Itoa(i))
		ctx, cancel := context.WithCancel(context.Background())
		cancelRun.Store(&cancel)
		go func() {
			<-saver.entered
			close(saver.gate)
		}()
		s, err := th.Invoke(ctx, chat{})
		cancel()
		if err != nil {
			t.Fatalf("run %d: %v, want none (it finished and its saves completed)", i, err)
		}
		if len(s.Messages) != 1 || s.Messages[0] != "a" {
			t.Fatalf("run %d: messages = %q, want [a]", i, s.Messages)
		}
		st, err := th.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Next) != 0 || len(st.Values.Messages) != 1 {
			t.Fatalf("run %d: saved state = %+v (next %v), want the finished run's", i, st.Values, st.Next)
		}
	}
}
