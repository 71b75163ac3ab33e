package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

// catalog is a fixed tool catalogue implementing memory.Tools.
type catalog struct {
	tools   []model.ToolSummary
	schemas map[string]string
	err     error
}

func (c *catalog) ToolSummaries(context.Context) ([]model.ToolSummary, error) {
	return c.tools, c.err
}

func (c *catalog) ToolSchema(_ context.Context, name string) (string, error) {
	if c.err != nil {
		return "", c.err
	}
	s, ok := c.schemas[name]
	if !ok {
		return "", fmt.Errorf("%w: no tool named %q", memory.ErrNotFound, name)
	}
	return s, nil
}

var allRequirements = []string{
	"query",
	"conversation.summary",
	"conversation.recent(3)",
	"tools.summaries",
	"tools.schema(web_search)",
	"results.step(step_1)",
	"results.all",
	"actions.this_turn",
}

type fixture struct {
	asm  *memory.Assembler
	turn *memory.Turn
}

func newFixture(t testing.TB, cfg memory.AssemblerConfig) fixture {
	t.Helper()
	conv, err := memory.NewConversations(memory.ConversationConfig{
		Store: memory.NewInMemoryStore(), Summarizer: &foldRecorder{}, Window: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		if err := conv.Append(ctx, "c", memory.Message{Role: role, Content: fmt.Sprint("m", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Conversations = conv
	if cfg.Tools == nil {
		cfg.Tools = &catalog{
			tools: []model.ToolSummary{
				{Name: "rag_search", Description: "Search internal documents"},
				{Name: "web_search", Description: "Search the web"},
			},
			schemas: map[string]string{"web_search": `{"type":"object"}`},
		}
	}
	turn := memory.NewTurn("c", "Compare our pricing to competitors")
	turn.Results.Put(memory.Result{ID: "step_1", Name: "Rewrite Query", Output: "pricing"})
	turn.Results.Put(memory.Result{ID: "step_2", Output: map[string]int{"hits": 3}})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	turn.Actions.Record(memory.Action{Kind: "call_tool", Name: "rag_search", Started: start, Ended: start.Add(1500 * time.Millisecond)})
	return fixture{asm: memory.NewAssembler(cfg), turn: turn}
}

func TestAssembleEveryBuiltInRequirement(t *testing.T) {
	f := newFixture(t, memory.AssemblerConfig{})
	got, err := f.asm.Assemble(t.Context(), f.turn, allRequirements...)
	if err != nil {
		t.Fatal(err)
	}
	want := `## query
Compare our pricing to competitors

## conversation.summary
m1,m2

## conversation.recent(3)
user: m3
assistant: m4
user: m5

## tools.summaries
- rag_search: Search internal documents
- web_search: Search the web

## tools.schema(web_search)
{"type":"object"}

## results.step(step_1)
pricing

## results.all
step_1 (Rewrite Query): pricing
step_2: {"hits":3}

## actions.this_turn
1. call_tool rag_search (succeeded in 1.5s)
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("String() (-want +got):\n%s", diff)
	}
	if len(got.Trimmed) != 0 || got.Budget != memory.DefaultBudget {
		t.Errorf("Trimmed = %v, Budget = %d; want nothing trimmed under the default budget", got.Trimmed, got.Budget)
	}
	if est := memory.EstimateTokens(got.String()); est > got.Tokens {
		t.Errorf("Tokens = %d, below the estimate of the rendered text (%d)", got.Tokens, est)
	}
	for _, tc := range []struct{ req, want string }{
		{"conversation.recent( 3 )", "user: m3\nassistant: m4\nuser: m5"},
		{" query", "Compare our pricing to competitors"},
		{"results.step(step_1)", "pricing"},
		{"conversation.recent(4)", ""},
		{"not a requirement(", ""},
	} {
		if text := got.Text(tc.req); text != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.req, text, tc.want)
		}
	}
	p, ok := got.Part("conversation.summary")
	if !ok || p.Priority != memory.PriorityHistory || p.Items[0].Tokens != memory.EstimateTokens("m1,m2")+1 {
		t.Errorf("Part(conversation.summary) = %+v, %v", p, ok)
	}
}

func TestAssembleDefaults(t *testing.T) {
	f := newFixture(t, memory.AssemblerConfig{})
	empty := memory.NewTurn("new", "")
	got, err := f.asm.Assemble(t.Context(), empty, "query", "conversation.summary", "conversation.recent", "results.all", "actions.this_turn", "query")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Parts) != 5 {
		t.Errorf("%d parts, want 5 (the duplicate query fetched once)", len(got.Parts))
	}
	if s := got.String(); s != "" || got.Tokens != 0 {
		t.Errorf("a new conversation with no query renders %q (%d tokens), want nothing", s, got.Tokens)
	}
	// conversation.recent without an argument is the window.
	got, err = f.asm.Assemble(t.Context(), f.turn, "conversation.recent")
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Text("conversation.recent"); text != "user: m3\nassistant: m4\nuser: m5" {
		t.Errorf("conversation.recent = %q, want the 3-message window", text)
	}
}

func TestAssembleErrors(t *testing.T) {
	f := newFixture(t, memory.AssemblerConfig{})
	for _, tc := range []struct {
		req    string
		is     error
		substr string
	}{
		{"conversation.recent(5", nil, "at byte 21"},
		{"memories.recent(3)", memory.ErrUnknownSource, "registered sources: actions, conversation, query, results, tools"},
		{"conversation.all", nil, "no method \"all\"; use conversation.summary or conversation.recent(N)"},
		{"conversation.recent(x)", nil, "from 1 to 10000"},
		{"conversation.recent(0)", nil, "from 1 to 10000"},
		{"conversation.recent(10001)", nil, "from 1 to 10000"},
		{"conversation.summary(2)", nil, "takes no argument"},
		{"query.text", nil, "takes no method"},
		{"results.step", nil, "results.step(ID)"},
		{"results.all(2)", nil, "results.all"},
		{"results.step(step_9)", memory.ErrNotFound, `no result with id "step_9" this turn (results so far: step_1, step_2)`},
		{"actions.last", nil, "actions.this_turn"},
		{"tools.schema", nil, "tools.schema(NAME)"},
		{"tools.schema(nope)", memory.ErrNotFound, `no tool named "nope"`},
	} {
		t.Run(tc.req, func(t *testing.T) {
			_, err := f.asm.Assemble(t.Context(), f.turn, "query", tc.req)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want one matching %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.substr) {
				t.Errorf("error %q lacks %q", err, tc.substr)
			}
			var se *memory.SyntaxError
			var re *memory.RequirementError
			if !errors.As(err, &se) && !errors.As(err, &re) {
				t.Errorf("error %T, want a *SyntaxError or *RequirementError", err)
			}
			if re != nil && !strings.HasPrefix(err.Error(), "memory: requirement ") {
				t.Errorf("error %q does not start by naming the requirement", err)
			}
		})
	}
	if _, err := f.asm.Assemble(t.Context(), nil, "query"); err == nil {
		t.Error("Assemble with a nil turn succeeded")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.asm.Assemble(ctx, f.turn, "query"); !errors.Is(err, context.Canceled) {
		t.Errorf("Assemble with a cancelled context: %v", err)
	}
	noConv := memory.NewTurn("", "q")
	if _, err := f.asm.Assemble(t.Context(), noConv, "conversation.summary"); err == nil || !strings.Contains(err.Error(), "no ConversationID") {
		t.Errorf("conversation source without a conversation id: %v", err)
	}
	broken := newFixture(t, memory.AssemblerConfig{Tools: &catalog{err: errors.New("registry down")}})
	if _, err := broken.asm.Assemble(t.Context(), broken.turn, "tools.summaries"); err == nil || !strings.Contains(err.Error(), `requirement "tools.summaries": registry down`) {
		t.Errorf("failing tool catalogue: %v", err)
	}
}

func TestWithoutOptionalSources(t *testing.T) {
	asm := memory.NewAssembler(memory.AssemblerConfig{})
	if diff := cmp.Diff([]string{"actions", "query", "results"}, asm.Sources()); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	_, err := asm.Assemble(t.Context(), memory.NewTurn("c", "q"), "tools.summaries")
	if !errors.Is(err, memory.ErrUnknownSource) {
		t.Errorf("tools.summaries without Tools: %v, want ErrUnknownSource", err)
	}
	if err := asm.Register("tools", memory.ToolSource(&catalog{tools: []model.ToolSummary{{Name: "calc", Description: "adds"}}})); err != nil {
		t.Fatal(err)
	}
	got, err := asm.Assemble(t.Context(), memory.NewTurn("c", "q"), "tools.summaries")
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Text("tools.summaries"); text != "- calc: adds" {
		t.Errorf("tools.summaries = %q", text)
	}
}

func TestRegisterAndCheck(t *testing.T) {
	asm := memory.NewAssembler(memory.AssemblerConfig{})
	profile := memory.SourceFunc(func(_ context.Context, turn *memory.Turn, req memory.Requirement) (memory.Part, error) {
		return memory.Part{Priority: memory.PriorityRequested, Items: []memory.Item{{Text: "expert user; prefers " + req.Arg}}}, nil
	})
	if err := asm.Register("profile", profile); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		src  memory.Source
		want string
	}{
		{"profile", profile, "already registered"},
		{"query", profile, "already registered"},
		{"my-source", profile, "not an identifier"},
		{"", profile, "not an identifier"},
		{"nothing", nil, "is nil"},
	} {
		if err := asm.Register(tc.name, tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%q): %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	got, err := asm.Assemble(t.Context(), memory.NewTurn("c", "q"), "profile.style(concise)")
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Text("profile.style(concise)"); text != "expert user; prefers concise" {
		t.Errorf("custom source = %q", text)
	}

	if err := asm.Check("query", "results.all", "profile.anything"); err != nil {
		t.Errorf("Check of valid requirements: %v", err)
	}
	err = asm.Check("query", "results.al", "conversation.summary", "actions.this_turn(", "results.step(step_1)")
	if err == nil {
		t.Fatal("Check of invalid requirements succeeded")
	}
	for _, want := range []string{`requirement "results.al"`, `requirement "conversation.summary": unknown context source`, `bad requirement "actions.this_turn("`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check error %q lacks %q", err, want)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 3 {
		t.Errorf("Check reported %d problems, want 3:\n%v", n, err)
	}
}

func TestTrimOrder(t *testing.T) {
	one := func(string) int { return 1 } // each item costs 2, each header 3
	reqs := []string{"query", "conversation.summary", "conversation.recent(3)", "tools.summaries", "results.all", "actions.this_turn"}
	// Untrimmed: query 5, summary 5, recent 9, tools 7, results 7, actions 5 = 38.
	for _, tc := range []struct {
		budget  int
		trimmed []memory.Trim
		left    map[string]string
	}{
		{38, nil, nil},
		{30, []memory.Trim{
			{Requirement: "conversation.summary", Items: 1, Tokens: 5, Emptied: true},
			{Requirement: "conversation.recent(3)", Items: 2, Tokens: 4},
		}, map[string]string{"conversation.recent(3)": "user: m5", "conversation.summary": ""}},
		{22, []memory.Trim{
			{Requirement: "conversation.summary", Items: 1, Tokens: 5, Emptied: true},
			{Requirement: "conversation.recent(3)", Items: 3, Tokens: 9, Emptied: true},
			{Requirement: "tools.summaries", Items: 1, Tokens: 2},
		}, map[string]string{"tools.summaries": "- web_search: Search the web"}},
		// actions.this_turn was requested after results.all: it goes first.
		{12, []memory.Trim{
			{Requirement: "conversation.summary", Items: 1, Tokens: 5, Emptied: true},
			{Requirement: "conversation.recent(3)", Items: 3, Tokens: 9, Emptied: true},
			{Requirement: "tools.summaries", Items: 2, Tokens: 7, Emptied: true},
			{Requirement: "actions.this_turn", Items: 1, Tokens: 5, Emptied: true},
		}, map[string]string{"results.all": "step_1 (Rewrite Query): pricing\nstep_2: {\"hits\":3}"}},
		{5, []memory.Trim{
			{Requirement: "conversation.summary", Items: 1, Tokens: 5, Emptied: true},
			{Requirement: "conversation.recent(3)", Items: 3, Tokens: 9, Emptied: true},
			{Requirement: "tools.summaries", Items: 2, Tokens: 7, Emptied: true},
			{Requirement: "actions.this_turn", Items: 1, Tokens: 5, Emptied: true},
			{Requirement: "results.all", Items: 2, Tokens: 7, Emptied: true},
		}, map[string]string{"query": "Compare our pricing to competitors"}},
	} {
		t.Run(fmt.Sprint("budget ", tc.budget), func(t *testing.T) {
			f := newFixture(t, memory.AssemblerConfig{Budget: tc.budget, Estimate: one})
			got, err := f.asm.Assemble(t.Context(), f.turn, reqs...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.trimmed, got.Trimmed); diff != "" {
				t.Errorf("Trimmed (-want +got):\n%s", diff)
			}
			if got.Tokens > tc.budget {
				t.Errorf("Tokens = %d over the budget %d", got.Tokens, tc.budget)
			}
			for req, want := range tc.left {
				if text := got.Text(req); text != want {
					t.Errorf("%s = %q, want %q", req, text, want)
				}
			}
		})
	}
	f := newFixture(t, memory.AssemblerConfig{Budget: 4, Estimate: one})
	_, err := f.asm.Assemble(t.Context(), f.turn, reqs...)
	var be *memory.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, memory.ErrOverBudget) || be.Needed != 5 || be.Budget != 4 {
		t.Errorf("query over budget: %v, want a BudgetError needing 5 of 4", err)
	}
	if err != nil && !strings.Contains(err.Error(), "raise AssemblerConfig.Budget") {
		t.Errorf("BudgetError %q does not say what to do", err)
	}
	f = newFixture(t, memory.AssemblerConfig{Budget: -1, Estimate: one})
	got, err := f.asm.Assemble(t.Context(), f.turn, reqs...)
	if err != nil || len(got.Trimmed) != 0 || got.Tokens != 38 {
		t.Errorf("no budget: %v, %d tokens, trimmed %v; want 38 tokens untrimmed", err, got.Tokens, got.Trimmed)
	}
}

// TestTrimInvariants sweeps every budget with the default estimate and a
// long conversation, and checks what trimming promises.
func TestTrimInvariants(t *testing.T) {
	f := newFixture(t, memory.AssemblerConfig{Budget: -1})
	conv := f.asm
	full, err := conv.Assemble(t.Context(), f.turn, allRequirements...)
	if err != nil {
		t.Fatal(err)
	}
	rank := func(i int) int { return int(full.Parts[i].Priority)*1000 - i } // trim order: lower first
	for budget := 1; budget <= full.Tokens+1; budget++ {
		g := newFixture(t, memory.AssemblerConfig{Budget: budget})
		got, err := g.asm.Assemble(t.Context(), g.turn, allRequirements...)
		if errors.Is(err, memory.ErrOverBudget) {
			continue
		}
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if got.Tokens > budget || memory.EstimateTokens(got.String()) > got.Tokens {
			t.Fatalf("budget %d: Tokens %d, estimate of String() %d", budget, got.Tokens, memory.EstimateTokens(got.String()))
		}
		removed := 0
		for i, p := range got.Parts {
			orig := full.Parts[i].Items
			if !slices.EqualFunc(p.Items, orig[len(orig)-len(p.Items):], func(a, b memory.Item) bool { return a == b }) {
				t.Fatalf("budget %d: %s kept items that are not its newest", budget, p.Requirement)
			}
			removed += len(orig) - len(p.Items)
			if len(p.Items) < len(orig) {
				// Everything trimmed before this part must be gone.
				for j := range got.Parts {
					if rank(j) < rank(i) && len(got.Parts[j].Items) > 0 {
						t.Fatalf("budget %d: %s was trimmed while %s (trimmed earlier) kept items", budget, p.Requirement, got.Parts[j].Requirement)
					}
				}
			}
		}
		trimmedItems := 0
		for _, tr := range got.Trimmed {
			trimmedItems += tr.Items
		}
		if trimmedItems != removed {
			t.Fatalf("budget %d: Trimmed reports %d items, %d were removed", budget, trimmedItems, removed)
		}
		if p, _ := got.Part("query"); len(p.Items) != 1 {
			t.Fatalf("budget %d: the query was trimmed", budget)
		}
	}
}

func TestConcurrentAssemble(t *testing.T) {
	f := newFixture(t, memory.AssemblerConfig{Budget: 40})
	done := make(chan error)
	for i := range 8 {
		go func() {
			turn := memory.NewTurn("c", "q")
			turn.Results.Put(memory.Result{ID: "step_1", Output: i})
			_, err := f.asm.Assemble(t.Context(), turn, allRequirements...)
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
