package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

func TestProgressTokensExpire(t *testing.T) {
	m, err := NewManager(ManagerConfig{ProgressLinger: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "demo", InProcess: testserver.New("demo").MCP}); err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(Callbacks{Progress: func(Progress) {}})
	defer s.Close()
	for range 3 {
		if _, err := s.CallTool(context.Background(), ToolCall{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	routed := func() int {
		m.routesMu.RLock()
		defer m.routesMu.RUnlock()
		return len(m.routes)
	}
	if n := routed(); n != 3 {
		t.Fatalf("%d tokens routed right after the calls, want 3 (they linger)", n)
	}
	deadline := time.Now().Add(2 * time.Second)
	for routed() > 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if n := routed(); n != 0 {
		t.Fatalf("%d tokens still routed after the linger period", n)
	}
}
