package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/workflow"
	"github.com/google/go-cmp/cmp"
)

// Research is the state of a parent graph that runs the pricing workflow
// as its "research" node and answers from its last step.
type Research struct {
	Query  string
	Steps  []workflow.StepResult
	Answer string
}

var (
	researchSteps  = graph.Replace(func(r *Research) *[]workflow.StepResult { return &r.Steps })
	researchAnswer = graph.Replace(func(r *Research) *string { return &r.Answer })
)

// calls counts operator executions by operator name.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[op]++
	return c.n[op]
}

func (c *calls) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// countedPricing registers the pricing plan's operators, counting their
// calls; failFirst, when set, is called before the named operator's work
// and may fail it.
func countedPricing(t *testing.T, c *calls, failFirst map[string]func(ctx context.Context, call int) error) *operator.Registry {
	reg := operator.NewRegistry(operator.Deps{})
	wrap := func(name string, f operator.Func) {
		mustRegister(t, reg, name, func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			n := c.add(name)
			if fail := failFirst[name]; fail != nil {
				if err := fail(ctx, n); err != nil {
					return nil, err
				}
			}
			return f(ctx, oc)
		})
	}
	wrap("query_rewriter", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{
			"internal_query": "our pricing tiers " + oc.Query,
			"external_query": "competitor pricing " + oc.Query,
		}}, nil
	})
	for _, s := range []struct{ op, where string }{{"rag_retriever", "docs"}, {"web_searcher", "web"}} {
		wrap(s.op, func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			return &operator.Result{Output: map[string]any{"results": s.where + ": " + oc.Query}}, nil
		})
	}
	wrap("synthesizer", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		var parts []string
		for _, s := range oc.Params["sources"].([]any) {
			parts = append(parts, s.(string))
		}
		return &operator.Result{Output: strings.Join(parts, " | ")}, nil
	})
	return reg
}

// researchGraph compiles a parent graph with saver: START -> research (the
// pricing workflow as a subgraph, given the steps saved in the parent's
// state) -> answer -> END.
func researchGraph(t *testing.T, wf *workflow.Workflow, saver checkpoint.Saver) *graph.Compiled[Research] {
	t.Helper()
	g := graph.New[Research]()
	graph.AddSubgraph(g, "research", wf.Graph(),
		func(r Research) workflow.State { return workflow.State{Query: r.Query, Steps: r.Steps} },
		func(s workflow.State) graph.Update[Research] { return researchSteps.Set(s.Steps) })
	g.AddNode("answer", func(_ context.Context, r Research) (graph.Update[Research], error) {
		for _, s := range r.Steps {
			if s.ID == "step_4" && s.Status == workflow.Succeeded {
				return researchAnswer.Set(fmt.Sprint(s.Output)), nil
			}
		}
		return researchAnswer.Set("incomplete"), nil
	})
	g.AddEdge(graph.START, "research").AddEdge("research", "answer").AddEdge("answer", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// savers returns a fresh checkpoint store per backend, and a function that
// reopens it as a restarted process would.
func savers(t *testing.T) map[string]func() (open func() checkpoint.Saver) {
	return map[string]func() func() checkpoint.Saver{
		"memory": func() func() checkpoint.Saver {
			m := checkpoint.NewMemory()
			return func() checkpoint.Saver { return m }
		},
		"sqlite": func() func() checkpoint.Saver {
			path := filepath.Join(t.TempDir(), "checkpoints.db")
			return func() checkpoint.Saver {
				s, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		},
	}
}

// outcome is what a test compares of a step result: its JSON form keeps
// the message of an error, not its Go type.
type outcome struct {
	ID, Status, Output, Err string
}

func outcomes(steps []workflow.StepResult) []outcome {
	var out []outcome
	for _, s := range steps {
		o := outcome{ID: s.ID, Status: string(s.Status), Output: operator.Text(s.Output)}
		if s.Err != nil {
			o.Err = s.Err.Error()
		}
		out = append(out, o)
	}
	return out
}

// A workflow run as a subgraph checkpoints like any node of its parent:
// one checkpoint per super-step of the parent, holding the workflow's step
// results, restorable after a restart. A step whose operator failed is
// recorded as failed; running the thread again runs the failed and skipped
// steps and keeps the ones that succeeded, whose operators do not run
// again.
func TestDurableSubgraphRetriesOnlyWhatFailed(t *testing.T) {
	for name, newSaver := range savers(t) {
		t.Run(name, func(t *testing.T) {
			var c calls
			down := errors.New("search backend down")
			reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
				"rag_retriever": func(_ context.Context, call int) error {
					if call == 1 {
						return down
					}
					return nil
				},
			})
			def, err := workflow.Parse([]byte(pricing))
			if err != nil {
				t.Fatal(err)
			}
			wf, err := workflow.Compile(def, workflow.Config{Operators: reg})
			if err != nil {
				t.Fatal(err)
			}
			open := newSaver()
			app := researchGraph(t, wf, open())
			ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "pricing-1"})

			first, err := app.Invoke(ctx, Research{Query: "how do we compare?"})
			if err != nil {
				t.Fatal(err)
			}
			if first.Answer != "incomplete" {
				t.Errorf("first answer = %q, want incomplete", first.Answer)
			}
			wantFirst := []outcome{
				{ID: "step_1", Status: "succeeded", Output: `{"external_query":"competitor pricing how do we compare?","internal_query":"our pricing tiers how do we compare?"}`},
				{ID: "step_2", Status: "failed", Err: "operator: rag_retriever failed: search backend down"},
				{ID: "step_3", Status: "succeeded", Output: `{"results":"web: competitor pricing how do we compare?"}`},
				{ID: "step_4", Status: "skipped", Err: "workflow: step step_4 skipped: dependency step_2 did not succeed: operator: rag_retriever failed: search backend down"},
			}
			if diff := cmp.Diff(wantFirst, outcomes(first.Steps)); diff != "" {
				t.Errorf("first run (-want +got):\n%s", diff)
			}

			// A restarted process: a new graph on the same store.
			app = researchGraph(t, wf, open())
			var hist []string
			for snap, err := range app.History(context.Background(), "pricing-1", checkpoint.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				hist = append(hist, fmt.Sprintf("step %d %s ran=%v next=%v", snap.Step, snap.Metadata[graph.MetaSource], snap.Ran, snap.Next))
			}
			wantHist := []string{
				"step 2 loop ran=[answer] next=[]",
				"step 1 loop ran=[research] next=[answer]",
				"step 0 input ran=[] next=[research]",
			}
			if diff := cmp.Diff(wantHist, hist); diff != "" {
				t.Errorf("history, newest first (-want +got):\n%s", diff)
			}
			st, err := app.GetState(context.Background(), "pricing-1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantFirst, outcomes(st.Values.Steps)); diff != "" {
				t.Errorf("saved steps (-want +got):\n%s", diff)
			}
			saved := workflow.State{Query: st.Values.Query, Steps: st.Values.Steps}
			if s4, _ := saved.Step("step_4"); !errors.Is(s4.Err, workflow.ErrSkipped) {
				t.Errorf("restored step_4 error %v does not match ErrSkipped", s4.Err)
			}
			if s1, _ := saved.Step("step_1"); s1.Result == nil || s1.Inputs["query"] != "how do we compare?" {
				t.Errorf("restored step_1 = %+v, want its operator result and inputs", s1)
			}

			// Run the thread again: the failed step and the one it
			// skipped run; the steps that succeeded do not.
			second, err := app.Invoke(ctx, Research{})
			if err != nil {
				t.Fatal(err)
			}
			want := "docs: our pricing tiers how do we compare? | web: competitor pricing how do we compare?"
			if second.Answer != want {
				t.Errorf("answer after the re-run = %q, want %q", second.Answer, want)
			}
			if diff := cmp.Diff([]string{"step_1", "step_2", "step_3", "step_4"}, wf.Result(workflow.State{Steps: second.Steps}).IDs(workflow.Succeeded)); diff != "" {
				t.Errorf("succeeded after the re-run (-want +got):\n%s", diff)
			}
			wantCalls := map[string]int{"query_rewriter": 1, "rag_retriever": 2, "web_searcher": 1, "synthesizer": 1}
			if diff := cmp.Diff(wantCalls, c.counts()); diff != "" {
				t.Errorf("operator calls over both runs (-want +got):\n%s", diff)
			}
			if len(second.Steps) != 4 {
				t.Errorf("%d step results after the re-run, want one per step: %v", len(second.Steps), outcomes(second.Steps))
			}

			// A new query on the thread: the saved results were for
			// another query, so every step runs again.
			third, err := app.Invoke(ctx, Research{Query: "and for teams?"})
			if err != nil {
				t.Fatal(err)
			}
			if want := "docs: our pricing tiers and for teams? | web: competitor pricing and for teams?"; third.Answer != want {
				t.Errorf("answer for the new query = %q, want %q", third.Answer, want)
			}
			wantCalls = map[string]int{"query_rewriter": 2, "rag_retriever": 3, "web_searcher": 2, "synthesizer": 2}
			if diff := cmp.Diff(wantCalls, c.counts()); diff != "" {
				t.Errorf("operator calls over three runs (-want +got):\n%s", diff)
			}
		})
	}
}

// The engine saves a subgraph's work when the subgraph node finishes, not
// step by step: a run stopped inside the workflow (here cancelled during
// step_2) resumes by running the whole workflow node again, so the steps
// that had finished inside it run again too.
func TestDurableSubgraphResumeRerunsTheWorkflow(t *testing.T) {
	var c calls
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
		"rag_retriever": func(ctx context.Context, call int) error {
			if call == 1 {
				cancel()
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
	})
	def, err := workflow.Parse([]byte(pricing))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := workflow.Compile(def, workflow.Config{Operators: reg})
	if err != nil {
		t.Fatal(err)
	}
	app := researchGraph(t, wf, checkpoint.NewMemory())
	cfg := graph.RunConfig{ThreadID: "pricing-2"}
	_, err = app.Invoke(graph.WithConfig(runCtx, cfg), Research{Query: "q"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run error = %v, want context.Canceled", err)
	}
	st, err := app.GetState(context.Background(), "pricing-2")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"research"}, st.Next); diff != "" {
		t.Errorf("next after the cancelled run (-want +got):\n%s", diff)
	}
	if len(st.Values.Steps) != 0 {
		t.Errorf("saved steps %v: a subgraph's steps are saved only when the subgraph node finishes", outcomes(st.Values.Steps))
	}

	got, err := app.Invoke(graph.WithConfig(context.Background(), cfg), Research{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "docs: our pricing tiers q | web: competitor pricing q"; got.Answer != want {
		t.Errorf("answer = %q, want %q", got.Answer, want)
	}
	// step_1 ran again: the resumed parent step re-ran the whole
	// workflow. (step_3, parallel with the cancelled step_2, may or may
	// not have started before the cancellation.)
	counts := c.counts()
	delete(counts, "web_searcher")
	wantCalls := map[string]int{"query_rewriter": 2, "rag_retriever": 2, "synthesizer": 1}
	if diff := cmp.Diff(wantCalls, counts); diff != "" {
		t.Errorf("operator calls over both runs (-want +got):\n%s", diff)
	}
}

// A workflow compiled with its own checkpointer saves every super-step: a
// run cancelled inside the searches resumes without running the query
// rewriter again, after a restart, and the thread's history shows a
// checkpoint per step of the plan.
func TestDurableRunResume(t *testing.T) {
	var c calls
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
		"rag_retriever": func(ctx context.Context, call int) error {
			if call == 1 {
				cancel()
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
	})
	def, err := workflow.Parse([]byte(pricing))
	if err != nil {
		t.Fatal(err)
	}
	open := savers(t)["sqlite"]()
	wf, err := workflow.Compile(def, workflow.Config{Operators: reg, Checkpointer: open()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := graph.RunConfig{ThreadID: "pricing-3"}
	_, err = wf.Run(graph.WithConfig(runCtx, cfg), "q", workflow.Env{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run error = %v, want context.Canceled", err)
	}

	// A restarted process: the same plan compiled on the same file.
	wf, err = workflow.Compile(def, workflow.Config{Operators: reg, Checkpointer: open()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := wf.Graph().GetState(context.Background(), "pricing-3")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"step_2", "step_3"}, st.Next); diff != "" {
		t.Errorf("next after the cancelled run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"step_1"}, outcomeIDs(st.Values.Steps)); diff != "" {
		t.Errorf("saved steps (-want +got):\n%s", diff)
	}
	if _, err := wf.Run(graph.WithConfig(context.Background(), cfg), "q", workflow.Env{}); !errors.Is(err, graph.ErrThreadPaused) {
		t.Errorf("Run on the stopped thread: error = %v, want graph.ErrThreadPaused", err)
	}

	res, err := wf.Resume(graph.WithConfig(context.Background(), cfg), workflow.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if s4, _ := res.Step("step_4"); s4.Output != "docs: our pricing tiers q | web: competitor pricing q" {
		t.Errorf("step_4 after resuming = %+v", s4)
	}
	counts := c.counts()
	delete(counts, "web_searcher") // step_3 may or may not have finished before the cancellation
	if diff := cmp.Diff(map[string]int{"query_rewriter": 1, "rag_retriever": 2, "synthesizer": 1}, counts); diff != "" {
		t.Errorf("operator calls over both runs (-want +got):\n%s", diff)
	}
	var ran []string
	for snap, err := range wf.Graph().History(context.Background(), "pricing-3", checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		ran = append(ran, fmt.Sprintf("%d:%v", snap.Step, snap.Ran))
	}
	want := []string{"5:[workflow:complete]", "4:[step_4]", "3:[step_2 step_3]", "2:[step_1]", "1:[workflow:created]", "0:[]"}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("history, newest first (-want +got):\n%s", diff)
	}
}

func outcomeIDs(steps []workflow.StepResult) []string {
	var ids []string
	for _, s := range steps {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestResumeWithoutCheckpointer(t *testing.T) {
	def, err := workflow.Parse([]byte(pricing))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := workflow.Compile(def, workflow.Config{Operators: pricingOperators(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wf.Resume(context.Background(), workflow.Env{})
	if err == nil || !strings.Contains(err.Error(), "Config.Checkpointer") {
		t.Errorf("Resume error = %v, want one naming Config.Checkpointer", err)
	}
}

// An operator that asks the user through operator.InterruptElicitor
// pauses a durable workflow at its step; resuming with the answer runs
// that step again and not the steps before it.
func TestDurableQuestionPausesStep(t *testing.T) {
	var c calls
	reg := countedPricing(t, &c, nil)
	err := reg.Register(operator.Metadata{Name: "publisher", Description: "Publishes the comparison after asking", Type: operator.PureLLM,
		Capabilities: operator.Capabilities{Elicitation: true}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				c.add("publisher")
				ok, err := oc.Messenger.Confirm(ctx, "publish the comparison?")
				if err != nil {
					return nil, err
				}
				return &operator.Result{Output: fmt.Sprintf("published=%v: %s", ok, oc.Query)}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	def := workflow.Definition{Goal: "publish", Steps: []workflow.Step{
		{ID: "step_1", Name: "Rewrite Query", Operator: "query_rewriter"},
		{ID: "step_2", Name: "Publish", Operator: "publisher", DependsOn: []string{"step_1"},
			InputMapping: map[string]any{"query": "{{step_1.internal_query}}"}},
	}}
	wf, err := workflow.Compile(def, workflow.Config{Operators: reg, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "publish-1"})
	env := workflow.Env{Elicitor: operator.InterruptElicitor{}}
	res, err := wf.Run(ctx, "q", env)
	var pause *graph.InterruptError
	if !errors.As(err, &pause) || len(pause.Interrupts) != 1 || pause.Interrupts[0].Node != "step_2" {
		t.Fatalf("first run error = %v, want a *graph.InterruptError at step_2", err)
	}
	if diff := cmp.Diff([]string{"step_1"}, res.IDs(workflow.Succeeded)); diff != "" {
		t.Errorf("succeeded before the answer (-want +got):\n%s", diff)
	}
	var req event.ElicitationRequest
	if err := pause.Interrupts[0].Decode(&req); err != nil || req.Message != "publish the comparison?" {
		t.Errorf("question %+v (%v)", req, err)
	}

	res, err = wf.Resume(ctx, env, graph.Resume(event.ElicitationResponse{Action: event.ActionAccept, Content: map[string]any{"answer": "yes"}}))
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := res.Step("step_2"); s2.Status != workflow.Succeeded || s2.Output != "published=true: our pricing tiers q" {
		t.Errorf("step_2 after the answer = %+v", s2)
	}
	if diff := cmp.Diff(map[string]int{"query_rewriter": 1, "publisher": 2}, c.counts()); diff != "" {
		t.Errorf("operator calls (-want +got):\n%s", diff)
	}
}

// A question inside a workflow run as a subgraph pauses the parent at the
// subgraph node; on resume the whole workflow runs again, the steps
// before the question included, and the question gets the answer.
func TestDurableSubgraphQuestion(t *testing.T) {
	var c calls
	reg := countedPricing(t, &c, nil)
	err := reg.Register(operator.Metadata{Name: "publisher", Description: "Publishes after asking", Type: operator.PureLLM,
		Capabilities: operator.Capabilities{Elicitation: true}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				c.add("publisher")
				ok, err := oc.Messenger.Confirm(ctx, "publish?")
				if err != nil {
					return nil, err
				}
				return &operator.Result{Output: fmt.Sprint("published=", ok)}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	def := workflow.Definition{Goal: "publish", Steps: []workflow.Step{
		{ID: "step_1", Operator: "query_rewriter"},
		{ID: "step_4", Operator: "publisher", DependsOn: []string{"step_1"}},
	}}
	wf, err := workflow.Compile(def, workflow.Config{Operators: reg})
	if err != nil {
		t.Fatal(err)
	}
	app := researchGraph(t, wf, checkpoint.NewMemory())
	ctx := workflow.WithEnv(graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "publish-2"}),
		workflow.Env{Elicitor: operator.InterruptElicitor{}})
	_, err = app.Invoke(ctx, Research{Query: "q"})
	var pause *graph.InterruptError
	if !errors.As(err, &pause) || len(pause.Interrupts) != 1 || pause.Interrupts[0].Node != "research" {
		t.Fatalf("first run error = %v, want a *graph.InterruptError at the research node", err)
	}
	got, err := app.Invoke(ctx, Research{}, graph.Resume(event.ElicitationResponse{Action: event.ActionAccept, Content: map[string]any{"answer": "yes"}}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Answer != "published=true" {
		t.Errorf("answer = %q", got.Answer)
	}
	if diff := cmp.Diff(map[string]int{"query_rewriter": 2, "publisher": 2}, c.counts()); diff != "" {
		t.Errorf("operator calls (-want +got):\n%s", diff)
	}
}
