package operator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/internal/mcpserver"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/google/go-cmp/cmp"
)

// Local tools, operators and MCP tools in one catalogue, looked up in that
// order and executed through one path.
func TestProviderWithMCP(t *testing.T) {
	ctx := context.Background()
	srv := mcpserver.New()
	session, err := mcpserver.Connect(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	ops := operators(t)
	// An operator named like an MCP tool shadows it.
	err = ops.Register(operator.Metadata{Name: "web_search", Description: "Searches the web through the operator", Type: operator.MCPBacked},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				r, err := oc.Tools.CallTool(ctx, "web_search", map[string]any{"query": oc.Query})
				if err != nil {
					return nil, err
				}
				return &operator.Result{Output: "via operator: " + r.Text()}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	local := operator.NewLocalRegistry()
	registerLocals(t, local, "A 1")
	p := operator.NewProvider(operator.ProviderConfig{Local: local, Operators: ops, MCP: session})

	sums, err := p.ToolSummaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sums {
		names = append(names, s.Source+":"+s.Name)
	}
	want := []string{"local:about", "local:list_tools",
		"operator:shout", "operator:split", "operator:web_search", "mcp:rag_search", "mcp:reindex", "mcp:run_python"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("catalogue (-want +got):\n%s", diff)
	}
	for name, want := range map[string]operator.Source{"about": operator.SourceLocal, "web_search": operator.SourceOperator, "rag_search": operator.SourceMCP} {
		if got, err := p.Lookup(ctx, name); err != nil || got != want {
			t.Errorf("Lookup(%s) = %v, %v; want %v", name, got, err, want)
		}
	}

	env := operator.Env{Tools: session}
	res, err := p.Execute(ctx, "rag_search", map[string]any{"query": "support"}, env)
	if err != nil || res.Text() != mcpserver.Docs["support"] || res.Tool != "rag_search" {
		t.Errorf("MCP tool: %+v, %v", res, err)
	}
	res, err = p.Execute(ctx, "web_search", map[string]any{"query": "pricing"}, env)
	if err != nil || res.Text() != "via operator: "+mcpserver.Web["pricing"] {
		t.Errorf("shadowing operator: %+v, %v", res, err)
	}
	if _, err := p.Execute(ctx, "rag_search", nil, operator.Env{}); err == nil || !strings.Contains(err.Error(), "set Env.Tools") {
		t.Errorf("MCP tool without a session: %v", err)
	}
	schema, err := p.ToolSchema(ctx, "rag_search")
	if err != nil || !strings.Contains(schema, `"query"`) {
		t.Errorf("MCP schema: %s, %v", schema, err)
	}
	lt, err := p.Execute(ctx, "list_tools", nil, env)
	if err != nil || !strings.Contains(lt.Text(), "MCP tools:\n- rag_search: Search internal documents") {
		t.Errorf("list_tools: %v, %v", lt.Text(), err)
	}
}
