package graph

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

type stepKey struct{}

// A stepContext reports the first cancellation, its own or its parent's,
// through Err, Done (asked before or after) and Cause; carries the
// parent's values and deadline; and cancels what a task derives from it.
func TestStepContext(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		parent := context.WithValue(context.Background(), stepKey{}, "v")
		c := &stepContext{Context: parent}
		if c.Err() != nil || c.Value(stepKey{}) != "v" {
			t.Fatalf("fresh: err %v, value %v", c.Err(), c.Value(stepKey{}))
		}
		early := c.Done()
		child, stop := context.WithCancel(c)
		defer stop()
		ran := make(chan struct{})
		context.AfterFunc(c, func() { close(ran) })
		c.cancel()
		for _, ch := range []<-chan struct{}{early, c.Done(), child.Done(), ran} {
			select {
			case <-ch:
			case <-time.After(time.Minute):
				t.Fatal("a channel is not closed by the step's cancellation")
			}
		}
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(c), context.Canceled) || !errors.Is(child.Err(), context.Canceled) {
			t.Fatalf("err %v, cause %v, child's err %v", c.Err(), context.Cause(c), child.Err())
		}
		if c.Value(stepKey{}) != "v" {
			t.Fatal("the value is lost once Done was asked")
		}
	})
	t.Run("done asked after the cancellation", func(t *testing.T) {
		c := &stepContext{Context: context.Background()}
		c.cancel()
		select {
		case <-c.Done():
		default:
			t.Fatal("Done of a cancelled step is not closed")
		}
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("err %v", c.Err())
		}
	})
	t.Run("parent first", func(t *testing.T) {
		parent, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer stop()
		c := &stepContext{Context: parent}
		if d, ok := c.Deadline(); !ok || !d.Before(time.Now()) {
			t.Fatalf("deadline %v, %v; want the parent's", d, ok)
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("err %v, want the parent's", c.Err())
		}
		c.cancel()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("err %v after the step's cancellation, want the parent's, which came first", c.Err())
		}
		<-c.Done()
	})
	t.Run("parent cancelled while running", func(t *testing.T) {
		parent, stop := context.WithCancel(context.Background())
		c := &stepContext{Context: parent}
		done := c.Done()
		stop()
		<-done
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("err %v", c.Err())
		}
	})
	t.Run("children without goroutines", func(t *testing.T) {
		c := &stepContext{Context: context.Background()}
		before := runtime.NumGoroutine()
		stops := make([]context.CancelFunc, 100)
		for i := range stops {
			_, stops[i] = context.WithTimeout(c, time.Hour)
		}
		if n := runtime.NumGoroutine() - before; n >= 50 {
			t.Errorf("100 contexts derived from the step started %d goroutines", n)
		}
		for _, s := range stops {
			s()
		}
	})
}

// A parallel step's tasks get a context that the step cancels when it
// ends, which a task that kept it sees.
func TestParallelStepContextEnds(t *testing.T) {
	type st struct{ N int }
	kept := make(chan context.Context, 2)
	g := New[st]()
	for _, name := range []string{"a", "b"} {
		g.AddNode(name, func(ctx context.Context, s st) (Update[st], error) {
			kept <- ctx
			return Update[st]{}, nil
		})
		g.AddEdge(START, name).AddEdge(name, END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(context.Background(), st{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		ctx := <-kept
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Fatalf("a kept task context: err %v after the step", ctx.Err())
		}
		<-ctx.Done()
	}
}

// Cause agrees with Err as for a context.WithCancel child, whichever of the
// step and its parent (cancelled with a cause) is cancelled first, and
// whether Done is first asked before, between or after the cancellations.
func TestStepContextCause(t *testing.T) {
	why := errors.New("parent's cause")
	for _, stepFirst := range []bool{true, false} {
		for _, doneAt := range []int{-1, 0, 1, 2} { // never, before both, between, after both
			parent, stopParent := context.WithCancelCause(context.Background())
			c := &stepContext{Context: parent}
			ref, stopRef := context.WithCancel(parent) // what a WithCancel child reports
			ask := func(at int) {
				if doneAt == at {
					c.Done()
				}
			}
			ask(0)
			for i, stepNow := range []bool{stepFirst, !stepFirst} {
				if stepNow {
					c.cancel()
					stopRef()
				} else {
					stopParent(why)
				}
				ask(i + 1)
			}
			if c.Err() != ref.Err() || context.Cause(c) != context.Cause(ref) {
				t.Errorf("step first %v, Done asked at %d: err %v, cause %v; want %v, %v (a WithCancel child's)",
					stepFirst, doneAt, c.Err(), context.Cause(c), ref.Err(), context.Cause(ref))
			}
			if c.Value(stepKey{}) != nil {
				t.Errorf("step first %v, Done asked at %d: a value not set is found", stepFirst, doneAt)
			}
			select {
			case <-c.Done():
			default:
				t.Errorf("step first %v, Done asked at %d: Done is not closed", stepFirst, doneAt)
			}
			stopParent(nil)
			stopRef()
		}
	}
}

// Concurrent first calls to Done, Value and Cause make one inner context,
// and all see the cancellation.
func TestStepContextConcurrentDone(t *testing.T) {
	for range 20 {
		parent := context.WithValue(context.Background(), stepKey{}, "v")
		c := &stepContext{Context: parent}
		start := make(chan struct{})
		chans := make(chan (<-chan struct{}), 8)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				<-start
				switch i % 3 {
				case 0:
					chans <- c.Done()
				case 1:
					if c.Value(stepKey{}) != "v" {
						t.Error("the parent's value is lost")
					}
					chans <- c.Done()
				default:
					c.cancel()
					_ = context.Cause(c)
					chans <- c.Done()
				}
			})
		}
		close(start)
		wg.Wait()
		close(chans)
		var first <-chan struct{}
		for ch := range chans {
			if first == nil {
				first = ch
			} else if ch != first {
				t.Fatal("concurrent first calls to Done returned different channels")
			}
			<-ch
		}
		if c.Err() != context.Canceled || context.Cause(c) != context.Canceled {
			t.Fatalf("err %v, cause %v", c.Err(), context.Cause(c))
		}
	}
}
