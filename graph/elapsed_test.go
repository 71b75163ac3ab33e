package graph_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// TestAttemptElapsed: an attempt is timed for hooks and for StreamDebug
// (a stream without either reads no clock), so NodeEnd and a TaskEnd
// debug event each report at least the time the node slept, whether the
// other one is there or not.
func TestAttemptElapsed(t *testing.T) {
	const nap = 5 * time.Millisecond
	build := func(opts ...graph.CompileOption) *graph.Compiled[logState] {
		g := graph.New[logState]()
		g.AddNode("nap", func(ctx context.Context, s logState) (graph.Update[logState], error) {
			time.Sleep(nap)
			return graph.Update[logState]{}, nil
		})
		g.AddEdge(graph.START, "nap").AddEdge("nap", graph.END)
		c, err := g.Compile(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("hooks", func(t *testing.T) {
		var mu sync.Mutex
		var got []time.Duration
		c := build(graph.WithHooks(graph.Hooks{NodeEnd: func(ctx context.Context, ti graph.TaskInfo, elapsed time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, elapsed)
		}}))
		// Streamed in values only: the hooks alone must have the attempt timed.
		for _, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamValues)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0] < nap {
			t.Errorf("NodeEnd elapsed: %v; want one attempt of at least %v", got, nap)
		}
	})
	t.Run("debug", func(t *testing.T) {
		c := build()
		var ends []time.Duration
		for ev, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamDebug)) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Debug != nil && ev.Debug.Kind == graph.TaskEnd {
				ends = append(ends, ev.Debug.Elapsed)
			}
		}
		if len(ends) != 1 || ends[0] < nap {
			t.Errorf("TaskEnd elapsed: %v; want one attempt of at least %v", ends, nap)
		}
	})
}
