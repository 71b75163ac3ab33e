package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"strings"
)

// Operator is a unit of work an agent or a workflow step invokes by
// name. Execute must honour ctx and treat oc as read-only, except through
// its Messenger. A new Operator is created for every use (see [Factory]),
// so an implementation may keep per-call state.
type Operator interface {
	Execute(ctx context.Context, oc *Context) (*Result, error)
}

// Func adapts a function to the [Operator] interface.
type Func func(ctx context.Context, oc *Context) (*Result, error)

// Execute calls f.
func (f Func) Execute(ctx context.Context, oc *Context) (*Result, error) { return f(ctx, oc) }

// Type says what an operator depends on.
type Type string

// Operator types.
const (
	// PureLLM operators only call a language model; they need no MCP session.
	PureLLM Type = "pure_llm"
	// MCPBacked operators wrap MCP tools and need an MCP session.
	MCPBacked Type = "mcp_backed"
	// Hybrid operators reason with a model and act through MCP tools.
	Hybrid Type = "hybrid"
)

// NeedsLLM reports whether operators of type t call a language model.
func (t Type) NeedsLLM() bool { return t == PureLLM || t == Hybrid }

// NeedsMCP reports whether operators of type t need an MCP session.
func (t Type) NeedsMCP() bool { return t == MCPBacked || t == Hybrid }

// OutputType is a kind of data an operator can return.
type OutputType string

// Output types.
const (
	OutputText   OutputType = "text"
	OutputHTML   OutputType = "html"
	OutputImage  OutputType = "image"
	OutputWidget OutputType = "widget"
	OutputJSON   OutputType = "json"
)

// Capabilities declares how an operator may talk to the user while it
// runs. The [Messenger] refuses a message the capabilities do not allow,
// so the metadata the agent reads is the truth.
type Capabilities struct {
	// OutputTypes lists the data types the operator returns. Empty means
	// text only.
	OutputTypes []OutputType `json:"output_types,omitempty"`
	// Progress: the operator sends progress updates.
	Progress bool `json:"progress,omitempty"`
	// Elicitation: the operator asks the user (confirm, choose).
	Elicitation bool `json:"elicitation,omitempty"`
	// DirectResponse: the operator may answer the user itself, bypassing
	// the writer.
	DirectResponse bool `json:"direct_response,omitempty"`
	// Streaming: the operator streams its content in chunks.
	Streaming bool `json:"streaming,omitempty"`
}

// Outputs reports whether t is among the declared output types (text when
// none are declared).
func (c Capabilities) Outputs(t OutputType) bool {
	if len(c.OutputTypes) == 0 {
		return t == OutputText
	}
	for _, o := range c.OutputTypes {
		if o == t {
			return true
		}
	}
	return false
}

// Metadata describes an operator to the registry, the agent's prompt
// and the runtime.
type Metadata struct {
	// Name is the operator's unique name in its registry, as the model
	// writes it ("query_rewriter"). Required: letters, digits, '_', '-', '.'.
	Name string `json:"name"`
	// Description says in a sentence what the operator does; the agent
	// reads it to choose. Required.
	Description string `json:"description"`
	// Type is PureLLM, MCPBacked or Hybrid. Required.
	Type Type `json:"type"`
	// Model is the model alias the operator uses ("fast", "smart"), for
	// PureLLM and Hybrid operators; [Deps.Models] resolves it.
	Model string `json:"model,omitempty"`
	// MCPTools lists the MCP tools the operator may call.
	MCPTools []string `json:"mcp_tools,omitempty"`
	// ContextRequirements lists what the context assembler must fetch for
	// the operator, in the memory package's requirement syntax ("query",
	// "tools.schema(rag_search)").
	ContextRequirements []string `json:"context_requirements,omitempty"`
	// Fallback names the operator that runs once, with the same context,
	// when this one fails. Empty means none.
	Fallback string `json:"fallback,omitempty"`
	// MaxRetries is how many times a failed run is repeated before the
	// fallback is tried. Zero means no retry; errors marked [Permanent] and
	// cancellations are never retried.
	MaxRetries int `json:"max_retries,omitempty"`
	// Capabilities declares the operator's messaging.
	Capabilities Capabilities `json:"capabilities"`
}

// Validate checks m and returns an error naming the first bad field.
func (m Metadata) Validate() error {
	switch {
	case m.Name == "":
		return &MetadataError{Field: "Name", Reason: "is empty; give the operator a unique name"}
	case strings.IndexFunc(m.Name, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0:
		return &MetadataError{Operator: m.Name, Field: "Name", Reason: "may hold only letters, digits, '_', '-' and '.'"}
	case m.Description == "":
		return &MetadataError{Operator: m.Name, Field: "Description", Reason: "is empty; say in a sentence what the operator does"}
	case m.Type != PureLLM && m.Type != MCPBacked && m.Type != Hybrid:
		return &MetadataError{Operator: m.Name, Field: "Type", Reason: fmt.Sprintf("%q is not one of pure_llm, mcp_backed, hybrid", m.Type)}
	case m.Fallback == m.Name:
		return &MetadataError{Operator: m.Name, Field: "Fallback", Reason: "names the operator itself"}
	case m.MaxRetries < 0:
		return &MetadataError{Operator: m.Name, Field: "MaxRetries", Reason: "is negative"}
	}
	return nil
}

// Result is what an operator produces.
type Result struct {
	// Output is the operator's output: a string, or a map of named fields
	// that workflow templates address as {{step_1.field}}.
	Output any `json:"output"`
	// Contents holds multi-modal items (images, widgets) passed through from
	// tools or produced by the operator.
	Contents []toolresult.Content `json:"contents,omitempty"`
	// Direct is true when the operator already answered the user with a
	// direct response, so the writer should not write another.
	// [Registry.Execute] sets it when the operator's [Messenger] sent one.
	Direct bool `json:"direct,omitempty"`
	// Metadata holds optional details (sources, counts).
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Text renders the output for a prompt: a string as is, anything else as
// JSON.
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	return Text(r.Output)
}

// Text renders a value for a prompt or a template: nil as "", a string as
// is, a [fmt.Stringer] by its String method, anything else as JSON (or with
// fmt when JSON cannot encode it). [Result.Text] renders an output with it.
func Text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
