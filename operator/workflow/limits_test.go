package workflow_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// bigJSONOperators registers "big", whose output is a string holding a
// JSON object of about size bytes (as a model answers), "bigmap", whose
// output is such an object as a map, and "echo",
// whose output is its params.
func bigJSONOperators(t *testing.T, size int) *operator.Registry {
	reg := operator.NewRegistry(operator.Deps{})
	out := `{"x":"y","pad":"` + strings.Repeat("p", size) + `"}`
	mustRegister(t, reg, "big", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: out}, nil
	})
	pad := strings.Repeat("p", size)
	mustRegister(t, reg, "bigmap", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{"x": "y", "pad": pad}}, nil
	})
	mustRegister(t, reg, "echo", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: oc.Params}, nil
	})
	return reg
}

// bigPlan runs big then echo with tmpl as input q, or as the whole input
// mapping when it is a map.
func bigPlan(tmpl any) plan.Plan {
	return bigPlanOf("big", tmpl)
}

func bigPlanOf(op string, tmpl any) plan.Plan {
	mapping, ok := tmpl.(map[string]any)
	if !ok {
		mapping = map[string]any{"q": tmpl}
	}
	return plan.Plan{Steps: []plan.Step{
		{ID: "a", Operator: op},
		{ID: "b", Operator: "echo", DependsOn: []string{"a"}, InputMapping: mapping},
	}}
}

// An output held as a string of JSON is parsed once per step, however
// many references read it: 100 references to a field of a 1 MB output
// allocate about what one parse does, not 100 times that.
func TestTemplateParsesOutputOnce(t *testing.T) {
	const size = 1 << 20
	x := newExecutor(t, workflow.Config{Operators: bigJSONOperators(t, size)})
	def := bigPlan(strings.Repeat("{{a.x}} ", workflow.DefaultMaxTemplateRefs))
	run := func() *workflow.Result {
		res, err := x.Run(context.Background(), def, "q", operator.Env{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	run() // warm up
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res := run()
	runtime.ReadMemStats(&m1)
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := res.Step("b")
	if got, want := b.Inputs["q"], strings.Repeat("y ", workflow.DefaultMaxTemplateRefs); got != want {
		t.Fatalf("input q = %.40q..., want %.40q...", got, want)
	}
	// One parse of the output allocates a few times its size; one per
	// reference would be a hundred times.
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 20*size {
		t.Errorf("a run allocated %d MB, want under %d MB: the output is parsed again per reference", alloc>>20, 20*size>>20)
	}
}

func TestTemplateRefsBounded(t *testing.T) {
	reg := bigJSONOperators(t, 10)
	for name, tmpl := range map[string]any{
		"string": strings.Repeat("{{a.x}} ", 11),
		"list":   []any{strings.Repeat("{{a.x}}", 6), strings.Repeat("{{a.output}}", 5)},
		// The limit is per step: two inputs count together.
		"inputs": map[string]any{"p": strings.Repeat("{{a.x}}", 6), "q": strings.Repeat("{{a.output}}", 5)},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := workflow.Config{Operators: reg, MaxTemplateRefs: 10}
			for _, check := range []func() error{
				func() error { _, err := workflow.Compile(bigPlan(tmpl), cfg); return err },
				func() error {
					_, err := newExecutor(t, cfg).Run(context.Background(), bigPlan(tmpl), "q", operator.Env{})
					return err
				},
			} {
				err := check()
				var se *plan.StepError
				if !errors.As(err, &se) || se.Step != "b" || se.Field != "input_mapping" || !strings.Contains(se.Reason, "Config.MaxTemplateRefs") {
					t.Errorf("err = %v, want a *plan.StepError for b's input_mapping naming Config.MaxTemplateRefs", err)
				}
			}
			cfg.MaxTemplateRefs = 11
			if _, err := workflow.Compile(bigPlan(tmpl), cfg); err != nil {
				t.Errorf("with the limit at 11: %v", err)
			}
		})
	}
	if _, err := workflow.Compile(bigPlan(strings.Repeat("{{a.x}}", workflow.DefaultMaxTemplateRefs+1)), workflow.Config{Operators: reg}); err == nil {
		t.Errorf("%d references compiled with the default limit", workflow.DefaultMaxTemplateRefs+1)
	}
	if _, err := workflow.Compile(bigPlan(strings.Repeat("{{a.x}}", workflow.DefaultMaxTemplateRefs+1)), workflow.Config{Operators: reg, MaxTemplateRefs: -1}); err != nil {
		t.Errorf("no limit: %v", err)
	}
}

// A step whose resolved input would be larger than Config.MaxInputBytes
// fails before building it, naming the step, the input and the limit.
func TestInputSizeBounded(t *testing.T) {
	const size = 1 << 20
	reg := bigJSONOperators(t, size)
	for name, c := range map[string]struct {
		op   string
		tmpl any
	}{
		"text":  {"big", strings.Repeat("{{a.output}}", 17)},
		"whole": {"big", []any{"{{a.output}}", "{{a.output}}"}},
		"mixed": {"big", []any{"{{a.output}}", "x{{a.output}}"}},
		// The bound is per step: two inputs count together.
		"inputs": {"big", map[string]any{"p": "{{a.output}}", "q": "{{a.output}}"}},
		// A map passed whole counts its JSON size, as every encoding
		// of the inputs (a checkpoint) writes it once per reference.
		"map whole": {"bigmap", []any{"{{a.output}}", "{{a.output}}"}},
		"map mixed": {"bigmap", []any{"{{a.output}}", "x{{a.output}}"}},
		"map text":  {"bigmap", strings.Repeat("{{a.output}}", 17)},
	} {
		t.Run(name, func(t *testing.T) {
			x := newExecutor(t, workflow.Config{Operators: reg, MaxInputBytes: size + 100})
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			res, err := x.Run(context.Background(), bigPlanOf(c.op, c.tmpl), "q", operator.Env{})
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := res.Step("b")
			if b.Status != workflow.Failed || b.Err == nil {
				t.Fatalf("step b: %s %v, want failed", b.Status, b.Err)
			}
			for _, want := range []string{"step b", "input q", "Config.MaxInputBytes", "1048676"} {
				if !strings.Contains(b.Err.Error(), want) {
					t.Errorf("error %q does not name %q", b.Err, want)
				}
			}
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 10*size {
				t.Errorf("a run allocated %d MB, want under %d MB", alloc>>20, 10*size>>20)
			}
		})
	}
	// The default bounds a plan copying a 1 MB output a hundred times.
	x := newExecutor(t, workflow.Config{Operators: reg})
	res, err := x.Run(context.Background(), bigPlan(strings.Repeat("{{a.output}}", workflow.DefaultMaxTemplateRefs)), "q", operator.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := res.Step("b"); b.Status != workflow.Failed || !strings.Contains(b.Err.Error(), "Config.MaxInputBytes") {
		t.Errorf("step b: %s %v, want failed naming Config.MaxInputBytes", b.Status, b.Err)
	}
	// Negative: no bound.
	x = newExecutor(t, workflow.Config{Operators: reg, MaxInputBytes: -1})
	res, err = x.Run(context.Background(), bigPlan([]any{"{{a.output}}", "{{a.output}}"}), "q", operator.Env{})
	if err != nil || res.Err() != nil {
		t.Fatalf("no bound: %v %v", err, res.Err())
	}
}

// Resume continues the plan saved in the checkpoint, which Run's check
// never saw under the resuming executor's limits: each step checks
// Config.MaxTemplateRefs itself.
func TestResumeChecksTemplateRefs(t *testing.T) {
	reg := bigJSONOperators(t, 10)
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := false
	mustRegister(t, reg, "stop", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		if !stopped {
			// Interrupt the run before the step's outcome is saved.
			stopped = true
			cancel()
			return nil, ctx.Err()
		}
		return &operator.Result{Output: oc.Params}, nil
	})
	def := plan.Plan{Steps: []plan.Step{
		{ID: "a", Operator: "big"},
		{ID: "b", Operator: "stop", DependsOn: []string{"a"}, InputMapping: map[string]any{"q": "{{a.x}} {{a.x}}"}},
	}}
	cp := checkpoint.NewMemory()
	cfg := graph.RunConfig{ThreadID: "refs"}
	if _, err := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: cp}).Run(graph.WithConfig(runCtx, cfg), def, "q", operator.Env{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	res, err := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: cp, MaxTemplateRefs: 1}).Resume(graph.WithConfig(context.Background(), cfg), operator.Env{})
	if err == nil {
		b, _ := res.Step("b")
		err = b.Err
	}
	if err == nil || !strings.Contains(err.Error(), "Config.MaxTemplateRefs") {
		t.Errorf("resume with MaxTemplateRefs 1: %v, want an error naming Config.MaxTemplateRefs", err)
	}
}
