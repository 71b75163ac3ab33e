package operator_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/google/go-cmp/cmp"
)

// prompts returns the prompts m received.
func prompts(m *llmtest.Model) []string {
	var out []string
	for _, c := range m.Calls() {
		out = append(out, c.Prompt)
	}
	return out
}

func builtins(t *testing.T, m model.Model, cfg operator.BuiltinConfig) *operator.Registry {
	t.Helper()
	var aliases []string
	reg := operator.NewRegistry(operator.Deps{Models: operator.ModelFunc(func(alias string) (model.Model, error) {
		aliases = append(aliases, alias)
		return m, nil
	})})
	if err := operator.RegisterBuiltins(reg, cfg); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestBuiltinCatalogue(t *testing.T) {
	reg := builtins(t, llmtest.New(), operator.BuiltinConfig{RAGSearchTool: "kb_search"})
	want := []string{"analyzer", "coder", "query_rewriter", "rag_retriever", "synthesizer", "web_searcher", "writer"}
	if diff := cmp.Diff(want, reg.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	types := map[string]operator.Type{}
	for _, m := range reg.All() {
		types[m.Name] = m.Type
		if err := memory.NewAssembler(memory.AssemblerConfig{}).Check(m.ContextRequirements...); err != nil && !errors.Is(err, memory.ErrUnknownSource) {
			t.Errorf("%s: requirements %q: %v", m.Name, m.ContextRequirements, err)
		}
	}
	wantTypes := map[string]operator.Type{"analyzer": operator.PureLLM, "coder": operator.Hybrid, "query_rewriter": operator.PureLLM,
		"rag_retriever": operator.MCPBacked, "synthesizer": operator.PureLLM, "web_searcher": operator.MCPBacked, "writer": operator.PureLLM}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
	rag, _ := reg.Lookup("rag_retriever")
	if diff := cmp.Diff([]string{"kb_search"}, rag.MCPTools); diff != "" {
		t.Errorf("configured RAG tool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"query", "tools.schema(kb_search)"}, rag.ContextRequirements); diff != "" {
		t.Errorf("RAG requirements (-want +got):\n%s", diff)
	}
}

func TestQueryRewriter(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		want    map[string]any
		wantErr string
	}{
		{"json", `{"internal_query": "pricing tiers", "external_query": "competitor SaaS pricing"}`,
			map[string]any{"internal_query": "pricing tiers", "external_query": "competitor SaaS pricing"}, ""},
		{"fenced with prose", "Sure:\n```json\n{\"internal_query\": \"a\", \"external_query\": \"b\"}\n```",
			map[string]any{"internal_query": "a", "external_query": "b"}, ""},
		{"missing field", `{"internal_query": "a"}`, nil, "lacks internal_query or external_query"},
		{"not json", "I cannot help", nil, "holds no JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New().On("search queries", llmtest.Text(tt.reply))
			reg := builtins(t, m, operator.BuiltinConfig{})
			res, _, err := reg.Execute(context.Background(), "query_rewriter", &operator.Context{Query: "how do we compare on price?"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if len(prompts(m)) != 2 {
					t.Errorf("%d model calls, want 2 (MaxRetries is 1)", len(prompts(m)))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Output); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if !strings.Contains(prompts(m)[0], "Question: how do we compare on price?") {
				t.Errorf("prompt lacks the query:\n%s", prompts(m)[0])
			}
		})
	}
}

func TestLLMOperators(t *testing.T) {
	tests := []struct {
		op     string
		params map[string]any
		key    string // a phrase of the operator's prompt
		inputs []string
	}{
		{"synthesizer", map[string]any{"sources": []any{"docs: $10", "web: $12"}}, "combine research results", []string{"[1] docs: $10", "[2] web: $12"}},
		{"writer", map[string]any{"content": "We are cheaper."}, "write the final answer", []string{"Content:\nWe are cheaper."}},
		{"analyzer", map[string]any{"data": map[string]any{"ours": 10, "theirs": 12}}, "analyse data", []string{`{"ours":10,"theirs":12}`}},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			m := llmtest.New().On(tt.key, llmtest.Text("  the answer  "))
			reg := builtins(t, m, operator.BuiltinConfig{})
			res, _, err := reg.Execute(context.Background(), tt.op, &operator.Context{Query: "compare prices", Params: tt.params})
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != "the answer" {
				t.Errorf("output %q", res.Output)
			}
			for _, in := range append(tt.inputs, "Question: compare prices") {
				if !strings.Contains(prompts(m)[0], in) {
					t.Errorf("prompt lacks %q:\n%s", in, prompts(m)[0])
				}
			}
		})
	}
}

func TestSynthesizerReadsTurnResults(t *testing.T) {
	m := llmtest.New().On("combine research results", llmtest.Text("merged"))
	reg := builtins(t, m, operator.BuiltinConfig{})
	turn := memory.NewTurn("c", "q")
	if err := turn.Results.Put(memory.Result{ID: "step_2", Output: "internal: $10"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Execute(context.Background(), "synthesizer", &operator.Context{Query: "q", Turn: turn}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompts(m)[0], "[step_2] internal: $10") {
		t.Errorf("prompt lacks the turn's results:\n%s", prompts(m)[0])
	}
}

func TestNoModel(t *testing.T) {
	reg := operator.NewRegistry(operator.Deps{})
	if err := operator.RegisterBuiltins(reg, operator.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Execute(context.Background(), "writer", &operator.Context{}); !errors.Is(err, operator.ErrNoModel) {
		t.Errorf("writer without models: %v, want ErrNoModel", err)
	}
}

// The built-in operators run on the agent package's client, which resolves
// their model aliases ("haiku" for the query rewriter) to provider models.
func TestOnAgentClient(t *testing.T) {
	model := llmtest.New().On("search queries", llmtest.JSON(map[string]string{"internal_query": "a", "external_query": "b"}))
	client, err := agent.New(agent.Config{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	reg := operator.NewRegistry(operator.Deps{Models: operator.AliasModels(client)})
	if err := operator.RegisterBuiltins(reg, operator.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	res, _, err := reg.Execute(context.Background(), "query_rewriter", &operator.Context{Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"internal_query": "a", "external_query": "b"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	haiku, _ := agent.DefaultRegistry().Lookup("haiku")
	if calls := model.Calls(); len(calls) != 1 || calls[0].Request.Model != haiku.ID {
		t.Errorf("calls %+v, want one to %s", calls, haiku.ID)
	}
}

// Each LLM operator's ContextRequirements give it what its task needs, and
// the assembled text reaches its prompt: the query rewriter and the writer
// see the conversation (so "is it billed annually?" can be resolved), the
// writer also its summary, the synthesizer and the analyzer the turn's
// results.
func TestBuiltinsSeeTheirContext(t *testing.T) {
	ctx := context.Background()
	convs, err := memory.NewConversations(memory.ConversationConfig{Store: memory.NewInMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	if err := convs.Append(ctx, "c1",
		memory.Message{Role: memory.RoleUser, Content: "How much does the Business plan cost?"},
		memory.Message{Role: memory.RoleAssistant, Content: "Business costs $89 per editor per month."}); err != nil {
		t.Fatal(err)
	}
	asm := memory.NewAssembler(memory.AssemblerConfig{Conversations: convs})
	turn := memory.NewTurn("c1", "Is it billed annually?")
	if err := turn.Results.Put(memory.Result{ID: "call_1", Name: "search_knowledge", Output: "All prices are billed annually."}); err != nil {
		t.Fatal(err)
	}
	conversation := "user: How much does the Business plan cost?\nassistant: Business costs $89 per editor per month."
	results := "call_1 (search_knowledge): All prices are billed annually."
	tests := []struct {
		op, key, reply string
		reqs           []string
		want           []string
	}{
		{"query_rewriter", "search queries", `{"internal_query": "a", "external_query": "b"}`,
			[]string{"query", "conversation.recent(3)"}, []string{"## conversation.recent(3)\n" + conversation}},
		{"synthesizer", "combine research results", "s", []string{"query", "results.all"}, []string{"## results.all\n" + results}},
		{"writer", "write the final answer", "w", []string{"query", "conversation.summary", "conversation.recent(5)", "results.all"},
			[]string{"## conversation.recent(5)\n" + conversation, "## results.all\n" + results}},
		{"analyzer", "analyse data", "a", []string{"query", "results.all"}, []string{"## results.all\n" + results}},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			m := llmtest.New().On(tt.key, llmtest.Text(tt.reply))
			reg := builtins(t, m, operator.BuiltinConfig{})
			meta, _ := reg.Lookup(tt.op)
			if diff := cmp.Diff(tt.reqs, meta.ContextRequirements); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
			a, err := asm.Assemble(ctx, turn, meta.ContextRequirements...)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := reg.Execute(ctx, tt.op, &operator.Context{Query: turn.Query, Turn: turn, Assembled: a}); err != nil {
				t.Fatal(err)
			}
			for _, w := range append(tt.want, "## query\nIs it billed annually?") {
				if !strings.Contains(prompts(m)[0], w) {
					t.Errorf("prompt lacks %q:\n%s", w, prompts(m)[0])
				}
			}
		})
	}
}
