package graph_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// The run, step, node and save hooks of a durable W1 run, in each
// durability mode: the order they are called in, the contexts the Start
// hooks return reaching what they wrap, and what the saves report.
func TestRunStepSaveHooks(t *testing.T) {
	type key struct{}
	for _, mode := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(mode.String(), func(t *testing.T) {
			var mu sync.Mutex
			var calls, saves []string
			note := func(s string) { mu.Lock(); calls = append(calls, s); mu.Unlock() }
			hooks := graph.Hooks{
				RunStart: func(ctx context.Context, r graph.RunInfo) context.Context {
					note(fmt.Sprintf("run %s %s", r.Graph, r.Thread))
					return context.WithValue(ctx, key{}, "run")
				},
				RunEnd: func(ctx context.Context, r graph.RunInfo, res graph.RunResult) {
					note(fmt.Sprintf("end %v %d %v", ctx.Value(key{}), res.Steps, res.Err))
				},
				StepStart: func(ctx context.Context, s graph.StepInfo) context.Context {
					note(fmt.Sprintf("step %d %v in %v", s.Step, s.Nodes, ctx.Value(key{})))
					return context.WithValue(ctx, key{}, fmt.Sprint("step ", s.Step))
				},
				StepEnd: func(ctx context.Context, s graph.StepInfo, err error) {
					note(fmt.Sprintf("step end %d %v", s.Step, err))
				},
				NodeStart: func(ctx context.Context, ti graph.TaskInfo) context.Context {
					note(fmt.Sprintf("node %s in %v", ti.Node, ctx.Value(key{})))
					return ctx
				},
				Saved: func(ctx context.Context, s graph.SaveInfo, _ time.Duration, err error) {
					mu.Lock()
					defer mu.Unlock()
					if err != nil || s.Backend != "checkpoint.Memory" || s.Thread != "w1" || s.Checkpoint == "" || s.Writes {
						t.Errorf("save %+v, %v", s, err)
					}
					saves = append(saves, fmt.Sprintf("%d %v", s.Step, s.Bytes > 0))
				},
			}
			c, err := buildW1With(graph.WithName("w1"), graph.WithCheckpointer(checkpoint.NewMemory()),
				graph.WithDurability(mode), graph.WithHooks(hooks))
			if err != nil {
				t.Fatal(err)
			}
			s, err := c.Thread("w1").Invoke(context.Background(), chainState{})
			if err != nil {
				t.Fatal(err)
			}
			if err := checkW1(s); err != nil {
				t.Fatal(err)
			}
			want := []string{"run w1 w1",
				"step 1 [a] in run", "node a in step 1", "step end 1 <nil>",
				"step 2 [b] in run", "node b in step 2", "step end 2 <nil>",
				"step 3 [c] in run", "node c in step 3", "step end 3 <nil>",
				"end run 3 <nil>"}
			if !slices.Equal(calls, want) {
				t.Errorf("hooks called:\n%q\nwant\n%q", calls, want)
			}
			wantSaves := []string{"0 false", "1 true", "2 true", "3 true"}
			if mode == graph.DurabilityExit {
				wantSaves = []string{"3 true"}
			}
			if !slices.Equal(saves, wantSaves) {
				t.Errorf("saves (step, bytes > 0) = %q, want %q", saves, wantSaves)
			}
		})
	}
}

// Hooks with only run hooks set are not ignored; hooks with none are.
func TestRunHooksAlone(t *testing.T) {
	runs := 0
	c, err := buildW1With(graph.WithHooks(graph.Hooks{}), graph.WithHooks(graph.Hooks{
		RunEnd: func(_ context.Context, r graph.RunInfo, res graph.RunResult) {
			if res.Steps != 3 || res.Err != nil || r.Thread != "" {
				t.Errorf("RunEnd %+v %+v", r, res)
			}
			runs++
		}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(context.Background(), chainState{}); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Errorf("RunEnd called %d times, want 1", runs)
	}
}

// A run whose hooks watch no node attempt (only run, step or save hooks)
// calls its nodes as a run without hooks does, not through the attempt
// that times them for node hooks: the node finds no attempt on its stack.
// One with a node hook still goes through it.
func TestHooksWithoutNodeHookSkipAttempt(t *testing.T) {
	run := func(ctx context.Context, _ graph.RunInfo) context.Context { return ctx }
	tests := []struct {
		name    string
		hooks   graph.Hooks
		attempt bool
	}{
		{"run and step hooks", graph.Hooks{RunStart: run, StepEnd: func(context.Context, graph.StepInfo, error) {}}, false},
		{"save hook", graph.Hooks{Saved: func(context.Context, graph.SaveInfo, time.Duration, error) {}}, false},
		{"node hook", graph.Hooks{NodeError: func(context.Context, graph.TaskInfo, time.Duration, error) {}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inAttempt bool
			g := graph.New[logState]()
			g.AddNode("a", func(context.Context, logState) (graph.Update[logState], error) {
				pc := make([]uintptr, 64)
				frames := runtime.CallersFrames(pc[:runtime.Callers(1, pc)])
				for more := true; more; {
					var f runtime.Frame
					f, more = frames.Next()
					inAttempt = inAttempt || strings.HasSuffix(f.Function, ").attempt")
				}
				return graph.Update[logState]{}, nil
			})
			g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
			c := mustCompile(t, g, graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithHooks(tt.hooks))
			if _, err := c.Thread("t").Invoke(context.Background(), logState{}); err != nil {
				t.Fatal(err)
			}
			if inAttempt != tt.attempt {
				t.Fatalf("the node ran inside attempt: %v, want %v", inAttempt, tt.attempt)
			}
		})
	}
}
