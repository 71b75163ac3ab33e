package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/supervisor/internal/wire"
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
// carries a plan already). It rejects with feedback steps that name an
// operator not in in.Operators. Unlike Decide it has no fallback: when no
// attempt gives a valid plan it returns the *agent.StructuredOutputError.
func Plan(ctx context.Context, m model.Model, in PlanInput, opts ...agent.Option) (Result[WorkflowPlan], error) {
	if strings.TrimSpace(in.Query) == "" {
		return Result[WorkflowPlan]{}, errors.New("supervisor: Plan: PlanInput.Query is empty; pass the task to plan")
	}
	if len(in.Operators) == 0 {
		return Result[WorkflowPlan]{}, errors.New("supervisor: Plan: PlanInput.Operators is empty; list the operators a step may run")
	}
	prompt, err := render(wire.Prompt{Step: wire.Plan, Query: in.Query, Tools: toolsOf(in.Operators), Context: in.Context})
	if err != nil {
		return Result[WorkflowPlan]{}, err
	}
	opts = append(withSystem(planSystem, opts), agent.WithCheck(func(v any) error {
		var errs []error
		for i, s := range v.(WorkflowPlan).Steps {
			if !slices.ContainsFunc(in.Operators, func(t model.ToolDef) bool { return t.Name == s.Operator }) {
				errs = append(errs, &agent.FieldError{Field: fmt.Sprintf("steps[%d].operator", i),
					Message: fmt.Sprintf("unknown operator %q; use one of: %s", s.Operator, toolNames(in.Operators))})
			}
		}
		return errors.Join(errs...)
	}))
	res, err := agent.Call[WorkflowPlan](ctx, m, prompt, opts...)
	if err != nil {
		return Result[WorkflowPlan]{Usage: res.Usage, Attempts: res.Attempts}, err
	}
	return resultOf(res), nil
}
