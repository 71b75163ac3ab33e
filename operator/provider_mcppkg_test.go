package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/mcp/mcptool"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/internal/mcpserver"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/google/go-cmp/cmp"
)

// mcpRegistry serves the in-process server through the mcp package.
func mcpRegistry(t *testing.T) *mcp.Registry {
	t.Helper()
	m, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	if err := m.Add(mcp.Server{Name: "acme", InProcess: mcpserver.New().MCP}); err != nil {
		t.Fatal(err)
	}
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The mcp package's registry and sessions behind the provider: the
// catalogue, calls, and the session's progress and elicitation turned into
// events and answered questions.
func TestMCPPackage(t *testing.T) {
	ctx := context.Background()
	reg := mcpRegistry(t)
	p := operator.NewProvider(operator.ProviderConfig{MCP: mcptool.Catalog(reg)})
	sums, err := p.ToolSummaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sums {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"rag_search", "reindex", "run_python", "web_search"}, names); diff != "" {
		t.Errorf("catalogue (-want +got):\n%s", diff)
	}
	schema, err := p.ToolSchema(ctx, "rag_search")
	if err != nil || !strings.Contains(schema, `"top_k"`) {
		t.Errorf("schema %s, %v", schema, err)
	}

	em := event.NewEmitter(event.EmitterConfig{})
	questions := operator.NewElicitations(em)
	cb := mcptool.Callbacks(em, questions)
	session := reg.NewSession(cb)
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range event.UserFacing(em.Events(ctx)) {
			if err != nil {
				t.Error(err)
				return
			}
			switch pl := ev.Payload.(type) {
			case event.ElicitationRequest:
				got = append(got, fmt.Sprintf("elicitation.request %s %q", pl.Tool, pl.Message))
				if err := questions.Respond(event.ElicitationResponse{ElicitationID: pl.ElicitationID, Action: event.ActionAccept, Content: map[string]any{"confirm": true}}); err != nil {
					t.Error(err)
				}
			case event.ToolProgress:
				got = append(got, fmt.Sprintf("tool.progress %s %.1f %s", pl.Tool, pl.Progress, pl.Message))
			default:
				b, _ := json.Marshal(pl)
				got = append(got, string(ev.Type)+" "+string(b))
			}
		}
	}()
	res, err := p.Execute(ctx, "reindex", nil, operator.Env{Tools: mcptool.Session(session), Emitter: em})
	session.Close()
	em.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "index rebuilt" || res.Metadata["server"] != "acme" {
		t.Errorf("result %+v", res)
	}
	// The call's progress, question and content come between its
	// tool.start and tool.complete, in the order the server sent them.
	want := []string{
		`tool.start {"tool":"reindex"}`,
		"tool.progress reindex 0.5 scanned 1 of 2",
		"tool.progress reindex 1.0 scanned 2 of 2",
		`elicitation.request reindex "Replace the index?"`,
		`tool.content {"tool":"reindex","content_type":"text/plain","data":"index rebuilt"}`,
		`tool.complete {"tool":"reindex","content_count":1}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// tool.complete's content_count is the number of tool.content items the
// user received: an MCP result's structured content is one of them,
// although the result keeps it in Structured rather than Contents.
func TestContentCountIncludesStructured(t *testing.T) {
	ctx := context.Background()
	srv := mcpserver.New()
	srv.MCP.AddTool(mcpgo.NewTool("quote", mcpgo.WithDescription("Quotes a price")),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultStructured(map[string]any{"plan": "Team", "usd": 49}, "Team: $49"), nil
		})
	m, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	if err := m.Add(mcp.Server{Name: "acme", InProcess: srv.MCP}); err != nil {
		t.Fatal(err)
	}
	reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	p := operator.NewProvider(operator.ProviderConfig{MCP: mcptool.Catalog(reg)})
	em := event.NewEmitter(event.EmitterConfig{})
	session := reg.NewSession(mcptool.Callbacks(em, nil))
	res, err := p.Execute(ctx, "quote", nil, operator.Env{Tools: mcptool.Session(session), Emitter: em})
	session.Close()
	em.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Structured == nil || len(res.Contents) != 1 {
		t.Fatalf("result: %d contents, structured %v; want 1 and the structured content", len(res.Contents), res.Structured)
	}
	contents, count := 0, -1
	for ev, err := range event.UserFacing(em.Events(ctx)) {
		if err != nil {
			t.Fatal(err)
		}
		switch pl := ev.Payload.(type) {
		case event.ToolContent:
			contents++
		case event.ToolComplete:
			count = pl.ContentCount
		}
	}
	if contents != 2 || count != contents {
		t.Errorf("%d tool.content events, content_count %d; want 2 and 2", contents, count)
	}
}
