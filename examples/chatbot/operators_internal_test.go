package chatbot

import (
	"context"
	"slices"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator"
)

func openTestBot(t *testing.T, cfg Config) (*Bot, error) {
	t.Helper()
	cfg.Offline = true
	b, err := New(context.Background(), cfg)
	if err == nil {
		t.Cleanup(func() { _ = b.Close(context.Background()) })
	}
	return b, err
}

// TestOperatorToolsExist checks that every tool an operator declares (and
// list_operators advertises) is one the bot offers: the built-in
// operators call the bundled servers' tools by their qualified names, and
// coder runs its code with the bundled run_code.
func TestOperatorToolsExist(t *testing.T) {
	b, err := openTestBot(t, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	coder := false
	for _, m := range b.ops.All() {
		for _, name := range m.MCPTools {
			if _, err := b.provider.Lookup(t.Context(), name); err != nil {
				t.Errorf("operator %s declares tool %s: %v", m.Name, name, err)
			}
		}
		if m.Name == "coder" {
			coder = true
			if !slices.Equal(m.MCPTools, []string{"calculator__run_code"}) {
				t.Errorf("coder's tools %v, want [calculator__run_code]", m.MCPTools)
			}
		}
	}
	if !coder {
		t.Error("no coder operator")
	}
}

// An operator (of the user's) that calls a tool no server offers fails
// the construction, naming the operator, the tool and the fix; one that
// names a tool two servers offer fails naming both qualified names.
func TestOperatorMissingToolFailsConstruction(t *testing.T) {
	withOp := func(tools ...string) func(*operator.Registry) error {
		return func(r *operator.Registry) error {
			return r.Register(operator.Metadata{Name: "exporter", Description: "Exports a report", Type: operator.MCPBacked, MCPTools: tools},
				func(operator.Deps) (operator.Operator, error) {
					return operator.Func(func(context.Context, *operator.Context) (*operator.Result, error) { return &operator.Result{}, nil }), nil
				})
		}
	}
	_, err := openTestBot(t, Config{RegisterOperators: withOp("run_python")})
	if err == nil {
		t.Fatal("New accepted an operator whose tool does not exist")
	}
	for _, want := range []string{"operator exporter", `"run_python"`, "no MCP server offers", "Config.MCPServers"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	_, err = openTestBot(t, Config{RegisterOperators: withOp("search_knowledge"), MCPServers: []mcp.Server{clashingServer()}})
	if err == nil {
		t.Fatal("New accepted an operator whose tool two servers offer")
	}
	for _, want := range []string{"operator exporter", "several MCP servers", "acme__search_knowledge", "knowledge__search_knowledge"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	if _, err := openTestBot(t, Config{RegisterOperators: withOp("calculate", "knowledge__search_knowledge")}); err != nil {
		t.Errorf("an operator on existing tools: %v", err)
	}
}

// clashingServer is a server "acme" with a tool named like the bundled
// knowledge server's.
func clashingServer() mcp.Server {
	s := server.NewMCPServer("acme", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("search_knowledge", mcpgo.WithDescription("Searches Acme's wiki"), mcpgo.WithString("query", mcpgo.Required())),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("acme wiki: nothing"), nil
		})
	return mcp.Server{Name: "acme", InProcess: s}
}

// Config.BundledServers chooses the bundled servers; a built-in operator
// whose tools then exist nowhere is left out rather than advertised.
func TestBundledServersChosen(t *testing.T) {
	b, err := openTestBot(t, Config{BundledServers: []string{"knowledge"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := slices.Compare(b.bundled, []string{"knowledge"}); diff != 0 {
		t.Errorf("bundled servers %v, want [knowledge]", b.bundled)
	}
	for name, want := range map[string]bool{"rag_retriever": true, "web_searcher": false, "coder": false, "synthesizer": true} {
		if got := b.ops.Has(name); got != want {
			t.Errorf("operator %s registered: %v, want %v", name, got, want)
		}
	}

	b, err = openTestBot(t, Config{NoBundledServers: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.bundled) != 0 || b.ops.Has("rag_retriever") {
		t.Errorf("without bundled servers: bundled %v, rag_retriever registered %v", b.bundled, b.ops.Has("rag_retriever"))
	}

	_, err = openTestBot(t, Config{BundledServers: []string{"knowlege"}})
	if err == nil || !strings.Contains(err.Error(), `"knowlege" is not a bundled server`) || !strings.Contains(err.Error(), "knowledge, calculator, websearch") {
		t.Errorf("a misspelt bundled server: %v", err)
	}
}
