package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/agentgraph/agentgraph/workflow"
)

// Running a plan a model wrote: parse it, compile it against the operator
// registry, run it and read the events and the result.
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

	em := event.NewEmitter(event.EmitterConfig{})
	res, err := wf.Run(context.Background(), "Pricing PDFs", workflow.Env{Emitter: em})
	if err != nil {
		log.Fatal(err)
	}
	em.Close()
	for ev := range em.Events(context.Background()) {
		fmt.Println(ev.Type)
	}
	out, _ := res.Step("step_2")
	fmt.Println(res.IDs(workflow.Succeeded), out.Output)
	// Output:
	// workflow.created
	// workflow.step.start
	// workflow.step.complete
	// workflow.step.start
	// workflow.step.complete
	// workflow.complete
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

	res, err := wf.Run(ctx, "Pricing PDFs", workflow.Env{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", res.IDs(workflow.Failed))

	res, err = wf.Resume(ctx, workflow.Env{})
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
