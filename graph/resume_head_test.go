package graph_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// crashAskGraph compiles START -> ask -> after -> END, where ask pauses on an
// interrupt and sets Answer to its resume value; crash, when set, is
// called once by ask after it got its value, which then waits for its
// context to be done (as a killed process stops).
func crashAskGraph(t *testing.T, saver checkpoint.Saver, mode graph.Durability, crash *atomic.Pointer[func()]) *graph.Compiled[asked] {
	t.Helper()
	g := graph.New[asked]()
	g.AddNode("ask", func(ctx context.Context, s asked) (graph.Update[asked], error) {
		v, err := graph.Interrupt[string](ctx, "proceed?")
		if err != nil {
			return graph.Update[asked]{}, err
		}
		if f := crash.Swap(nil); f != nil {
			(*f)()
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
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithDurability(mode))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A resume value saved before the resumed step belongs to the thread's
// latest checkpoint only: once the thread has moved on, running from the
// paused checkpoint again (graph.FromCheckpoint), or branching from it
// with Thread.Update and KeepWrites, sees the checkpoint as it was saved
// and pauses on the interrupt again, as before the value was given.
func TestSavedResumeValueStaysWithTheThreadsLatest(t *testing.T) {
	for _, mode := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(mode.String(), func(t *testing.T) {
			var crash atomic.Pointer[func()]
			c := crashAskGraph(t, checkpoint.NewMemory(), mode, &crash)
			th := c.Thread("resume-head")
			var ie *graph.InterruptError
			if _, err := th.Invoke(context.Background(), asked{}); !errors.As(err, &ie) {
				t.Fatalf("first run: %v, want a pause", err)
			}
			paused := ie.CheckpointID
			// The resumed node crashes once: its value is saved on the
			// paused checkpoint, and the next run uses it.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := func() { cancel() }
			crash.Store(&stop)
			if _, err := th.Invoke(ctx, asked{}, graph.Resume("yes")); !errors.Is(err, context.Canceled) {
				t.Fatalf("resumed run: %v, want context.Canceled", err)
			}
			if s, err := th.Invoke(context.Background(), asked{}); err != nil || s.Answer != "yes" || !s.Done {
				t.Fatalf("run after the crash: %+v, %v; want the saved value used", s, err)
			}
			// The thread has moved on: the paused checkpoint is as it was.
			if s, err := th.Invoke(context.Background(), asked{}, graph.FromCheckpoint(paused)); !errors.Is(err, graph.ErrInterrupted) {
				t.Errorf("run from the paused checkpoint: %+v, %v; want the interrupt again", s, err)
			}
			if _, err := th.Update(context.Background(), graph.Update[asked]{}, graph.UpdateFrom(paused), graph.KeepWrites()); err != nil {
				t.Fatal(err)
			}
			if s, err := th.Invoke(context.Background(), asked{}); !errors.Is(err, graph.ErrInterrupted) {
				t.Fatalf("run of a branch from the paused checkpoint: %+v, %v; want the interrupt again", s, err)
			}
		})
	}
}

// A fork resumed from an earlier paused checkpoint saves nothing on it:
// when the fork's resumed node crashes, the checkpoint still pauses on its
// interrupt, and the thread's latest is not changed.
func TestForkResumeLeavesPausedCheckpoint(t *testing.T) {
	var crash atomic.Pointer[func()]
	c := crashAskGraph(t, checkpoint.NewMemory(), graph.DurabilityStep, &crash)
	th := c.Thread("fork-resume")
	var ie *graph.InterruptError
	if _, err := th.Invoke(context.Background(), asked{}); !errors.As(err, &ie) {
		t.Fatalf("first run: %v, want a pause", err)
	}
	paused := ie.CheckpointID
	if s, err := th.Invoke(context.Background(), asked{}, graph.Resume("yes")); err != nil || s.Answer != "yes" {
		t.Fatalf("resumed run: %+v, %v", s, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func() { cancel() }
	crash.Store(&stop)
	if _, err := th.Invoke(ctx, asked{}, graph.Resume("no"), graph.FromCheckpoint(paused)); !errors.Is(err, context.Canceled) {
		t.Fatalf("forked run: %v, want context.Canceled", err)
	}
	s, err := th.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Values.Answer != "yes" || len(s.Next) != 0 {
		t.Fatalf("latest state = %+v (next %v), want the finished run's", s.Values, s.Next)
	}
	if _, err := th.Invoke(context.Background(), asked{}, graph.FromCheckpoint(paused)); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("run from the paused checkpoint: %v, want the interrupt again", err)
	}
}

// hangingSaver holds Put and PutWrites, once hang is set, until their
// context is done: a stuck database that honours cancellation.
type hangingSaver struct {
	checkpoint.Saver
	hang atomic.Bool
}

func (s *hangingSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if s.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Saver.Put(ctx, expect, cp, blobs, writes)
}

func (s *hangingSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	if s.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Saver.PutWrites(ctx, thread, id, writes)
}

// A cancelled run in DurabilityExit makes its exit save for a bounded
// time: a Saver that hangs until its context is done (the resume values
// of a crashed resumed step, the progress of a run stopped mid-way) does
// not keep the run from returning, and its error names the save.
func TestExitSaveOfCancelledRunIsBounded(t *testing.T) {
	t.Run("resume values", func(t *testing.T) {
		saver := &hangingSaver{Saver: checkpoint.NewMemory()}
		var crash atomic.Pointer[func()]
		c := crashAskGraph(t, saver, graph.DurabilityExit, &crash)
		graph.SetSaveGrace(c, time.Millisecond)
		th := c.Thread("exit-hang")
		if _, err := th.Invoke(context.Background(), asked{}); !errors.Is(err, graph.ErrInterrupted) {
			t.Fatalf("first run: %v, want a pause", err)
		}
		st, err := th.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stop := func() { saver.hang.Store(true); cancel() }
		crash.Store(&stop)
		err = runWithin(t, func() error {
			_, err := th.Invoke(ctx, asked{}, graph.Resume("yes"))
			return err
		})
		want := "the resume values of step " + strconv.Itoa(st.Step+1)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), want) {
			t.Fatalf("resumed run: %v, want context.Canceled and a failed save of %s", err, want)
		}
	})
	t.Run("progress", func(t *testing.T) {
		saver := &hangingSaver{Saver: checkpoint.NewMemory()}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		g := graph.New[asked]()
		g.AddNode("a", func(context.Context, asked) (graph.Update[asked], error) {
			return graph.Updates(askedAnswer.Set("a")), nil
		})
		g.AddNode("b", func(ctx context.Context, _ asked) (graph.Update[asked], error) {
			saver.hang.Store(true)
			cancel()
			return graph.Update[asked]{}, ctx.Err()
		})
		g.AddEdge(graph.START, "a")
		g.AddEdge("a", "b")
		g.AddEdge("b", graph.END)
		c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithDurability(graph.DurabilityExit))
		if err != nil {
			t.Fatal(err)
		}
		graph.SetSaveGrace(c, time.Millisecond)
		err = runWithin(t, func() error {
			_, err := c.Thread("exit-progress").Invoke(ctx, asked{})
			return err
		})
		var ce *graph.CheckpointError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &ce) {
			t.Fatalf("run: %v, want context.Canceled and a failed save", err)
		}
	})
}

// runWithin runs f and returns its error, failing the test if f has not
// returned within a minute (a bound for a hang, not a speed expectation).
func runWithin(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("the run did not return within a minute")
		return nil
	}
}
