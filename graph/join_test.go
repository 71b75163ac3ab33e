package graph_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// roundState is the state of the tests of nodes fed by a loop: a log and
// the loop's round.
type roundState struct {
	Log []string
	N   int
}

var (
	lpLog = graph.Append(func(s *roundState) *[]string { return &s.Log })
	lpN   = graph.Sum(func(s *roundState) *int { return &s.N })
)

// stepsOf streams a run of c and returns, per node, the steps it ran in.
func stepsOf[S any](t *testing.T, c *graph.Compiled[S], input S) map[string][]int {
	t.Helper()
	steps := map[string][]int{}
	for ev, err := range c.Stream(context.Background(), input, graph.WithModes(graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		steps[ev.Node] = append(steps[ev.Node], ev.Step)
	}
	return steps
}

// TestLoopFeedsNodeEachRound: a node fed by a loop runs in the step after
// each round that triggers it, alongside the loop's next round, whether the
// loop triggers it through a router or a static edge; with Defer it runs
// once, after the loop.
func TestLoopFeedsNodeEachRound(t *testing.T) {
	report := func(_ context.Context, s roundState) (graph.Update[roundState], error) {
		return lpLog.Set([]string{fmt.Sprint("report", s.N)}), nil
	}
	loopNode := func(_ context.Context, s roundState) (graph.Update[roundState], error) {
		return graph.Updates(lpLog.Set([]string{fmt.Sprint("loop", s.N)}), lpN.Set(1)), nil
	}
	router := func(opts ...graph.NodeOption) *graph.Compiled[roundState] {
		g := graph.New[roundState]()
		g.AddNode("loop", loopNode).AddNode("report", report, opts...)
		g.AddEdge(graph.START, "loop")
		g.AddConditionalEdges("loop", func(_ context.Context, s roundState) (graph.Route, error) {
			if s.N >= 4 {
				return graph.To(graph.END), nil
			}
			return graph.To("loop", "report"), nil
		}, "loop", "report", graph.END)
		g.AddEdge("report", graph.END)
		return mustCompile(t, g)
	}
	static := func(opts ...graph.NodeOption) *graph.Compiled[roundState] {
		g := graph.New[roundState]()
		g.AddNode("loop", func(ctx context.Context, s roundState) (graph.Update[roundState], error) {
			u, err := loopNode(ctx, s)
			if s.N+1 < 4 {
				u = u.Goto("loop")
			}
			return u, err
		}, graph.Targets("loop"))
		g.AddNode("report", report, opts...)
		g.AddEdge(graph.START, "loop").AddEdge("loop", "report").AddEdge("report", graph.END)
		return mustCompile(t, g)
	}
	for _, tt := range []struct {
		name    string
		c       *graph.Compiled[roundState]
		log     []string
		reports []int
	}{
		{"router", router(), []string{"loop0", "loop1", "report1", "loop2", "report2", "loop3", "report3"}, []int{2, 3, 4}},
		{"static edge and Goto", static(), []string{"loop0", "loop1", "report1", "loop2", "report2", "loop3", "report3", "report4"}, []int{2, 3, 4, 5}},
		{"router, deferred", router(graph.Defer()), []string{"loop0", "loop1", "loop2", "loop3", "report4"}, []int{5}},
		{"static edge and Goto, deferred", static(graph.Defer()), []string{"loop0", "loop1", "loop2", "loop3", "report4"}, []int{5}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.c.Invoke(context.Background(), roundState{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.log, out.Log); d != "" {
				t.Errorf("log (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.reports, stepsOf(t, tt.c, roundState{})["report"]); d != "" {
				t.Errorf("steps report ran in (-want +got):\n%s", d)
			}
		})
	}
}

// TestJoinWaitsForConditionalBranch: a join after branches of different
// lengths, one of them conditional, waits for the long branch when it is
// taken and runs as soon as the short one is done when it is not.
func TestJoinWaitsForConditionalBranch(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddNode("b1", logs("b1")).AddNode("b2", logs("b2")).AddNode("j", logs("j"))
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b1")
	g.AddConditionalEdges("b1", func(_ context.Context, s logState) (graph.Route, error) {
		if s.Owner == "skip" {
			return graph.To(graph.END), nil
		}
		return graph.To("b2"), nil
	}, "b2", graph.END)
	g.AddEdge("a", "j").AddEdge("b2", "j").AddEdge("j", graph.END)
	c := mustCompile(t, g)
	for _, tt := range []struct {
		owner string
		log   []string
		j     []int
	}{
		{"", []string{"a", "b1", "b2", "j"}, []int{3}},
		{"skip", []string{"a", "b1", "j"}, []int{2}},
	} {
		out, err := c.Invoke(context.Background(), logState{Owner: tt.owner})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.log, out.Log); d != "" {
			t.Errorf("owner %q: log (-want +got):\n%s", tt.owner, d)
		}
		if d := cmp.Diff(tt.j, stepsOf(t, c, logState{Owner: tt.owner})["j"]); d != "" {
			t.Errorf("owner %q: steps j ran in (-want +got):\n%s", tt.owner, d)
		}
	}
}

// TestJoinFedByLoop: report joins a loop and a slow chain. It waits for
// the chain once (the chain's edge has not triggered it), then runs after
// each round of the loop, which has.
func TestJoinFedByLoop(t *testing.T) {
	g := graph.New[roundState]()
	g.AddNode("loop", func(_ context.Context, s roundState) (graph.Update[roundState], error) {
		return graph.Updates(lpLog.Set([]string{fmt.Sprint("loop", s.N)}), lpN.Set(1)), nil
	})
	for _, name := range []string{"slow1", "slow2"} {
		g.AddNode(name, func(context.Context, roundState) (graph.Update[roundState], error) {
			return lpLog.Set([]string{name}), nil
		})
	}
	g.AddNode("report", func(_ context.Context, s roundState) (graph.Update[roundState], error) {
		return lpLog.Set([]string{fmt.Sprint("report", s.N)}), nil
	})
	g.AddEdge(graph.START, "loop").AddEdge(graph.START, "slow1").AddEdge("slow1", "slow2").AddEdge("slow2", "report")
	g.AddConditionalEdges("loop", func(_ context.Context, s roundState) (graph.Route, error) {
		if s.N >= 4 {
			return graph.To(graph.END), nil
		}
		return graph.To("loop", "report"), nil
	}, "loop", "report", graph.END)
	g.AddEdge("report", graph.END)
	c := mustCompile(t, g)
	out, err := c.Invoke(context.Background(), roundState{})
	if err != nil {
		t.Fatal(err)
	}
	// Step 1: loop0 slow1; 2: loop1 slow2 (report, triggered by loop,
	// waits for slow2); 3: loop2 report2; 4: loop3 report3.
	want := []string{"loop0", "slow1", "loop1", "slow2", "loop2", "report2", "loop3", "report3"}
	if d := cmp.Diff(want, out.Log); d != "" {
		t.Errorf("log (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{3, 4}, stepsOf(t, c, roundState{})["report"]); d != "" {
		t.Errorf("steps report ran in (-want +got):\n%s", d)
	}
}

// TestJoinWaitSurvivesCheckpoint: which edges triggered a waiting node is
// part of the checkpoint, so a run paused and resumed between them
// schedules the node as a run that did not pause. Here report, fed by the
// loop a -> b -> a and by the chain s1 -> s2 -> s3, holds b's trigger at
// the pause before step 3; in step 3 s3 triggers it and only a, whose
// pending work reaches report through b's edge (already fired), is left,
// so report runs in step 4 with b's next round, and again after it.
func TestJoinWaitSurvivesCheckpoint(t *testing.T) {
	build := func(opts ...graph.CompileOption) *graph.Compiled[roundState] {
		g := graph.New[roundState]()
		logs := func(name string) graph.NodeFunc[roundState] {
			return func(context.Context, roundState) (graph.Update[roundState], error) {
				return lpLog.Set([]string{name}), nil
			}
		}
		g.AddNode("a", func(context.Context, roundState) (graph.Update[roundState], error) {
			return graph.Updates(lpLog.Set([]string{"a"}), lpN.Set(1)), nil
		})
		g.AddNode("b", logs("b")).AddNode("s1", logs("s1")).AddNode("s2", logs("s2")).AddNode("s3", logs("s3")).AddNode("report", logs("report"))
		g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "report")
		g.AddConditionalEdges("b", func(_ context.Context, s roundState) (graph.Route, error) {
			if s.N < 2 {
				return graph.To("a"), nil
			}
			return graph.To(graph.END), nil
		}, "a", graph.END)
		g.AddEdge(graph.START, "s1").AddEdge("s1", "s2").AddEdge("s2", "s3").AddEdge("s3", "report").AddEdge("report", graph.END)
		return mustCompile(t, g, opts...)
	}
	want := []string{"a", "s1", "b", "s2", "a", "s3", "b", "report", "report"}
	out, err := build().Invoke(context.Background(), roundState{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, out.Log); d != "" {
		t.Fatalf("log without a pause (-want +got):\n%s", d)
	}

	c := build(graph.WithCheckpointer(checkpoint.NewMemory()), graph.InterruptBefore("s3"))
	ctx := onThread("join")
	out, err = c.Invoke(ctx, roundState{})
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || ie.Interrupts[0].Kind != graph.BreakpointBefore {
		t.Fatalf("first run: %v, want a stop before s3", err)
	}
	if d := cmp.Diff([]string{"a", "s1", "b", "s2"}, out.Log); d != "" {
		t.Fatalf("log at the pause (-want +got):\n%s", d)
	}
	out, err = c.Invoke(ctx, roundState{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, out.Log); d != "" {
		t.Errorf("log after the resume (-want +got):\n%s", d)
	}
}
