// Package supervisortest lets a model that is not a language model (an
// offline demo, a test double) answer the steps of package supervisor: it
// reads back which step a request comes from and what the step showed the
// model, so such a model does not depend on the steps' prompt text, which
// may change between versions.
//
//	func (m *demo) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
//		r, ok := supervisortest.ParseRequest(req)
//		switch {
//		case ok && r.Step == supervisortest.Decide:
//			// answer with a supervisor.Decision as JSON, from r.Query, r.Tools...
//		}
//		...
//	}
package supervisortest

import (
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
)

// Step names the step of package supervisor a request comes from.
type Step string

// The steps.
const (
	Decide   Step = Step(wire.Decide)   // supervisor.Decide: answer with a supervisor.Decision
	Reflect  Step = Step(wire.Reflect)  // supervisor.Reflect: answer with a supervisor.Reflection
	Plan     Step = Step(wire.Plan)     // supervisor.Plan: answer with a workflow plan
	Write    Step = Step(wire.Write)    // supervisor.Write: answer in free text
	Critique Step = Step(wire.Critique) // supervisor.Critique: answer with a supervisor.Review
)

// Request is what a step showed the model. Each step fills the fields of
// its input type; texts that were empty read "".
type Request struct {
	// Step is the step the request comes from.
	Step Step
	// Query is the user's message or the task to plan (Decide, Reflect,
	// Plan, Write).
	Query string
	// Tools are Decide's tools or Plan's operators, with name and
	// description only.
	Tools []model.ToolDef
	// Context is the conversation context (Decide, Plan, Write).
	Context string
	// Observations are the results shown (Decide, Reflect, Write).
	Observations []supervisor.Observation
	// Iteration and MaxIterations are Decide's and Reflect's iteration.
	Iteration, MaxIterations int
	// Draft is Write's draft answer.
	Draft string
	// Task, Call, Output and Error are Critique's input.
	Task, Call, Output, Error string
	// Attempt and MaxAttempts are Critique's attempt.
	Attempt, MaxAttempts int
}

// Last reports whether the request is at the last iteration (Decide,
// Reflect) or the last attempt (Critique), where the step allows fewer
// answers.
func (r Request) Last() bool {
	if r.Step == Critique {
		return r.Attempt >= r.MaxAttempts
	}
	return r.Iteration >= r.MaxIterations
}

// Parse reads a step's request from the text of its user message, or
// reports false when the text is not a supervisor step's.
func Parse(prompt string) (Request, bool) {
	p, ok := wire.Parse(prompt)
	if !ok {
		return Request{}, false
	}
	r := Request{Step: Step(p.Step), Query: p.Query, Context: p.Context, Iteration: p.Iteration,
		MaxIterations: p.MaxIterations, Draft: p.Draft, Task: p.Task, Call: p.Call, Output: p.Output,
		Error: p.Error, Attempt: p.Attempt, MaxAttempts: p.MaxAttempts}
	for _, t := range p.Tools {
		r.Tools = append(r.Tools, model.ToolDef{Name: t.Name, Description: t.Description})
	}
	for _, o := range p.Results {
		r.Observations = append(r.Observations, supervisor.Observation{Source: o.Source, Content: o.Content, Err: o.Err})
	}
	return r, true
}

// ParseRequest reads a step's request from a model request: the text of
// its last user message (a step retrying after a rejected reply appends
// the feedback after the step's text, which Parse ignores).
func ParseRequest(req *model.Request) (Request, bool) {
	if req == nil {
		return Request{}, false
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == model.RoleUser {
			return Parse(m.Text())
		}
	}
	return Request{}, false
}

// Prompt returns the user message a step sends for r, such as to drive a
// model under test with a step's request directly.
func Prompt(r Request) (string, error) {
	p := wire.Prompt{Step: wire.Step(r.Step), Query: r.Query, Context: r.Context, Iteration: r.Iteration,
		MaxIterations: r.MaxIterations, Draft: r.Draft, Task: r.Task, Call: r.Call, Output: r.Output,
		Error: r.Error, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts}
	for _, t := range r.Tools {
		p.Tools = append(p.Tools, wire.Tool{Name: t.Name, Description: t.Description})
	}
	for _, o := range r.Observations {
		p.Results = append(p.Results, wire.Result{Source: o.Source, Content: o.Content, Err: o.Err})
	}
	return wire.Render(p)
}
