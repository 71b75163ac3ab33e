package mcp

import (
	"context"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
)

// A tool's listed output schema goes stale when the server says its tools
// changed, or after a new connection (the server may have been replaced):
// results are then not checked against it until the next listing, and a
// listing that a notice overtook keeps no schemas.
func TestOutputSchemasGoStale(t *testing.T) {
	srv := server.NewMCPServer("weather", "1.0.0")
	srv.AddTool(mcpgo.NewTool("temp", mcpgo.WithRawOutputSchema(json.RawMessage(`{"type":"object","required":["celsius"]}`))),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{StructuredContent: map[string]any{"kelvin": 294.6}}, nil
		})
	m, err := NewManager(ManagerConfig{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	if err := m.Add(Server{Name: "weather", InProcess: srv}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := m.conn("weather")
	if err != nil {
		t.Fatal(err)
	}
	list := func() {
		t.Helper()
		if _, err := m.listTools(ctx, "weather"); err != nil {
			t.Fatal(err)
		}
		if c.output("temp") == nil {
			t.Fatal("a listing kept no output schema")
		}
	}
	list()
	c.notify(nil, mcpgo.JSONRPCNotification{Notification: mcpgo.Notification{Method: string(mcpgo.MethodNotificationToolsListChanged)}})
	if c.output("temp") != nil {
		t.Error("the output schema is still used after a tools list_changed notice")
	}
	s := m.NewSession(Callbacks{})
	defer s.Close()
	if res, err := s.CallTool(ctx, ToolCall{Server: "weather", Name: "temp"}); err != nil || res.IsError {
		t.Errorf("call after the notice: %v, %+v; want the result unchecked", err, res)
	}

	list()
	c.mu.Lock()
	w := c.w
	c.mu.Unlock()
	c.drop(w)
	if _, err := c.client(ctx); err != nil {
		t.Fatal(err)
	}
	if c.output("temp") != nil {
		t.Error("the output schema is still used after a new connection")
	}

	list()
	gen := c.listingGen()
	c.toolsStale()
	c.setTools([]mcpgo.Tool{mcpgo.NewTool("temp", mcpgo.WithRawOutputSchema(json.RawMessage(`{"type":"object"}`)))}, gen)
	if c.output("temp") != nil {
		t.Error("a listing overtaken by a notice kept its output schemas")
	}
}
