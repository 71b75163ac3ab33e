package graph_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

type roomState struct{ N int }

// roomGraph returns a graph whose node "inc" runs once per step until N
// reaches *limit; keep, when set, is called with each task's context.
func roomGraph(t *testing.T, limit *int, keep func(context.Context)) *graph.Compiled[roomState] {
	t.Helper()
	n := graph.Replace(func(s *roomState) *int { return &s.N })
	g := graph.New[roomState]()
	g.AddNode("inc", func(ctx context.Context, s roomState) (graph.Update[roomState], error) {
		if keep != nil {
			keep(ctx)
		}
		var u graph.Update[roomState]
		n.Put(&u, s.N+1)
		return u, nil
	})
	g.AddEdge(graph.START, "inc")
	g.AddConditionalEdges("inc", func(_ context.Context, s roomState) (graph.Route, error) {
		if s.N < *limit {
			return graph.To("inc"), nil
		}
		return graph.To(graph.END), nil
	}, "inc", graph.END)
	c, err := g.Compile(graph.WithStepLimit(100))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The contexts of the tasks of a streamed run (their scopes) cost an
// allocation per run, not one per task: a run of 9 steps allocates no
// more than one more time than a run of 1 step.
func TestStreamTaskScopesAllocatePerRun(t *testing.T) {
	limit := 0
	c := roomGraph(t, &limit, nil)
	allocs := func(steps int) float64 {
		limit = steps
		return testing.AllocsPerRun(50, func() {
			values := 0
			for ev, err := range c.Stream(context.Background(), roomState{}, graph.WithModes(graph.StreamValues)) {
				if err != nil {
					t.Fatal(err)
				}
				values++
				if ev.State.N != values {
					t.Fatalf("values event %d holds N=%d", values, ev.State.N)
				}
			}
			if values != steps {
				t.Fatalf("%d values events for %d steps", values, steps)
			}
		})
	}
	one, nine := allocs(1), allocs(9)
	if nine > one+1 {
		t.Fatalf("a streamed run of 9 steps allocates %v times, one of 1 step %v times: want at most one more", nine, one)
	}
}

// fanGraph returns a graph of two parallel steps of three tasks each: "a",
// "b" and "c", then "flaky", "d" and "e", where "flaky" fails its first
// attempt and is retried. Every node calls keep with its context.
func fanGraph(t *testing.T, keep func(context.Context)) *graph.Compiled[roomState] {
	t.Helper()
	g := graph.New[roomState]()
	node := func(context.Context, roomState) (graph.Update[roomState], error) {
		return graph.Update[roomState]{}, nil
	}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		g.AddNode(name, func(ctx context.Context, s roomState) (graph.Update[roomState], error) {
			keep(ctx)
			return node(ctx, s)
		})
	}
	g.AddNode("flaky", func(ctx context.Context, s roomState) (graph.Update[roomState], error) {
		keep(ctx)
		if info, _ := graph.TaskFrom(ctx); info.Attempt == 1 {
			return graph.Update[roomState]{}, errors.New("first attempt fails")
		}
		return node(ctx, s)
	}, graph.Retry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Nanosecond}))
	for _, e := range [][2]string{{graph.START, "a"}, {graph.START, "b"}, {graph.START, "c"},
		{"a", "flaky"}, {"b", "d"}, {"c", "e"}, {"flaky", graph.END}, {"d", graph.END}, {"e", graph.END}} {
		g.AddEdge(e[0], e[1])
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A task's context stays the task's after its step and its run ended,
// whatever runs after: contexts kept by nodes are never handed to other
// tasks, nor to another attempt of their task, in a streamed run and in
// one with hooks; steps of one task, parallel steps of three, and a retry.
func TestKeptTaskContextsStayTheirTasks(t *testing.T) {
	type kept struct {
		ctx  context.Context
		info graph.TaskInfo
	}
	var mu sync.Mutex
	var all []kept
	keep := func(ctx context.Context) {
		info, ok := graph.TaskFrom(ctx)
		if !ok {
			t.Error("a task's context holds no task")
		}
		mu.Lock()
		all = append(all, kept{ctx, info})
		mu.Unlock()
	}
	limit := 0
	c := roomGraph(t, &limit, keep)
	fan := fanGraph(t, keep)
	hooks := graph.WithHooks(graph.Hooks{NodeStart: func(ctx context.Context, _ graph.TaskInfo) context.Context { return ctx }})
	const fanTasks = 7 // a, b, c; flaky twice, d, e
	for _, steps := range []int{3, 20, 1, 7} {
		limit = steps
		for _, err := range c.Stream(context.Background(), roomState{}, graph.WithModes(graph.StreamValues)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Invoke(context.Background(), roomState{}, hooks); err != nil {
			t.Fatal(err)
		}
		for _, err := range fan.Stream(context.Background(), roomState{}, graph.WithModes(graph.StreamValues)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := fan.Invoke(context.Background(), roomState{}, hooks); err != nil {
			t.Fatal(err)
		}
	}
	if want := 2*(3+20+1+7) + 2*4*fanTasks; len(all) != want {
		t.Fatalf("%d tasks ran, want %d", len(all), want)
	}
	seen := map[context.Context]bool{}
	retries := 0
	for i, k := range all {
		if seen[k.ctx] {
			t.Fatalf("task %d (%+v) got a context another task had", i, k.info)
		}
		seen[k.ctx] = true
		if info, _ := graph.TaskFrom(k.ctx); info.Step != k.info.Step || info.Node != k.info.Node || info.Index != k.info.Index || info.Attempt != k.info.Attempt {
			t.Fatalf("task %d's context now says %+v, was %+v", i, info, k.info)
		}
		if k.info.Attempt == 2 {
			retries++
		}
	}
	if retries != 2*4 {
		t.Fatalf("%d retries ran, want %d", retries, 2*4)
	}
}
