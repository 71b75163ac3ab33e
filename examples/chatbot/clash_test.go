package chatbot_test

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
)

// An MCP server of the user's that offers tools named like the bundled
// ones (search_knowledge, web_search) makes the bare names ambiguous; the
// built-in operators call the bundled servers' tools by their qualified
// names, so the comparison workflow's rag_retriever and web_searcher
// still find the bundled knowledge and web pages, every step succeeds,
// and the answer quotes both.
func TestBundledToolsSurviveANameClash(t *testing.T) {
	acme := server.NewMCPServer("acme", "1.0.0", server.WithToolCapabilities(false))
	for _, name := range []string{"search_knowledge", "web_search"} {
		acme.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("Acme's own "+name), mcpgo.WithString("query", mcpgo.Required())),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				return mcpgo.NewToolResultText("acme: no passages"), nil
			})
	}
	_, srv := newServer(t, chatbot.Config{MCPServers: []mcp.Server{{Name: "acme", InProcess: acme}}})
	tr := chat(t, srv, "conv-clash", "Compare our pricing to competitors")
	if got := tr.decisions(); len(got) == 0 || got[0] != "workflow" {
		t.Fatalf("decisions %v, want a workflow first", got)
	}
	steps := 0
	for _, ev := range tr.events {
		switch p := ev.Payload.(type) {
		case chatevent.WorkflowStepComplete:
			steps++
			if p.Status != "" {
				t.Errorf("workflow step %d: %s: %s", p.Step, p.Status, p.Error)
			}
		case chatevent.ToolError:
			t.Errorf("tool %s failed: %s", p.Tool, p.Error)
		}
	}
	if steps != 4 {
		t.Errorf("%d workflow steps completed, want 4", steps)
	}
	for _, want := range []string{"$49", "Northwind"} {
		if !strings.Contains(tr.answer(), want) {
			t.Errorf("answer lacks %q:\n%s", want, tr.answer())
		}
	}
}
