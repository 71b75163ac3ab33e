package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// InterruptElicitor is an elicit.Elicitor for operators that run inside
// a durable graph (one compiled with graph.WithCheckpointer, run on a
// thread), such as a workflow's steps: it asks with graph.Interrupt
// instead of waiting. The first time a question is asked, the run saves
// its state and pauses; the caller gets a *graph.InterruptError whose
// payload decodes into the elicit.Request, and resumes the
// thread later, in this process or another, with
// graph.Resume(elicit.Response{...}). The operator then runs
// again from its beginning and this time the question returns the answer.
// Code before the question runs twice: keep it free of side effects.
//
// While paused, Confirm and Choose return an error matching
// operator.ErrPaused (and the graph's interrupt); the operator must return
// it, and so must the node running the operator, as a workflow's steps do.
// Outside a durable run Elicit fails with an error wrapping
// graph.ErrNoCheckpointer. It needs the graph's default JSON serializer.
type InterruptElicitor struct{}

// Elicit pauses the run with req as the interrupt's payload, or returns
// the answer the run was resumed with.
func (InterruptElicitor) Elicit(ctx context.Context, req elicit.Request) (elicit.Response, error) {
	raw, err := graph.Interrupt[json.RawMessage](ctx, req)
	if err != nil {
		if errors.Is(err, graph.ErrNoCheckpointer) {
			return elicit.Response{}, fmt.Errorf("workflow: asking %q: %w", req.Message, err)
		}
		return elicit.Response{}, &pauseError{question: req.Message, err: err}
	}
	var resp elicit.Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return resp, operator.Permanent(fmt.Errorf("operator: the run was resumed with %s as the answer to %q; resume with an elicit.Response: %w", raw, req.Message, err))
	}
	return resp, nil
}

// pauseError is a question's pause: it matches operator.ErrPaused and the graph's
// interrupt, so that the engine pauses when a node returns it.
type pauseError struct {
	question string
	err      error
}

func (e *pauseError) Error() string {
	return fmt.Sprintf("workflow: paused until the user answers %q; return this error unchanged", e.question)
}

func (e *pauseError) Unwrap() []error { return []error{operator.ErrPaused, e.err} }
