package chatbot

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/operator"
)

// The chatbot's local tools describe it from its about and list what the
// provider and the operator registry hold.
func TestLocalTools(t *testing.T) {
	ops := operator.NewRegistry(operator.Deps{})
	err := ops.Register(operator.Metadata{Name: "shout", Description: "Shouts the query", Type: operator.PureLLM, Model: "haiku", MCPTools: []string{"echo"}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				return &operator.Result{Output: strings.ToUpper(oc.Query)}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	local := operator.NewLocalRegistry()
	err = registerLocalTools(local, about{Name: "Acme Assistant", Version: "1.4.0", Description: "Answers questions about Acme.",
		ReleaseNotes: []string{"Web search"}, Capabilities: []string{"search documents"}, Limitations: []string{"send email"}}, ops)
	if err != nil {
		t.Fatal(err)
	}
	p := operator.NewProvider(operator.ProviderConfig{Local: local, Operators: ops})
	tests := []struct{ name, want string }{
		{"self_info", "Acme Assistant 1.4.0\nAnswers questions about Acme.\nRelease notes:\n- Web search"},
		{"list_capabilities", "I can:\n- search documents\nI cannot:\n- send email"},
		{"list_operators", "- shout (pure_llm, model haiku, tools echo): Shouts the query"},
		{"list_tools", "Local tools (instant):\n- list_capabilities: Lists what the agent can and cannot do\n- list_operators: Lists the registered operators with their type, model and tools\n- list_tools: Lists every tool the agent can use: local tools, operators and MCP tools\n- self_info: Tells the agent's name, version, purpose and recent release notes\n\nOperators:\n- shout: Shouts the query"},
	}
	for _, tt := range tests {
		res, err := p.Execute(context.Background(), tt.name, nil, operator.Env{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, res.Text()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if res.Structured == nil || !p.IsLocal(tt.name) {
			t.Errorf("%s: structured %v, local %v; want both", tt.name, res.Structured, p.IsLocal(tt.name))
		}
	}
	empty := operator.NewLocalRegistry()
	if err := registerLocalTools(empty, about{Name: "A"}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := operator.NewProvider(operator.ProviderConfig{Local: empty}).Execute(context.Background(), "list_operators", nil, operator.Env{})
	if err != nil || res.Text() != "No operators are registered." {
		t.Errorf("list_operators without operators: %q, %v", res.Text(), err)
	}
}
