package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func names(tools []model.ToolSummary) []string {
	out := []string{}
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestRegistryNamespacing(t *testing.T) {
	a, b := testserver.New("alpha"), testserver.New("beta")
	b.MCP.DeleteTools("progress", "late", "ask", "media", "slow", "fail", "crash", "add_tool", "log")
	b.MCP.AddTool(mcpTool("lookup"), nil)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "alpha", InProcess: a.MCP}, mcp.Server{Name: "beta", InProcess: b.MCP})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := r.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"add_tool", "alpha__echo", "ask", "beta__echo", "crash", "fail", "late", "log", "lookup", "media", "progress", "slow"}
	if diff := cmp.Diff(want, names(tools)); diff != "" {
		t.Fatalf("tool names (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name, server, tool string
	}{
		{"alpha__echo", "alpha", "echo"},
		{"beta__echo", "beta", "echo"},
		{"lookup", "beta", "lookup"},
		{"alpha__slow", "alpha", "slow"}, // qualified names always work
	} {
		server, tool, err := r.Resolve(ctx, tt.name)
		if err != nil || server != tt.server || tool != tt.tool {
			t.Errorf("Resolve(%q) = %q, %q, %v; want %q, %q", tt.name, server, tool, err, tt.server, tt.tool)
		}
	}
	_, _, err = r.Resolve(ctx, "echo")
	var amb *mcp.AmbiguousToolError
	if !errors.As(err, &amb) || !cmp.Equal(amb.Qualified, []string{"alpha__echo", "beta__echo"}) {
		t.Errorf("Resolve(echo) = %v, want AmbiguousToolError", err)
	}
	_, _, err = r.Resolve(ctx, "progres")
	var nf *mcp.ToolNotFoundError
	if !errors.As(err, &nf) || len(nf.Similar) == 0 || nf.Similar[0] != "progress" {
		t.Errorf("Resolve(progres) = %v, want ToolNotFoundError suggesting progress", err)
	}
	if !strings.Contains(err.Error(), `did you mean "progress"`) {
		t.Errorf("error text %q does not list close names", err)
	}

	// A registry session calls tools by their listed names.
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := s.CallTool(ctx, mcp.ToolCall{Name: "beta__echo", Arguments: map[string]any{"text": "via beta"}})
	if err != nil || res.Server != "beta" || res.Text() != "via beta" {
		t.Fatalf("call by qualified name: %v, %+v", err, res)
	}
	if _, err := s.CallTool(ctx, mcp.ToolCall{Name: "nope"}); !errors.As(err, &nf) {
		t.Errorf("call of an unknown tool: %v", err)
	}
}

func TestRegistryStages(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Concurrent first loads share one listing.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := r.Tools(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := ts.Lists.Load(); got != 1 {
		t.Errorf("20 concurrent Tools calls listed %d times, want 1", got)
	}
	tools, _ := r.Tools(ctx)
	if got := ts.Lists.Load(); got != 1 {
		t.Errorf("a fresh cache listed again (%d)", got)
	}
	var echoSum model.ToolSummary
	for _, tl := range tools {
		if tl.Name == "echo" {
			echoSum = tl
		}
	}
	if diff := cmp.Diff(model.ToolSummary{Name: "echo", Server: "demo", Tool: "echo", Description: "Echo the text back.", Available: true, ReadOnly: true}, echoSum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	// Stage 2: the definitions came with the listing; lookups do not
	// list the server again.
	tool, err := r.Tool(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Properties["text"] == nil || !cmp.Equal(schema.Required, []string{"text"}) {
		t.Errorf("input schema %s (%v)", tool.InputSchema, err)
	}
	if _, err := r.Tool(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Tool(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	if got := ts.Lists.Load(); got != 1 {
		t.Errorf("three schema lookups listed %d times in all, want 1 (the listing of stage 1)", got)
	}
	// Each lookup gets the tool under the name it asked for; the cached
	// definition is not renamed by a lookup under the qualified name.
	q, err := r.Tool(ctx, "demo__echo")
	if err != nil || q.Name != "demo__echo" {
		t.Fatalf("Tool(demo__echo) = %v, %v; want it named demo__echo", q, err)
	}
	if bare, err := r.Tool(ctx, "echo"); err != nil || bare.Name != "echo" || q.Name != "demo__echo" {
		t.Errorf("Tool(echo) named %q after Tool(demo__echo) (now named %q), %v; want echo and demo__echo", bare.Name, q.Name, err)
	}
	var nf *mcp.ToolNotFoundError
	if _, err := r.Tool(ctx, "ech"); !errors.As(err, &nf) || nf.Similar[0] != "echo" {
		t.Errorf("Tool(ech) = %v", err)
	}
}

func TestRegistryTTL(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m, TTL: 20 * time.Millisecond})
	ctx := context.Background()
	if _, err := r.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if _, err := r.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ts.Lists.Load(); got != 2 {
		t.Errorf("listed %d times across an expired TTL, want 2", got)
	}
}

func TestRegistryListChanged(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{}, stdioServer("demo"))
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m, TTL: time.Hour})
	ctx := context.Background()
	if _, err := r.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	if _, err := s.CallTool(ctx, mcp.ToolCall{Name: "add_tool", Arguments: map[string]any{"name": "fresh"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "list_changed to bring in the new tool", func() bool {
		tools, err := r.Tools(ctx)
		return err == nil && strings.Contains(strings.Join(names(tools), ","), "fresh")
	})
	res, err := s.CallTool(ctx, mcp.ToolCall{Name: "fresh", Arguments: map[string]any{"text": "new"}})
	if err != nil || res.Text() != "new" {
		t.Fatalf("call of the new tool: %v %+v", err, res)
	}
}

func TestRegistryUnavailableServer(t *testing.T) {
	retry := fastRetry()
	retry.Breaker.FailureThreshold = 1
	retry.Breaker.RecoveryTime = time.Hour
	m := newManager(t, mcp.ManagerConfig{Resilience: retry}, stdioServer("crashy"))
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m, TTL: time.Hour})
	ctx := context.Background()
	if _, err := r.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	if _, err := s.CallTool(ctx, mcp.ToolCall{Name: "crash"}); err == nil {
		t.Fatal("crash returned no error")
	}
	tools, err := r.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 {
		t.Fatal("an unhealthy server's tools were hidden")
	}
	for _, tl := range tools {
		if tl.Available {
			t.Errorf("%s listed as available while the breaker is open", tl.Name)
		}
	}
	if h := r.Health(); len(h) != 1 || h[0].State != mcp.HealthOpen {
		t.Errorf("health = %+v", h)
	}
}

func TestRegistryDiscovery(t *testing.T) {
	a, b := testserver.New("a"), testserver.New("b")
	ha, hb := a.HTTP(), b.HTTP()
	t.Cleanup(ha.Close)
	t.Cleanup(hb.Close)
	var list atomic.Value
	list.Store(`{"mcpServers": {"a": {"url": "` + ha.URL + `"}, "b": {"type": "streamable-http", "url": "` + hb.URL + `"}}}`)
	disc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(list.Load().(string)))
	}))
	t.Cleanup(disc.Close)
	local := testserver.New("local")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "local", InProcess: local.MCP})
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m, DiscoveryURL: disc.URL, TTL: time.Hour})
	ctx := context.Background()
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range m.Servers() {
		got = append(got, s.Name)
	}
	if diff := cmp.Diff([]string{"a", "b", "local"}, got); diff != "" {
		t.Fatalf("servers (-want +got):\n%s", diff)
	}
	if _, _, err := r.Resolve(ctx, "b__media"); err != nil {
		t.Fatal(err)
	}
	// The discovery service stops listing b: it goes; local stays.
	list.Store(`{"mcpServers": {"a": {"url": "` + ha.URL + `"}}}`)
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range m.Servers() {
		got = append(got, s.Name)
	}
	if diff := cmp.Diff([]string{"a", "local"}, got); diff != "" {
		t.Fatalf("servers after b left (-want +got):\n%s", diff)
	}
	if _, _, err := r.Resolve(ctx, "b__media"); err == nil {
		t.Error("b's tools are still listed")
	}
}

func mcpTool(name string) mcpgo.Tool {
	return mcpgo.NewTool(name, mcpgo.WithDescription("Look something up."))
}

// TestRegistryRelistsAfterFailedListing: a server whose listing failed (down
// when first listed) is listed again by a later lookup within seconds, not
// only after the TTL.
func TestRegistryRelistsAfterFailedListing(t *testing.T) {
	ts := testserver.New("flaky")
	hs := ts.HTTP()
	t.Cleanup(hs.Close)
	ts.FailLists.Store(1000) // every listing fails until reset below
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "flaky", URL: hs.URL})
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m, TTL: time.Hour})
	ctx := context.Background()
	if tools, err := r.Tools(ctx); err == nil && len(tools) > 0 {
		t.Fatalf("listing refused, yet tools = %v", names(tools))
	}
	ts.FailLists.Store(0)
	waitFor(t, "the server's tools after its listing recovered", func() bool {
		tools, err := r.Tools(ctx)
		return err == nil && strings.Contains(strings.Join(names(tools), ","), "echo")
	})
}
