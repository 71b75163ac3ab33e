package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

// CallFunc gives a local tool called natively by a model what a [Call]
// carries besides its arguments: the provider, messenger and turn of the
// request. It returns the Call to start from; its Args are replaced by the
// model's.
type CallFunc func(ctx context.Context) Call

// AsTool returns l as an [operator.Tool], so that a model calls it with
// native tool calling. Its definition is l's Info: name, description and
// InputSchema as the parameters (an empty object schema when InputSchema is
// nil). A call's JSON arguments are checked against InputSchema and decoded
// into Call.Args; arguments that are not a JSON object or break the schema
// come back as a result with IsError set naming the fields, and l does not
// run. l's result is returned as [operator.ToolResult.ModelResult] converts
// it; its error is Call's error. base, when not nil, gives each call its
// provider, messenger and turn.
//
// AsTool fails when Info's name is not one providers accept
// ([operator.CheckToolName]), its description is empty or its InputSchema
// is not an object schema.
func AsTool(l Local, base CallFunc) (operator.Tool, error) {
	info := l.Info()
	schema := info.InputSchema
	if schema == nil {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	t, err := operator.FuncTool(info.Name, info.Description,
		func(ctx context.Context, args map[string]any) (*model.ToolResult, error) {
			var c Call
			if base != nil {
				c = base(ctx)
			}
			c.Args = args
			res, err := l.Execute(ctx, c)
			if err != nil {
				return nil, err
			}
			out := res.ModelResult()
			out.Name = ""
			return out, nil
		}, operator.WithSchema(schema))
	if err != nil {
		return nil, fmt.Errorf("tool: %q as a native tool: %w", info.Name, err)
	}
	return t, nil
}

// Tools returns every tool of r as an [operator.Tool] (see [AsTool]),
// sorted by name.
func (r *Registry) Tools(base CallFunc) ([]operator.Tool, error) {
	infos := r.Infos()
	out := make([]operator.Tool, 0, len(infos))
	for _, info := range infos {
		l, ok := r.Lookup(info.Name)
		if !ok {
			continue // removed meanwhile
		}
		t, err := AsTool(l, base)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
