package operator_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/internal/mcpserver"
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
	em := event.NewEmitter(event.EmitterConfig{})
	res, _, err := reg.Execute(context.Background(), "coder", &operator.Context{Query: "print the answer", Tools: session,
		Params: map[string]any{"language": "Python"}, Messenger: operator.NewMessenger(operator.Metadata{}, em, nil)})
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
	var progress []string
	for _, ev := range collect(t, em) {
		if p, ok := ev.Payload.(event.ToolProgress); ok {
			progress = append(progress, p.Message)
		}
	}
	if diff := cmp.Diff([]string{"Writing python code", "Running the code"}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	_, _, err = reg.Execute(context.Background(), "coder", &operator.Context{Query: "x", Tools: session, Params: map[string]any{"language": "cobol"}})
	if err == nil || !strings.Contains(err.Error(), "no tool runs cobol code") {
		t.Errorf("unsupported language: %v", err)
	}
}
