package graph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
)

type logState struct {
	Log   []string
	Owner string
	Sum   int
}

var (
	lsLog   = graph.Append(func(s *logState) *[]string { return &s.Log })
	lsOwner = graph.Replace(func(s *logState) *string { return &s.Owner })
	lsSum   = graph.Sum(func(s *logState) *int { return &s.Sum })
)

type nodeFn = graph.NodeFunc[logState]

func logs(name string) nodeFn {
	return func(context.Context, logState) (graph.Update[logState], error) {
		return lsLog.Set([]string{name}), nil
	}
}

func mustCompile[S any](t testing.TB, g *graph.Graph[S], opts ...graph.CompileOption) *graph.Compiled[S] {
	t.Helper()
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParallelMergeIsDeterministic(t *testing.T) {
	const width, runs = 50, 500
	g := graph.New[logState]()
	g.AddNode("fan", func(context.Context, logState) (graph.Update[logState], error) { return graph.Update[logState]{}, nil })
	g.AddEdge(graph.START, "fan")
	var want []string
	for i := range width {
		name := "p" + strconv.Itoa(i)
		want = append(want, name)
		g.AddNode(name, func(context.Context, logState) (graph.Update[logState], error) {
			// Finish in a scrambled order.
			for range rand.IntN(4) {
				runtime.Gosched()
			}
			if rand.IntN(8) == 0 {
				time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
			}
			return graph.Updates(lsLog.Set([]string{name}), lsSum.Set(i)), nil
		})
		g.AddEdge("fan", name).AddEdge(name, graph.END)
	}
	c := mustCompile(t, g)
	for run := range runs {
		out, err := c.Invoke(context.Background(), logState{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, out.Log); diff != "" {
			t.Fatalf("run %d: merge order differs from declaration order (-want +got):\n%s", run, diff)
		}
		if out.Sum != width*(width-1)/2 {
			t.Fatalf("run %d: Sum = %d, want %d", run, out.Sum, width*(width-1)/2)
		}
	}
}

func TestConflictingParallelWrites(t *testing.T) {
	owner := func(name string) nodeFn {
		return func(context.Context, logState) (graph.Update[logState], error) { return lsOwner.Set(name), nil }
	}
	g := graph.New[logState]()
	g.AddNode("left", owner("left")).AddNode("right", owner("right")).AddNode("quiet", logs("quiet"))
	g.AddEdge(graph.START, "left").AddEdge(graph.START, "quiet").AddEdge(graph.START, "right")
	g.AddEdge("left", graph.END).AddEdge("right", graph.END).AddEdge("quiet", graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	var ce *graph.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *ConflictError", err)
	}
	if diff := cmp.Diff(&graph.ConflictError{Field: "Owner", Nodes: [2]string{"left", "right"}, Step: 1}, ce); diff != "" {
		t.Errorf("conflict (-want +got):\n%s", diff)
	}
	if !errors.Is(err, graph.ErrConflict) || !strings.Contains(err.Error(), `"left" and "right" both wrote field Owner`) {
		t.Errorf("error message %q does not name both nodes and the field", err)
	}
}

func TestFailedStepLeavesStateUntouched(t *testing.T) {
	owner := func(name string) nodeFn {
		return func(context.Context, logState) (graph.Update[logState], error) {
			return graph.Updates(lsLog.Set([]string{name}), lsOwner.Set(name)), nil
		}
	}
	g := graph.New[logState]()
	g.AddNode("first", logs("first")).AddNode("left", owner("left")).AddNode("right", owner("right"))
	g.AddEdge(graph.START, "first").AddEdge("first", "left").AddEdge("first", "right")
	g.AddEdge("left", graph.END).AddEdge("right", graph.END)
	out, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	if !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if diff := cmp.Diff(logState{Log: []string{"first"}}, out); diff != "" {
		t.Errorf("state after the failed step (-want +got):\n%s", diff)
	}
}

func TestRunAfterFailedRouteIsClean(t *testing.T) {
	// A run whose routing fails must not leave state in the pooled run
	// that changes the next run.
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddNode("b", logs("b")).AddNode("c", logs("c"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
	g.AddConditionalEdges("b", func(_ context.Context, s logState) (graph.Route, error) {
		if s.Owner == "bad" {
			return graph.To("nowhere"), nil
		}
		return graph.To(graph.END), nil
	}, graph.END)
	c := mustCompile(t, g)
	for i := range 20 {
		in := logState{}
		if i%2 == 0 {
			in.Owner = "bad"
		}
		out, err := c.Invoke(context.Background(), in)
		if i%2 == 0 {
			if !errors.Is(err, graph.ErrBadRoute) {
				t.Fatalf("run %d: err = %v, want a bad route", i, err)
			}
			continue
		}
		if err != nil || !slices.Equal(out.Log, []string{"a", "b", "c"}) {
			t.Fatalf("run %d: Invoke = %v, %v; want [a b c]", i, out.Log, err)
		}
	}
}

func TestJoinAfterUnevenBranches(t *testing.T) {
	var joins atomic.Int32
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddNode("b1", logs("b1")).AddNode("b2", logs("b2")).AddNode("b3", logs("b3"))
	g.AddNode("join", func(_ context.Context, s logState) (graph.Update[logState], error) {
		joins.Add(1)
		return lsLog.Set([]string{fmt.Sprintf("join saw %d", len(s.Log))}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b1")
	g.AddEdge("b1", "b2").AddEdge("b2", "b3")
	g.AddEdge("a", "join").AddEdge("b3", "join").AddEdge("join", graph.END)
	var steps []int
	c := mustCompile(t, g)
	for ev, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Node == "join" {
			steps = append(steps, ev.Step)
		}
	}
	if joins.Load() != 1 || !slices.Equal(steps, []int{4}) {
		t.Fatalf("join ran %d times at steps %v, want once at step 4", joins.Load(), steps)
	}
	out, err := c.Invoke(context.Background(), logState{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b1", "b2", "b3", "join saw 4"}, out.Log); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestJoinInsideLoopDoesNotDeadlock(t *testing.T) {
	// agent -> (t1a -> t1b, t2) -> agent: agent and both branches share a
	// cycle, so no node is strictly upstream of another; the run must
	// still end.
	type st struct{ Rounds int }
	rounds := graph.Sum(func(s *st) *int { return &s.Rounds })
	noop := func(context.Context, st) (graph.Update[st], error) { return graph.Update[st]{}, nil }
	g := graph.New[st]()
	g.AddNode("agent", func(context.Context, st) (graph.Update[st], error) { return rounds.Set(1), nil })
	g.AddNode("t1a", noop).AddNode("t1b", noop).AddNode("t2", noop)
	g.AddEdge(graph.START, "agent")
	g.AddConditionalEdges("agent", func(_ context.Context, s st) (graph.Route, error) {
		if s.Rounds < 3 {
			return graph.To("t1a", "t2"), nil
		}
		return graph.To(graph.END), nil
	}, "t1a", "t2", graph.END)
	g.AddEdge("t1a", "t1b").AddEdge("t1b", "agent").AddEdge("t2", "agent")
	out, err := mustCompile(t, g).Invoke(context.Background(), st{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rounds < 3 {
		t.Errorf("Rounds = %d, want at least 3", out.Rounds)
	}
}

func TestDeferredJoinInsideLoop(t *testing.T) {
	// An agent node calls two tool branches of different lengths each
	// round. With Defer it runs once per round, after both; without, it
	// also runs when the short branch alone has finished.
	type st struct {
		Rounds int
		Seen   []string
	}
	rounds := graph.Sum(func(s *st) *int { return &s.Rounds })
	seen := graph.Append(func(s *st) *[]string { return &s.Seen })
	tool := func(name string) graph.NodeFunc[st] {
		return func(context.Context, st) (graph.Update[st], error) { return seen.Set([]string{name}), nil }
	}
	build := func(opts ...graph.NodeOption) *graph.Compiled[st] {
		g := graph.New[st]()
		g.AddNode("agent", func(_ context.Context, s st) (graph.Update[st], error) {
			return graph.Updates(rounds.Set(1), seen.Set([]string{fmt.Sprintf("agent saw %d", len(s.Seen))})), nil
		}, opts...)
		g.AddNode("long1", tool("long1")).AddNode("long2", tool("long2")).AddNode("short", tool("short"))
		g.AddEdge(graph.START, "agent")
		g.AddConditionalEdges("agent", func(_ context.Context, s st) (graph.Route, error) {
			if s.Rounds < 2 {
				return graph.To("long1", "short"), nil
			}
			return graph.To(graph.END), nil
		}, "long1", "short", graph.END)
		g.AddEdge("long1", "long2").AddEdge("long2", "agent").AddEdge("short", "agent")
		return mustCompile(t, g)
	}
	tests := []struct {
		name string
		opts []graph.NodeOption
		want []string
	}{
		{"deferred", []graph.NodeOption{graph.Defer()}, []string{
			"agent saw 0", "long1", "short", "long2", "agent saw 4",
		}},
		{"not deferred: runs early, then again", nil, []string{
			"agent saw 0", "long1", "short", "agent saw 3", "long2", "agent saw 5",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := build(tt.opts...).Invoke(context.Background(), st{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.Seen); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSendThousandTasks(t *testing.T) {
	type item struct {
		ID   int
		Text string
	}
	type st struct {
		Items []item
		Out   []string
		Total int
	}
	out := graph.Append(func(s *st) *[]string { return &s.Out })
	total := graph.Sum(func(s *st) *int { return &s.Total })
	g := graph.New[st]()
	work := graph.AddTask(g, "work", func(_ context.Context, it item) (graph.Update[st], error) {
		return graph.Updates(out.Set([]string{it.Text}), total.Set(it.ID)), nil
	})
	g.AddNode("plan", func(context.Context, st) (graph.Update[st], error) { return graph.Update[st]{}, nil })
	g.AddEdge(graph.START, "plan")
	g.AddConditionalEdges("plan", func(_ context.Context, s st) (graph.Route, error) {
		sends := make([]graph.Send, len(s.Items))
		for i, it := range s.Items {
			sends[i] = work.Send(it)
		}
		return graph.Dispatch(sends...), nil
	}, "work")
	g.AddEdge("work", graph.END)
	var in st
	var want []string
	for i := range 1000 {
		in.Items = append(in.Items, item{ID: i, Text: "t" + strconv.Itoa(i)})
		want = append(want, "t"+strconv.Itoa(i))
	}
	res, err := mustCompile(t, g).Invoke(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res.Out); diff != "" {
		t.Errorf("Out is not in send order (-want +got):\n%s", diff)
	}
	if res.Total != 999*1000/2 {
		t.Errorf("Total = %d, want %d", res.Total, 999*1000/2)
	}
}

func TestCommandRoutesAndUpdates(t *testing.T) {
	g := graph.New[logState]()
	sq := graph.AddTask(g, "square", func(_ context.Context, x int) (graph.Update[logState], error) {
		return lsSum.Set(x * x), nil
	})
	g.AddNode("decide", func(_ context.Context, s logState) (graph.Update[logState], error) {
		// Write, go to "yes", and start two tasks, all from one node.
		return lsLog.Set([]string{"decided"}).Goto("yes").Send(sq.Send(3), sq.Send(4)), nil
	}, graph.Targets("yes", "no", "square"))
	g.AddNode("yes", logs("yes")).AddNode("no", logs("no"))
	g.AddEdge(graph.START, "decide")
	g.AddEdge("yes", graph.END).AddEdge("no", graph.END).AddEdge("square", graph.END)
	out, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(logState{Log: []string{"decided", "yes"}, Sum: 25}, out); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

func TestBadRoutes(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", func(context.Context, logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}.Goto("b"), nil
	}, graph.Targets(graph.END))
	g.AddNode("b", logs("b")).AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("b", graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	if !errors.Is(err, graph.ErrBadRoute) || !strings.Contains(err.Error(), `node "a" routed to "b", which is not among its declared targets`) {
		t.Errorf("err = %v, want an undeclared-target error", err)
	}

	g = graph.New[logState]()
	g.AddNode("a", logs("a")).AddEdge(graph.START, "a")
	g.AddConditionalEdges("a", func(context.Context, logState) (graph.Route, error) { return graph.To("zzz"), nil }, graph.END)
	_, err = mustCompile(t, g).Invoke(context.Background(), logState{})
	if !errors.Is(err, graph.ErrBadRoute) || !strings.Contains(err.Error(), `the router of "a" routed to unknown node "zzz"`) {
		t.Errorf("err = %v, want an unknown-node error", err)
	}
}

// Subgraph: a child graph over its own state type.

type childState struct {
	Words []string
	Count int
}

var (
	csWords = graph.Append(func(s *childState) *[]string { return &s.Words })
	csCount = graph.Sum(func(s *childState) *int { return &s.Count })
)

func buildChild(t testing.TB) *graph.Compiled[childState] {
	g := graph.New[childState]()
	g.AddNode("shout", func(ctx context.Context, s childState) (graph.Update[childState], error) {
		if err := graph.Emit(ctx, "shouting"); err != nil {
			return graph.Update[childState]{}, err
		}
		var up []string
		for _, w := range s.Words {
			up = append(up, strings.ToUpper(w))
		}
		return graph.Updates(csWords.Set(up), csCount.Set(len(up))), nil
	})
	g.AddEdge(graph.START, "shout").AddEdge("shout", graph.END)
	return mustCompile(t, g)
}

func buildParent(t testing.TB, child *graph.Compiled[childState]) *graph.Compiled[logState] {
	g := graph.New[logState]()
	g.AddNode("start", logs("hello world"))
	graph.AddSubgraph(g, "child", child,
		func(p logState) childState { return childState{Words: strings.Fields(strings.Join(p.Log, " "))} },
		func(c childState) graph.Update[logState] {
			return graph.Updates(lsLog.Set(c.Words[len(c.Words)/2:]), lsSum.Set(c.Count))
		})
	g.AddEdge(graph.START, "start").AddEdge("start", "child").AddEdge("child", graph.END)
	return mustCompile(t, g)
}

func TestSubgraphWithAnotherStateType(t *testing.T) {
	parent := buildParent(t, buildChild(t))
	out, err := parent.Invoke(context.Background(), logState{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(logState{Log: []string{"hello world", "HELLO", "WORLD"}, Sum: 2}, out); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}

	// Streaming passes through: the child's events come with its node's
	// name as their namespace.
	type seen struct {
		Mode      string
		Namespace []string
		Node      string
		Payload   string
	}
	var got []seen
	for ev, err := range parent.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamUpdates, graph.StreamCustom)) {
		if err != nil {
			t.Fatal(err)
		}
		s := seen{Mode: ev.Mode.String(), Namespace: ev.Namespace, Node: ev.Node}
		switch p := ev.Payload.(type) {
		case string:
			s.Payload = p
		case graph.Event[childState]:
			s.Payload = p.Update.String()
		}
		if ev.Payload == nil {
			s.Payload = ev.Update.String()
		}
		got = append(got, s)
	}
	want := []seen{
		{"updates", nil, "start", "{Log:[hello world]}"},
		{"custom", []string{"child"}, "shout", "shouting"},
		{"updates", []string{"child"}, "shout", "{Words:[HELLO WORLD] Count:2}"},
		{"updates", nil, "child", "{Log:[HELLO WORLD] Sum:2}"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestSubgraphTaskIDsUnderHooks(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	hooks := graph.WithHooks(graph.Hooks{NodeEnd: func(_ context.Context, ti graph.TaskInfo, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, ti.ID())
	}})
	cg := graph.New[childState]()
	cg.AddNode("shout", func(context.Context, childState) (graph.Update[childState], error) {
		return csCount.Set(1), nil
	})
	cg.AddEdge(graph.START, "shout").AddEdge("shout", graph.END)
	parent := buildParent(t, mustCompile(t, cg, hooks))
	if _, err := parent.Invoke(context.Background(), logState{}, hooks); err != nil {
		t.Fatal(err)
	}
	want := []string{"1:start:0", "child/1:shout:0", "2:child:0"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("task ids (-want +got):\n%s", diff)
	}
}

func TestSubgraphCancellation(t *testing.T) {
	started := make(chan struct{})
	cg := graph.New[childState]()
	cg.AddNode("block", func(ctx context.Context, s childState) (graph.Update[childState], error) {
		close(started)
		<-ctx.Done()
		return graph.Update[childState]{}, ctx.Err()
	})
	cg.AddEdge(graph.START, "block").AddEdge("block", graph.END)
	parent := buildParent(t, mustCompile(t, cg))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := parent.Invoke(ctx, logState{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestStepLimit(t *testing.T) {
	type st struct{ N int }
	n := graph.Sum(func(s *st) *int { return &s.N })
	g := graph.New[st]()
	g.AddNode("inc", func(context.Context, st) (graph.Update[st], error) { return n.Set(1), nil })
	g.AddEdge(graph.START, "inc")
	g.AddConditionalEdges("inc", func(_ context.Context, s st) (graph.Route, error) {
		if s.N < 150 {
			return graph.To("inc"), nil
		}
		return graph.To(graph.END), nil
	}, "inc", graph.END)
	tests := []struct {
		name    string
		compile []graph.CompileOption
		run     []graph.RunOption
		limit   int // 0: no error expected
	}{
		{"default limit stops a long loop", nil, nil, graph.DefaultStepLimit},
		{"graph limit", []graph.CompileOption{graph.WithStepLimit(10)}, nil, 10},
		{"exact limit is enough", []graph.CompileOption{graph.WithStepLimit(150)}, nil, 0},
		{"run overrides graph", []graph.CompileOption{graph.WithStepLimit(10)}, []graph.RunOption{graph.WithStepLimit(200)}, 0},
		{"run lowers it", nil, []graph.RunOption{graph.WithStepLimit(3)}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := mustCompile(t, g, tt.compile...).Invoke(context.Background(), st{}, tt.run...)
			if tt.limit == 0 {
				if err != nil || out.N != 150 {
					t.Fatalf("Invoke = %+v, %v; want N=150", out, err)
				}
				return
			}
			var sl *graph.StepLimitError
			if !errors.As(err, &sl) || sl.Limit != tt.limit || !errors.Is(err, graph.ErrStepLimit) {
				t.Fatalf("err = %v, want a *StepLimitError with limit %d", err, tt.limit)
			}
			if !strings.Contains(err.Error(), "graph.WithStepLimit") {
				t.Errorf("error %q does not say how to raise the limit", err)
			}
			if out.N != tt.limit {
				t.Errorf("state at failure N=%d, want %d (one node per step)", out.N, tt.limit)
			}
		})
	}
}

var errFlaky = errors.New("flaky")

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		policy   graph.RetryPolicy
		wantErr  bool
		attempts int
	}{
		{"succeeds on the third attempt", 2, graph.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Microsecond}, false, 3},
		{"gives up after max attempts", 5, graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Microsecond}, true, 2},
		{"RetryOn refuses", 1, graph.RetryPolicy{InitialInterval: time.Microsecond, RetryOn: func(err error) bool { return !errors.Is(err, errFlaky) }}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			var hookStarts, hookErrors atomic.Int32
			g := graph.New[logState]()
			g.AddNode("flaky", func(context.Context, logState) (graph.Update[logState], error) {
				if int(calls.Add(1)) <= tt.failures {
					return lsLog.Set([]string{"lost"}), errFlaky
				}
				return lsLog.Set([]string{"ok"}), nil
			}, graph.Retry(tt.policy))
			g.AddEdge(graph.START, "flaky").AddEdge("flaky", graph.END)
			hooks := graph.Hooks{
				NodeStart: func(ctx context.Context, ti graph.TaskInfo) context.Context {
					if int(hookStarts.Add(1)) != ti.Attempt {
						t.Errorf("NodeStart attempt %d out of order", ti.Attempt)
					}
					return ctx
				},
				NodeError: func(_ context.Context, _ graph.TaskInfo, _ time.Duration, err error) {
					hookErrors.Add(1)
				},
			}
			out, err := mustCompile(t, g, graph.WithHooks(hooks)).Invoke(context.Background(), logState{})
			if int(calls.Load()) != tt.attempts || int(hookStarts.Load()) != tt.attempts {
				t.Errorf("ran %d times (hooks saw %d), want %d", calls.Load(), hookStarts.Load(), tt.attempts)
			}
			if !tt.wantErr {
				if err != nil || !slices.Equal(out.Log, []string{"ok"}) {
					t.Errorf("Invoke = %v, %v; want Log=[ok] (failed attempts' writes discarded)", out.Log, err)
				}
				return
			}
			var ne *graph.NodeError
			if !errors.As(err, &ne) || ne.Node != "flaky" || ne.Step != 1 || ne.Attempts != tt.attempts || !errors.Is(err, errFlaky) {
				t.Errorf("err = %#v, want a NodeError for flaky at step 1 after %d attempts wrapping errFlaky", err, tt.attempts)
			}
			if int(hookErrors.Load()) != tt.attempts {
				t.Errorf("NodeError hook ran %d times, want %d", hookErrors.Load(), tt.attempts)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	var calls atomic.Int32
	g := graph.New[logState]()
	g.AddNode("slow", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // the first attempt hangs until its deadline
			return graph.Update[logState]{}, ctx.Err()
		}
		return lsLog.Set([]string{"fast enough"}), nil
	}, graph.Timeout(5*time.Millisecond))
	g.AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	var te *graph.TimeoutError
	if !errors.As(err, &te) || te.Timeout != 5*time.Millisecond || !errors.Is(err, graph.ErrNodeTimeout) ||
		!errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `node "slow" failed at step 1`) {
		t.Fatalf("err = %v, want a TimeoutError of node slow", err)
	}

	// A timeout is retried.
	calls.Store(0)
	g2 := graph.New[logState]()
	g2.AddNode("slow", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		if calls.Add(1) == 1 {
			<-ctx.Done()
			return graph.Update[logState]{}, ctx.Err()
		}
		return lsLog.Set([]string{"fast enough"}), nil
	}, graph.Timeout(5*time.Millisecond), graph.Retry(graph.RetryPolicy{InitialInterval: time.Microsecond}))
	g2.AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
	out, err := mustCompile(t, g2).Invoke(context.Background(), logState{})
	if err != nil || !slices.Equal(out.Log, []string{"fast enough"}) {
		t.Fatalf("Invoke = %v, %v; want the retry to succeed", out.Log, err)
	}
}

func TestPanicBecomesError(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		value any
	}{
		{"string", "kaboom"},
		{"error", boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := graph.New[logState]()
			g.AddNode("ok", logs("ok")).AddNode("bad", func(context.Context, logState) (graph.Update[logState], error) {
				panic(tt.value)
			}, graph.Retry(graph.RetryPolicy{InitialInterval: time.Microsecond}))
			g.AddEdge(graph.START, "ok").AddEdge("ok", "bad").AddEdge("bad", graph.END)
			out, err := mustCompile(t, g).Invoke(context.Background(), logState{})
			var pe *graph.PanicError
			var ne *graph.NodeError
			if !errors.As(err, &pe) || !errors.As(err, &ne) || ne.Node != "bad" || ne.Step != 2 || ne.Attempts != 1 {
				t.Fatalf("err = %v, want a NodeError(bad, step 2, not retried) wrapping a PanicError", err)
			}
			if pe.Value != tt.value || len(pe.Stack) == 0 || !errors.Is(err, graph.ErrNodePanic) {
				t.Errorf("PanicError = %v, want value %v and a stack", pe, tt.value)
			}
			if tt.value == boom && !errors.Is(err, boom) {
				t.Error("a panic with an error value does not unwrap to it")
			}
			if !slices.Equal(out.Log, []string{"ok"}) {
				t.Errorf("state at failure = %v, want the state after step 1", out.Log)
			}
		})
	}
}

func TestEmptyTargetIsAnError(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddEdge(graph.START, "a")
	g.AddConditionalEdges("a", func(_ context.Context, s logState) (graph.Route, error) {
		return graph.To(s.Owner), nil // Owner was never set
	}, graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	if !errors.Is(err, graph.ErrBadRoute) || !strings.Contains(err.Error(), "empty target name") {
		t.Errorf("err = %v, want an empty-target error", err)
	}
}

func TestHookPanicBecomesError(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddNode("b", logs("b"))
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", graph.END).AddEdge("b", graph.END)
	hooks := graph.Hooks{NodeEnd: func(_ context.Context, ti graph.TaskInfo, _ time.Duration) {
		if ti.Node == "b" {
			panic("hook bug")
		}
	}}
	_, err := mustCompile(t, g, graph.WithHooks(hooks)).Invoke(context.Background(), logState{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "b" || !errors.Is(err, graph.ErrNodePanic) {
		t.Errorf("err = %v, want a panic error of node b", err)
	}
}

func TestReducerPanicBecomesError(t *testing.T) {
	type st struct{ V int }
	v := graph.Reduce(func(s *st) *int { return &s.V }, func(old, new int) int {
		if new < 0 {
			panic("negative")
		}
		return old + new
	})
	g := graph.New[st]()
	g.AddNode("a", func(context.Context, st) (graph.Update[st], error) { return v.Set(-1), nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), st{})
	if !errors.Is(err, graph.ErrNodePanic) || !strings.Contains(err.Error(), "reducer panicked while merging step 1") {
		t.Errorf("err = %v, want a reducer panic error", err)
	}
}

func TestRouterPanicAndError(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddEdge(graph.START, "a")
	g.AddConditionalEdges("a", func(context.Context, logState) (graph.Route, error) { panic("lost") }, graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	if !errors.Is(err, graph.ErrNodePanic) || !strings.Contains(err.Error(), `node "a" failed at step 1: router`) {
		t.Errorf("err = %v, want a router panic error naming a", err)
	}
}

func TestCancellationMidStep(t *testing.T) {
	const width = 8
	var started sync.WaitGroup
	started.Add(width)
	g := graph.New[logState]()
	g.AddNode("fan", logs("fan")).AddEdge(graph.START, "fan")
	for i := range width {
		name := "w" + strconv.Itoa(i)
		g.AddNode(name, func(ctx context.Context, s logState) (graph.Update[logState], error) {
			started.Done()
			<-ctx.Done()
			return graph.Update[logState]{}, ctx.Err()
		})
		g.AddEdge("fan", name).AddEdge(name, graph.END)
	}
	c := mustCompile(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { started.Wait(); cancel() }()
	begin := time.Now()
	out, err := c.Invoke(ctx, logState{})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "run stopped at step 2") {
		t.Fatalf("err = %v, want the run stopped at step 2 by cancellation", err)
	}
	if time.Since(begin) > 5*time.Second {
		t.Errorf("cancellation took %v", time.Since(begin))
	}
	if !slices.Equal(out.Log, []string{"fan"}) {
		t.Errorf("state = %v, want the state after step 1", out.Log)
	}
	// goleak in TestMain checks that no node goroutine is left behind.
}

func TestFailingTaskCancelsSiblings(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("fan", logs("fan")).AddEdge(graph.START, "fan")
	g.AddNode("waits", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		<-ctx.Done()
		return graph.Update[logState]{}, ctx.Err()
	})
	g.AddNode("fails", func(context.Context, logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, errFlaky
	})
	g.AddEdge("fan", "waits").AddEdge("fan", "fails").AddEdge("waits", graph.END).AddEdge("fails", graph.END)
	_, err := mustCompile(t, g).Invoke(context.Background(), logState{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "fails" || !errors.Is(err, errFlaky) {
		t.Errorf("err = %v, want the failing node's error, not its cancelled sibling's", err)
	}
}

func TestMaxConcurrency(t *testing.T) {
	var running, peak atomic.Int32
	g := graph.New[logState]()
	g.AddNode("fan", logs("fan")).AddEdge(graph.START, "fan")
	for i := range 12 {
		name := "w" + strconv.Itoa(i)
		g.AddNode(name, func(context.Context, logState) (graph.Update[logState], error) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(200 * time.Microsecond)
			running.Add(-1)
			return lsLog.Set([]string{name}), nil
		})
		g.AddEdge("fan", name).AddEdge(name, graph.END)
	}
	out, err := mustCompile(t, g, graph.WithMaxConcurrency(3)).Invoke(context.Background(), logState{})
	if err != nil || len(out.Log) != 13 {
		t.Fatalf("Invoke = %v, %v", out.Log, err)
	}
	if peak.Load() > 3 {
		t.Errorf("%d nodes ran at once, limit 3", peak.Load())
	}
}

func TestRunConfigInContext(t *testing.T) {
	var got graph.RunConfig
	g := graph.New[logState]()
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		got = graph.ConfigFrom(ctx)
		return graph.Update[logState]{}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	want := graph.RunConfig{RunID: "r1", ThreadID: "t1", Tags: []string{"x"}, Metadata: map[string]any{"user": "u"}}
	if _, err := mustCompile(t, g).Invoke(graph.WithConfig(context.Background(), want), logState{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(graph.RunConfig{}, graph.ConfigFrom(context.Background())); diff != "" {
		t.Errorf("empty context config (-want +got):\n%s", diff)
	}
}

func TestHooksSeeEveryNode(t *testing.T) {
	var mu sync.Mutex
	var ends []string
	type key struct{}
	hooks := graph.Hooks{
		NodeStart: func(ctx context.Context, ti graph.TaskInfo) context.Context {
			return context.WithValue(ctx, key{}, ti.ID())
		},
		NodeEnd: func(ctx context.Context, ti graph.TaskInfo, elapsed time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if ctx.Value(key{}) != ti.ID() || elapsed < 0 {
				t.Errorf("NodeEnd for %s did not get NodeStart's context", ti.ID())
			}
			ends = append(ends, ti.ID())
		},
	}
	var inNode []string
	g := graph.New[logState]()
	for _, n := range []string{"a", "b"} {
		g.AddNode(n, func(ctx context.Context, s logState) (graph.Update[logState], error) {
			ti, ok := graph.TaskFrom(ctx)
			if !ok {
				t.Error("TaskFrom found no task in an observed run")
			}
			inNode = append(inNode, ti.ID())
			return graph.Update[logState]{}, nil
		})
	}
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	if _, err := mustCompile(t, g, graph.WithHooks(hooks)).Invoke(context.Background(), logState{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"1:a:0", "2:b:0"}
	if diff := cmp.Diff(want, ends); diff != "" {
		t.Errorf("NodeEnd calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, inNode); diff != "" {
		t.Errorf("task ids seen by nodes (-want +got):\n%s", diff)
	}
}

func TestStreamModes(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		if err := graph.Emit(ctx, "working"); err != nil {
			return graph.Update[logState]{}, err
		}
		return lsLog.Set([]string{"a"}), nil
	})
	g.AddNode("b", logs("b"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	c := mustCompile(t, g)
	describe := func(ev graph.Event[logState]) string {
		switch ev.Mode {
		case graph.StreamValues:
			return fmt.Sprintf("values %d %v", ev.Step, ev.State.Log)
		case graph.StreamUpdates:
			return fmt.Sprintf("updates %d %s %v", ev.Step, ev.Node, ev.Update)
		case graph.StreamCustom:
			return fmt.Sprintf("custom %d %s %v", ev.Step, ev.Node, ev.Payload)
		default:
			return fmt.Sprintf("debug %d %s %v %v", ev.Step, ev.Node, ev.Debug.Kind, ev.Debug.Err)
		}
	}
	tests := []struct {
		name  string
		modes []graph.StreamMode
		want  []string
	}{
		{"default", nil, []string{
			"custom 1 a working", "updates 1 a {Log:[a]}", "values 1 [a]",
			"updates 2 b {Log:[b]}", "values 2 [a b]",
		}},
		{"values", []graph.StreamMode{graph.StreamValues}, []string{"values 1 [a]", "values 2 [a b]"}},
		{"debug", []graph.StreamMode{graph.StreamDebug}, []string{
			"debug 1 a task start <nil>", "debug 1 a task end <nil>", "debug 2 b task start <nil>", "debug 2 b task end <nil>",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []graph.RunOption
			if tt.modes != nil {
				opts = append(opts, graph.WithModes(tt.modes...))
			}
			var got []string
			for ev, err := range c.Stream(context.Background(), logState{}, opts...) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, describe(ev))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamEarlyBreak(t *testing.T) {
	emitErr := make(chan error, 1)
	g := graph.New[logState]()
	g.AddNode("chatty", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		for i := 0; ; i++ {
			if err := graph.Emit(ctx, i); err != nil {
				emitErr <- err
				return graph.Update[logState]{}, err
			}
		}
	})
	g.AddEdge(graph.START, "chatty").AddEdge("chatty", graph.END)
	c := mustCompile(t, g)
	endsWithin(t, "the loop did not end: the node was not stopped", func() {
		n := 0
		for ev, err := range c.Stream(context.Background(), logState{}) {
			if err != nil {
				t.Error(err)
				break
			}
			if ev.Payload != n {
				t.Errorf("payload %v, want %d", ev.Payload, n)
				break
			}
			if n++; n == 3 {
				break
			}
		}
	})
	// The loop has returned, so the run has stopped and the node saw it.
	select {
	case err := <-emitErr:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Emit after the break returned %v, want context.Canceled", err)
		}
	default:
		t.Error("the node was still running after the loop ended")
	}
}

func TestStreamContextCancelled(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("wait", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		if err := graph.Emit(ctx, "waiting"); err != nil {
			return graph.Update[logState]{}, err
		}
		<-ctx.Done()
		return graph.Update[logState]{}, ctx.Err()
	})
	g.AddEdge(graph.START, "wait").AddEdge("wait", graph.END)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	for ev, err := range mustCompile(t, g).Stream(ctx, logState{}) {
		if err != nil {
			got = append(got, "error: "+err.Error())
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			continue
		}
		got = append(got, fmt.Sprint(ev.Payload))
		cancel() // the caller gives up after the first event
	}
	want := []string{"waiting", "error: graph: run stopped at step 1: context canceled"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestStreamReportsError(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddNode("b", func(context.Context, logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, errFlaky
	})
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	var last error
	events := 0
	for _, err := range mustCompile(t, g).Stream(context.Background(), logState{}) {
		events++
		last = err
	}
	if !errors.Is(last, errFlaky) || events != 3 {
		t.Errorf("got %d events ending with %v; want 2 events then the error", events, last)
	}
}

func TestEmitOutsideStream(t *testing.T) {
	if err := graph.Emit(context.Background(), "x"); err != nil {
		t.Errorf("Emit outside a run = %v, want nil", err)
	}
	g := graph.New[logState]()
	var inInvoke error
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		inInvoke = graph.Emit(ctx, "x")
		return graph.Update[logState]{}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	if _, err := mustCompile(t, g).Invoke(context.Background(), logState{}); err != nil || inInvoke != nil {
		t.Errorf("Invoke = %v, Emit in Invoke = %v; want nil, nil", err, inInvoke)
	}
}

func TestCompiledIsSafeForConcurrentUse(t *testing.T) {
	c, err := buildW1()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				out, err := c.Invoke(context.Background(), chainState{})
				if err != nil {
					t.Error(err)
					return
				}
				if err := checkW1(out); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
