package operator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
)

// qualifiedCatalog lists "search" and resolves it, or "kb__search", as
// an MCP registry does for a tool qualified by its server.
type qualifiedCatalog struct{}

func (qualifiedCatalog) ToolSummaries(context.Context) ([]model.ToolSummary, error) {
	return []model.ToolSummary{{Name: "search", Description: "Searches"}}, nil
}

func (qualifiedCatalog) ToolSchema(_ context.Context, name string) (string, error) {
	if name == "search" || name == "kb__search" {
		return operator.SchemaText(name, "Searches", nil), nil
	}
	return "", fmt.Errorf("%w: %q", memory.ErrNotFound, name)
}

// A name the catalog resolves without listing it (a tool qualified by its
// server) is an MCP tool for Lookup and ToolSchema; an unknown one is
// still unknown.
func TestLookupQualifiedMCPName(t *testing.T) {
	p := operator.NewProvider(operator.ProviderConfig{MCP: qualifiedCatalog{}})
	for _, name := range []string{"search", "kb__search"} {
		if src, err := p.Lookup(t.Context(), name); err != nil || src != operator.SourceMCP {
			t.Errorf("Lookup(%q) = %q, %v; want mcp", name, src, err)
		}
		if _, err := p.ToolSchema(t.Context(), name); err != nil {
			t.Errorf("ToolSchema(%q): %v", name, err)
		}
	}
	var unknown *operator.UnknownError
	if _, err := p.Lookup(t.Context(), "other__search"); !errors.As(err, &unknown) || unknown.Kind != "tool" {
		t.Errorf("Lookup(other__search) = %v, want an UnknownError of kind tool", err)
	}
}

// availabilityCatalog lists a tool that can be called and one that
// cannot (its server down, or refused by the registry).
type availabilityCatalog struct{ qualifiedCatalog }

func (availabilityCatalog) ToolSummaries(context.Context) ([]model.ToolSummary, error) {
	return []model.ToolSummary{{Name: "search", Description: "Searches", Available: true},
		{Name: "huge", Description: "Refused for its schema", Available: false}}, nil
}

// The catalogue text leaves out tools not available now: the model is not
// offered what it cannot call.
func TestTextLeavesOutUnavailable(t *testing.T) {
	p := operator.NewProvider(operator.ProviderConfig{MCP: availabilityCatalog{}})
	text, err := p.Text(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "MCP tools:\n- search: Searches\n"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
}
