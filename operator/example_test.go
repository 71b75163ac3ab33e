package operator_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

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
