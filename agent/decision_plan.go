package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PlanInput is what PlanWorkflow shows the model.
type PlanInput struct {
	// Query is the task to plan for, usually the user's message. Required.
	Query string
	// Operators are the operators the steps may run. Required.
	Operators []ToolSummary
	// Context is the assembled conversation context. Optional.
	Context string
}

// PlanWorkflow asks the model for a workflow plan on its own, for graphs
// that separate deciding to plan from planning (Decide's CREATE_WORKFLOW
// carries a plan already). It renders PlanPrompt (with PlanSystem), calls
// Call[WorkflowPlan], and rejects with feedback steps that name an
// operator not in in.Operators. Unlike Decide it has no fallback: when no
// attempt gives a valid plan it returns the *StructuredOutputError.
func PlanWorkflow(ctx context.Context, c *Client, in PlanInput, opts ...Option) (WorkflowPlan, TokenUsage, error) {
	if strings.TrimSpace(in.Query) == "" {
		return WorkflowPlan{}, TokenUsage{}, errors.New("agent: PlanWorkflow: PlanInput.Query is empty; pass the task to plan")
	}
	if len(in.Operators) == 0 {
		return WorkflowPlan{}, TokenUsage{}, errors.New("agent: PlanWorkflow: PlanInput.Operators is empty; list the operators a step may run")
	}
	prompt, err := PlanPrompt(in)
	if err != nil {
		return WorkflowPlan{}, TokenUsage{}, err
	}
	opts = append([]Option{WithSystem(PlanSystem)}, opts...)
	return callChecked(ctx, c, prompt, opts, func(p WorkflowPlan) error {
		var errs []error
		for i, s := range p.Steps {
			if !slices.ContainsFunc(in.Operators, func(t ToolSummary) bool { return t.Name == s.Operator }) {
				errs = append(errs, &FieldError{Field: fmt.Sprintf("steps[%d].operator", i),
					Message: fmt.Sprintf("unknown operator %q; use one of: %s", s.Operator, toolNames(in.Operators))})
			}
		}
		return errors.Join(errs...)
	})
}

func toolNames(tools []ToolSummary) string {
	if len(tools) == 0 {
		return "none"
	}
	s := make([]string, len(tools))
	for i, t := range tools {
		s[i] = t.Name
	}
	return strings.Join(s, ", ")
}
