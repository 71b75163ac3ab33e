package operator

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// ContextFunc gives an operator called as a tool the context of the call:
// the request's MCP session (Context.Tools), messenger, turn and assembled
// context. The tool sets Query and Params from the model's arguments on a
// copy of what it returns. A nil ContextFunc, or a nil *Context, means an
// empty context.
type ContextFunc func(ctx context.Context) *Context

// operatorArgs are the arguments a model passes to an operator called as a
// tool.
type operatorArgs struct {
	Query  string         `json:"query" jsonschema:"description=What the operator works on: the question or text to handle"`
	Params map[string]any `json:"params,omitempty" jsonschema:"description=Named inputs of the operator when it takes any"`
}

// Tool returns the named operator as a [Tool], so that a model can call it
// natively. Its definition has the operator's description and takes a
// query (Context.Query) and optional params (Context.Params); its name is
// the operator's with each '.' replaced by '_', as providers accept no dots.
//
// A call runs the operator through [Registry.Execute], with its retries and
// fallback, in the context env returns. The result's text is the
// operator's output as [Result.Text] renders it, followed by its content
// items (images as binary parts); an output that is not a string is also
// the result's Structured value. An operator's failure is returned as
// Call's error; a question that paused a durable run matches [ErrPaused].
//
// Tool fails with an [*UnknownError] when name is not registered.
func (r *Registry) Tool(name string, env ContextFunc) (Tool, error) {
	meta, ok := r.Lookup(name)
	if !ok {
		return nil, &UnknownError{Name: name, Registered: r.Names()}
	}
	return FuncTool(strings.ReplaceAll(name, ".", "_"), meta.Description,
		func(ctx context.Context, in operatorArgs) (*model.ToolResult, error) {
			oc := &Context{}
			if env != nil {
				if base := env(ctx); base != nil {
					c := *base
					oc = &c
				}
			}
			oc.Query, oc.Params = in.Query, in.Params
			res, _, err := r.Execute(ctx, name, oc)
			if err != nil {
				return nil, err
			}
			return operatorResult(res), nil
		})
}

// Tools returns the named operators as tools, in the order named; with no
// names, every registered operator, sorted by name. See [Registry.Tool].
func (r *Registry) Tools(env ContextFunc, names ...string) ([]Tool, error) {
	if len(names) == 0 {
		names = r.Names()
	}
	tools := make([]Tool, 0, len(names))
	for _, n := range names {
		t, err := r.Tool(n, env)
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// operatorResult turns an operator's result into a tool result.
func operatorResult(res *Result) *model.ToolResult {
	out := &model.ToolResult{}
	if text := res.Text(); text != "" {
		out.Content = append(out.Content, model.TextPart(text))
	}
	for _, c := range res.Contents {
		out.Content = append(out.Content, c.Part())
	}
	if _, isText := res.Output.(string); !isText && res.Output != nil {
		if raw, err := json.Marshal(res.Output); err == nil {
			out.Structured = raw
		}
	}
	return out
}
