package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
	"github.com/google/go-cmp/cmp"
)

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
			reg := countedPricing(t, &c, map[string]func(context.Context, int) error{
				"rag_retriever": failFirstCall(errors.New("search backend down")),
			})
			wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: reg})
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
			for snap, err := range app.Thread("pricing-1").History(context.Background(), checkpoint.ListOptions{}) {
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
			st, err := app.Thread("pricing-1").State(context.Background())
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
		"rag_retriever": cancelFirstCall(cancel, nil),
	})
	wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: reg})
	app := researchGraph(t, wf, checkpoint.NewMemory())
	cfg := graph.RunConfig{ThreadID: "pricing-2"}
	_, err := app.Invoke(graph.WithConfig(runCtx, cfg), Research{Query: "q"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run error = %v, want context.Canceled", err)
	}
	st, err := app.Thread("pricing-2").State(context.Background())
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
		"rag_retriever": cancelFirstCall(cancel, nil),
	})
	def := parsePricing(t)
	open := savers(t)["sqlite"]()
	wf := newWorkflow(t, def, workflow.Config{Operators: reg, Checkpointer: open()})
	cfg := graph.RunConfig{ThreadID: "pricing-3"}
	_, err := wf.Run(graph.WithConfig(runCtx, cfg), "q", operator.Env{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run error = %v, want context.Canceled", err)
	}

	// A restarted process: the same plan compiled on the same file.
	wf = newWorkflow(t, def, workflow.Config{Operators: reg, Checkpointer: open()})
	st, err := wf.Graph().Thread("pricing-3").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"step_2", "step_3"}, st.Next); diff != "" {
		t.Errorf("next after the cancelled run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"step_1"}, outcomeIDs(st.Values.Steps)); diff != "" {
		t.Errorf("saved steps (-want +got):\n%s", diff)
	}
	if _, err := wf.Run(graph.WithConfig(context.Background(), cfg), "q", operator.Env{}); !errors.Is(err, graph.ErrThreadPaused) {
		t.Errorf("Run on the stopped thread: error = %v, want graph.ErrThreadPaused", err)
	}

	res, err := wf.Resume(graph.WithConfig(context.Background(), cfg), operator.Env{})
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
	for snap, err := range wf.Graph().Thread("pricing-3").History(context.Background(), checkpoint.ListOptions{}) {
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

func TestResumeWithoutCheckpointer(t *testing.T) {
	wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: pricingOperators(t)})
	_, err := wf.Resume(context.Background(), operator.Env{})
	if err == nil || !strings.Contains(err.Error(), "Config.Checkpointer") {
		t.Errorf("Resume error = %v, want one naming Config.Checkpointer", err)
	}
}

// Resuming a thread that never ran is an error naming the thread; the
// workflow does not run from a zero state (an empty query).
func TestResumeUnknownThread(t *testing.T) {
	var c calls
	wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: countedPricing(t, &c, nil), Checkpointer: checkpoint.NewMemory()})
	_, err := wf.Resume(graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "never-ran"}), operator.Env{})
	if !errors.Is(err, workflow.ErrNoSavedRun) || !errors.Is(err, graph.ErrNothingToResume) || !strings.Contains(err.Error(), `"never-ran"`) {
		t.Errorf("Resume of a thread that never ran: %v, want workflow.ErrNoSavedRun naming the thread", err)
	}
	if n := c.counts(); len(n) != 0 {
		t.Errorf("operators ran: %v", n)
	}
}

// An operator that asks the user through workflow.InterruptElicitor
// pauses a durable workflow at its step; resuming with the answer runs
// that step again and not the steps before it.
func TestDurableQuestionPausesStep(t *testing.T) {
	var c calls
	reg := countedPricing(t, &c, nil)
	registerPublisher(t, reg, &c, "publish the comparison?", func(ok bool, query string) string {
		return fmt.Sprintf("published=%v: %s", ok, query)
	})
	def := plan.Plan{Goal: "publish", Steps: []plan.Step{
		{ID: "step_1", Name: "Rewrite Query", Operator: "query_rewriter"},
		{ID: "step_2", Name: "Publish", Operator: "publisher", DependsOn: []string{"step_1"},
			InputMapping: map[string]any{"query": "{{step_1.internal_query}}"}},
	}}
	wf := newWorkflow(t, def, workflow.Config{Operators: reg, Checkpointer: checkpoint.NewMemory()})
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "publish-1"})
	env := operator.Env{Elicitor: workflow.InterruptElicitor{}}
	res, err := wf.Run(ctx, "q", env)
	var pause *graph.InterruptError
	if !errors.As(err, &pause) || len(pause.Interrupts) != 1 || pause.Interrupts[0].Node != "step_2" {
		t.Fatalf("first run error = %v, want a *graph.InterruptError at step_2", err)
	}
	if diff := cmp.Diff([]string{"step_1"}, res.IDs(workflow.Succeeded)); diff != "" {
		t.Errorf("succeeded before the answer (-want +got):\n%s", diff)
	}
	var req elicit.Request
	if err := pause.Interrupts[0].Decode(&req); err != nil || req.Message != "publish the comparison?" {
		t.Errorf("question %+v (%v)", req, err)
	}

	res, err = wf.Resume(ctx, env, graph.Resume(elicit.Response{Action: elicit.Accept, Content: map[string]any{"answer": "yes"}}))
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
	registerPublisher(t, reg, &c, "publish?", func(ok bool, _ string) string { return fmt.Sprint("published=", ok) })
	def := plan.Plan{Goal: "publish", Steps: []plan.Step{
		{ID: "step_1", Operator: "query_rewriter"},
		{ID: "step_4", Operator: "publisher", DependsOn: []string{"step_1"}},
	}}
	wf := newWorkflow(t, def, workflow.Config{Operators: reg})
	app := researchGraph(t, wf, checkpoint.NewMemory())
	ctx := workflow.WithEnv(graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "publish-2"}),
		operator.Env{Elicitor: workflow.InterruptElicitor{}})
	_, err := app.Invoke(ctx, Research{Query: "q"})
	var pause *graph.InterruptError
	if !errors.As(err, &pause) || len(pause.Interrupts) != 1 || pause.Interrupts[0].Node != "research" {
		t.Fatalf("first run error = %v, want a *graph.InterruptError at the research node", err)
	}
	got, err := app.Invoke(ctx, Research{}, graph.Resume(elicit.Response{Action: elicit.Accept, Content: map[string]any{"answer": "yes"}}))
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
