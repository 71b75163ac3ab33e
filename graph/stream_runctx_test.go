package graph_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// The context a streamed run gives its nodes behaves as a
// context.WithCancel child of the context given to Stream: the parent's
// values, deadline, cancellation and cause reach it, breaking out of the
// loop cancels it with context.Canceled, and contexts derived from it (with
// their own cancel, or AfterFunc) hear of either.
func TestStreamRunContextIsAChildOfStreams(t *testing.T) {
	type key struct{}
	type seen struct {
		ctx   context.Context
		child context.Context
		after chan struct{}
	}
	graphOf := func(t *testing.T, got chan<- seen, wait bool) *graph.Compiled[logState] {
		g := graph.New[logState]()
		g.AddNode("keep", func(ctx context.Context, s logState) (graph.Update[logState], error) {
			child, cancel := context.WithCancel(ctx)
			t.Cleanup(cancel)
			after := make(chan struct{})
			context.AfterFunc(ctx, func() { close(after) })
			got <- seen{ctx, child, after}
			if err := graph.Emit(ctx, "kept"); err != nil {
				return graph.Update[logState]{}, err
			}
			if wait {
				<-ctx.Done()
				return graph.Update[logState]{}, ctx.Err()
			}
			return graph.Update[logState]{}, nil
		})
		g.AddEdge(graph.START, "keep").AddEdge("keep", graph.END)
		return mustCompile(t, g)
	}
	// checkDone checks that the node's contexts all ended with err and
	// cause.
	checkDone := func(t *testing.T, s seen, err, cause error) {
		t.Helper()
		for _, c := range []context.Context{s.ctx, s.child} {
			select {
			case <-c.Done():
			case <-time.After(30 * time.Second):
				t.Fatal("a node's context was not cancelled")
			}
			if !errors.Is(c.Err(), err) || !errors.Is(context.Cause(c), cause) {
				t.Errorf("Err %v, Cause %v; want %v, %v", c.Err(), context.Cause(c), err, cause)
			}
		}
		select {
		case <-s.after:
		case <-time.After(30 * time.Second):
			t.Fatal("AfterFunc of the node's context did not run")
		}
	}

	t.Run("break", func(t *testing.T) {
		got := make(chan seen, 1)
		c := graphOf(t, got, false)
		deadline := time.Now().Add(time.Hour)
		parent, cancel := context.WithDeadline(context.WithValue(context.Background(), key{}, "v"), deadline)
		defer cancel()
		for range c.Stream(parent, logState{}, graph.WithModes(graph.StreamCustom)) {
			break
		}
		s := <-got
		if v := s.ctx.Value(key{}); v != "v" {
			t.Errorf("the parent's value is %v in the node's context", v)
		}
		if d, ok := s.ctx.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("the node's context's deadline is %v, %v; want %v", d, ok, deadline)
		}
		checkDone(t, s, context.Canceled, context.Canceled)
		if parent.Err() != nil {
			t.Error("breaking out of the loop cancelled the context given to Stream")
		}
	})

	t.Run("parent", func(t *testing.T) {
		got := make(chan seen, 1)
		c := graphOf(t, got, true)
		parent, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		why := errors.New("the caller gave up")
		var last error
		for _, err := range c.Stream(parent, logState{}, graph.WithModes(graph.StreamCustom)) {
			if err != nil {
				last = err
				continue
			}
			cancel(why)
		}
		if !errors.Is(last, why) {
			t.Errorf("the stream ended with %v, want the parent's cause", last)
		}
		checkDone(t, <-got, context.Canceled, why)
	})

	t.Run("ended", func(t *testing.T) {
		// A node keeping its context finds it cancelled once the run
		// has ended, as the run's context.WithCancel was.
		got := make(chan seen, 1)
		c := graphOf(t, got, false)
		for _, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		checkDone(t, <-got, context.Canceled, context.Canceled)
	})
}

// A streamed run's own context costs no allocation: a Stream of a
// one-node graph allocates its iterator and the iterator's function, the
// room for its task's scope, and the loop body's function with what it
// captures (2), and nothing for the run's context (context.WithCancel made
// two).
func TestStreamRunContextAllocatesNothing(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", func(context.Context, logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	c := mustCompile(t, g)
	ctx := context.Background()
	n := graph.MinAllocs(20, func() {
		for _, err := range c.Stream(ctx, logState{}, graph.WithModes(graph.StreamValues)) {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	if n > 5 {
		t.Fatalf("a streamed run allocates %v times, want at most 5", n)
	}
}

// A streamed run's node context prints as a context.WithCancel child of
// the context given to Stream with a value, not as its fields (which the
// run writes while the node runs).
func TestStreamRunContextString(t *testing.T) {
	got := make(chan string, 1)
	g := graph.New[logState]()
	g.AddNode("name", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		got <- fmt.Sprint(ctx)
		return graph.Update[logState]{}, nil
	})
	g.AddEdge(graph.START, "name").AddEdge("name", graph.END)
	c := mustCompile(t, g)
	for _, err := range c.Stream(context.Background(), logState{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if s, want := <-got, "context.Background.WithCancel.WithValue(graph.scope)"; s != want {
		t.Errorf("a streamed run's node context prints as %q; want %q", s, want)
	}
}
