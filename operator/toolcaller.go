package operator

import (
	"context"

	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// ToolCaller calls tools by name. A request's MCP session is one, through
// mcptool.Session; so is the unified tool provider ([Provider]).
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error)
}

// ToolCallerFunc adapts a function to the [ToolCaller] interface.
type ToolCallerFunc func(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error)

// CallTool calls f.
func (f ToolCallerFunc) CallTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
	return f(ctx, name, args)
}
