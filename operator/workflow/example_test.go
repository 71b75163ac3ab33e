package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// Running a plan a model wrote: parse it, compile it against the operator
// registry, run it and read its reports and the result.
func Example() {
	ops := operator.NewRegistry(operator.Deps{})
	register := func(name string, fn operator.Func) {
		m := operator.Metadata{Name: name, Description: "example " + name, Type: operator.PureLLM}
		if err := ops.Register(m, func(operator.Deps) (operator.Operator, error) { return fn, nil }); err != nil {
			log.Fatal(err)
		}
	}
	register("query_rewriter", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{"keywords": strings.ToLower(oc.Query)}}, nil
	})
	register("searcher", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: "3 documents about " + oc.Query}, nil
	})

	text := `{"goal": "Find pricing documents", "steps": [
	  {"id": "step_1", "name": "Rewrite Query", "operator": "query_rewriter",
	   "input_mapping": {"query": "{{user_query}}"}},
	  {"id": "step_2", "name": "Search", "operator": "searcher",
	   "input_mapping": {"query": "{{step_1.keywords}}"}, "depends_on": ["step_1"]}]}`
	def, err := plan.Parse([]byte(text))
	if err != nil {
		log.Fatal(err)
	}
	wf, err := workflow.Compile(def, workflow.Config{Operators: ops})
	if err != nil {
		log.Fatal(err)
	}

	report := operator.ReporterFunc(func(_ context.Context, r operator.Report) error {
		switch r := r.(type) {
		case workflow.RunStart:
			fmt.Printf("plan of %d steps: %s\n", r.Steps, r.Goal)
		case workflow.StepStart:
			fmt.Printf("step %d: %s\n", r.Step, r.Name)
		case workflow.StepEnd:
			fmt.Printf("step %d %s\n", r.Step, r.Status)
		case workflow.RunEnd:
			fmt.Printf("%d steps ran\n", r.Steps)
		}
		return nil
	})
	res, err := wf.Run(context.Background(), "Pricing PDFs", operator.Env{Reporter: report})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := res.Step("step_2")
	fmt.Println(res.IDs(workflow.Succeeded), out.Output)
	// Output:
	// plan of 2 steps: Find pricing documents
	// step 1: Rewrite Query
	// step 1 succeeded
	// step 2: Search
	// step 2 succeeded
	// 2 steps ran
	// [step_1 step_2] 3 documents about pricing pdfs
}

// A saved workflow: the search fails on the first run; running the thread
// again with Resume retries it and keeps the rewritten query, whose
// operator does not run again. With a database Saver (package
// checkpoint/sqlite or postgres) the second run may be another process.
func ExampleWorkflow_Resume() {
	ops := operator.NewRegistry(operator.Deps{})
	register := func(name string, fn operator.Func) {
		m := operator.Metadata{Name: name, Description: "example " + name, Type: operator.PureLLM}
		if err := ops.Register(m, func(operator.Deps) (operator.Operator, error) { return fn, nil }); err != nil {
			log.Fatal(err)
		}
	}
	register("query_rewriter", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		fmt.Println("rewriting", oc.Query)
		return &operator.Result{Output: map[string]any{"keywords": strings.ToLower(oc.Query)}}, nil
	})
	searches := 0
	register("searcher", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		if searches++; searches == 1 {
			return nil, errors.New("search backend unavailable")
		}
		return &operator.Result{Output: "3 documents about " + oc.Query}, nil
	})
	def := plan.Plan{Goal: "Find pricing documents", Steps: []plan.Step{
		{ID: "step_1", Name: "Rewrite Query", Operator: "query_rewriter"},
		{ID: "step_2", Name: "Search", Operator: "searcher", DependsOn: []string{"step_1"},
			InputMapping: map[string]any{"query": "{{step_1.keywords}}"}},
	}}
	wf, err := workflow.Compile(def, workflow.Config{Operators: ops, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		log.Fatal(err)
	}
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "pricing-docs"})

	res, err := wf.Run(ctx, "Pricing PDFs", operator.Env{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", res.IDs(workflow.Failed))

	res, err = wf.Resume(ctx, operator.Env{})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := res.Step("step_2")
	fmt.Println("succeeded:", res.IDs(workflow.Succeeded), out.Output)
	// Output:
	// rewriting Pricing PDFs
	// failed: [step_2]
	// succeeded: [step_1 step_2] 3 documents about pricing pdfs
}

// One executor serves every plan: a parent graph whose planner node
// writes a plan at run time mounts the executor as its subgraph, gives it
// the plan and reads back the outcome of the plan's last step. The steps
// run as tasks of the parent's run, under the subgraph node's name.
func ExampleNewExecutor() {
	ops := operator.NewRegistry(operator.Deps{})
	m := operator.Metadata{Name: "upper", Description: "upper-cases its query", Type: operator.PureLLM}
	err := ops.Register(m, func(operator.Deps) (operator.Operator, error) {
		return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			return &operator.Result{Output: strings.ToUpper(oc.Query)}, nil
		}), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	x, err := workflow.NewExecutor(workflow.Config{Operators: ops})
	if err != nil {
		log.Fatal(err)
	}

	type Chat struct {
		Query  string
		Plan   plan.Plan
		Answer string
	}
	planField := graph.Replace(func(c *Chat) *plan.Plan { return &c.Plan })
	answer := graph.Replace(func(c *Chat) *string { return &c.Answer })
	g := graph.New[Chat]()
	g.AddNode("planner", func(ctx context.Context, c Chat) (graph.Update[Chat], error) {
		return planField.Set(plan.Plan{Goal: "shout", Steps: []plan.Step{
			{ID: "a", Operator: "upper", InputMapping: map[string]any{"query": "{{user_query}}!"}},
			{ID: "b", Operator: "upper", DependsOn: []string{"a"}, InputMapping: map[string]any{"query": "{{a.output}} {{a.output}}"}},
		}}), nil
	})
	graph.AddSubgraph(g, "workflow", x.Graph(),
		func(c Chat) workflow.ExecState { return workflow.ExecState{Query: c.Query, Plan: c.Plan} },
		func(s workflow.ExecState) graph.Update[Chat] {
			leaves := s.Plan.Leaves()
			out, _ := s.Step(leaves[len(leaves)-1])
			return answer.Set(fmt.Sprint(out.Output))
		})
	g.AddEdge(graph.START, "planner").AddEdge("planner", "workflow").AddEdge("workflow", graph.END)
	app, err := g.Compile()
	if err != nil {
		log.Fatal(err)
	}

	var final Chat
	for ev, err := range app.Stream(context.Background(), Chat{Query: "hi"}, graph.WithModes(graph.StreamDebug, graph.StreamValues)) {
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case ev.Mode == graph.StreamDebug && ev.Debug.Kind == graph.TaskStart:
			fmt.Println(ev.Namespace, ev.Node)
		case ev.Mode == graph.StreamValues && len(ev.Namespace) == 0:
			final = ev.State
		}
	}
	fmt.Println(final.Answer)
	// Output:
	// [] planner
	// [] workflow
	// [workflow] plan
	// [workflow] step
	// [workflow] step
	// [workflow] finish
	// HI! HI!
}

// An operator asks the user for confirmation inside a durable graph: the
// run pauses with the question and resumes with the answer, which may
// come much later, to another process.
func ExampleInterruptElicitor() {
	type Report struct{ Status string }
	status := graph.Replace(func(r *Report) *string { return &r.Status })
	publisher := operator.Metadata{Name: "publisher", Description: "Publishes the report", Type: operator.PureLLM,
		Capabilities: operator.Capabilities{Elicitation: true}}

	g := graph.New[Report]()
	g.AddNode("publish", func(ctx context.Context, _ Report) (graph.Update[Report], error) {
		m := operator.NewMessenger(publisher, nil, workflow.InterruptElicitor{})
		ok, err := m.Confirm(ctx, "Publish the report?")
		if err != nil {
			return graph.Update[Report]{}, err // the pause: return it unchanged
		}
		if !ok {
			return status.Set("kept as draft"), nil
		}
		return status.Set("published"), nil
	})
	g.AddEdge(graph.START, "publish").AddEdge("publish", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: "report-7"})

	_, err = app.Invoke(ctx, Report{})
	var pause *graph.InterruptError
	if errors.As(err, &pause) {
		var q elicit.Request
		if err := pause.Interrupts[0].Decode(&q); err != nil {
			log.Fatal(err)
		}
		fmt.Println("asked:", q.Message, q.Options)
	}
	answer := elicit.Response{Action: elicit.Accept, Content: map[string]any{"answer": "yes"}}
	r, err := app.Invoke(ctx, Report{}, graph.Resume(answer))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status)
	// Output:
	// asked: Publish the report? [yes no]
	// published
}
