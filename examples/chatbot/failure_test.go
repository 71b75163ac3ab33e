package chatbot_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// failing wraps a tool so that every call fails inside the server.
func failing(string, server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return nil, errors.New("index unavailable")
	}
}

// TestFailingServersGracefulAnswer: when the MCP servers fail, the
// supervisor tries each search once, and the user gets a graceful answer
// naming no internals, within the iteration limit.
func TestFailingServersGracefulAnswer(t *testing.T) {
	tests := []struct {
		name          string
		maxIterations int
		decisions     []string
		tools         []string
	}{
		{"default limit", 0, []string{"call_tool", "call_tool", "answer"}, []string{"search_knowledge", "web_search"}},
		// The second decision is the last one allowed: it must answer.
		{"need_more stops at the limit", 2, []string{"call_tool", "answer"}, []string{"search_knowledge"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers := bundledWith(t, failing, "search_knowledge", "web_search")
			_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MCPServers: servers, MaxIterations: tt.maxIterations})
			tr := chat(t, srv, "", "How much does the Team plan cost?")
			if diff := cmp.Diff(tt.decisions, tr.decisions()); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tools, tr.tools()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			var toolErrors int
			for _, ev := range tr.events {
				if _, ok := ev.Payload.(chatevent.ToolError); ok {
					toolErrors++
				}
			}
			if toolErrors != len(tt.tools) {
				t.Errorf("%d tool.error events, want %d", toolErrors, len(tt.tools))
			}
			answer := tr.answer()
			if !strings.HasPrefix(answer, "I'm sorry, I couldn't find an answer") || strings.Contains(answer, "index unavailable") {
				t.Errorf("answer is not a graceful failure:\n%s", answer)
			}
			if tr.last() != chatevent.TypeResponseDone {
				t.Errorf("last event %s, want response.done", tr.last())
			}
		})
	}
}
