package graph_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// gatedAskNode is a node that asks a human and logs "name:answer".
func gatedAskNode(name string) graph.NodeFunc[gated] {
	return func(ctx context.Context, _ gated) (graph.Update[gated], error) {
		answer, err := graph.Interrupt[string](ctx, "approve?")
		if err != nil {
			return graph.Update[gated]{}, err
		}
		return gatedLog.Set([]string{name + ":" + answer}), nil
	}
}

// gatedLogNode is a node that logs its name.
func gatedLogNode(name string) graph.NodeFunc[gated] {
	return func(context.Context, gated) (graph.Update[gated], error) {
		return gatedLog.Set([]string{name}), nil
	}
}

// wantRaised fails t unless err is a pause on one node's Interrupt.
func wantRaised(t *testing.T, err error) {
	t.Helper()
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].Kind != graph.InterruptRaised {
		t.Fatalf("run error = %v, want a pause on the node's Interrupt", err)
	}
}

// TestBreakpointAfterUpdateOfRaisedPause checks that resuming a step
// paused inside by Interrupt goes past a breakpoint only for the tasks
// that had gone past it: a task Thread.Update routed to, or one whose
// finished writes it dropped, pauses first, and the resume value given to
// that run is kept for the run that approves.
func TestBreakpointAfterUpdateOfRaisedPause(t *testing.T) {
	ctx := context.Background()
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("task added by Goto", func(t *testing.T) {
				g := graph.New[gated]()
				g.AddNode("approve", gatedAskNode("approve")).AddNode("dangerous_tool", gatedLogNode("dangerous_tool"))
				g.AddEdge(graph.START, "approve").AddEdge("dangerous_tool", graph.END)
				// approve never routes to the tool itself.
				g.AddConditionalEdges("approve", func(context.Context, gated) (graph.Route, error) {
					return graph.To(graph.END), nil
				}, "dangerous_tool", graph.END)
				c, err := g.Compile(graph.WithCheckpointer(open(t)), graph.InterruptBefore("dangerous_tool"))
				if err != nil {
					t.Fatal(err)
				}
				th := c.Thread(uniqueThread("goto"))
				_, err = th.Invoke(ctx, gated{})
				wantRaised(t, err)
				if _, err := th.Update(ctx, graph.Update[gated]{}.Goto("dangerous_tool")); err != nil {
					t.Fatal(err)
				}
				out, err := th.Invoke(ctx, gated{}, graph.Resume("yes"))
				wantBreakBefore(t, out, err, "dangerous_tool", nil)
				out, err = th.Invoke(ctx, gated{})
				if err != nil {
					t.Fatalf("approving the breakpoint: %v", err)
				}
				if diff := cmp.Diff([]string{"approve:yes", "dangerous_tool"}, out.Log); diff != "" {
					t.Errorf("log after the approval (-want +got):\n%s", diff)
				}
			})

			t.Run("finished task's writes dropped", func(t *testing.T) {
				g := graph.New[gated]()
				g.AddNode("ask", gatedAskNode("ask")).AddNode("tool", gatedLogNode("tool"))
				g.AddEdge(graph.START, "ask").AddEdge(graph.START, "tool")
				g.AddEdge("ask", graph.END).AddEdge("tool", graph.END)
				c, err := g.Compile(graph.WithCheckpointer(open(t)), graph.InterruptBefore("tool"))
				if err != nil {
					t.Fatal(err)
				}
				th := c.Thread(uniqueThread("dropped"))
				out, err := th.Invoke(ctx, gated{})
				wantBreakBefore(t, out, err, "tool", nil)
				_, err = th.Invoke(ctx, gated{}) // approved: tool runs, ask asks
				wantRaised(t, err)
				// An edit without KeepWrites drops tool's writes: it runs again.
				if _, err := th.Update(ctx, gatedLog.Set([]string{"edited"})); err != nil {
					t.Fatal(err)
				}
				out, err = th.Invoke(ctx, gated{}, graph.Resume("yes"))
				wantBreakBefore(t, out, err, "tool", []string{"edited"})
				out, err = th.Invoke(ctx, gated{})
				if err != nil {
					t.Fatalf("approving the breakpoint: %v", err)
				}
				got := slices.Sorted(slices.Values(out.Log))
				if diff := cmp.Diff([]string{"ask:yes", "edited", "tool"}, got); diff != "" {
					t.Errorf("log after the approval, sorted (-want +got):\n%s", diff)
				}
			})

			t.Run("finished task kept", func(t *testing.T) {
				g := graph.New[gated]()
				g.AddNode("ask", gatedAskNode("ask")).AddNode("tool", gatedLogNode("tool")).AddNode("other", gatedLogNode("other"))
				g.AddEdge(graph.START, "ask").AddEdge(graph.START, "tool").AddEdge(graph.START, "other")
				g.AddEdge("ask", graph.END).AddEdge("tool", graph.END).AddEdge("other", graph.END)
				c, err := g.Compile(graph.WithCheckpointer(open(t)), graph.InterruptBefore("tool", "other"))
				if err != nil {
					t.Fatal(err)
				}
				th := c.Thread(uniqueThread("kept"))
				_, err = th.Invoke(ctx, gated{})
				var ie *graph.InterruptError
				if !errors.As(err, &ie) || len(ie.Interrupts) != 2 {
					t.Fatalf("first run: %v, want a pause before tool and other", err)
				}
				_, err = th.Invoke(ctx, gated{})
				wantRaised(t, err)
				// The finished tasks, with their writes, pass; the resume
				// goes on without a pause and runs them once.
				out, err := th.Invoke(ctx, gated{}, graph.Resume("yes"))
				if err != nil {
					t.Fatalf("resume: %v", err)
				}
				got := slices.Sorted(slices.Values(out.Log))
				if diff := cmp.Diff([]string{"ask:yes", "other", "tool"}, got); diff != "" {
					t.Errorf("log after the resume, sorted (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestFromCheckpointInputDropsInterrupts checks that new input from a
// checkpoint paused on Interrupt records the interrupts it drops.
func TestFromCheckpointInputDropsInterrupts(t *testing.T) {
	ctx := context.Background()
	g := graph.New[gated]()
	g.AddNode("ask", gatedAskNode("ask"))
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("t")
	_, err = th.Invoke(ctx, gated{})
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
		t.Fatalf("first run: %v, want one interrupt", err)
	}
	_, err = th.Invoke(ctx, gated{Log: []string{"new"}}, graph.FromCheckpoint(ie.CheckpointID))
	wantRaised(t, err)
	var meta map[string]string
	for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if s.ParentID == ie.CheckpointID {
			meta = s.Metadata
		}
	}
	want := `["` + ie.Interrupts[0].ID + `"]`
	if meta[graph.MetaDroppedInterrupts] != want {
		t.Errorf("metadata of the input's checkpoint = %v; want %s = %s", meta, graph.MetaDroppedInterrupts, want)
	}
}
