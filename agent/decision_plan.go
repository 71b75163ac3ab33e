package agent

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/operator/plan"
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
// Call[plan.Plan], and rejects with feedback, within the same attempt
// budget, a plan that breaks the executor's rules ([plan.Plan.Validate]
// with in.Operators as the operators). Unlike Decide it has no fallback: when no
// attempt gives a valid plan it returns the *StructuredOutputError.
func PlanWorkflow(ctx context.Context, c *Client, in PlanInput, opts ...Option) (plan.Plan, TokenUsage, error) {
	if strings.TrimSpace(in.Query) == "" {
		return plan.Plan{}, TokenUsage{}, errors.New("agent: PlanWorkflow: PlanInput.Query is empty; pass the task to plan")
	}
	if len(in.Operators) == 0 {
		return plan.Plan{}, TokenUsage{}, errors.New("agent: PlanWorkflow: PlanInput.Operators is empty; list the operators a step may run")
	}
	prompt, err := PlanPrompt(in)
	if err != nil {
		return plan.Plan{}, TokenUsage{}, err
	}
	opts = append([]Option{WithSystem(PlanSystem)}, opts...)
	return callChecked(ctx, c, prompt, opts, func(p plan.Plan) error {
		if err := p.Validate(toolSet(in.Operators)); err != nil {
			return &FieldError{Field: "steps", Message: err.Error()}
		}
		return nil
	})
}

// toolSet gives plan validation the names of the tools a model was shown.
type toolSet []ToolSummary

// Has reports whether a tool of that name is in the set.
func (s toolSet) Has(name string) bool {
	return slices.ContainsFunc(s, func(t ToolSummary) bool { return t.Name == name })
}

// Names lists the tools' names.
func (s toolSet) Names() []string {
	names := make([]string, len(s))
	for i, t := range s {
		names[i] = t.Name
	}
	return names
}

func toolNames(tools []ToolSummary) string {
	if len(tools) == 0 {
		return "none"
	}
	return strings.Join(toolSet(tools).Names(), ", ")
}
