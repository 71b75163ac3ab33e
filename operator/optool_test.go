package operator_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/mcpserver"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

func TestRegistryTool(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	err := reg.Register(operator.Metadata{Name: "text.upper", Description: "Upper-cases a text", Type: operator.PureLLM},
		factory(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
			return &operator.Result{
				Output:   map[string]any{"upper": strings.ToUpper(oc.Query), "lang": oc.Param("lang")},
				Contents: []toolresult.Content{{MIMEType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"))}},
			}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(meta("broken"), factory(failing(errors.New("model down")))); err != nil {
		t.Fatal(err)
	}
	tools, err := reg.Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := operator.NewToolset(tools...)
	if err != nil {
		t.Fatal(err)
	}
	defs := set.Definitions()
	if len(defs) != 2 || defs[0].Name != "broken" || defs[1].Name != "text_upper" || defs[1].Description != "Upper-cases a text" {
		t.Fatalf("definitions = %+v", defs)
	}
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(defs[1].Parameters, &schema); err != nil || len(schema.Required) != 1 || schema.Required[0] != "query" || schema.Properties["params"] == nil {
		t.Errorf("parameters = %s (%v)", defs[1].Parameters, err)
	}

	ctx := context.Background()
	res, err := set.Call(ctx, model.ToolCall{ID: "1", Name: "text_upper", Arguments: json.RawMessage(`{"query":"hello","params":{"lang":"en"}}`)})
	if err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	if string(res.Structured) != `{"lang":"en","upper":"HELLO"}` || res.Content[0].Text != `{"lang":"en","upper":"HELLO"}` {
		t.Errorf("result = %+v, structured %s", res, res.Structured)
	}
	if len(res.Content) != 2 || res.Content[1].Kind != model.PartBinary || string(res.Content[1].Data) != "\x89PNG\r\n\x1a\n" || res.Content[1].MIMEType != "image/png" {
		t.Errorf("content = %+v", res.Content)
	}

	res, err = set.Call(ctx, model.ToolCall{ID: "2", Name: "text_upper", Arguments: json.RawMessage(`{"q":"hello"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "- query: is required but missing") || !strings.Contains(res.Text(), "- q: is not a known argument") {
		t.Errorf("bad arguments = %q, %v", res.Text(), err)
	}

	res, err = set.Call(ctx, model.ToolCall{ID: "3", Name: "broken", Arguments: json.RawMessage(`{"query":"x"}`)})
	var ee *operator.ExecError
	if !errors.As(err, &ee) || !res.IsError || !strings.Contains(res.Text(), "model down") {
		t.Errorf("failing operator = %+v, %v", res, err)
	}

	if _, err := reg.Tool("nope", nil); !errors.Is(err, operator.ErrUnknown) {
		t.Errorf("unknown operator: %v", err)
	}
}

// An MCP-backed operator called as a tool reaches its MCP server through
// the session the ContextFunc gives it.
func TestRegistryToolMCPBacked(t *testing.T) {
	_, session := connect(t)
	reg := builtins(t, llmtest.New(), operator.BuiltinConfig{RAGTopK: 2})
	noSession, err := reg.Tool("rag_retriever", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noSession.Call(context.Background(), json.RawMessage(`{"query":"pricing"}`)); !errors.Is(err, operator.ErrNeedsMCP) {
		t.Errorf("without a session: %v", err)
	}
	tl, err := reg.Tool("rag_retriever", func(context.Context) *operator.Context { return &operator.Context{Tools: session} })
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(context.Background(), json.RawMessage(`{"query":"pricing"}`))
	if err != nil || res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	want, _ := json.Marshal(map[string]any{"results": mcpserver.Docs["pricing"]})
	if string(res.Structured) != string(want) {
		t.Errorf("structured = %s, want %s", res.Structured, want)
	}
}

func TestToolResultModelResult(t *testing.T) {
	r := &toolresult.Result{
		Tool:       "t",
		Contents:   []toolresult.Content{toolresult.TextContent("a"), {MIMEType: "image/jpeg", Data: base64.StdEncoding.EncodeToString([]byte{0xff, 0xd8, 0xff, 0xe0})}, {MIMEType: toolresult.MIMEJSON, Value: map[string]int{"n": 1}}},
		Structured: map[string]int{"n": 1},
	}
	m := r.ModelResult()
	if m.Name != "t" || m.IsError || len(m.Content) != 3 || m.Content[0].Text != "a" || string(m.Content[1].Data) != "\xff\xd8\xff\xe0" ||
		m.Content[2].Text != `{"n":1}` || string(m.Structured) != `{"n":1}` {
		t.Errorf("ModelResult = %+v", m)
	}
	failed := (&toolresult.Result{Tool: "t", IsError: true, Error: "no such city"}).ModelResult()
	if !failed.IsError || failed.Text() != "no such city" {
		t.Errorf("failed = %+v", failed)
	}
	if (*toolresult.Result)(nil).ModelResult() == nil {
		t.Error("nil ModelResult is nil")
	}
}
