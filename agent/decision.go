package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/operator/plan"
	"go.uber.org/zap"
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

	// Fallback is true when the model gave no valid decision and Decide
	// substituted a CLARIFY asking the user to rephrase. It is not part of
	// the schema the model sees.
	Fallback bool `json:"-"`
}

// Validate checks what the schema cannot: the field each action needs
// (response for ANSWER, tool for CALL_TOOL, workflow for CREATE_WORKFLOW,
// question for CLARIFY) and, for a workflow, the rules of the executor
// that will run it ([plan.Plan.Validate], without the operator names).
func (d Decision) Validate() error {
	var errs []error
	need := func(field, value string) {
		if strings.TrimSpace(value) == "" {
			errs = append(errs, &FieldError{Field: field, Message: field + " is required when action is " + string(d.Action)})
		}
	}
	switch d.Action {
	case ActionAnswer:
		need("response", d.Response)
	case ActionCallTool:
		need("tool", d.Tool)
	case ActionCreateWorkflow:
		if d.Workflow == nil {
			errs = append(errs, &FieldError{Field: "workflow", Message: "workflow is required when action is CREATE_WORKFLOW"})
		} else if err := d.Workflow.Validate(nil); err != nil {
			errs = append(errs, &FieldError{Field: "workflow", Message: err.Error()})
		}
	case ActionClarify:
		need("question", d.Question)
	}
	return errors.Join(errs...)
}

// ToolSummary is what the supervisor is shown of a tool or operator: its
// name and a one-line description. Full schemas are loaded only for the
// tool it picks.
type ToolSummary struct {
	// Name is the name the supervisor must use in Decision.Tool.
	Name string
	// Description says in one line what the tool does and takes.
	Description string
}

// Observation is one result the supervisor or the reflection has to judge:
// a tool call's output or a workflow's.
type Observation struct {
	// Source names what produced it, usually the tool or step name.
	Source string
	// Content is the result as text (a summary for long results).
	Content string
	// Err is the failure text when the call failed; Content is then empty
	// or partial.
	Err string
}

// SupervisorInput is what Decide shows the model.
type SupervisorInput struct {
	// Query is the user's message. Required.
	Query string
	// Tools are the tools and operators the supervisor may call or use in
	// workflow steps. Empty means it can only answer or clarify.
	Tools []ToolSummary
	// Context is the assembled conversation context: a summary of older
	// turns and the recent messages, as text. Optional.
	Context string
	// Observations are the results gathered so far this turn.
	Observations []Observation
	// Iteration counts supervisor decisions this turn, from 1.
	Iteration int
	// MaxIterations caps them; at the last iteration the supervisor must
	// ANSWER or CLARIFY. Zero means DefaultMaxIterations.
	MaxIterations int
}

// DefaultMaxIterations is the supervisor's default iteration cap per turn.
const DefaultMaxIterations = 5

// ClarifyFallback is the question of the decision Decide substitutes when
// the model gives no valid decision.
const ClarifyFallback = "Could you please rephrase your request?"

// Decide asks the model for the supervisor's next action.
//
// It renders the supervisor prompt (SupervisorPrompt, with
// SupervisorSystem as the system prompt) and calls Call[Decision] with the
// options given (WithModel picks the model; WithSystem replaces
// SupervisorSystem, so pass SupervisorSystem plus your additions to extend
// it). On top of Decision.Validate it
// rejects, with feedback to the model and within the same attempt budget, a
// CALL_TOOL naming a tool not in in.Tools, a workflow step naming an
// operator not in in.Tools, and a tool call or workflow at the last
// iteration.
//
// When no attempt gives a valid decision, Decide returns a CLARIFY asking
// the user to rephrase, with Fallback set, and a nil error: the turn goes on
// and the user is asked. A failing model call (after the resilience
// policy) or a cancelled context is returned as an error. The usage of all
// attempts is returned in every case.
func Decide(ctx context.Context, c *Client, in SupervisorInput, opts ...Option) (Decision, TokenUsage, error) {
	if strings.TrimSpace(in.Query) == "" {
		return Decision{}, TokenUsage{}, fmt.Errorf("agent: Decide: SupervisorInput.Query is empty; pass the user's message")
	}
	if in.MaxIterations <= 0 {
		in.MaxIterations = DefaultMaxIterations
	}
	if in.Iteration <= 0 {
		in.Iteration = 1
	}
	prompt, err := SupervisorPrompt(in)
	if err != nil {
		return Decision{}, TokenUsage{}, err
	}
	opts = append([]Option{WithSystem(SupervisorSystem)}, opts...)
	d, usage, err := callChecked(ctx, c, prompt, opts, func(d Decision) error { return checkDecision(d, in) })
	var soe *StructuredOutputError
	if errors.As(err, &soe) {
		c.log.Warn("no valid supervisor decision; asking the user to rephrase",
			zap.Int("attempts", len(soe.Attempts)), zap.Error(soe))
		return Decision{
			Action:    ActionClarify,
			Reasoning: "No valid decision could be made: " + soe.Error(),
			Question:  ClarifyFallback,
			Fallback:  true,
		}, usage, nil
	}
	return d, usage, err
}

// checkDecision checks a decision against what the supervisor was shown.
func checkDecision(d Decision, in SupervisorInput) error {
	known := func(name string) bool {
		return slices.ContainsFunc(in.Tools, func(t ToolSummary) bool { return t.Name == name })
	}
	names := func() string { return toolNames(in.Tools) }
	last := in.Iteration >= in.MaxIterations
	switch d.Action {
	case ActionCallTool:
		if last {
			return &FieldError{Field: "action", Message: "this is the last iteration: ANSWER from the results so far or CLARIFY"}
		}
		if !known(d.Tool) {
			return &FieldError{Field: "tool", Message: fmt.Sprintf("unknown tool %q; use one of: %s", d.Tool, names())}
		}
	case ActionCreateWorkflow:
		if last {
			return &FieldError{Field: "action", Message: "this is the last iteration: ANSWER from the results so far or CLARIFY"}
		}
		if err := d.Workflow.Validate(toolSet(in.Tools)); err != nil {
			return &FieldError{Field: "workflow", Message: err.Error()}
		}
	}
	return nil
}

// callChecked is Call[T] with an extra check that needs the call's input.
// A value the check rejects is fed back like any rejected reply, and the
// attempts of both kinds share one budget.
func callChecked[T any](ctx context.Context, c *Client, prompt string, opts []Option, check func(T) error) (T, TokenUsage, error) {
	o := c.options(opts)
	budget := o.maxAttempts
	if budget <= 0 {
		budget = c.maxAttempts
	}
	var (
		usage    TokenUsage
		attempts []Attempt
		zero     T
		current  = prompt
	)
	for budget > 0 {
		res, err := Call[T](ctx, c, current, append(opts, WithMaxAttempts(budget))...)
		usage = usage.Merge(res.Usage)
		var soe *StructuredOutputError
		if errors.As(err, &soe) {
			for _, a := range soe.Attempts {
				a.Number += len(attempts)
				attempts = append(attempts, a)
			}
			soe.Attempts, soe.Usage = attempts, usage
			return zero, usage, soe
		}
		if err != nil {
			return zero, usage, err
		}
		for _, a := range res.Attempts {
			a.Number += len(attempts)
			attempts = append(attempts, a)
		}
		budget -= len(res.Attempts) + 1
		cerr := check(res.Value)
		if cerr == nil {
			return res.Value, usage, nil
		}
		msg := validateMessage(cerr)
		raw := res.Response.Text
		if strings.TrimSpace(raw) == "" { // the value came as a tool call
			b, _ := json.Marshal(res.Value)
			raw = string(b)
		}
		c.log.Warn("structured reply rejected", zap.String("type", fmt.Sprintf("%T", zero)),
			zap.Int("attempt", len(attempts)+1), zap.String("kind", string(FailureSchemaValidation)), zap.String("error", msg))
		attempts = append(attempts, Attempt{Number: len(attempts) + 1, Raw: raw,
			Kind: FailureSchemaValidation, Message: msg, Usage: res.Response.Usage})
		current = RetryPrompt(prompt, FailureSchemaValidation, msg, raw)
	}
	return zero, usage, &StructuredOutputError{Type: fmt.Sprintf("%T", zero), Attempts: attempts, Usage: usage}
}
