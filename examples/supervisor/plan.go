package supervisor

import (
	"context"
	"errors"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
	"github.com/agentgraph/agentgraph/operator/plan"
)

// PlanInput is what Plan shows the model.
type PlanInput struct {
	// Query is the task to plan for, usually the user's message. Required.
	Query string
	// Operators are the operators the steps may run; the model is shown
	// their names and descriptions. Required.
	Operators []model.ToolDef
	// Context is the assembled conversation context. Optional.
	Context string
}

// Plan asks the model for a workflow plan on its own, for graphs that
// separate deciding to plan from planning (Decide's CREATE_WORKFLOW
// carries a plan already). It rejects with feedback, within the same
// attempt budget, a plan that breaks the executor's rules
// (plan.Plan.Validate with in.Operators as the operators). Unlike Decide it has no fallback: when no
// attempt gives a valid plan it returns the *agent.StructuredOutputError.
func Plan(ctx context.Context, m model.Model, in PlanInput, opts ...agent.Option) (Result[plan.Plan], error) {
	if strings.TrimSpace(in.Query) == "" {
		return Result[plan.Plan]{}, errors.New("supervisor: Plan: PlanInput.Query is empty; pass the task to plan")
	}
	if len(in.Operators) == 0 {
		return Result[plan.Plan]{}, errors.New("supervisor: Plan: PlanInput.Operators is empty; list the operators a step may run")
	}
	prompt, err := render(wire.Prompt{Step: wire.Plan, Query: in.Query, Tools: toolsOf(in.Operators), Context: in.Context})
	if err != nil {
		return Result[plan.Plan]{}, err
	}
	opts = append(withSystem(planSystem, opts), agent.WithCheck(func(v any) error {
		if err := v.(plan.Plan).Validate(toolSet(in.Operators)); err != nil {
			return &agent.FieldError{Field: "steps", Message: err.Error()}
		}
		return nil
	}))
	return call[plan.Plan](ctx, m, prompt, opts, nil)
}
