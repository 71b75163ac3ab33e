package operator_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// BenchmarkExecute measures the provider's own cost per call: lookup,
// events off, and the call of a local tool or a no-op operator.
func BenchmarkExecute(b *testing.B) {
	local := operator.NewLocalRegistry()
	if err := local.Register(operator.LocalFunc(operator.LocalInfo{Name: "ping", Description: "Answers pong"},
		func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
			return operator.TextResult("ping", "pong", nil), nil
		})); err != nil {
		b.Fatal(err)
	}
	ops := operator.NewRegistry(operator.Deps{})
	noop := operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: "ok"}, nil
	})
	if err := ops.Register(operator.Metadata{Name: "noop", Description: "does nothing", Type: operator.PureLLM},
		func(operator.Deps) (operator.Operator, error) { return noop, nil }); err != nil {
		b.Fatal(err)
	}
	p := operator.NewProvider(operator.ProviderConfig{Local: local, Operators: ops})
	ctx := context.Background()
	for _, name := range []string{"ping", "noop"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Execute(ctx, name, nil, operator.Env{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
