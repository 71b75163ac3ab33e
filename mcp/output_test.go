package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// weatherServer offers tools that declare one output schema and return
// results that conform to it, or not.
func weatherServer() *server.MCPServer {
	schema := json.RawMessage(`{"type":"object","properties":{"temperature":{"type":"number"},"unit":{"type":"string","enum":["C","F"]}},"required":["temperature","unit"],"additionalProperties":false}`)
	srv := server.NewMCPServer("weather", "1.0.0")
	add := func(name string, res *mcpgo.CallToolResult) {
		srv.AddTool(mcpgo.NewTool(name, mcpgo.WithRawOutputSchema(schema)), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return res, nil
		})
	}
	add("good", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent("21.5 C")},
		StructuredContent: map[string]any{"temperature": 21.5, "unit": "C"}})
	add("bad", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent("warm")},
		StructuredContent: map[string]any{"temperature": "warm", "unit": "K", "wind": 3}})
	add("none", &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent("21.5 C")}})
	add("failed", mcpgo.NewToolResultError("sensor offline"))
	// A tool without an output schema returns what it likes.
	srv.AddTool(mcpgo.NewTool("free"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return &mcpgo.CallToolResult{StructuredContent: map[string]any{"temperature": "warm"}}, nil
	})
	return srv
}

// A result whose structuredContent does not conform to the tool's
// declared output schema, or is missing, is a tool error the model sees,
// naming each mismatched field, and a validation error to the session's
// callback; conforming results, error results and tools without a schema
// are left alone.
func TestOutputSchemaChecked(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "weather", InProcess: weatherServer()})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reported []*mcp.CallError
	s := r.NewSession(mcp.Callbacks{Error: func(_ context.Context, e *mcp.CallError) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, e)
	}})
	defer s.Close()
	call := func(name string) string {
		t.Helper()
		res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			return ""
		}
		mr := res.ModelResult()
		if len(mr.Content) == 0 || mr.Content[0].Text != res.Error || !mr.IsError {
			t.Errorf("%s: the model's result %+v does not start with the error %q", name, mr, res.Error)
		}
		return res.Error
	}

	for _, name := range []string{"good", "free"} {
		if msg := call(name); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
	}
	if msg := call("failed"); msg != "sensor offline" {
		t.Errorf("failed: %q, want the tool's own error", msg)
	}
	bad := call("bad")
	for _, want := range []string{`tool "bad" of server "weather"`, "does not match its output schema", "- temperature:", "- unit:", "- wind: is not allowed"} {
		if !strings.Contains(bad, want) {
			t.Errorf("bad: error %q does not say %q", bad, want)
		}
	}
	if none := call("none"); !strings.Contains(none, "no structuredContent") {
		t.Errorf("none: error %q, want one saying structuredContent is missing", none)
	}
	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	for _, e := range reported {
		if e.Kind == mcp.KindValidation {
			kinds = append(kinds, e.Tool)
		}
	}
	if strings.Join(kinds, ",") != "bad,none" {
		t.Errorf("validation errors reported for %v, want bad and none", kinds)
	}
}

// callWithOutputSchema serves the tool name, whose output schema is an
// object with the properties props and whose result's structured content
// is got, and returns the result of a call of it.
func callWithOutputSchema(t *testing.T, name string, props, got map[string]any) *toolresult.Result {
	t.Helper()
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	srv := server.NewMCPServer(name, "1.0.0")
	srv.AddTool(mcpgo.NewTool(name, mcpgo.WithRawOutputSchema(schema)), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return &mcpgo.CallToolResult{StructuredContent: got}, nil
	})
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: name, InProcess: srv})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	t.Cleanup(func() { s.Close() })
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A result with more mismatches than the check names counts the rest.
func TestOutputSchemaProblemsBounded(t *testing.T) {
	props := map[string]any{}
	got := map[string]any{}
	for _, k := range strings.Split("a b c d e f g h i j k l", " ") {
		props[k] = map[string]any{"type": "number"}
		got[k] = "x"
	}
	res := callWithOutputSchema(t, "many", props, got)
	if n := strings.Count(res.Error, "\n- "); n != 11 || !strings.HasSuffix(res.Error, "\n- and 2 more") {
		t.Errorf("error lists %d lines:\n%s\nwant ten mismatches and a count of the other two", n, res.Error)
	}
}

// An output schema that does not compile checks nothing: the results pass
// as the server sent them, and the schema's fault is logged once.
func TestOutputSchemaBrokenLoggedOnce(t *testing.T) {
	srv := server.NewMCPServer("broken", "1.0.0")
	srv.AddTool(mcpgo.NewTool("broken", mcpgo.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`))),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{StructuredContent: map[string]any{"a": 1}}, nil
		})
	core, logs := observer.New(zap.WarnLevel)
	m := newManager(t, mcp.ManagerConfig{Logger: zap.New(core)}, mcp.Server{Name: "broken", InProcess: srv})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	for range 3 {
		res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: "broken"})
		if err != nil || res.IsError {
			t.Fatalf("call: %v, %+v; want the server's result", err, res)
		}
	}
	if n := logs.FilterMessageSnippet("output schema not used").Len(); n != 1 {
		t.Errorf("%d warnings about the output schema, want 1: %v", n, logs.All())
	}
}

// A server's output schema cannot make the client read its files: a $ref
// outside the schema is not followed, and the schema checks nothing.
func TestOutputSchemaRefOutsideNotLoaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "string.json")
	if err := os.WriteFile(path, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`)
	srv := server.NewMCPServer("ref", "1.0.0")
	srv.AddTool(mcpgo.NewTool("ref", mcpgo.WithRawOutputSchema(schema)), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return &mcpgo.CallToolResult{StructuredContent: map[string]any{"a": 1}}, nil
	})
	core, logs := observer.New(zap.WarnLevel)
	m := newManager(t, mcp.ManagerConfig{Logger: zap.New(core)}, mcp.Server{Name: "ref", InProcess: srv})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: "ref"})
	if err != nil || res.IsError {
		t.Fatalf("call: %v, %q; want the server's result, unchecked (the file was read if it says a is not a string)", err, res.Error)
	}
	warned := logs.FilterMessageSnippet("output schema not used").All()
	if len(warned) != 1 || !strings.Contains(fmt.Sprint(warned[0].ContextMap()["error"]), "outside itself") {
		t.Errorf("warnings %v, want one saying the schema refers outside itself", warned)
	}
}

// nested returns depth arrays nested in each other around leaf.
func nested(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = []any{v}
	}
	return v
}

// Output checks are bounded in cost: a schema that applies itself twice
// to each item through a recursive $ref, against a small result nested
// 40 deep (2^40 evaluations), is not checked, and that is logged; nor is
// a result nested past the depth bound. A recursive schema whose work
// grows with the result only linearly is still checked, mismatches
// included.
func TestOutputSchemaCostBounded(t *testing.T) {
	srv := server.NewMCPServer("costly", "1.0.0")
	add := func(name, schema string, out any) {
		srv.AddTool(mcpgo.NewTool(name, mcpgo.WithRawOutputSchema(json.RawMessage(schema))), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{StructuredContent: out}, nil
		})
	}
	add("blowup", `{"type":"object","properties":{"v":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"items":{"$ref":"#/$defs/a"}},{"items":{"$ref":"#/$defs/a"}}]}}}`,
		map[string]any{"v": nested(40, 1)})
	add("deep", `{"type":"object"}`, map[string]any{"v": nested(100, 1)})
	tree := `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`
	leaf := map[string]any{"name": 7}
	for range 10 {
		leaf = map[string]any{"name": "n", "children": []any{leaf}}
	}
	add("tree", tree, leaf)
	core, logs := observer.New(zap.WarnLevel)
	m := newManager(t, mcp.ManagerConfig{Logger: zap.New(core)}, mcp.Server{Name: "costly", InProcess: srv})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blowup", "deep"} {
		res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: name})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v, %q; want the result unchecked", name, err, res.Error)
		}
	}
	skipped := logs.FilterMessageSnippet("not checked against its output schema").All()
	if len(skipped) != 2 || skipped[0].ContextMap()["tool"] != "blowup" || skipped[1].ContextMap()["tool"] != "deep" {
		t.Errorf("logged %v, want blowup and deep not checked", skipped)
	}
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: "tree"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Error, ".children[0].children[0].name: got number, want string") {
		t.Errorf("tree: %q, want the deep name's mismatch named", res.Error)
	}
}

// The mismatch text quotes the server's schema and result: each line, and
// the whole message, is bounded, the cuts marked.
func TestOutputSchemaProblemsClipped(t *testing.T) {
	props := map[string]any{}
	got := map[string]any{}
	long := strings.Repeat("é", 150)
	var enum []any
	for i := range 20 {
		enum = append(enum, fmt.Sprintf("%d%s", i, long))
	}
	for i := range 12 {
		name := fmt.Sprintf("%c%s", 'a'+i, long)
		props[name] = map[string]any{"enum": enum}
		got[name] = "x"
	}
	res := callWithOutputSchema(t, "wordy", props, got)
	if !res.IsError || len(res.Error) > 4<<10 || !strings.Contains(res.Error, mcp.ClippedMarker) {
		t.Fatalf("error of %d bytes, want a clipped one of at most 4 KiB:\n%.300s", len(res.Error), res.Error)
	}
	for _, line := range strings.Split(res.Error, "\n")[1:] {
		if len(line) > 256 {
			t.Errorf("line of %d bytes, want at most 256: %.100s", len(line), line)
		}
	}
}

// A tool whose output schema omits "type" (as some servers write it) is
// still checked, as an object schema: its properties and required fields
// hold.
func TestOutputSchemaWithoutTypeChecked(t *testing.T) {
	srv := server.NewMCPServer("untyped", "1.0.0")
	schema := json.RawMessage(`{"properties":{"count":{"type":"integer"}},"required":["count"]}`)
	add := func(name string, structured map[string]any) {
		srv.AddTool(mcpgo.NewTool(name, mcpgo.WithRawOutputSchema(schema)), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent("n")}, StructuredContent: structured}, nil
		})
	}
	add("fine", map[string]any{"count": 3})
	add("wrong", map[string]any{"count": "three"})
	add("missing", map[string]any{"other": 1})
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "untyped", InProcess: srv})
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	s := r.NewSession(mcp.Callbacks{})
	defer s.Close()
	for name, want := range map[string]string{"fine": "", "wrong": "- count:", "missing": "count"} {
		res, err := s.CallTool(context.Background(), mcp.ToolCall{Name: name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch {
		case want == "" && res.IsError:
			t.Errorf("%s: a conforming result was refused: %s", name, res.Error)
		case want != "" && (!res.IsError || !strings.Contains(res.Error, "does not match its output schema") || !strings.Contains(res.Error, want)):
			t.Errorf("%s: IsError %v, error %q; want a mismatch naming %q", name, res.IsError, res.Error, want)
		}
	}
}
