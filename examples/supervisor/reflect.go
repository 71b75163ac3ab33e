package supervisor

import (
	"context"
	"errors"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
)

// Assessment is the outcome of a reflection, and the branch the graph takes
// after it.
type Assessment string

// The reflection outcomes.
const (
	// AssessSatisfied: the results answer the question; write the answer.
	AssessSatisfied Assessment = "satisfied"
	// AssessNeedMore: something is missing; back to the supervisor.
	AssessNeedMore Assessment = "need_more"
	// AssessBlocked: the results failed and retrying will not help; tell
	// the user gracefully.
	AssessBlocked Assessment = "blocked"
	// AssessDirectResponse: a tool already sent its content to the user
	// (a widget, an image); skip writing. Reflect returns it without asking
	// the model when ReflectInput.DirectResponse is set; the model is never
	// offered it.
	AssessDirectResponse Assessment = "direct_response"
)

// Reflection is the structured evaluation Reflect asks the model for.
type Reflection struct {
	// Assessment is the outcome.
	Assessment Assessment `json:"assessment" jsonschema:"enum=satisfied,enum=need_more,enum=blocked,description=The next step" validate:"required,oneof=satisfied need_more blocked direct_response"`
	// Reasoning says why, judging relevance, completeness and quality.
	Reasoning string `json:"reasoning" jsonschema:"description=Why: relevance completeness and quality of the results" validate:"required"`
	// Missing says what is still needed, for need_more.
	Missing string `json:"missing,omitempty" jsonschema:"description=What is still needed (need_more only)"`
	// Blocker says what went wrong, for blocked.
	Blocker string `json:"blocker,omitempty" jsonschema:"description=Why the question cannot be answered (blocked only)"`
}

// Validate requires missing for need_more and blocker for blocked.
func (r Reflection) Validate() error {
	switch r.Assessment {
	case AssessNeedMore:
		return requiredText("missing", r.Missing, "assessment is need_more: say what is still needed")
	case AssessBlocked:
		return requiredText("blocker", r.Blocker, "assessment is blocked: say why")
	}
	return nil
}

// ReflectInput is what Reflect shows the model.
type ReflectInput struct {
	// Query is the user's message. Required.
	Query string
	// Observations are the results gathered this turn.
	Observations []Observation
	// Iteration is the supervisor iteration that produced them, from 1.
	Iteration int
	// MaxIterations caps the iterations; zero means DefaultMaxIterations.
	MaxIterations int
	// DirectResponse is true when a tool already sent its content to the
	// user; Reflect then returns AssessDirectResponse without a model call.
	DirectResponse bool
}

// Reflect evaluates the results of a turn and decides the next step.
//
// A direct response short-cuts to AssessDirectResponse without a model
// call. At the last iteration need_more is not an option: the model is told
// so, and a need_more that comes back anyway becomes satisfied when some
// result succeeded and blocked otherwise. When no attempt gives a valid
// reflection, Reflect decides the same way from the results alone, sets
// Fallback and returns a nil error.
func Reflect(ctx context.Context, m model.Model, in ReflectInput, opts ...agent.Option) (Result[Reflection], error) {
	if in.DirectResponse {
		return Result[Reflection]{Value: Reflection{Assessment: AssessDirectResponse, Reasoning: "A tool already sent its content to the user."}}, nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return Result[Reflection]{}, errors.New("supervisor: Reflect: ReflectInput.Query is empty; pass the user's message")
	}
	if in.MaxIterations <= 0 {
		in.MaxIterations = DefaultMaxIterations
	}
	if in.Iteration <= 0 {
		in.Iteration = 1
	}
	prompt, err := render(wire.Prompt{Step: wire.Reflect, Query: in.Query, Results: resultsOf(in.Observations),
		Iteration: in.Iteration, MaxIterations: in.MaxIterations})
	if err != nil {
		return Result[Reflection]{}, err
	}
	out, err := call(ctx, m, prompt, withSystem(reflectSystem, opts), func(soe *agent.StructuredOutputError) Reflection {
		r := fromResults(in.Observations)
		r.Reasoning = "No valid reflection could be made (" + soe.Error() + "); " + r.Reasoning
		return r
	})
	if err != nil || out.Fallback {
		return out, err
	}
	if r := out.Value; r.Assessment == AssessNeedMore && in.Iteration >= in.MaxIterations {
		f := fromResults(in.Observations)
		f.Reasoning = "Out of iterations while still missing: " + r.Missing + "; " + f.Reasoning
		out.Value = f
	}
	return out, nil
}

// fromResults is the reflection the results alone support: satisfied when
// some result succeeded, blocked otherwise.
func fromResults(obs []Observation) Reflection {
	var failures []string
	for _, o := range obs {
		if o.Err == "" && strings.TrimSpace(o.Content) != "" {
			return Reflection{Assessment: AssessSatisfied, Reasoning: "answering from the results gathered so far."}
		}
		if o.Err != "" {
			failures = append(failures, o.Source+": "+o.Err)
		}
	}
	blocker := "no results were gathered"
	if len(failures) > 0 {
		blocker = "every call failed: " + strings.Join(failures, "; ")
	}
	return Reflection{Assessment: AssessBlocked, Reasoning: "no usable result.", Blocker: blocker}
}
