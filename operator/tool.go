package operator

import (
	"context"
	"encoding/json"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Tool is what a model calls: a typed Go function, a tool of an MCP server or
// a model-backed operator, described to the model by its definition.
//
// Call runs the tool with the arguments the model wrote, which may be
// invalid: a tool validates them and reports bad arguments as a result with
// IsError set, in words the model can act on. An error returned by Call means
// the tool could not run; a caller that runs tools for a model (such as a
// tool-calling agent) reports it to the model as a failed result too, except
// for ctx's own cancellation, which ends the run. Call must honour ctx.
// The caller sets the result's CallID and Name.
type Tool interface {
	// Definition describes the tool to a model. It returns the same value
	// every time.
	Definition() model.ToolDef
	// Call runs the tool with the model's JSON arguments.
	Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error)
}
