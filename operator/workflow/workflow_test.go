package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
	"github.com/google/go-cmp/cmp"
)

func TestPricingWorkflow(t *testing.T) {
	wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: pricingOperators(t)})
	em := newRecorder()
	turn := memory.NewTurn("c1", "how do we compare?")
	res, err := wf.Run(context.Background(), "how do we compare?", operator.Env{Reporter: em, Turn: turn})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	checkPricingEvents(t, em)
	s4, _ := res.Step("step_4")
	wantOut := "docs: our pricing tiers how do we compare? | web: competitor pricing how do we compare?"
	if s4.Output != wantOut {
		t.Errorf("step_4 output = %q, want %q", s4.Output, wantOut)
	}
	if diff := cmp.Diff([]string{"step_1", "step_2", "step_3", "step_4"}, res.IDs(workflow.Succeeded)); diff != "" {
		t.Errorf("succeeded (-want +got):\n%s", diff)
	}
	if r, ok := turn.Results.Get("step_4"); !ok || r.Output != wantOut {
		t.Errorf("turn result step_4 = %v, %v; want the step's output", r, ok)
	}
}

func TestValidate(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	noop := func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{}, nil
	}
	mustRegister(t, reg, "a", noop)
	mustRegister(t, reg, "b", noop)
	step := func(id, op string, deps []string, in map[string]any) plan.Step {
		return plan.Step{ID: id, Name: id, Operator: op, DependsOn: deps, InputMapping: in}
	}
	tests := []struct {
		name  string
		steps []plan.Step
		want  string
	}{
		{"no steps", nil, "plan: steps is empty; a plan needs at least one step"},
		{"unknown operator", []plan.Step{step("s1", "nope", nil, nil)},
			`plan: step s1: operator "nope" is not registered; registered: a, b`},
		{"unknown dependency", []plan.Step{step("s1", "a", []string{"s9"}, nil)},
			`plan: step s1: depends_on names "s9", which is not a step of the workflow`},
		{"cycle", []plan.Step{step("s1", "a", nil, nil), step("s2", "a", []string{"s1", "s4"}, nil), step("s3", "a", []string{"s2"}, nil), step("s4", "b", []string{"s3"}, nil)},
			"plan: dependency cycle s2 -> s3 -> s4 -> s2; remove one of its depends_on entries"},
		{"self dependency", []plan.Step{step("s1", "a", []string{"s1"}, nil)},
			"plan: dependency cycle s1 -> s1; remove one of its depends_on entries"},
		{"template outside dependencies", []plan.Step{step("s1", "a", nil, nil), step("s2", "a", nil, nil), step("s3", "b", []string{"s1"}, map[string]any{"q": "{{s1.output}} and {{s2.text}}"})},
			"plan: step s3: input_mapping.q uses {{s2.text}}, but s2 is not among depends_on; add it there"},
		{"template naming no step", []plan.Step{step("s1", "a", nil, map[string]any{"q": []any{"{{user_query}}", "{{ghost.output}}"}})},
			"plan: step s1: input_mapping.q uses {{ghost.output}}, which is neither user_query nor a step of the workflow"},
		{"unclosed template", []plan.Step{step("s1", "a", nil, map[string]any{"q": "{{user_query"})},
			`plan: step s1: input_mapping.q "{{user_query" has a "{{" at byte 0 that is never closed with "}}"`},
		{"bad mapping type", []plan.Step{step("s1", "a", nil, map[string]any{"k": 3.0})},
			"plan: step s1: input_mapping.k is a float64; use a template string or a list of them"},
		{"duplicate dependency", []plan.Step{step("s1", "a", nil, nil), step("s2", "a", []string{"s1", "s1"}, nil)},
			`plan: step s2: depends_on names "s1" twice; list each dependency once`},
		{"duplicate id", []plan.Step{step("s1", "a", nil, nil), step("s1", "b", nil, nil)},
			"plan: step s1: id is used by steps 1 and 2; ids must be unique"},
		{"empty id", []plan.Step{step("", "a", nil, nil)},
			`plan: step #1: id is empty; give every step a unique id such as "step_1"`},
		{"step without field", []plan.Step{step("s1", "a", nil, nil), step("s2", "a", []string{"s1"}, map[string]any{"q": "{{s1}}"})},
			"plan: step s2: input_mapping.q \"{{s1}}\" at byte 0: {{s1}} names no field; write {{s1.output}} for the whole output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workflow.Compile(plan.Plan{Goal: "g", Steps: tt.steps}, workflow.Config{Operators: reg})
			if err == nil {
				t.Fatal("Compile succeeded")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, plan.ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
		})
	}
}

func TestFailedStepSkipsDependents(t *testing.T) {
	boom := errors.New("search backend down")
	reg := okFailOperators(t, boom)
	def := plan.Plan{Goal: "g", Steps: []plan.Step{
		{ID: "a", Name: "A", Operator: "ok"},
		{ID: "b", Name: "B", Operator: "fail", DependsOn: []string{"a"}},
		{ID: "c", Name: "C", Operator: "ok", DependsOn: []string{"b"}},
		{ID: "d", Name: "D", Operator: "ok", DependsOn: []string{"c"}},
		{ID: "e", Name: "E", Operator: "ok", DependsOn: []string{"a"}, InputMapping: map[string]any{"query": "{{a.output}}!"}},
		{ID: "f", Name: "F", Operator: "ok", DependsOn: []string{"e"}},
	}}
	wf := newWorkflow(t, def, workflow.Config{Operators: reg})
	em := newRecorder()
	res, err := wf.Run(context.Background(), "q", operator.Env{Reporter: em})
	if err != nil {
		t.Fatal(err)
	}
	for st, want := range map[workflow.Status][]string{
		workflow.Succeeded: {"a", "e", "f"},
		workflow.Failed:    {"b"},
		workflow.Skipped:   {"c", "d"},
	} {
		if diff := cmp.Diff(want, res.IDs(st)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st, diff)
		}
	}
	b, _ := res.Step("b")
	if !errors.Is(b.Err, boom) {
		t.Errorf("b.Err = %v, want it to wrap %v", b.Err, boom)
	}
	d, _ := res.Step("d")
	var skip *workflow.SkipError
	if !errors.As(d.Err, &skip) || skip.Dependency != "c" || !errors.Is(d.Err, boom) || !errors.Is(d.Err, workflow.ErrSkipped) {
		t.Errorf("d.Err = %v, want a SkipError on c whose cause chain reaches %v", d.Err, boom)
	}
	e, _ := res.Step("e")
	if e.Output != "ok:ok:q!" {
		t.Errorf("e output = %v, want ok:ok:q!", e.Output)
	}
	if res.Succeeded() || res.Err() == nil {
		t.Error("result reports success despite a failed step")
	}
	got := drain(t, em)
	if got[len(got)-1] != "workflow.complete steps=4" {
		t.Errorf("reports %q: want a RunEnd counting the 4 steps that ran", got)
	}
	for _, r := range em.reports {
		if end, ok := r.(workflow.StepEnd); ok && end.Status == workflow.Failed && (end.ID != "b" || end.Operator != "fail" || !errors.Is(end.Err, boom)) {
			t.Errorf("failed step reported as %+v, want step b of operator fail with its error", end)
		}
	}
	for _, want := range []string{
		"workflow.step.complete step=2 status=failed",
		"workflow.step.complete step=3 status=skipped",
		"workflow.step.complete step=4 status=skipped",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("events %q: missing %q", got, want)
		}
	}
	for _, l := range got {
		if strings.HasPrefix(l, "workflow.step.start step=3") || strings.HasPrefix(l, "workflow.step.start step=4") {
			t.Errorf("skipped step reported as started: %q", l)
		}
	}
}

func TestMaxConcurrency(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			reg := operator.NewRegistry(operator.Deps{})
			var at peak
			mustRegister(t, reg, "work", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				at.enter()
				time.Sleep(2 * time.Millisecond)
				at.leave()
				return &operator.Result{}, nil
			})
			var steps []plan.Step
			for i := range 6 {
				steps = append(steps, plan.Step{ID: fmt.Sprint("s", i), Operator: "work"})
			}
			wf := newWorkflow(t, plan.Plan{Steps: steps}, workflow.Config{Operators: reg, MaxConcurrency: limit})
			if _, err := wf.Run(context.Background(), "q", operator.Env{}); err != nil {
				t.Fatal(err)
			}
			if p := at.max.Load(); p > int32(limit) {
				t.Errorf("peak concurrency %d exceeds the limit %d", p, limit)
			}
		})
	}
}

// The workflow's graph runs as a subgraph of a parent graph, and its events
// stream with the parent's.
func TestSubgraph(t *testing.T) {
	wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: pricingOperators(t)})
	type Chat struct {
		Query  string
		Answer string
	}
	answer := graph.Replace(func(c *Chat) *string { return &c.Answer })
	g := graph.New[Chat]()
	graph.AddSubgraph(g, "research", wf.Graph(),
		func(c Chat) workflow.State { return workflow.State{Query: c.Query} },
		func(s workflow.State) graph.Update[Chat] {
			s4, _ := s.Step("step_4")
			return answer.Set(fmt.Sprint(s4.Output))
		})
	g.AddEdge(graph.START, "research").AddEdge("research", graph.END)
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var final Chat
	for ev, err := range app.Stream(context.Background(), Chat{Query: "x"}, graph.WithModes(graph.StreamCustom, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mode == graph.StreamCustom {
			if !slices.Contains(ev.Namespace, "research") {
				t.Errorf("report %T streamed without the subgraph's namespace: %v", ev.Payload, ev.Namespace)
			}
			types = append(types, line(ev.Payload))
		}
		if ev.Mode == graph.StreamValues {
			final = ev.State
		}
	}
	if len(types) != 10 || types[0] != "workflow.created steps=4" || types[9] != "workflow.complete steps=4" {
		t.Errorf("streamed %q, want workflow.created, 4 starts and completes, workflow.complete", types)
	}
	if want := "docs: our pricing tiers x | web: competitor pricing x"; final.Answer != want {
		t.Errorf("answer = %q, want %q", final.Answer, want)
	}
}

func TestCancel(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	started := make(chan struct{})
	mustRegister(t, reg, "hang", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	mustRegister(t, reg, "after", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		t.Error("a step after a cancelled one ran")
		return &operator.Result{}, nil
	})
	wf := newWorkflow(t, plan.Plan{Steps: []plan.Step{
		{ID: "a", Operator: "hang"}, {ID: "b", Operator: "after", DependsOn: []string{"a"}},
	}}, workflow.Config{Operators: reg})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := wf.Run(ctx, "q", operator.Env{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v, want context.Canceled", err)
	}
}

// A finished workflow's state survives a JSON round trip (checkpoints, API
// responses).
func TestStateJSON(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	mustRegister(t, reg, "ok", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{"n": 1.0}}, nil
	})
	mustRegister(t, reg, "fail", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return nil, errors.New("broken")
	})
	wf := newWorkflow(t, plan.Plan{Steps: []plan.Step{
		{ID: "a", Operator: "ok"}, {ID: "b", Operator: "fail"}, {ID: "c", Operator: "ok", DependsOn: []string{"b"}},
	}}, workflow.Config{Operators: reg})
	out, err := wf.Graph().Invoke(context.Background(), workflow.State{Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back workflow.State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	errText := cmp.Comparer(func(x, y error) bool { return (x == nil) == (y == nil) && (x == nil || x.Error() == y.Error()) })
	if diff := cmp.Diff(out, back, errText); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if c, _ := back.Step("c"); !errors.Is(c.Err, workflow.ErrSkipped) {
		t.Errorf("decoded skip error %v does not match ErrSkipped", c.Err)
	}
}

func TestCompileChecksRequirements(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	err := reg.Register(operator.Metadata{Name: "needs_history", Description: "d", Type: operator.PureLLM, ContextRequirements: []string{"query", "conversation.recent(3)"}},
		func(operator.Deps) (operator.Operator, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	_, err = workflow.Compile(plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "needs_history"}}},
		workflow.Config{Operators: reg, Assembler: memory.NewAssembler(memory.AssemblerConfig{})})
	if !errors.Is(err, plan.ErrInvalid) || !errors.Is(err, memory.ErrUnknownSource) || !strings.HasPrefix(err.Error(), "plan: step s1: operator needs_history needs context the assembler cannot give") {
		t.Errorf("Compile = %v", err)
	}
}

func TestStream(t *testing.T) {
	def := parsePricing(t)
	wf := newWorkflow(t, def, workflow.Config{Operators: pricingOperators(t)})
	var types []string
	for ev, err := range wf.Stream(context.Background(), "q", operator.Env{}, graph.WithModes(graph.StreamCustom)) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, line(ev.Payload))
	}
	if len(types) != 10 || types[0] != "workflow.created steps=4" || types[9] != "workflow.complete steps=4" {
		t.Errorf("streamed %v", types)
	}
	// Breaking out of the loop stops the run; goleak checks nothing is left.
	wf = newWorkflow(t, def, workflow.Config{Operators: pricingOperators(t)})
	for range wf.Stream(context.Background(), "q", operator.Env{}, graph.WithModes(graph.StreamCustom)) {
		break
	}
}

// A step depending on steps at different depths runs once, after the
// deeper one.
func TestUnevenJoin(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	order := recordQueries(t, reg, "log")
	q := func(id string) map[string]any { return map[string]any{"query": id} }
	wf := newWorkflow(t, plan.Plan{Steps: []plan.Step{
		{ID: "a", Operator: "log", InputMapping: q("a")},
		{ID: "b", Operator: "log", DependsOn: []string{"a"}, InputMapping: q("b")},
		{ID: "c", Operator: "log", DependsOn: []string{"b"}, InputMapping: q("c")},
		{ID: "d", Operator: "log", DependsOn: []string{"a", "c"}, InputMapping: map[string]any{"query": "d after {{a.output}} and {{c.output}}"}},
	}}, workflow.Config{Operators: reg})
	res, err := wf.Run(context.Background(), "q", operator.Env{})
	if err != nil || res.Err() != nil {
		t.Fatal(err, res.Err())
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d after a and c"}, order()); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
