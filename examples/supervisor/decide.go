package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
	"github.com/agentgraph/agentgraph/operator/plan"
)

// Action is what a supervisor decides to do next.
type Action string

// The four supervisor actions.
const (
	// ActionAnswer answers the user directly, with no tool.
	ActionAnswer Action = "ANSWER"
	// ActionCallTool calls one tool or operator and observes its result.
	ActionCallTool Action = "CALL_TOOL"
	// ActionCreateWorkflow plans several steps whose dependencies are known
	// up front; independent steps can run in parallel.
	ActionCreateWorkflow Action = "CREATE_WORKFLOW"
	// ActionClarify asks the user a question before doing anything else.
	ActionClarify Action = "CLARIFY"
)

// Route is the lower-case name of the action ("answer", "call_tool",
// "create_workflow", "clarify"), convenient as a graph branch name.
func (a Action) Route() string { return strings.ToLower(string(a)) }

// Decision is the supervisor's structured decision, the value Decide asks
// the model for. Which of the optional fields is required depends on the
// action (see Validate).
type Decision struct {
	// Action is what to do next.
	Action Action `json:"action" jsonschema:"enum=ANSWER,enum=CALL_TOOL,enum=CREATE_WORKFLOW,enum=CLARIFY,description=What to do next" validate:"required,oneof=ANSWER CALL_TOOL CREATE_WORKFLOW CLARIFY"`
	// Reasoning says briefly why.
	Reasoning string `json:"reasoning" jsonschema:"description=Why this action, in one or two sentences" validate:"required"`
	// Response is the answer, for ANSWER.
	Response string `json:"response,omitempty" jsonschema:"description=The answer to the user (ANSWER only)"`
	// Tool names the tool or operator to call, for CALL_TOOL. It must be one
	// of the tools the supervisor was shown.
	Tool string `json:"tool,omitempty" jsonschema:"description=Name of the tool or operator to call (CALL_TOOL only)"`
	// Arguments are the tool's arguments, for CALL_TOOL.
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"description=Arguments of the tool call (CALL_TOOL only)"`
	// Workflow is the plan, for CREATE_WORKFLOW.
	Workflow *plan.Plan `json:"workflow,omitempty" jsonschema:"description=The multi-step plan (CREATE_WORKFLOW only)"`
	// Question is the clarifying question, for CLARIFY.
	Question string `json:"question,omitempty" jsonschema:"description=The question to ask the user (CLARIFY only)"`
}

// Validate checks what the schema cannot: the field each action needs
// (response for ANSWER, tool for CALL_TOOL, workflow for CREATE_WORKFLOW,
// question for CLARIFY) and, for a workflow, the rules of the executor
// that will run it ([plan.Plan.Validate], without the operator names).
func (d Decision) Validate() error {
	var errs []error
	need := func(field, value string) {
		if err := requiredText(field, value, "action is "+string(d.Action)); err != nil {
			errs = append(errs, err)
		}
	}
	switch d.Action {
	case ActionAnswer:
		need("response", d.Response)
	case ActionCallTool:
		need("tool", d.Tool)
	case ActionCreateWorkflow:
		if d.Workflow == nil {
			errs = append(errs, &agent.FieldError{Field: "workflow", Message: "workflow is required when action is CREATE_WORKFLOW"})
		} else if err := d.Workflow.Validate(nil); err != nil {
			errs = append(errs, &agent.FieldError{Field: "workflow", Message: err.Error()})
		}
	case ActionClarify:
		need("question", d.Question)
	}
	return errors.Join(errs...)
}

// DecideInput is what Decide shows the model.
type DecideInput struct {
	// Query is the user's message. Required.
	Query string
	// Tools are the tools and operators the supervisor may call or use in
	// workflow steps; the model is shown their names and descriptions.
	// Empty means it can only answer or clarify.
	Tools []model.ToolDef
	// Context is the assembled conversation context: a summary of older
	// turns and the recent messages, as text. Optional.
	Context string
	// Observations are the results gathered so far this turn.
	Observations []Observation
	// Iteration counts decisions this turn, from 1.
	Iteration int
	// MaxIterations caps them; at the last iteration the supervisor must
	// ANSWER or CLARIFY. Zero means DefaultMaxIterations.
	MaxIterations int
	// Instructions are appended to the step's system prompt, such as how
	// to use a particular tool. Optional.
	Instructions string
}

// ClarifyFallback is the question of the decision Decide substitutes when
// the model gives no valid decision.
const ClarifyFallback = "Could you please rephrase your request?"

// Decide asks the model for the supervisor's next action.
//
// On top of the schema and Decision.Validate it rejects, with feedback to
// the model and within the same attempt budget, a CALL_TOOL naming a tool
// not in in.Tools, a workflow the executor would reject (the executor's own
// validator, plan.Plan.Validate, with in.Tools as the operators, so the
// model reads the executor's error), and a tool call or workflow at the
// last iteration.
//
// When no attempt gives a valid decision, Decide returns a CLARIFY asking
// the user to rephrase (ClarifyFallback), with Fallback set, and a nil
// error: the turn goes on and the user is asked.
func Decide(ctx context.Context, m model.Model, in DecideInput, opts ...agent.Option) (Result[Decision], error) {
	if strings.TrimSpace(in.Query) == "" {
		return Result[Decision]{}, errors.New("supervisor: Decide: DecideInput.Query is empty; pass the user's message")
	}
	if in.MaxIterations <= 0 {
		in.MaxIterations = DefaultMaxIterations
	}
	if in.Iteration <= 0 {
		in.Iteration = 1
	}
	prompt, err := render(wire.Prompt{Step: wire.Decide, Query: in.Query, Tools: toolsOf(in.Tools), Context: in.Context,
		Results: resultsOf(in.Observations), Iteration: in.Iteration, MaxIterations: in.MaxIterations})
	if err != nil {
		return Result[Decision]{}, err
	}
	system := decideSystem
	if strings.TrimSpace(in.Instructions) != "" {
		system += "\n\n" + strings.TrimSpace(in.Instructions)
	}
	opts = append(withSystem(system, opts), agent.WithCheck(func(v any) error { return checkDecision(v.(Decision), in) }))
	return call(ctx, m, prompt, opts, func(soe *agent.StructuredOutputError) Decision {
		return Decision{
			Action:    ActionClarify,
			Reasoning: "No valid decision could be made: " + soe.Error(),
			Question:  ClarifyFallback,
		}
	})
}

// checkDecision checks a decision against what the supervisor was shown.
func checkDecision(d Decision, in DecideInput) error {
	known := func(name string) bool {
		return slices.ContainsFunc(in.Tools, func(t model.ToolDef) bool { return t.Name == name })
	}
	names := func() string { return toolNames(in.Tools) }
	last := in.Iteration >= in.MaxIterations
	switch d.Action {
	case ActionCallTool:
		if last {
			return &agent.FieldError{Field: "action", Message: "this is the last iteration: ANSWER from the results so far or CLARIFY"}
		}
		if !known(d.Tool) {
			return &agent.FieldError{Field: "tool", Message: fmt.Sprintf("unknown tool %q; use one of: %s", d.Tool, names())}
		}
	case ActionCreateWorkflow:
		if last {
			return &agent.FieldError{Field: "action", Message: "this is the last iteration: ANSWER from the results so far or CLARIFY"}
		}
		if err := d.Workflow.Validate(toolSet(in.Tools)); err != nil {
			return &agent.FieldError{Field: "workflow", Message: err.Error()}
		}
	}
	return nil
}

// toolSet gives plan validation the names of the tools a model was shown.
type toolSet []model.ToolDef

// Has reports whether a tool of that name is in the set.
func (s toolSet) Has(name string) bool {
	return slices.ContainsFunc(s, func(t model.ToolDef) bool { return t.Name == name })
}

// Names lists the tools' names.
func (s toolSet) Names() []string {
	names := make([]string, len(s))
	for i, t := range s {
		names[i] = t.Name
	}
	return names
}
