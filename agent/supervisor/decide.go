package supervisor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/supervisor/internal/wire"
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
	Workflow *WorkflowPlan `json:"workflow,omitempty" jsonschema:"description=The multi-step plan (CREATE_WORKFLOW only)"`
	// Question is the clarifying question, for CLARIFY.
	Question string `json:"question,omitempty" jsonschema:"description=The question to ask the user (CLARIFY only)"`
}

// WorkflowPlan is a multi-step plan written by the model: a goal and the
// steps that reach it. Its JSON form is the one the workflow package
// decodes as a definition (goal, steps with id, name, operator,
// input_mapping, depends_on), and WorkflowStep has the fields of
// workflow.Step, so a plan converts step by step:
//
//	def := workflow.Definition{Goal: plan.Goal}
//	for _, s := range plan.Steps {
//		def.Steps = append(def.Steps, workflow.Step(s))
//	}
//
// (Package agent does not import package workflow: the model layer stays
// below the orchestration layer.)
type WorkflowPlan struct {
	// Goal says what the workflow is for.
	Goal string `json:"goal" jsonschema:"description=What the workflow achieves" validate:"required"`
	// Steps are the steps; dependencies, not order, decide when each runs.
	Steps []WorkflowStep `json:"steps" jsonschema:"minItems=1" validate:"required,min=1,dive"`
}

// WorkflowStep is one operator call of a WorkflowPlan.
type WorkflowStep struct {
	// ID identifies the step ("step_1"); templates refer to it.
	ID string `json:"id" jsonschema:"description=Unique step id such as step_1; letters digits _ and -" validate:"required"`
	// Name is the human-readable name shown in progress events.
	Name string `json:"name" jsonschema:"description=Short human-readable step name" validate:"required"`
	// Operator names the operator the step runs.
	Operator string `json:"operator" jsonschema:"description=The operator this step runs" validate:"required"`
	// InputMapping maps the operator's inputs to templates such as
	// "{{user_query}}" or "{{step_1.output}}", or to lists of them.
	InputMapping map[string]any `json:"input_mapping,omitempty" jsonschema:"description=Operator inputs: templates like {{user_query}} or {{step_1.output}} or lists of them"`
	// DependsOn lists the ids of the steps that must finish first. Steps
	// with the same dependencies run in parallel.
	DependsOn []string `json:"depends_on,omitempty" jsonschema:"description=Ids of steps that must finish first"`
}

var stepID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Validate checks what the schema cannot: the field each action needs
// (response for ANSWER, tool for CALL_TOOL, workflow for CREATE_WORKFLOW,
// question for CLARIFY) and, for a workflow, unique step ids, known
// dependencies and no cycle.
func (d Decision) Validate() error {
	var errs []error
	need := func(field, value string) {
		if strings.TrimSpace(value) == "" {
			errs = append(errs, &agent.FieldError{Field: field, Message: field + " is required when action is " + string(d.Action)})
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
		} else if err := d.Workflow.Validate(); err != nil {
			errs = append(errs, err.(interface{ Unwrap() []error }).Unwrap()...)
		}
	case ActionClarify:
		need("question", d.Question)
	}
	return errors.Join(errs...)
}

// Validate checks a plan: a goal, at least one step, step ids that are
// unique and well formed, an operator per step, dependencies that name
// other steps of the plan, and no dependency cycle.
func (p WorkflowPlan) Validate() error {
	var errs []error
	if strings.TrimSpace(p.Goal) == "" {
		errs = append(errs, &agent.FieldError{Field: "workflow.goal", Message: "goal is required"})
	}
	if len(p.Steps) == 0 {
		errs = append(errs, &agent.FieldError{Field: "workflow.steps", Message: "at least one step is required"})
	}
	ids := make(map[string]int, len(p.Steps))
	for i, s := range p.Steps {
		f := fmt.Sprintf("workflow.steps[%d]", i)
		switch _, dup := ids[s.ID]; {
		case !stepID.MatchString(s.ID):
			errs = append(errs, &agent.FieldError{Field: f + ".id", Message: fmt.Sprintf("id %q must be letters, digits, '_' or '-'", s.ID)})
		case dup:
			errs = append(errs, &agent.FieldError{Field: f + ".id", Message: fmt.Sprintf("id %q is used by another step; ids must be unique", s.ID)})
		}
		ids[s.ID] = i
		if strings.TrimSpace(s.Operator) == "" {
			errs = append(errs, &agent.FieldError{Field: f + ".operator", Message: "operator is required"})
		}
	}
	for i, s := range p.Steps {
		for _, dep := range s.DependsOn {
			if _, ok := ids[dep]; !ok {
				errs = append(errs, &agent.FieldError{Field: fmt.Sprintf("workflow.steps[%d].depends_on", i),
					Message: fmt.Sprintf("step %q depends on %q, which is not a step of this workflow", s.ID, dep)})
			} else if dep == s.ID {
				errs = append(errs, &agent.FieldError{Field: fmt.Sprintf("workflow.steps[%d].depends_on", i),
					Message: fmt.Sprintf("step %q depends on itself", s.ID)})
			}
		}
	}
	if len(errs) == 0 {
		if cyc := p.cycle(ids); cyc != nil {
			errs = append(errs, &agent.FieldError{Field: "workflow.steps", Message: "dependency cycle: " + strings.Join(cyc, " -> ")})
		}
	}
	return errors.Join(errs...)
}

// cycle returns a dependency cycle as a path of step ids, or nil.
func (p WorkflowPlan) cycle(ids map[string]int) []string {
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, len(p.Steps))
	var path []string
	var visit func(i int) []string
	visit = func(i int) []string {
		state[i] = active
		path = append(path, p.Steps[i].ID)
		for _, dep := range p.Steps[i].DependsOn {
			j := ids[dep]
			switch state[j] {
			case active:
				k := slices.Index(path, dep)
				return append(slices.Clone(path[k:]), dep)
			case unseen:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		return nil
	}
	for i := range p.Steps {
		if state[i] == unseen {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
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
// not in in.Tools, a workflow step naming an operator not in in.Tools, and
// a tool call or workflow at the last iteration.
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
	res, err := agent.Call[Decision](ctx, m, prompt, opts...)
	var soe *agent.StructuredOutputError
	if errors.As(err, &soe) && ctx.Err() == nil {
		return fallback(Decision{
			Action:    ActionClarify,
			Reasoning: "No valid decision could be made: " + soe.Error(),
			Question:  ClarifyFallback,
		}, res, soe), nil
	}
	if err != nil {
		return Result[Decision]{Usage: res.Usage, Attempts: res.Attempts}, err
	}
	return resultOf(res), nil
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
		var errs []error
		for i, s := range d.Workflow.Steps {
			if !known(s.Operator) {
				errs = append(errs, &agent.FieldError{Field: fmt.Sprintf("workflow.steps[%d].operator", i),
					Message: fmt.Sprintf("unknown operator %q; use one of: %s", s.Operator, names())})
			}
		}
		return errors.Join(errs...)
	}
	return nil
}
