package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/google/go-cmp/cmp"
)

func operators(t *testing.T) *operator.Registry {
	t.Helper()
	reg := operator.NewRegistry(operator.Deps{})
	add := func(name, desc string, f operator.Func) {
		if err := reg.Register(operator.Metadata{Name: name, Description: desc, Type: operator.PureLLM, Model: "haiku"},
			func(operator.Deps) (operator.Operator, error) { return f, nil }); err != nil {
			t.Fatal(err)
		}
	}
	add("shout", "Shouts the query", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: strings.ToUpper(oc.Query)}, nil
	})
	add("split", "Splits the query into words", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		return &operator.Result{Output: map[string]any{"words": strings.Fields(oc.Query)},
			Contents: []toolresult.Content{{MIMEType: "image/png", Data: "iVBOR"}}}, nil
	})
	add("about", "An operator shadowed by the local tool", func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
		t.Error("the shadowed operator ran")
		return nil, nil
	})
	return reg
}

func provider(t *testing.T) *operator.Provider {
	t.Helper()
	local := operator.NewLocalRegistry()
	registerLocals(t, local, "Acme Assistant 1.4.0")
	return operator.NewProvider(operator.ProviderConfig{Local: local, Operators: operators(t)})
}

// registerLocals registers two local tools in local: about, which names
// the agent, and list_tools, which lists the catalogue of the provider it
// is called through.
func registerLocals(t *testing.T, local *operator.LocalRegistry, name string) {
	t.Helper()
	noArgs := json.RawMessage(`{"type":"object","properties":{}}`)
	err := local.Register(
		operator.LocalFunc(operator.LocalInfo{Name: "about", Description: "Names the agent", InputSchema: noArgs},
			func(context.Context, operator.LocalCall) (*toolresult.Result, error) {
				return operator.TextResult("about", name, map[string]any{"name": name}), nil
			}),
		operator.LocalFunc(operator.LocalInfo{Name: "list_tools", Description: "Lists every tool the agent can use", InputSchema: noArgs},
			func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
				text, err := c.Provider.Text(ctx)
				return operator.TextResult("list_tools", strings.TrimSpace(text), nil), err
			}))
	if err != nil {
		t.Fatal(err)
	}
}

func TestSummariesAndText(t *testing.T) {
	p := provider(t)
	text, err := p.Text(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := `Local tools (instant):
- about: Names the agent
- list_tools: Lists every tool the agent can use

Operators:
- shout: Shouts the query
- split: Splits the query into words
`
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if !p.IsLocal("about") || p.IsLocal("shout") || p.IsLocal("nope") {
		t.Error("IsLocal is wrong")
	}
}

func TestExecute(t *testing.T) {
	p := provider(t)
	ctx := context.Background()
	tests := []struct {
		name       string
		args       map[string]any
		wantText   string
		structured bool
		contents   int
	}{
		{"about", nil, "Acme Assistant 1.4.0", true, 1},
		{"shout", map[string]any{"query": "hello"}, "HELLO", false, 1},
		{"split", map[string]any{"query": "a b"}, `{"words":["a","b"]}`, true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Execute(ctx, tt.name, tt.args, operator.Env{Query: "fallback query"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantText, res.Text()); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if res.Tool != tt.name || (res.Structured != nil) != tt.structured || len(res.Contents) != tt.contents {
				t.Errorf("result %+v: want tool %s, structured %v, %d contents", res, tt.name, tt.structured, tt.contents)
			}
		})
	}
	res, err := p.Execute(ctx, "shout", nil, operator.Env{Query: "from env"})
	if err != nil || res.Text() != "FROM ENV" {
		t.Errorf("operator without a query argument: %v, %v; want the Env query", res, err)
	}
	lt, err := p.Execute(ctx, "list_tools", nil, operator.Env{})
	if err != nil || !strings.Contains(lt.Text(), "- shout: Shouts the query") {
		t.Errorf("list_tools: %v, %v", lt, err)
	}
	_, err = p.Execute(ctx, "nope", nil, operator.Env{})
	var unknown *operator.UnknownError
	if !errors.As(err, &unknown) || !errors.Is(err, memory.ErrNotFound) || !errors.Is(err, operator.ErrUnknown) || unknown.Kind != "tool" || len(unknown.Registered) != 4 {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestSchema(t *testing.T) {
	p := provider(t)
	for _, name := range []string{"about", "shout"} {
		s, err := p.ToolSchema(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil || v.Name != name || v.InputSchema["type"] != "object" {
			t.Errorf("schema of %s: %s (%v)", name, s, err)
		}
	}
	// The provider serves the memory package's tools.* requirements.
	a := memory.NewAssembler(memory.AssemblerConfig{Tools: p})
	got, err := a.Assemble(context.Background(), memory.NewTurn("c", "q"), "tools.summaries", "tools.schema(shout)")
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Text("tools.summaries"); !strings.Contains(s, "- split: Splits the query into words") {
		t.Errorf("tools.summaries:\n%s", s)
	}
	if s := got.Text("tools.schema(shout)"); !strings.Contains(s, `"name":"shout"`) {
		t.Errorf("tools.schema(shout):\n%s", s)
	}
}

func TestRegisterLocal(t *testing.T) {
	r := operator.NewLocalRegistry()
	ok := operator.LocalFunc(operator.LocalInfo{Name: "clock", Description: "Tells the time"}, nil)
	if err := r.Register(ok); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		t    operator.Local
		want string
	}{
		{"duplicate", ok, `operator: name already registered: "clock"`},
		{"no name", operator.LocalFunc(operator.LocalInfo{Description: "d"}, nil), `operator: LocalInfo.Name "" must be non-empty letters, digits, '_' or '-'`},
		{"long name", operator.LocalFunc(operator.LocalInfo{Name: strings.Repeat("x", 65), Description: "d"}, nil), `operator: LocalInfo.Name "` + strings.Repeat("x", 65) + `" is 65 bytes long; providers accept at most 64`},
		{"no description", operator.LocalFunc(operator.LocalInfo{Name: "x"}, nil), `operator: "x": LocalInfo.Description is empty; say in a sentence what the tool does`},
		{"bad schema", operator.LocalFunc(operator.LocalInfo{Name: "x", Description: "d", InputSchema: json.RawMessage("{")}, nil), `operator: "x": LocalInfo.InputSchema is not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := r.Register(tt.t); err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestExecuteReports(t *testing.T) {
	p := provider(t)
	rec := &recorder{}
	ctx := context.Background()
	if _, err := p.Execute(ctx, "split", map[string]any{"query": "a b"}, operator.Env{Reporter: rec}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(ctx, "about", nil, operator.Env{Reporter: rec}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(ctx, "nope", nil, operator.Env{Reporter: rec}); err == nil {
		t.Fatal("unknown tool ran")
	}
	want := []string{
		"start split operator",
		"complete split 2",
		"start about local",
		"complete about 1",
	}
	if diff := cmp.Diff(want, rec.lines()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// An operator called through the provider gets the context its
// requirements ask for, including tools.* served by the provider itself.
func TestExecuteAssemblesContext(t *testing.T) {
	ops := operator.NewRegistry(operator.Deps{})
	var seen string
	err := ops.Register(operator.Metadata{Name: "planner", Description: "Plans with the tool list", Type: operator.PureLLM,
		ContextRequirements: []string{"query", "tools.summaries"}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				seen = oc.Assembled.String()
				return &operator.Result{Output: "ok"}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	asm := memory.NewAssembler(memory.AssemblerConfig{})
	p := operator.NewProvider(operator.ProviderConfig{Operators: ops, Assembler: asm})
	if err := asm.Register("tools", memory.ToolSource(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(context.Background(), "planner", map[string]any{"query": "plan a trip"}, operator.Env{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plan a trip", "- planner: Plans with the tool list"} {
		if !strings.Contains(seen, want) {
			t.Errorf("assembled context lacks %q:\n%s", want, seen)
		}
	}
}

// A context assembled before the call (a "build context" step) reaches the
// operator as is and is not assembled again; without one, Execute
// assembles it. Provider.Assemble builds nothing for local tools and
// names the operator and requirement when a source is missing.
func TestExecutePreAssembled(t *testing.T) {
	ops := operator.NewRegistry(operator.Deps{})
	var seen *memory.Assembled
	err := ops.Register(operator.Metadata{Name: "echo", Description: "Echoes its context", Type: operator.PureLLM,
		ContextRequirements: []string{"query", "counter.calls"}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				seen = oc.Assembled
				return &operator.Result{Output: oc.Assembled.String()}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = ops.Register(operator.Metadata{Name: "needs_docs", Description: "Needs a source nobody serves", Type: operator.PureLLM,
		ContextRequirements: []string{"query", "documents.recent"}},
		func(operator.Deps) (operator.Operator, error) {
			return operator.Func(func(ctx context.Context, oc *operator.Context) (*operator.Result, error) {
				t.Error("needs_docs ran without its context")
				return &operator.Result{}, nil
			}), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	asm := memory.NewAssembler(memory.AssemblerConfig{})
	fetches := 0
	err = asm.Register("counter", memory.SourceFunc(func(context.Context, *memory.Turn, memory.Requirement) (memory.Part, error) {
		fetches++
		return memory.Part{Priority: memory.PriorityTurn, Items: []memory.Item{{Text: fmt.Sprintf("fetch %d", fetches)}}}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	local := operator.NewLocalRegistry()
	registerLocals(t, local, "A 1")
	p := operator.NewProvider(operator.ProviderConfig{Local: local, Operators: ops, Assembler: asm})
	ctx := context.Background()
	turn := memory.NewTurn("conv", "what changed?")

	pre, err := p.Assemble(ctx, "echo", nil, operator.Env{Turn: turn})
	if err != nil {
		t.Fatal(err)
	}
	if got := pre.String(); got != "## query\nwhat changed?\n\n## counter.calls\nfetch 1\n" {
		t.Errorf("assembled:\n%s", got)
	}
	res, err := p.Execute(ctx, "echo", nil, operator.Env{Turn: turn, Assembled: pre})
	if err != nil {
		t.Fatal(err)
	}
	if seen != pre || fetches != 1 {
		t.Errorf("the operator got %p (want the pre-assembled %p) after %d fetches (want 1)", seen, pre, fetches)
	}
	if !strings.Contains(res.Text(), "fetch 1") {
		t.Errorf("result %q", res.Text())
	}
	// Without a pre-assembled context, Execute assembles one, for the
	// query argument when there is no turn.
	if _, err := p.Execute(ctx, "echo", map[string]any{"query": "from args"}, operator.Env{Query: "from env"}); err != nil {
		t.Fatal(err)
	}
	if fetches != 2 || seen == pre || seen.Text("query") != "from args" {
		t.Errorf("fallback assembly: %d fetches, query %q", fetches, seen.Text("query"))
	}
	if a, err := p.Assemble(ctx, "about", nil, operator.Env{Turn: turn}); a != nil || err != nil {
		t.Errorf("Assemble of a local tool = %v, %v; want nil, nil", a, err)
	}
	_, err = p.Execute(ctx, "needs_docs", nil, operator.Env{Turn: turn})
	if !errors.Is(err, memory.ErrUnknownSource) || !strings.Contains(err.Error(), "needs_docs") || !strings.Contains(err.Error(), "documents.recent") {
		t.Errorf("unknown source: %v", err)
	}
}

// A local tool receives the turn of Env.Turn in Call.Turn: the same turn,
// so that it can read the conversation and record on it; nil without one.
func TestExecuteLocalReceivesTurn(t *testing.T) {
	var got []*memory.Turn
	local := operator.NewLocalRegistry()
	err := local.Register(operator.LocalFunc(operator.LocalInfo{Name: "whoami", Description: "Names the conversation"},
		func(_ context.Context, c operator.LocalCall) (*toolresult.Result, error) {
			got = append(got, c.Turn)
			if c.Turn == nil {
				return &toolresult.Result{Contents: []toolresult.Content{toolresult.TextContent("no turn")}}, nil
			}
			return &toolresult.Result{Contents: []toolresult.Content{toolresult.TextContent(c.Turn.ConversationID + ": " + c.Turn.Query)}}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	p := operator.NewProvider(operator.ProviderConfig{Local: local})
	turn := memory.NewTurn("conv-7", "which document?")
	res, err := p.Execute(t.Context(), "whoami", nil, operator.Env{Query: "which document?", Turn: turn})
	if err != nil || res.Text() != "conv-7: which document?" {
		t.Errorf("with a turn: %v, %v", res, err)
	}
	res, err = p.Execute(t.Context(), "whoami", nil, operator.Env{Query: "q"})
	if err != nil || res.Text() != "no turn" {
		t.Errorf("without a turn: %v, %v", res, err)
	}
	if len(got) != 2 || got[0] != turn || got[1] != nil {
		t.Errorf("Call.Turn of the calls = %v, want the Env's turn, then nil", got)
	}
}
