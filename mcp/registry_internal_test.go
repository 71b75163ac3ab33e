package mcp

import (
	"context"
	"testing"
)

// TestRegistryCloseReleasesHook: each registry registers a tools-changed
// hook on its manager; Close removes it, so registries made and closed
// over one manager do not accumulate there, and the open ones keep
// hearing list changes.
func TestRegistryCloseReleasesHook(t *testing.T) {
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	open, err := NewRegistry(RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	for i := range 1000 {
		r, err := NewRegistry(RegistryConfig{Manager: m})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if i%2 == 0 {
			r.Close() // idempotent: removes nothing else
		}
	}
	m.mu.Lock()
	n := len(m.hooks)
	m.mu.Unlock()
	if n != 1 {
		t.Fatalf("manager holds %d tools-changed hooks after 1000 registries were closed, want 1 (the open registry's)", n)
	}

	open.mu.Lock()
	open.servers["demo"] = &serverTools{}
	open.mu.Unlock()
	m.toolsChanged("demo")
	open.mu.Lock()
	stale := open.servers["demo"].stale
	open.mu.Unlock()
	if !stale {
		t.Error("the open registry did not hear the list change after the others were closed")
	}
}
