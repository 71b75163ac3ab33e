package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// gated is the state of a graph whose agent routes to a safe or a
// dangerous tool, both behind breakpoints.
type gated struct {
	Log   []string
	Route string
}

var (
	gatedLog   = graph.Append(func(s *gated) *[]string { return &s.Log })
	gatedRoute = graph.Replace(func(s *gated) *string { return &s.Route })
)

// gatedGraph compiles agent -> Route (safe_tool, dangerous_tool or END)
// on saver, with the compile options opts. Each node logs its name.
func gatedGraph(t *testing.T, saver checkpoint.Saver, opts ...graph.CompileOption) *graph.Compiled[gated] {
	t.Helper()
	logs := func(name string) graph.NodeFunc[gated] {
		return func(context.Context, gated) (graph.Update[gated], error) {
			return gatedLog.Set([]string{name}), nil
		}
	}
	g := graph.New[gated]()
	g.AddNode("agent", logs("agent")).AddNode("safe_tool", logs("safe_tool")).AddNode("dangerous_tool", logs("dangerous_tool"))
	g.AddEdge(graph.START, "agent")
	g.AddConditionalEdges("agent", func(_ context.Context, s gated) (graph.Route, error) {
		if s.Route == "" {
			return graph.To(graph.END), nil
		}
		return graph.To(s.Route), nil
	}, "safe_tool", "dangerous_tool", graph.END)
	g.AddEdge("safe_tool", graph.END).AddEdge("dangerous_tool", graph.END)
	c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(saver)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// uniqueThread names a thread no earlier test run used (the PostgreSQL
// schema outlives the tests).
func uniqueThread(name string) string {
	return fmt.Sprintf("%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
}

// wantBreakBefore fails t unless err is a pause at a breakpoint before
// node alone, and out logged want.
func wantBreakBefore(t *testing.T, out gated, err error, node string, want []string) {
	t.Helper()
	var ie *graph.InterruptError
	if !errors.As(err, &ie) {
		t.Fatalf("run error = %v (log %v), want a pause at the breakpoint before %s", err, out.Log, node)
	}
	if len(ie.Interrupts) != 1 || ie.Interrupts[0].Kind != graph.BreakpointBefore || ie.Interrupts[0].Node != node {
		t.Fatalf("pause = %+v, want one breakpoint before %s", ie.Interrupts, node)
	}
	if diff := cmp.Diff(want, out.Log); diff != "" {
		t.Fatalf("log at the pause (-want +got):\n%s", diff)
	}
}

// TestBreakpointBeforeFirstStep checks that a run continuing a pending
// step pauses at a breakpoint before it unless it continues the very
// checkpoint that paused there.
func TestBreakpointBeforeFirstStep(t *testing.T) {
	ctx := context.Background()
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			c := gatedGraph(t, open(t), graph.InterruptBefore("safe_tool", "dangerous_tool"))

			t.Run("rerouted pause", func(t *testing.T) {
				th := c.Thread(uniqueThread("rerouted"))
				out, err := th.Invoke(ctx, gated{Route: "safe_tool"})
				wantBreakBefore(t, out, err, "safe_tool", []string{"agent"})
				// The human changes the agent's decision.
				if _, err := th.Update(ctx, gatedRoute.Set("dangerous_tool"), graph.AsNode("agent")); err != nil {
					t.Fatal(err)
				}
				out, err = th.Invoke(ctx, gated{})
				wantBreakBefore(t, out, err, "dangerous_tool", []string{"agent"})
				out, err = th.Invoke(ctx, gated{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{"agent", "dangerous_tool"}, out.Log); diff != "" {
					t.Errorf("log after the approval (-want +got):\n%s", diff)
				}
			})

			t.Run("rerouted finished thread", func(t *testing.T) {
				th := c.Thread(uniqueThread("finished"))
				if _, err := th.Invoke(ctx, gated{}); err != nil {
					t.Fatal(err)
				}
				if _, err := th.Update(ctx, gatedRoute.Set("dangerous_tool"), graph.AsNode("agent")); err != nil {
					t.Fatal(err)
				}
				out, err := th.Invoke(ctx, gated{})
				wantBreakBefore(t, out, err, "dangerous_tool", []string{"agent"})
			})

			t.Run("checkpoint between steps", func(t *testing.T) {
				th := c.Thread(uniqueThread("replay"))
				_, err := th.Invoke(ctx, gated{Route: "dangerous_tool"})
				wantBreakBefore(t, gated{}, err, "dangerous_tool", nil)
				if _, err := th.Invoke(ctx, gated{}); err != nil {
					t.Fatal(err)
				}
				var loop string
				for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					if s.Metadata[graph.MetaSource] == "loop" && cmp.Equal(s.Next, []string{"dangerous_tool"}) {
						loop = s.CheckpointID
					}
				}
				if loop == "" {
					t.Fatal("no checkpoint saved between agent and dangerous_tool")
				}
				out, err := th.Invoke(ctx, gated{}, graph.FromCheckpoint(loop))
				wantBreakBefore(t, out, err, "dangerous_tool", []string{"agent"})
			})

			t.Run("approval", func(t *testing.T) {
				th := c.Thread(uniqueThread("approval"))
				_, err := th.Invoke(ctx, gated{Route: "dangerous_tool"})
				var ie *graph.InterruptError
				if !errors.As(err, &ie) {
					t.Fatalf("first run: %v, want a pause", err)
				}
				pause := ie.CheckpointID
				// An edit that keeps the pause (no AsNode) keeps the approval.
				if _, err := th.Update(ctx, gatedLog.Set([]string{"edited"})); err != nil {
					t.Fatal(err)
				}
				out, err := th.Invoke(ctx, gated{})
				if err != nil {
					t.Fatalf("approving the edited pause: %v", err)
				}
				if diff := cmp.Diff([]string{"agent", "edited", "dangerous_tool"}, out.Log); diff != "" {
					t.Errorf("log after the approval (-want +got):\n%s", diff)
				}
				// The pause's own checkpoint, run again, goes on too.
				out, err = th.Invoke(ctx, gated{}, graph.FromCheckpoint(pause))
				if err != nil {
					t.Fatalf("approving the pause's checkpoint again: %v", err)
				}
				if diff := cmp.Diff([]string{"agent", "dangerous_tool"}, out.Log); diff != "" {
					t.Errorf("log after approving the pause's checkpoint (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestBreakpointBeforeAfterFailure checks that a step a failed run left
// pauses at a breakpoint a later run sets before it.
func TestBreakpointBeforeAfterFailure(t *testing.T) {
	ctx := context.Background()
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			fail := true
			g := graph.New[gated]()
			g.AddNode("agent", func(context.Context, gated) (graph.Update[gated], error) {
				return gatedLog.Set([]string{"agent"}), nil
			})
			g.AddNode("tool", func(context.Context, gated) (graph.Update[gated], error) {
				if fail {
					return graph.Update[gated]{}, errors.New("tool unavailable")
				}
				return gatedLog.Set([]string{"tool"}), nil
			})
			g.AddEdge(graph.START, "agent").AddEdge("agent", "tool").AddEdge("tool", graph.END)
			c, err := g.Compile(graph.WithCheckpointer(open(t)))
			if err != nil {
				t.Fatal(err)
			}
			th := c.Thread(uniqueThread("failed"))
			if _, err := th.Invoke(ctx, gated{}); err == nil {
				t.Fatal("the tool's failure did not fail the run")
			}
			fail = false
			out, err := th.Invoke(ctx, gated{}, graph.InterruptBefore("tool"))
			wantBreakBefore(t, out, err, "tool", []string{"agent"})
			out, err = th.Invoke(ctx, gated{}, graph.InterruptBefore("tool"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"agent", "tool"}, out.Log); diff != "" {
				t.Errorf("log after the approval (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBreakpointBeforeThenInterrupt checks that resuming a node's
// Interrupt, in a step approved at a breakpoint, does not stop at the
// breakpoint again.
func TestBreakpointBeforeThenInterrupt(t *testing.T) {
	ctx := context.Background()
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			g := graph.New[gated]()
			g.AddNode("ask", func(ctx context.Context, _ gated) (graph.Update[gated], error) {
				answer, err := graph.Interrupt[string](ctx, "which?")
				if err != nil {
					return graph.Update[gated]{}, err
				}
				return gatedLog.Set([]string{"ask:" + answer}), nil
			})
			g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
			c, err := g.Compile(graph.WithCheckpointer(open(t)), graph.InterruptBefore("ask"))
			if err != nil {
				t.Fatal(err)
			}
			th := c.Thread(uniqueThread("ask"))
			out, err := th.Invoke(ctx, gated{})
			wantBreakBefore(t, out, err, "ask", nil)
			_, err = th.Invoke(ctx, gated{})
			var ie *graph.InterruptError
			if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].Kind != graph.InterruptRaised {
				t.Fatalf("approved run: %v, want the node's interrupt", err)
			}
			out, err = th.Invoke(ctx, gated{}, graph.Resume("this"))
			if err != nil {
				t.Fatalf("resuming the interrupt: %v", err)
			}
			if diff := cmp.Diff([]string{"ask:this"}, out.Log); diff != "" {
				t.Errorf("log after the resume (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInputOnPendingStep checks the errors of new input on a thread with
// a pending step, and that the fix each names works.
func TestInputOnPendingStep(t *testing.T) {
	ctx := context.Background()
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			saver := open(t)

			t.Run("step in progress", func(t *testing.T) {
				entered, release := make(chan struct{}), make(chan struct{})
				g := graph.New[gated]()
				g.AddNode("slow", func(ctx context.Context, _ gated) (graph.Update[gated], error) {
					entered <- struct{}{}
					<-release
					return gatedLog.Set([]string{"slow"}), nil
				})
				g.AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
				c, err := g.Compile(graph.WithCheckpointer(saver))
				if err != nil {
					t.Fatal(err)
				}
				th := c.Thread(uniqueThread("busy"))
				first := make(chan error, 1)
				go func() {
					_, err := th.Invoke(ctx, gated{Log: []string{"one"}})
					first <- err
				}()
				<-entered // the first run's input checkpoint is saved
				_, err = th.Invoke(ctx, gated{Log: []string{"two"}})
				if !errors.Is(err, checkpoint.ErrConflict) || !errors.Is(err, graph.ErrThreadPaused) {
					t.Errorf("input during a run: %v; want an error matching checkpoint.ErrConflict and graph.ErrThreadPaused", err)
				}
				if err != nil && (strings.Contains(err.Error(), "paused") || !strings.Contains(err.Error(), "in progress")) {
					t.Errorf("input during a run: %q; want it to say a step is in progress, not paused", err)
				}
				close(release)
				if err := <-first; err != nil {
					t.Fatal(err)
				}
				go func() { <-entered }() // the retried run's slow
				out, err := th.Invoke(ctx, gated{Log: []string{"two"}})
				if err != nil {
					t.Fatalf("retry once the other run finished: %v", err)
				}
				if diff := cmp.Diff([]string{"one", "slow", "two", "slow"}, out.Log); diff != "" {
					t.Errorf("log after the retry (-want +got):\n%s", diff)
				}
			})

			c := gatedGraph(t, saver, graph.InterruptBefore("safe_tool"))
			t.Run("breakpoint", func(t *testing.T) {
				th := c.Thread(uniqueThread("bp"))
				_, err := th.Invoke(ctx, gated{Route: "safe_tool"})
				if err == nil || strings.Contains(err.Error(), "graph.Resume") {
					t.Errorf("pause at a breakpoint: %v; want it to name the zero input, not graph.Resume", err)
				}
				_, err = th.Invoke(ctx, gated{}, graph.Resume(true))
				if !errors.Is(err, graph.ErrNothingToResume) || !strings.Contains(err.Error(), "zero input") || strings.Contains(err.Error(), "use graph.ResumeByID") {
					t.Errorf("Resume at a breakpoint: %v; want ErrNothingToResume naming the zero input", err)
				}
				_, err = th.Invoke(ctx, gated{Log: []string{"more"}})
				if !errors.Is(err, graph.ErrThreadPaused) || errors.Is(err, checkpoint.ErrConflict) ||
					!strings.Contains(err.Error(), "zero input") || strings.Contains(err.Error(), "graph.Resume") {
					t.Errorf("input at a breakpoint: %v; want ErrThreadPaused naming the zero input and not graph.Resume", err)
				}
			})

			t.Run("resume with input", func(t *testing.T) {
				g := graph.New[gated]()
				g.AddNode("ask", func(ctx context.Context, _ gated) (graph.Update[gated], error) {
					answer, err := graph.Interrupt[string](ctx, "which?")
					return gatedLog.Set([]string{answer}), err
				})
				g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
				c, err := g.Compile(graph.WithCheckpointer(saver))
				if err != nil {
					t.Fatal(err)
				}
				th := c.Thread(uniqueThread("ask"))
				if _, err := th.Invoke(ctx, gated{}); !errors.Is(err, graph.ErrInterrupted) {
					t.Fatalf("first run: %v, want a pause", err)
				}
				_, err = th.Invoke(ctx, gated{Log: []string{"more"}}, graph.Resume("x"))
				if !errors.Is(err, graph.ErrThreadPaused) || strings.Contains(err.Error(), "resume it with graph.Resume") || !strings.Contains(err.Error(), "zero input") {
					t.Errorf("Resume with input: %v; want ErrThreadPaused asking for a zero input", err)
				}
				_, err = th.Invoke(ctx, gated{Log: []string{"more"}})
				if !errors.Is(err, graph.ErrThreadPaused) || !strings.Contains(err.Error(), "graph.Resume") {
					t.Errorf("input on an interrupt: %v; want ErrThreadPaused naming graph.Resume", err)
				}
			})

			t.Run("input from a paused checkpoint", func(t *testing.T) {
				th := c.Thread(uniqueThread("fork"))
				_, err := th.Invoke(ctx, gated{Route: "safe_tool"})
				var ie *graph.InterruptError
				if !errors.As(err, &ie) {
					t.Fatalf("first run: %v, want a pause", err)
				}
				// New input given from the paused checkpoint drops its step.
				out, err := th.Invoke(ctx, gated{Log: []string{"instead"}, Route: graph.END}, graph.FromCheckpoint(ie.CheckpointID))
				if err != nil {
					t.Fatalf("input from the paused checkpoint: %v", err)
				}
				if diff := cmp.Diff([]string{"agent", "instead", "agent"}, out.Log); diff != "" {
					t.Errorf("log (-want +got):\n%s", diff)
				}
				st, err := th.State(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Next) != 0 || len(st.Interrupts) != 0 {
					t.Errorf("thread after the input: next %v, interrupts %v; want it finished", st.Next, st.Interrupts)
				}
			})
		})
	}
}

// TestUpdateAsStart checks that Thread.Update with AsNode(START) applies
// the update as input and schedules START's successors.
func TestUpdateAsStart(t *testing.T) {
	ctx := context.Background()
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			c := gatedGraph(t, open(t), graph.InterruptBefore("safe_tool"))
			for _, paused := range []bool{false, true} {
				th := c.Thread(uniqueThread(fmt.Sprint("start-", paused)))
				want := []string{"seed", "agent"}
				if paused {
					if _, err := th.Invoke(ctx, gated{Route: "safe_tool"}); !errors.Is(err, graph.ErrInterrupted) {
						t.Fatalf("first run: %v, want a pause", err)
					}
					want = []string{"agent", "seed", "agent"}
				}
				if _, err := th.Update(ctx, graph.Updates(gatedLog.Set([]string{"seed"}), gatedRoute.Set("")), graph.AsNode(graph.START)); err != nil {
					t.Fatalf("paused=%t: %v", paused, err)
				}
				st, err := th.State(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !cmp.Equal([]string{"agent"}, st.Next) || len(st.Interrupts) != 0 || len(st.Ran) != 0 {
					t.Errorf("paused=%t: after the update next %v, interrupts %v, ran %v; want next [agent] and no interrupt, nothing ran", paused, st.Next, st.Interrupts, st.Ran)
				}
				out, err := th.Invoke(ctx, gated{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, out.Log); diff != "" {
					t.Errorf("paused=%t: log (-want +got):\n%s", paused, diff)
				}
			}
		})
	}
}
