package mcp

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// TestRegistryLoadAfterAnotherRefresh: a caller that found the index old
// and reaches the refresh only after another caller's refresh ended does
// not list the servers again (20 concurrent first loads listed twice
// under load).
func TestRegistryLoadAfterAnotherRefresh(t *testing.T) {
	ts := testserver.New("demo")
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "demo", InProcess: ts.MCP}); err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(RegistryConfig{Manager: m, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	var once sync.Once
	r.staleHook = func() {
		// Another caller's whole refresh runs between this caller's
		// check and its refresh.
		once.Do(func() {
			if err := r.Refresh(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := r.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ts.Lists.Load(); got != 1 {
		t.Fatalf("the server was listed %d times, want 1", got)
	}
	// Refresh itself still lists again.
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ts.Lists.Load(); got != 2 {
		t.Fatalf("after Refresh the server was listed %d times in all, want 2", got)
	}
}
