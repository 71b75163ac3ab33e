package graph_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// hungSaver is a Saver whose saves hang from the hangAt-th on, ignoring
// their context, as a save on a stuck database connection does, until
// release is closed.
type hungSaver struct {
	checkpoint.Saver
	hangAt  int64
	n       atomic.Int64
	entered chan struct{} // closed when the first save hangs
	release chan struct{}
	once    sync.Once
	hanging sync.WaitGroup // saves hanging or not yet returned
}

func newHungSaver(hangAt int64) *hungSaver {
	return &hungSaver{Saver: checkpoint.NewMemory(), hangAt: hangAt, entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *hungSaver) hang() {
	if h.n.Add(1) < h.hangAt {
		return
	}
	h.hanging.Add(1)
	defer h.hanging.Done()
	h.once.Do(func() { close(h.entered) })
	<-h.release
}

func (h *hungSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	h.hang()
	return h.Saver.Put(ctx, expect, cp, blobs, writes)
}

func (h *hungSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	h.hang()
	return h.Saver.PutWrites(ctx, thread, id, writes)
}

// TestAsyncCancelWithHungSaver: in DurabilityAsync, a Saver that hangs
// does not keep Invoke from returning once the caller cancels, whether the
// run is in the middle of its steps (its queue of saves full) or waiting
// for its saves at the end: Invoke returns the context's error, joined to
// one naming the saves that may be missing. Once the hung save returns,
// the writer's goroutine ends (TestMain checks) and the thread goes on
// from what was saved to the exact final state.
func TestAsyncCancelWithHungSaver(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hangAt int64
	}{
		{"queue full mid-run", 2},
		{"waiting at the end", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saver := newHungSaver(tc.hangAt)
			c, want := longGraph(t, saver, 0, graph.WithDurability(graph.DurabilityAsync)), longSteps
			if tc.name == "waiting at the end" {
				// A short run: every save fits the queue, so the
				// steps end and the run waits for the saves.
				c, want = shortAsyncGraph(t, saver), shortSteps
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := c.Thread("t").Invoke(ctx, job{})
				done <- err
			}()
			<-saver.entered
			cancel()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a guard: the run returns after abandonGrace (1s)
				close(saver.release)
				t.Fatal("Invoke did not return after its context was cancelled while a save hung")
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Invoke: %v, want context.Canceled", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "may be missing") || !strings.Contains(msg, "step ") {
				t.Fatalf("Invoke's error does not name the saves that may be missing: %v", err)
			}
			close(saver.release)
			saver.hanging.Wait()
			// The thread resumes from what was saved.
			got, err := c.Thread("t").Invoke(context.Background(), job{})
			if err != nil {
				t.Fatalf("resuming after the cancelled run: %v", err)
			}
			if got.N != want {
				t.Fatalf("resumed run ended with N=%d, want %d", got.N, want)
			}
		})
	}
}

const shortSteps = 3

// shortAsyncGraph counts to shortSteps in DurabilityAsync.
func shortAsyncGraph(t *testing.T, saver checkpoint.Saver, opts ...graph.CompileOption) *graph.Compiled[job] {
	t.Helper()
	g := graph.New[job]()
	g.AddNode("step", func(_ context.Context, s job) (graph.Update[job], error) {
		return jobN.Set(1), nil
	})
	g.AddEdge(graph.START, "step")
	g.AddConditionalEdges("step", func(_ context.Context, s job) (graph.Route, error) {
		if s.N >= shortSteps {
			return graph.To(graph.END), nil
		}
		return graph.To("step"), nil
	}, "step", graph.END)
	c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(saver), graph.WithDurability(graph.DurabilityAsync)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAsyncPanicStopsWriter: a panic that escapes a run in DurabilityAsync
// (here a StepEnd hook's) does not leave the writer's goroutine behind.
func TestAsyncPanicStopsWriter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := shortAsyncGraph(t, checkpoint.NewMemory(), graph.WithHooks(graph.Hooks{
		StepEnd: func(_ context.Context, s graph.StepInfo, _ error) {
			if s.Step == 2 {
				panic("hook failed")
			}
		},
	}))
	func() {
		defer func() {
			if v := recover(); v != "hook failed" {
				t.Fatalf("recovered %v, want the hook's panic", v)
			}
		}()
		c.Thread("t").Invoke(context.Background(), job{})
	}()
}

// lateSaver is a Saver whose hangAt-th save waits until its context is
// cancelled and then lands anyway, after yielding a while, as a database
// round trip under way when a run is cancelled does.
type lateSaver struct {
	checkpoint.Saver
	hangAt  int64
	n       atomic.Int64
	entered chan struct{}
	landed  atomic.Bool
}

func (l *lateSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if l.n.Add(1) != l.hangAt {
		return l.Saver.Put(ctx, expect, cp, blobs, writes)
	}
	close(l.entered)
	<-ctx.Done()
	for range 1000 {
		runtime.Gosched()
	}
	err := l.Saver.Put(context.WithoutCancel(ctx), expect, cp, blobs, writes)
	l.landed.Store(true)
	return err
}

// TestAsyncCancelWaitsForSaveUnderWay: a run cancelled while its writer
// makes a save returns after that save returns (the Saver honouring the
// cancellation), not before: a caller that deletes the thread's
// checkpoints once the run returned found the save landing after it.
func TestAsyncCancelWaitsForSaveUnderWay(t *testing.T) {
	saver := &lateSaver{Saver: checkpoint.NewMemory(), hangAt: 1, entered: make(chan struct{})}
	c := shortAsyncGraph(t, saver)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Thread("t").Invoke(ctx, job{})
		done <- err
	}()
	<-saver.entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Invoke: %v, want context.Canceled", err)
	}
	if !saver.landed.Load() {
		t.Fatal("Invoke returned before the save under way when it was cancelled returned")
	}
}
