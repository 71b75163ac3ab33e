package operator_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

// Registering an operator and running it by name, with a fallback for when
// it fails.
func Example() {
	reg := operator.NewRegistry(operator.Deps{})
	err := reg.Register(operator.Metadata{
		Name:        "summarizer",
		Description: "Summarizes a text in one line",
		Type:        operator.PureLLM,
		Fallback:    "truncator",
	}, func(operator.Deps) (operator.Operator, error) {
		return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			return nil, fmt.Errorf("model unavailable")
		}), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	err = reg.Register(operator.Metadata{
		Name:        "truncator",
		Description: "Keeps the first three words",
		Type:        operator.PureLLM,
	}, func(operator.Deps) (operator.Operator, error) {
		return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			return &operator.Result{Output: strings.Join(strings.Fields(oc.Query)[:3], " ") + "..."}, nil
		}), nil
	})
	if err != nil {
		log.Fatal(err)
	}

	res, meta, err := reg.Execute(context.Background(), "summarizer", &operator.Context{Query: "Operators are units of work a supervisor invokes"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(meta.Name, "->", res.Output)

	_, _, err = reg.Execute(context.Background(), "translator", nil)
	fmt.Println(err)
	// Output:
	// truncator -> Operators are units...
	// operator: unknown operator "translator"; registered: summarizer, truncator
}

// Text renders a step's output the way prompts and workflow templates show
// it: strings as they are, everything else as JSON.
func ExampleText() {
	fmt.Println(operator.Text("Acme Pro costs $49"))
	fmt.Println(operator.Text(map[string]any{"internal_query": "Acme pricing", "top_k": 5}))
	fmt.Printf("%q\n", operator.Text(nil))
	fmt.Println(operator.Text(90 * time.Second)) // a fmt.Stringer
	// Output:
	// Acme Pro costs $49
	// {"internal_query":"Acme pricing","top_k":5}
	// ""
	// 1m30s
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
		m := operator.NewMessenger(publisher, nil, operator.InterruptElicitor{})
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
		var q event.ElicitationRequest
		if err := pause.Interrupts[0].Decode(&q); err != nil {
			log.Fatal(err)
		}
		fmt.Println("asked:", q.Message, q.Options)
	}
	answer := event.ElicitationResponse{Action: event.ActionAccept, Content: map[string]any{"answer": "yes"}}
	r, err := app.Invoke(ctx, Report{}, graph.Resume(answer))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Status)
	// Output:
	// asked: Publish the report? [yes no]
	// published
}
