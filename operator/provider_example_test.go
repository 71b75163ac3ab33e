package operator_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// One catalogue over local tools and operators: the text a supervisor's
// prompt lists, and one way to call any of them.
func ExampleProvider() {
	local := operator.NewLocalRegistry()
	err := local.Register(operator.LocalFunc(operator.LocalInfo{Name: "about", Description: "Names the assistant"},
		func(context.Context, operator.LocalCall) (*toolresult.Result, error) {
			return operator.TextResult("about", "Acme Assistant 2.0", nil), nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	ops := operator.NewRegistry(operator.Deps{})
	err = ops.Register(operator.Metadata{Name: "greeter", Description: "Greets someone", Type: operator.PureLLM},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				return &operator.Result{Output: "Hello, " + oc.Query + "!"}, nil
			}), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	p := operator.NewProvider(operator.ProviderConfig{Local: local, Operators: ops})

	for _, name := range []string{"about", "greeter"} {
		res, err := p.Execute(context.Background(), name, map[string]any{"query": "Ada"}, operator.Env{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (local: %v): %s\n", name, p.IsLocal(name), res.Text())
	}
	// Output:
	// about (local: true): Acme Assistant 2.0
	// greeter (local: false): Hello, Ada!
}
