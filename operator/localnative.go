package operator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/model"
)

// LocalCallFunc gives a local tool called natively by a model what a [LocalCall]
// carries besides its arguments: the provider, messenger and turn of the
// request. It returns the LocalCall to start from; its Args are replaced by the
// model's.
type LocalCallFunc func(ctx context.Context) LocalCall

// AsTool returns l as an [Tool], so that a model calls it with
// native tool calling. Its definition is l's LocalInfo: name, description and
// InputSchema as the parameters (an empty object schema when InputSchema is
// nil). A call's JSON arguments are checked against InputSchema and decoded
// into LocalCall.Args; arguments that are not a JSON object or break the schema
// come back as a result with IsError set naming the fields, and l does not
// run. l's result is returned as [toolresult.Result.ModelResult] converts
// it; its error is LocalCall's error. base, when not nil, gives each call its
// provider, messenger and turn.
//
// AsTool fails when LocalInfo's name is not one providers accept
// ([CheckToolName]), its description is empty or its InputSchema
// is not an object schema.
func AsTool(l Local, base LocalCallFunc) (Tool, error) {
	info := l.Info()
	schema := info.InputSchema
	if schema == nil {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	t, err := FuncTool(info.Name, info.Description,
		func(ctx context.Context, args map[string]any) (*model.ToolResult, error) {
			var c LocalCall
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
		}, WithSchema(schema))
	if err != nil {
		return nil, fmt.Errorf("operator: %q as a native tool: %w", info.Name, err)
	}
	return t, nil
}

// Tools returns every tool of r as an [Tool] (see [AsTool]),
// sorted by name.
func (r *LocalRegistry) Tools(base LocalCallFunc) ([]Tool, error) {
	infos := r.Infos()
	out := make([]Tool, 0, len(infos))
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
