package supervisor

import (
	"context"
	"errors"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
)

// call asks m for a step's T with prompt (agent.Call). When no attempt
// gives a valid reply and ctx is not done, it returns the value of
// fallback, with Fallback set, and a nil error; a nil fallback means the
// step has none, and returns the error.
func call[T any](ctx context.Context, m model.Model, prompt string, opts []agent.Option, fallback func(*agent.StructuredOutputError) T) (Result[T], error) {
	res, err := agent.Call[T](ctx, m, prompt, opts...)
	var soe *agent.StructuredOutputError
	if fallback != nil && errors.As(err, &soe) && ctx.Err() == nil {
		return Result[T]{Value: fallback(soe), Usage: res.Usage, Attempts: soe.Attempts, Fallback: true}, nil
	}
	if err != nil {
		return Result[T]{Usage: res.Usage, Attempts: res.Attempts}, err
	}
	return Result[T]{Value: res.Value, Usage: res.Usage, Attempts: res.Attempts}, nil
}
