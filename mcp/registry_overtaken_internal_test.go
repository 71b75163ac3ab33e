package mcp

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestRegistryListingOvertakenStaysStale: a tools list_changed notice
// that arrives after the server answered a listing, before the registry
// takes the listing in, leaves the server's tools stale: the listing may
// predate the change, and the next lookup lists again.
func TestRegistryListingOvertakenStaysStale(t *testing.T) {
	var r *Registry
	var notices atomic.Int32
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(func(context.Context, any, *mcpgo.ListToolsRequest, *mcpgo.ListToolsResult) {
		if notices.Add(1) == 1 {
			r.invalidate("demo") // as the transport's reader would on a notice
		}
	})
	srv := server.NewMCPServer("demo", "1.0.0", server.WithHooks(hooks))
	srv.AddTool(mcpgo.NewTool("echo"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("ok"), nil
	})
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "demo", InProcess: srv}); err != nil {
		t.Fatal(err)
	}
	r, err = NewRegistry(RegistryConfig{Manager: m, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	stale := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.servers["demo"] != nil && r.servers["demo"].stale
	}
	if !stale() {
		t.Fatal("a listing overtaken by a list_changed notice left the tools fresh")
	}
	if _, err := r.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stale() || notices.Load() != 2 {
		t.Errorf("after the next lookup: stale %v, %d listings; want fresh after listing again", stale(), notices.Load())
	}
}
