package operator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/operator/elicit"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

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

	rec := &recorder{}
	questions := operator.NewElicitations(rec)
	rec.on = func(r operator.Report) {
		if q, ok := r.(elicit.Request); ok {
			if err := questions.Respond(elicit.Response{ElicitationID: q.ElicitationID, Action: elicit.Accept, Content: map[string]any{"confirm": true}}); err != nil {
				t.Error(err)
			}
		}
	}
	session := reg.NewSession(mcptool.Callbacks(rec, questions))
	res, err := p.Execute(ctx, "reindex", nil, operator.Env{Tools: mcptool.Session(session), Reporter: rec})
	session.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "index rebuilt" || res.Server != "acme" {
		t.Errorf("result %+v", res)
	}
	// The call's progress, question and content come between its
	// tool.start and tool.complete, in the order the server sent them.
	want := []string{
		"start reindex mcp",
		"progress reindex 0.5 scanned 1 of 2",
		"progress reindex 1.0 scanned 2 of 2",
		`question reindex "Replace the index?" []`,
		`output reindex text/plain "index rebuilt"`,
		"complete reindex 1",
	}
	if diff := cmp.Diff(want, rec.lines()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// ToolComplete's ContentCount is the number of ToolOutput items the
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
	rec := &recorder{}
	session := reg.NewSession(mcptool.Callbacks(rec, nil))
	res, err := p.Execute(ctx, "quote", nil, operator.Env{Tools: mcptool.Session(session), Reporter: rec})
	session.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Structured == nil || len(res.Contents) != 1 {
		t.Fatalf("result: %d contents, structured %v; want 1 and the structured content", len(res.Contents), res.Structured)
	}
	contents, count := 0, -1
	for _, r := range rec.reports {
		switch r := r.(type) {
		case operator.ToolOutput:
			contents++
		case operator.ToolComplete:
			count = r.ContentCount
		}
	}
	if contents != 2 || count != contents {
		t.Errorf("%d outputs, content count %d; want 2 and 2", contents, count)
	}
}
