package workflow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// layered returns a workflow of depth batches of width steps; each step
// depends on every step of the batch before it and maps its output.
func layered(depth, width int) plan.Plan {
	var d plan.Plan
	for l := range depth {
		for w := range width {
			s := plan.Step{ID: fmt.Sprintf("s%d_%d", l, w), Name: fmt.Sprintf("Step %d.%d", l, w), Operator: "noop"}
			if l == 0 {
				s.InputMapping = map[string]any{"query": "{{user_query}}"}
			} else {
				var srcs []any
				for p := range width {
					dep := fmt.Sprintf("s%d_%d", l-1, p)
					s.DependsOn = append(s.DependsOn, dep)
					srcs = append(srcs, "{{"+dep+".output}}")
				}
				s.InputMapping = map[string]any{"sources": srcs}
			}
			d.Steps = append(d.Steps, s)
		}
	}
	return d
}

// BenchmarkWorkflow20Steps runs 20 no-op steps in 5 batches of 4 parallel
// steps: the cost of the orchestration alone (validation excluded; template
// resolution, events, operator creation and fallback handling included).
func BenchmarkWorkflow20Steps(b *testing.B) {
	reg := operator.NewRegistry(operator.Deps{})
	noop := operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: "ok"}, nil
	})
	if err := reg.Register(operator.Metadata{Name: "noop", Description: "does nothing", Type: operator.PureLLM},
		func(operator.Deps) (operator.Operator, error) { return noop, nil }); err != nil {
		b.Fatal(err)
	}
	wf, err := workflow.Compile(layered(5, 4), workflow.Config{Operators: reg})
	if err != nil {
		b.Fatal(err)
	}
	for _, withEvents := range []bool{false, true} {
		b.Run(fmt.Sprintf("events=%v", withEvents), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				var env operator.Env
				if withEvents {
					env.Reporter = newRecorder()
				}
				res, err := wf.Run(ctx, "q", env)
				if err != nil || len(res.Steps) != 20 {
					b.Fatal(err, len(res.Steps))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20, "ns/step")
		})
	}
}

// BenchmarkPlanPerRun runs a new plan of 20 no-op steps (5 batches of 4)
// per run, validation included, as a chat turn does: compiled for the run
// (Compile then Run) or given to the executor, compiled once.
func BenchmarkPlanPerRun(b *testing.B) {
	reg := operator.NewRegistry(operator.Deps{})
	noop := operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: "ok"}, nil
	})
	if err := reg.Register(operator.Metadata{Name: "noop", Description: "does nothing", Type: operator.PureLLM},
		func(operator.Deps) (operator.Operator, error) { return noop, nil }); err != nil {
		b.Fatal(err)
	}
	def := layered(5, 4)
	ctx := context.Background()
	b.Run("compile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			wf, err := workflow.Compile(def, workflow.Config{Operators: reg})
			if err != nil {
				b.Fatal(err)
			}
			if res, err := wf.Run(ctx, "q", operator.Env{}); err != nil || len(res.Steps) != 20 {
				b.Fatal(err)
			}
		}
	})
	b.Run("executor", func(b *testing.B) {
		x, err := workflow.NewExecutor(workflow.Config{Operators: reg})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if res, err := x.Run(ctx, def, "q", operator.Env{}); err != nil || len(res.Steps) != 20 {
				b.Fatal(err)
			}
		}
	})
}
