package operator_test

import (
	"context"
	"errors"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/internal/mcpserver"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/google/go-cmp/cmp"
)

func connect(t *testing.T) (*mcpserver.Server, *mcpserver.Client) {
	t.Helper()
	srv := mcpserver.New()
	c, err := mcpserver.Connect(context.Background(), srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

func TestMCPOperators(t *testing.T) {
	srv, session := connect(t)
	reg := builtins(t, llmtest.New(), operator.BuiltinConfig{RAGTopK: 3})
	ctx := context.Background()

	res, _, err := reg.Execute(ctx, "rag_retriever", &operator.Context{Query: "pricing", Tools: session})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"results": mcpserver.Docs["pricing"]}, res.Output); diff != "" {
		t.Errorf("rag_retriever output (-want +got):\n%s", diff)
	}
	if len(res.Contents) != 1 || res.Metadata["content_count"] != 1 {
		t.Errorf("rag_retriever contents %v, metadata %v", res.Contents, res.Metadata)
	}
	res, _, err = reg.Execute(ctx, "web_searcher", &operator.Context{Query: "competitor pricing", Tools: session})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"results": mcpserver.Web["pricing"]}, res.Output); diff != "" {
		t.Errorf("web_searcher output (-want +got):\n%s", diff)
	}
	want := []string{`rag_search({"query":"pricing","top_k":3})`, `web_search({"query":"competitor pricing"})`}
	if diff := cmp.Diff(want, srv.CallLog()); diff != "" {
		t.Errorf("MCP calls (-want +got):\n%s", diff)
	}
}

func TestMCPToolNamesConfigurable(t *testing.T) {
	_, session := connect(t)
	// The knowledge base is served as "web_search" here: the operator calls
	// whatever tool it is configured with.
	reg := builtins(t, llmtest.New(), operator.BuiltinConfig{RAGSearchTool: "web_search"})
	res, _, err := reg.Execute(context.Background(), "rag_retriever", &operator.Context{Query: "pricing", Tools: session})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"results": mcpserver.Web["pricing"]}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestMCPToolError(t *testing.T) {
	srv, session := connect(t)
	srv.Hook = func(ctx context.Context, tool string) error { return errors.New("index offline") }
	reg := builtins(t, llmtest.New(), operator.BuiltinConfig{})
	_, _, err := reg.Execute(context.Background(), "web_searcher", &operator.Context{Query: "x", Tools: session})
	var ee *operator.ExecError
	if !errors.As(err, &ee) || ee.Attempts != 2 || !strings.Contains(err.Error(), "web_search reported an error: index offline") {
		t.Errorf("error %v, want an ExecError after 2 attempts carrying the tool's error", err)
	}
}

func TestCoder(t *testing.T) {
	srv, session := connect(t)
	model := llmtest.New().On("runnable python program", llmtest.Text("Here you go:\n```python\nprint(\"42\")\n```\n"))
	reg := builtins(t, model, operator.BuiltinConfig{})
	rec := &recorder{}
	res, _, err := reg.Execute(context.Background(), "coder", &operator.Context{Query: "print the answer", Tools: session,
		Params: map[string]any{"language": "Python"}, Messenger: operator.NewMessenger(operator.Metadata{}, rec, nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"language": "python", "code": `print("42")`, "result": "42"}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`run_python({"code":"print(\"42\")"})`}, srv.CallLog()); diff != "" {
		t.Errorf("MCP calls (-want +got):\n%s", diff)
	}
	// The operator's progress, and the MCP tool it calls reported as a
	// tool of its own.
	wantReports := []string{
		"progress coder 0.1 Writing python code",
		"progress coder 0.5 Running the code",
		"start run_python mcp",
		"complete run_python 1",
	}
	if diff := cmp.Diff(wantReports, rec.lines()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	_, _, err = reg.Execute(context.Background(), "coder", &operator.Context{Query: "x", Tools: session, Params: map[string]any{"language": "cobol"}})
	if err == nil || !strings.Contains(err.Error(), "no tool runs cobol code") {
		t.Errorf("unsupported language: %v", err)
	}
}

// The hybrid coder on a real sandbox: the bundled calculator server runs
// the Starlark the model writes.
func TestCoderOnSandbox(t *testing.T) {
	ctx := context.Background()
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(ctx)
	if err := m.Add(mcp.Server{Name: "calculator", InProcess: calc}); err != nil {
		t.Fatal(err)
	}
	servers, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	session := servers.NewSession(mcp.Callbacks{})
	defer session.Close()

	model := llmtest.New().On("runnable starlark program", llmtest.Text("```python\nseats = [10, 25, 40]\nprint(sum([s * 49 for s in seats]))\n```"))
	reg := builtins(t, model, operator.BuiltinConfig{CodeTools: map[string]string{"starlark": "run_code"}})
	res, _, err := reg.Execute(ctx, "coder", &operator.Context{Query: "total monthly cost of 10, 25 and 40 seats at $49",
		Params: map[string]any{"language": "starlark"}, Tools: mcptool.Session(session)})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output.(map[string]any)
	if !strings.Contains(out["result"].(string), "3675") {
		t.Errorf("result %q, want the program's output 3675", out["result"])
	}
	if out["structured"] == nil {
		t.Error("the sandbox's structured result was dropped")
	}
}
