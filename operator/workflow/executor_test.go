package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
	"github.com/google/go-cmp/cmp"
)

// The executor runs the seed's pricing plan as a compiled workflow does:
// the same events in the same order, steps 2 and 3 at the same time (the
// operators' barrier fails otherwise), step 4 after both, its templates
// resolved from their outputs, and the results recorded in the turn.
func TestExecutorPricing(t *testing.T) {
	x := newExecutor(t, workflow.Config{Operators: pricingOperators(t)})
	em := newRecorder()
	turn := memory.NewTurn("c1", "how do we compare?")
	res, err := x.Run(context.Background(), parsePricing(t), "how do we compare?", operator.Env{Reporter: em, Turn: turn})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	checkPricingEvents(t, em)
	wantOut := "docs: our pricing tiers how do we compare? | web: competitor pricing how do we compare?"
	if s4, _ := res.Step("step_4"); s4.Output != wantOut {
		t.Errorf("step_4 output = %q, want %q", s4.Output, wantOut)
	}
	if res.Goal != "Compare our pricing to competitors" {
		t.Errorf("goal = %q", res.Goal)
	}
	if r, ok := turn.Results.Get("step_4"); !ok || r.Output != wantOut {
		t.Errorf("turn result step_4 = %v, %v; want the step's output", r, ok)
	}
	if n := turn.Actions.Len(); n != 4 {
		t.Errorf("%d actions recorded in the turn, want one per step", n)
	}
}

// A step waits for all its dependencies, however long their branches:
// d depends on a (one step deep) and c (three deep) and starts only after
// c completed.
func TestExecutorDependentsWait(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	order := recordQueries(t, reg, "rec")
	step := func(id string, deps ...string) plan.Step {
		return plan.Step{ID: id, Name: id, Operator: "rec", DependsOn: deps, InputMapping: map[string]any{"query": id}}
	}
	def := plan.Plan{Goal: "g", Steps: []plan.Step{
		step("d", "a", "c"), step("a"), step("b", "a"), step("c", "b"),
	}}
	x := newExecutor(t, workflow.Config{Operators: reg})
	res, err := x.Run(context.Background(), def, "q", operator.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, order()); diff != "" {
		t.Errorf("operator calls (-want +got):\n%s", diff)
	}
	// The result lists the steps in plan order.
	if diff := cmp.Diff([]string{"d", "a", "b", "c"}, res.IDs(workflow.Succeeded)); diff != "" {
		t.Errorf("succeeded (-want +got):\n%s", diff)
	}
}

// A failed step's dependents, direct or not, are skipped with a SkipError
// and report status skipped; an independent branch runs to the end.
func TestExecutorFailedDependencySkips(t *testing.T) {
	boom := errors.New("search backend down")
	reg := okFailOperators(t, boom)
	def := plan.Plan{Goal: "g", Steps: []plan.Step{
		{ID: "a", Name: "A", Operator: "ok"},
		{ID: "b", Name: "B", Operator: "fail", DependsOn: []string{"a"}},
		{ID: "c", Name: "C", Operator: "ok", DependsOn: []string{"b"}},
		{ID: "d", Name: "D", Operator: "ok", DependsOn: []string{"c"}},
		{ID: "e", Name: "E", Operator: "ok", DependsOn: []string{"a"}, InputMapping: map[string]any{"query": "{{a.output}}!"}},
	}}
	em := newRecorder()
	x := newExecutor(t, workflow.Config{Operators: reg})
	res, err := x.Run(context.Background(), def, "q", operator.Env{Reporter: em})
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, em)
	// b and e run in one wave; their events interleave as they finish.
	wave := got[3:7]
	slices.Sort(wave)
	want := []string{
		"workflow.created steps=5",
		"workflow.step.start step=1 name=A",
		"workflow.step.complete step=1",
		"workflow.step.complete step=2 status=failed",
		"workflow.step.complete step=5",
		"workflow.step.start step=2 name=B",
		"workflow.step.start step=5 name=E",
		"workflow.step.complete step=3 status=skipped",
		"workflow.step.complete step=4 status=skipped",
		"workflow.complete steps=3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "e"}, res.IDs(workflow.Succeeded)); diff != "" {
		t.Errorf("succeeded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c", "d"}, res.IDs(workflow.Skipped)); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	d, _ := res.Step("d")
	var skip *workflow.SkipError
	if !errors.As(d.Err, &skip) || skip.Dependency != "c" || !errors.Is(d.Err, boom) {
		t.Errorf("d's error = %v, want a SkipError naming c and wrapping b's failure", d.Err)
	}
	if e, _ := res.Step("e"); e.Output != "ok:ok:q!" {
		t.Errorf("e's output = %v, want ok:ok:q!", e.Output)
	}
	if !errors.Is(res.Err(), boom) {
		t.Errorf("Result.Err() = %v, want it to wrap the failure", res.Err())
	}
}

// Config.MaxConcurrency bounds the steps of a wave that run at once.
func TestExecutorMaxConcurrency(t *testing.T) {
	var at peak
	reg := operator.NewRegistry(operator.Deps{})
	mustRegister(t, reg, "slow", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		at.enter()
		defer at.leave()
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &operator.Result{Output: oc.Query}, nil
	})
	var def plan.Plan
	for _, id := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
		def.Steps = append(def.Steps, plan.Step{ID: id, Name: id, Operator: "slow"})
	}
	x := newExecutor(t, workflow.Config{Operators: reg, MaxConcurrency: 2})
	res, err := x.Run(context.Background(), def, "q", operator.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() || len(res.Steps) != 6 {
		t.Fatalf("result %+v, want six succeeded steps", res.Steps)
	}
	if p := at.max.Load(); p > 2 {
		t.Errorf("%d steps ran at once, want at most 2", p)
	}

	// Unbounded, all six run at once (the barrier needs all of them).
	all := barrier(6)
	reg = operator.NewRegistry(operator.Deps{})
	mustRegister(t, reg, "slow", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		if err := all(ctx); err != nil {
			return nil, err
		}
		return &operator.Result{}, nil
	})
	x = newExecutor(t, workflow.Config{Operators: reg, MaxConcurrency: -1})
	if res, err := x.Run(context.Background(), def, "q", operator.Env{}); err != nil || !res.Succeeded() {
		t.Errorf("unbounded run: %v, %v", res.Err(), err)
	}
}

// Templates resolve as in a compiled workflow: the user's query, a whole
// output passed as its value, a field inside an output that is a JSON
// string, text around a template and lists.
func TestExecutorTemplates(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	var got sync.Map
	mustRegister(t, reg, "json", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: `{"topic": "pricing", "n": 3}`}, nil
	})
	mustRegister(t, reg, "see", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		got.Store(oc.Query, oc.Params)
		return &operator.Result{Output: oc.Query}, nil
	})
	def := plan.Plan{Steps: []plan.Step{
		{ID: "src", Operator: "json"},
		{ID: "use", Operator: "see", DependsOn: []string{"src"}, InputMapping: map[string]any{
			"query": "About {{src.topic}} for {{user_query}}",
			"n":     "{{src.n}}",
			"list":  []any{"{{user_query}}", "n={{src.n}}"},
		}},
	}}
	x := newExecutor(t, workflow.Config{Operators: reg})
	if _, err := x.Run(context.Background(), def, "teams", operator.Env{}); err != nil {
		t.Fatal(err)
	}
	params, ok := got.Load("About pricing for teams")
	if !ok {
		t.Fatal("the step did not get its query from its template")
	}
	want := map[string]any{"query": "About pricing for teams", "n": 3.0, "list": []any{"teams", "n=3"}}
	if diff := cmp.Diff(want, params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}

// An invalid plan is Run's error, naming the step and field; in the
// executor's graph it is the state's Error, and nothing runs or is
// emitted.
func TestExecutorInvalidPlan(t *testing.T) {
	reg := pricingOperators(t)
	x := newExecutor(t, workflow.Config{Operators: reg})
	def := plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "nope"}}}
	_, err := x.Run(context.Background(), def, "q", operator.Env{})
	var se *plan.StepError
	if !errors.As(err, &se) || se.Step != "s1" || se.Field != "operator" {
		t.Fatalf("Run error = %v, want a StepError for s1's operator", err)
	}
	em := newRecorder()
	out, err := x.Graph().Invoke(workflow.WithEnv(context.Background(), operator.Env{Reporter: em}), workflow.ExecState{Query: "q", Plan: def})
	if err != nil {
		t.Fatal(err)
	}
	if out.Error != se.Error() || len(out.Steps) != 0 {
		t.Errorf("state = %+v, want Error %q and no steps", out, se.Error())
	}
	if got := drain(t, em); len(got) != 0 {
		t.Errorf("events %v for an invalid plan, want none", got)
	}
}

// The executor's graph, run as a subgraph of a parent graph, streams its
// steps as tasks of the parent's run: each step's events carry the
// subgraph node's name in their namespace. Config.EnvFrom gives the steps
// the request's Env from the parent's context.
func TestExecutorAsSubgraphStreamsSteps(t *testing.T) {
	type reqKey struct{}
	em := newRecorder()
	x := newExecutor(t, workflow.Config{Operators: pricingOperators(t), EnvFrom: func(ctx context.Context) operator.Env {
		e, _ := ctx.Value(reqKey{}).(*recorder)
		return operator.Env{Reporter: e}
	}})
	app := executorGraph(t, x, parsePricing(t))
	ctx := context.WithValue(context.Background(), reqKey{}, em)
	var steps []string
	var final Research
	for ev, err := range app.Stream(ctx, Research{Query: "q"}, graph.WithModes(graph.StreamUpdates, graph.StreamCustom, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mode == graph.StreamValues && len(ev.Namespace) == 0 {
			final = ev.State
		}
		if ev.Mode != graph.StreamCustom {
			continue
		}
		if !slices.Equal(ev.Namespace, []string{"research"}) {
			t.Errorf("custom event %v has namespace %v, want [research]", ev.Payload, ev.Namespace)
		}
		if p, ok := ev.Payload.(workflow.StepEnd); ok {
			if ev.Node != workflow.NodeStep {
				t.Errorf("step.complete emitted by node %q, want %q", ev.Node, workflow.NodeStep)
			}
			steps = append(steps, strings.Repeat("*", p.Step))
		}
	}
	if len(steps) != 4 {
		t.Errorf("%d step.complete events in the parent's stream, want 4", len(steps))
	}
	if len(final.Steps) != 4 || !(&workflow.Result{Steps: final.Steps}).Succeeded() {
		t.Errorf("parent's steps = %v, want four succeeded", outcomes(final.Steps))
	}
	if n := len(drain(t, em)); n != 10 {
		t.Errorf("%d reports to the Env's reporter, want 10", n)
	}
}

// A durable executor run cancelled in its second wave (step_2 and step_3)
// resumes, after a restart, without running step_1 again, nor a step of
// the wave whose outcome was saved; the thread's checkpoints show one
// step per wave.
func TestExecutorResumeSkipsFinishedSteps(t *testing.T) {
	for name, newSaver := range savers(t) {
		t.Run(name, func(t *testing.T) {
			var c calls
			runCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			saved := &signalSaver{saved: make(chan struct{}), mark: `"step_3"`}
			// Stop the run once step_3's outcome is saved.
			reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
				"rag_retriever": cancelFirstCall(cancel, saved),
			})
			open := newSaver()
			saved.Saver = open()
			x := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: saved})
			cfg := graph.RunConfig{ThreadID: "exec-1"}
			_, err := x.Run(graph.WithConfig(runCtx, cfg), parsePricing(t), "q", operator.Env{})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("first run error = %v, want context.Canceled", err)
			}

			// A restarted process.
			x = newExecutor(t, workflow.Config{Operators: reg, Checkpointer: open()})
			st, err := x.Graph().Thread("exec-1").State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{workflow.NodeStep, workflow.NodeStep}, st.Next); diff != "" {
				t.Errorf("next after the cancelled run (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"step_1"}, outcomeIDs(st.Values.Steps)); diff != "" {
				t.Errorf("saved steps (-want +got):\n%s", diff)
			}

			em := newRecorder()
			res, err := x.Resume(graph.WithConfig(context.Background(), cfg), operator.Env{Reporter: em})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Succeeded() || len(res.Steps) != 4 {
				t.Fatalf("resumed result: %v", outcomes(res.Steps))
			}
			if s4, _ := res.Step("step_4"); s4.Output != "docs: our pricing tiers q | web: competitor pricing q" {
				t.Errorf("step_4 after resuming = %+v", s4)
			}
			want := map[string]int{"query_rewriter": 1, "rag_retriever": 2, "web_searcher": 1, "synthesizer": 1}
			if diff := cmp.Diff(want, c.counts()); diff != "" {
				t.Errorf("operator calls over both runs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(resumedPricingEvents, drain(t, em)); diff != "" {
				t.Errorf("events of the resumed run (-want +got):\n%s", diff)
			}
			var ran []string
			for snap, err := range x.Graph().Thread("exec-1").History(context.Background(), checkpoint.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				ran = append(ran, strings.Join(snap.Ran, ","))
			}
			if diff := cmp.Diff([]string{"finish", "step", "step", "step", "plan", ""}, ran); diff != "" {
				t.Errorf("nodes run per checkpoint, newest first (-want +got):\n%s", diff)
			}
		})
	}
}

// Running a finished thread again runs the failed step and those it
// skipped, and keeps the steps that succeeded.
func TestExecutorRerunKeepsSucceeded(t *testing.T) {
	var c calls
	reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
		"web_searcher": failFirstCall(errors.New("search backend down")),
	})
	x := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: checkpoint.NewMemory()})
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "exec-2"})
	res, err := x.Run(ctx, parsePricing(t), "q", operator.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"step_3"}, res.IDs(workflow.Failed)); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	res, err = x.Resume(ctx, operator.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() || len(res.Steps) != 4 {
		t.Errorf("re-run result: %v", outcomes(res.Steps))
	}
	want := map[string]int{"query_rewriter": 1, "rag_retriever": 1, "web_searcher": 2, "synthesizer": 1}
	if diff := cmp.Diff(want, c.counts()); diff != "" {
		t.Errorf("operator calls over both runs (-want +got):\n%s", diff)
	}
}

// A new plan on a finished thread runs its steps, even one with the id,
// query and inputs of a step that succeeded before, when its operator
// differs; the result lists the new plan's steps only.
func TestExecutorNewPlanOnThread(t *testing.T) {
	var c calls
	reg := operator.NewRegistry(operator.Deps{})
	for _, name := range []string{"x", "y"} {
		mustRegister(t, reg, name, func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			c.add(name)
			return &operator.Result{Output: name + ":" + oc.Query}, nil
		})
	}
	x := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: checkpoint.NewMemory()})
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "exec-3"})
	first := plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "x"}, {ID: "old", Operator: "x"}}}
	if _, err := x.Run(ctx, first, "q", operator.Env{}); err != nil {
		t.Fatal(err)
	}
	second := plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "y"}}}
	res, err := x.Run(ctx, second, "q", operator.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]outcome{{ID: "s1", Status: "succeeded", Output: "y:q"}}, outcomes(res.Steps)); diff != "" {
		t.Errorf("second plan's result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"x": 2, "y": 1}, c.counts()); diff != "" {
		t.Errorf("operator calls (-want +got):\n%s", diff)
	}
}

// The executor with a checkpointer, mounted in a durable parent, saves its
// waves on a thread of its own: a parent run cancelled inside the plan
// resumes it there, and the steps that had finished (step_1, and step_3
// of the wave that was running) do not run again.
func TestExecutorDurableSubgraphResume(t *testing.T) {
	var c calls
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	saver := &signalSaver{Saver: checkpoint.NewMemory(), saved: make(chan struct{}), mark: `"step_3"`}
	reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
		"rag_retriever": cancelFirstCall(cancel, saver),
	})
	x := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: saver})
	app := executorGraph(t, x, parsePricing(t), graph.WithCheckpointer(saver))
	cfg := graph.RunConfig{ThreadID: "parent-1"}
	if _, err := app.Invoke(graph.WithConfig(runCtx, cfg), Research{Query: "q"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	st, err := x.Graph().Thread(graph.SubgraphThread("parent-1", graph.TaskInfo{Step: 1, Node: "research"})).State(context.Background())
	if err != nil {
		t.Fatalf("the executor's thread: %v", err)
	}
	if diff := cmp.Diff([]string{"step_1"}, outcomeIDs(st.Values.Steps)); diff != "" {
		t.Errorf("steps saved on the executor's thread (-want +got):\n%s", diff)
	}

	em := newRecorder()
	out, err := app.Invoke(graph.WithConfig(workflow.WithEnv(context.Background(), operator.Env{Reporter: em}), cfg), Research{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 4 || !(&workflow.Result{Steps: out.Steps}).Succeeded() {
		t.Fatalf("steps after resuming: %v", outcomes(out.Steps))
	}
	want := map[string]int{"query_rewriter": 1, "rag_retriever": 2, "web_searcher": 1, "synthesizer": 1}
	if diff := cmp.Diff(want, c.counts()); diff != "" {
		t.Errorf("operator calls over both runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(resumedPricingEvents, drain(t, em)); diff != "" {
		t.Errorf("events of the resumed run (-want +got):\n%s", diff)
	}
}

// A question asked through workflow.InterruptElicitor by a step of an
// executor with a checkpointer, mounted in a durable parent, pauses the
// parent with the question; the answer resumes the step, and the step
// before it does not run again.
func TestExecutorDurableSubgraphQuestion(t *testing.T) {
	var c calls
	reg := countedPricing(t, &c, nil)
	registerPublisher(t, reg, &c, "publish?", func(ok bool, _ string) string { return fmt.Sprint("published=", ok) })
	def := plan.Plan{Goal: "publish", Steps: []plan.Step{
		{ID: "step_1", Operator: "query_rewriter"},
		{ID: "step_2", Operator: "publisher", DependsOn: []string{"step_1"}},
	}}
	saver := checkpoint.NewMemory()
	x := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: saver})
	app := executorGraph(t, x, def, graph.WithCheckpointer(saver))
	ctx := workflow.WithEnv(graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "publish-3"}),
		operator.Env{Elicitor: workflow.InterruptElicitor{}})
	_, err := app.Invoke(ctx, Research{Query: "q"})
	var pause *graph.InterruptError
	if !errors.As(err, &pause) || len(pause.Interrupts) != 1 || pause.Interrupts[0].Node != "research" {
		t.Fatalf("first run error = %v, want a *graph.InterruptError at the research node", err)
	}
	var req elicit.Request
	if err := pause.Interrupts[0].Decode(&req); err != nil || req.Message != "publish?" {
		t.Errorf("question %+v (%v)", req, err)
	}
	got, err := app.Invoke(ctx, Research{}, graph.Resume(elicit.Response{Action: elicit.Accept, Content: map[string]any{"answer": "yes"}}))
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := (&workflow.Result{Steps: got.Steps}).Step("step_2"); s2.Output != "published=true" {
		t.Errorf("step_2 = %+v", s2)
	}
	if diff := cmp.Diff(map[string]int{"query_rewriter": 1, "publisher": 2}, c.counts()); diff != "" {
		t.Errorf("operator calls (-want +got):\n%s", diff)
	}
}

// Resuming a finished thread whose last plan was rejected answers as the
// rejecting Run did, with the plan's error, not with the outcomes of an
// earlier plan's steps that happen to share ids with the rejected one.
func TestExecutorResumeRejectedPlan(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	mustRegister(t, reg, "x", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: "x:" + oc.Query}, nil
	})
	x := newExecutor(t, workflow.Config{Operators: reg, Checkpointer: checkpoint.NewMemory()})
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "rejected"})
	if _, err := x.Run(ctx, plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "x"}}}, "q", operator.Env{}); err != nil {
		t.Fatal(err)
	}
	bad := plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "x"}, {ID: "s2", Operator: "missing"}}}
	_, runErr := x.Run(ctx, bad, "q", operator.Env{})
	var se *plan.StepError
	if !errors.As(runErr, &se) || se.Step != "s2" {
		t.Fatalf("Run of the invalid plan: %v, want a *plan.StepError naming s2", runErr)
	}
	res, err := x.Resume(ctx, operator.Env{})
	if !errors.As(err, &se) || se.Step != "s2" || se.Field != "operator" {
		t.Fatalf("Resume = %v, %v; want the saved plan's *plan.StepError naming s2's operator", res, err)
	}
	if res != nil {
		t.Errorf("Resume's result = %v, want nil with the error, as from Run", outcomes(res.Steps))
	}
}

// Resuming a thread that never ran is an error naming the thread, not a
// run of an empty plan.
func TestExecutorResumeUnknownThread(t *testing.T) {
	x := newExecutor(t, workflow.Config{Operators: operator.NewRegistry(operator.Deps{}), Checkpointer: checkpoint.NewMemory()})
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "never-ran"})
	_, err := x.Resume(ctx, operator.Env{})
	if !errors.Is(err, workflow.ErrNoSavedRun) || !errors.Is(err, graph.ErrNothingToResume) || !strings.Contains(err.Error(), `"never-ran"`) {
		t.Errorf("Resume of a thread that never ran: %v, want workflow.ErrNoSavedRun naming the thread", err)
	}
	if _, err := x.Graph().Thread("never-ran").State(context.Background()); err == nil {
		t.Error("the failed Resume saved a checkpoint on the thread")
	}
}
