package serve_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/serve"
	"github.com/agentgraph/agentgraph/mcp"
)

// callSpam calls the tool spam through m and returns the progress
// notifications it received.
func callSpam(t *testing.T, m *mcp.Manager) int64 {
	t.Helper()
	var progress atomic.Int64
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) { progress.Add(1) }})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, mcp.ToolCall{Server: "t", Name: "spam", Arguments: map[string]any{"n": 3, "size": 8}})
	s.Close()
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if res.IsError || res.Text() != "done" {
		t.Fatalf("CallTool: %+v", res)
	}
	return progress.Load()
}

// The chatbot's MCP client works against the handler, and ends its session
// when it closes.
func TestChatbotClient(t *testing.T) {
	for _, noListen := range []bool{false, true} {
		ts := newTestServer(t, serve.Limits{})
		m, err := mcp.NewManager(mcp.ManagerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(mcp.Server{Name: "t", URL: ts.url, NoListen: noListen}); err != nil {
			t.Fatal(err)
		}
		// With a listening stream open, mcp-go v1.2.1's server may send a
		// call's progress on that stream instead of the call's, where it
		// can arrive after the result; the progress is checked without.
		if got := callSpam(t, m); noListen && got != 3 {
			t.Errorf("NoListen %v: %d progress notifications, want 3", noListen, got)
		}
		if n := ts.h.Sessions(); n != 1 {
			t.Errorf("NoListen %v: %d sessions live while the client is connected, want 1", noListen, n)
		}
		if err := m.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := ts.h.Sessions(); n != 0 {
			t.Errorf("NoListen %v: %d sessions live after the client shut down, want 0", noListen, n)
		}
	}
}

// A client whose session expired while it was idle calls on.
func TestChatbotClientAfterExpiry(t *testing.T) {
	ts := newTestServer(t, serve.Limits{SessionIdleTTL: time.Second})
	m, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(mcp.Server{Name: "t", URL: ts.url, NoListen: true}); err != nil {
		t.Fatal(err)
	}
	callSpam(t, m)
	deadline := time.Now().Add(30 * time.Second)
	for ts.h.Sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session is still live 30s after its SessionIdleTTL of 1s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := callSpam(t, m); got != 3 {
		t.Errorf("after expiry: %d progress notifications, want 3", got)
	}
}

// The chatbot's MCP client calls on across the ends of sessions that
// served their MaxSessionRequests.
func TestChatbotClientAcrossSessionBudget(t *testing.T) {
	ts := newTestServer(t, serve.Limits{MaxSessionRequests: 3})
	m, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(mcp.Server{Name: "t", URL: ts.url}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		callSpam(t, m)
	}
	if n := ts.h.Sessions(); n > 1 {
		t.Errorf("%d sessions live, want at most 1", n)
	}
}
