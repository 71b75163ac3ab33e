package supervisor

import (
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
)

// Result is the outcome of a step: the value, what it cost, the replies
// rejected on the way and whether the value is the step's fallback.
type Result[T any] struct {
	// Value is the step's value: the model's, checked, or the fallback.
	Value T
	// Usage sums the usage of every attempt, the rejected ones included.
	Usage model.Usage
	// Attempts are the replies rejected before the value (every attempt
	// when Fallback is set), with why each was rejected.
	Attempts []agent.Attempt
	// Fallback is true when the model gave no valid reply and the step
	// substituted its documented fallback value.
	Fallback bool
}

// Observation is one result a step judges or answers from: a tool call's
// output or a workflow's.
type Observation struct {
	// Source names what produced it, usually the tool or step name.
	Source string
	// Content is the result as text (a summary for long results).
	Content string
	// Err is the failure text when the call failed; Content is then empty
	// or partial.
	Err string
}

// DefaultMaxIterations is the default number of decisions per turn.
const DefaultMaxIterations = 5

// toolsOf lists tool definitions for a prompt: name and description only.
func toolsOf(defs []model.ToolDef) []wire.Tool {
	out := make([]wire.Tool, len(defs))
	for i, d := range defs {
		out[i] = wire.Tool{Name: d.Name, Description: d.Description}
	}
	return out
}

// resultsOf lists observations for a prompt.
func resultsOf(obs []Observation) []wire.Result {
	out := make([]wire.Result, len(obs))
	for i, o := range obs {
		out[i] = wire.Result{Source: o.Source, Content: o.Content, Err: o.Err}
	}
	return out
}

// toolNames lists the names of tools for an error message.
func toolNames(tools []model.ToolDef) string {
	if len(tools) == 0 {
		return "none"
	}
	s := make([]string, len(tools))
	for i, t := range tools {
		s[i] = t.Name
	}
	return strings.Join(s, ", ")
}

// withSystem puts a step's system prompt before the caller's options, so a
// caller's agent.WithSystem replaces it.
func withSystem(system string, opts []agent.Option) []agent.Option {
	return append([]agent.Option{agent.WithSystem(system)}, opts...)
}

// requiredText returns an [agent.FieldError] for field when value is
// blank: field is required when the reply says what when says, such as
// "verdict is FIXED: give the corrected output". It returns nil when value
// is not blank.
func requiredText(field, value, when string) error {
	if strings.TrimSpace(value) != "" {
		return nil
	}
	return &agent.FieldError{Field: field, Message: field + " is required when " + when}
}
