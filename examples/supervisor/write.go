package supervisor

import (
	"context"
	"errors"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
)

// WriteInput is what Write shows the model.
type WriteInput struct {
	// Query is the user's message. Required.
	Query string
	// Context is the assembled conversation context. Optional.
	Context string
	// Observations are the results to answer from.
	Observations []Observation
	// Draft is an answer to polish: the supervisor's response, a
	// synthesis, or a blocked or clarifying message. Optional.
	Draft string
}

// Write asks the model for the final answer to the user, in free text,
// through agent.Complete, so agent.WithStreaming delivers the answer as it
// is written. The Result's Value is the answer; Write has no fallback.
func Write(ctx context.Context, m model.Model, in WriteInput, opts ...agent.Option) (Result[string], error) {
	if strings.TrimSpace(in.Query) == "" {
		return Result[string]{}, errors.New("supervisor: Write: WriteInput.Query is empty; pass the user's message")
	}
	prompt, err := render(wire.Prompt{Step: wire.Write, Query: in.Query, Context: in.Context,
		Results: resultsOf(in.Observations), Draft: in.Draft})
	if err != nil {
		return Result[string]{}, err
	}
	resp, err := agent.Complete(ctx, m, prompt, withSystem(writeSystem, opts)...)
	if err != nil {
		return Result[string]{}, err
	}
	return Result[string]{Value: resp.Text, Usage: resp.Usage}, nil
}
