package chatbot_test

import (
	"context"
	"iter"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/mcp"
)

// TestFirstEventBeforeTheTurnStarts sends a second message to a
// conversation whose first turn is stuck in a tool call: the second turn
// waits for the conversation, but its client gets the turn's first event
// (supervisor.thinking) at once, over HTTP, instead of after the wait.
func TestFirstEventBeforeTheTurnStarts(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := server.NewMCPServer("slow-web", "1.0.0", server.WithToolCapabilities(false))
	slow.AddTool(mcpgo.NewTool("web_search", mcpgo.WithDescription("Searches the web"), mcpgo.WithString("query", mcpgo.Required())),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			close(started)
			select {
			case <-release:
				return mcpgo.NewToolResultText("Northwind Metrics shipped a release."), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MCPServers: []mcp.Server{{Name: "web", InProcess: slow}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	post := func(msg string) *http.Response {
		t.Helper()
		body := strings.NewReader(`{"conversation_id": "conv-busy", "message": "` + msg + `"}`)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/chat", body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	firstDone := make(chan []event.Type)
	go func() {
		resp := post("What's the latest news about Northwind Metrics?")
		defer resp.Body.Close()
		var types []event.Type
		for ev, err := range sse.ReadEvents(resp.Body) {
			if err != nil {
				break
			}
			types = append(types, ev.Type)
		}
		firstDone <- types
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the first turn's tool never started")
	}

	resp := post("Hello!")
	defer resp.Body.Close()
	next, stop := iter.Pull2(sse.ReadEvents(resp.Body))
	defer stop()
	ev, err, ok := next()
	if !ok || err != nil || ev.Type != event.TypeSupervisorThinking {
		t.Fatalf("first event of the waiting turn = %v, %v, %v; want supervisor.thinking", ev.Type, err, ok)
	}
	select {
	case types := <-firstDone:
		t.Fatalf("the first turn ended (%v) before the second turn's first event was checked", types)
	default: // the first turn still holds the conversation
	}
	close(release)
	var rest []event.Type
	for {
		ev, err, ok := next()
		if !ok || err != nil {
			break
		}
		rest = append(rest, ev.Type)
	}
	if len(rest) == 0 || rest[len(rest)-1] != event.TypeResponseDone || slices.Contains(rest, event.TypeSupervisorThinking) {
		t.Fatalf("the second turn's later events = %v; want one thinking event in all, ending with response.done", rest)
	}
	if types := <-firstDone; len(types) == 0 || types[len(types)-1] != event.TypeResponseDone {
		t.Fatalf("the first turn's events = %v", types)
	}
}
