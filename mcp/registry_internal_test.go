package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	gocmp "github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
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

// similar's work is bounded: a name longer than every known one is not
// compared at all, and a near miss against 100,000 names fills at most
// suggestWork cells of edit-distance tables.
func TestSimilarBounded(t *testing.T) {
	names := make([]string, 100000)
	longest := 0
	for i := range names {
		names[i] = fmt.Sprintf("tool_%06d", i)
		longest = max(longest, len(names[i]))
	}
	ctx := context.Background()
	if out, work := similar(ctx, strings.Repeat("x", 10<<10), names, longest); len(out) != 0 || work != 0 {
		t.Errorf("a 10 KiB name: suggestions %q after %d cells, want none after none", out, work)
	}
	if out, work := similar(ctx, strings.Repeat("tool_", 40), names, 300); work != 0 {
		t.Errorf("a name over suggestMaxLen: suggestions %q after %d cells, want none after none", out, work)
	}
	out, work := similar(ctx, "tool_00001x", names, longest)
	if work > suggestWork {
		t.Errorf("a near miss filled %d cells, over suggestWork (%d)", work, suggestWork)
	}
	if len(out) == 0 || len(out) > 3 {
		t.Errorf("a near miss: suggestions %q, want one to three", out)
	}
	// Close names are still found when the work allows.
	if out, _ := similar(ctx, "serch", []string{"search", "fetch", "lookup"}, 6); len(out) == 0 || out[0] != "search" {
		t.Errorf("serch: suggestions %q, want search first", out)
	}
}

// lockProbe is a context whose Err records whether the registry's lock
// was free when it was asked.
type lockProbe struct {
	context.Context
	r        *Registry
	unlocked atomic.Bool
}

func (p *lockProbe) Err() error {
	if p.r.mu.TryLock() {
		p.r.mu.Unlock()
		p.unlocked.Store(true)
	}
	return p.Context.Err()
}

// Resolve computes the suggestions for an unknown name outside the
// registry's lock, checking its context as it goes.
func TestResolveSuggestsOutsideLock(t *testing.T) {
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "demo", Command: "unused"}); err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(RegistryConfig{Manager: m, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := &serverTools{}
	for i := range 1000 {
		st.tools = append(st.tools, model.ToolSummary{Name: fmt.Sprintf("tool_%04d", i), Server: "demo", Tool: fmt.Sprintf("tool_%04d", i)})
	}
	r.mu.Lock()
	r.servers["demo"] = st
	r.refreshed = time.Now()
	r.mu.Unlock()
	r.rebuild()
	p := &lockProbe{Context: context.Background(), r: r}
	_, _, err = r.Resolve(p, "tool_00x1")
	var nf *ToolNotFoundError
	if !errors.As(err, &nf) || len(nf.Similar) == 0 {
		t.Fatalf("Resolve = %v, want a ToolNotFoundError with suggestions", err)
	}
	if !p.unlocked.Load() {
		t.Error("the suggestions were computed under the registry's lock, or without checking the context")
	}
}

// annotations gives the map a round trip of the annotations through JSON
// gives, which it replaces.
func TestAnnotationsAsJSON(t *testing.T) {
	yes, no := true, false
	for _, a := range []mcpgo.ToolAnnotation{
		{},
		{Title: "Search"},
		{ReadOnlyHint: &yes},
		{Title: "All", ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no},
	} {
		var want map[string]any
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			want = nil
		}
		if diff := gocmp.Diff(want, annotations(a)); diff != "" {
			t.Errorf("annotations of %s (-json +got):\n%s", b, diff)
		}
	}
}
