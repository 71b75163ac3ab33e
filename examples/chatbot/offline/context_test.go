package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
)

// assembled builds the context an operator's requirements ask for, in a
// conversation whose first exchange was about the Business plan and a turn
// whose results hold a query rewrite and a search result.
func assembled(t *testing.T, reqs []string, results ...memory.Result) (*memory.Turn, *memory.Assembled) {
	t.Helper()
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
	turn := memory.NewTurn("c1", "Is it billed annually?")
	for _, r := range results {
		if err := turn.Results.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	a, err := memory.NewAssembler(memory.AssemblerConfig{Conversations: convs}).Assemble(ctx, turn, reqs...)
	if err != nil {
		t.Fatal(err)
	}
	return turn, a
}

func offlineOperators(t *testing.T) *operator.Registry {
	t.Helper()
	ops := operator.NewRegistry(operator.Deps{Models: operator.OneModel(offline.New(offline.Config{}))})
	if err := operator.RegisterBuiltins(ops, operator.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	return ops
}

var rewriteResult = memory.Result{ID: "step_1", Name: "Rewrite Query",
	Output: map[string]any{"internal_query": "business plan billed annually", "external_query": "business plan billed annually"}}

// The synthesizer's and the writer's prompts hold the query rewriter's JSON
// in their assembled context (results.all); they still answer from their
// sources, and a rewrite among the sources is not quoted as a fact.
func TestOperatorsWithAssembledResults(t *testing.T) {
	ops := offlineOperators(t)
	search := memory.Result{ID: "step_2", Name: "Search", Output: "All prices are billed annually. Monthly billing costs 20% more."}
	for _, op := range []string{"synthesizer", "writer"} {
		meta, _ := ops.Lookup(op)
		turn, a := assembled(t, meta.ContextRequirements, rewriteResult, search)
		if !strings.Contains(a.String(), `"internal_query"`) {
			t.Fatalf("%s: the assembled context lacks the rewrite:\n%s", op, a)
		}
		material := map[string]any{"sources": []any{`(query_rewriter) {"external_query":"business plan billed annually","internal_query":"business plan billed annually"}`,
			"(search_knowledge) All prices are billed annually. Monthly billing costs 20% more."}}
		if op == "writer" {
			material = map[string]any{"content": "All prices are billed annually. Monthly billing costs 20% more."}
		}
		res, _, err := ops.Execute(context.Background(), op, &operator.Context{Query: turn.Query, Params: material, Turn: turn, Assembled: a})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Text()
		if strings.Contains(text, "internal_query") || json.Valid([]byte(strings.TrimSpace(text))) {
			t.Errorf("%s answered with the rewrite:\n%s", op, text)
		}
		if !strings.Contains(text, "All prices are billed annually.") {
			t.Errorf("%s does not quote its source:\n%s", op, text)
		}
	}
}

// The query rewriter reads the conversation in its assembled context and
// names what "it" refers to.
func TestRewriterResolvesFromContext(t *testing.T) {
	ops := offlineOperators(t)
	meta, _ := ops.Lookup("query_rewriter")
	turn, a := assembled(t, meta.ContextRequirements)
	res, _, err := ops.Execute(context.Background(), "query_rewriter", &operator.Context{Query: turn.Query, Turn: turn, Assembled: a})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := res.Output.(map[string]any)
	if q, _ := out["internal_query"].(string); !strings.Contains(q, "business") || !strings.Contains(q, "billed") {
		t.Errorf("internal_query %q, want the Business plan and the question's words", q)
	}
	// Without the conversation, there is nothing to resolve "it" with.
	res, _, err = ops.Execute(context.Background(), "query_rewriter", &operator.Context{Query: turn.Query})
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := res.Output.(map[string]any)["internal_query"].(string); strings.Contains(q, "business") {
		t.Errorf("internal_query %q without context names the Business plan", q)
	}
}

// A follow-up that refers back with a pronoun goes to the query rewriter
// when it is offered; its rewrite is searched, not quoted, and reflection
// asks for the search.
func TestSupervisorRewritesFollowUp(t *testing.T) {
	c := offlineClient(t)
	ctx := context.Background()
	tools := []model.ToolDef{{Name: "search_knowledge"}, {Name: "web_search"}, {Name: "query_rewriter"}}
	conv := "user: How much does the Business plan cost?\nassistant: Business costs $89 per editor per month."
	const q = "Is it billed annually?"
	dres, err := supervisor.Decide(ctx, c, supervisor.DecideInput{Query: q, Context: conv, Tools: tools, Iteration: 1, MaxIterations: 5})
	d := dres.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionCallTool || d.Tool != "query_rewriter" || d.Arguments["query"] != q {
		t.Fatalf("Decide() = %s %s %v, want query_rewriter with the question", d.Action, d.Tool, d.Arguments)
	}
	obs := []supervisor.Observation{{Source: "query_rewriter", Content: `{"external_query":"business plan billed annually","internal_query":"business plan billed annually"}`}}
	rres, err := supervisor.Reflect(ctx, c, supervisor.ReflectInput{Query: q, Observations: obs, Iteration: 1, MaxIterations: 5})
	r := rres.Value
	if err != nil {
		t.Fatal(err)
	}
	if r.Assessment != supervisor.AssessNeedMore {
		t.Errorf("Reflect() after the rewrite = %s, want need_more", r.Assessment)
	}
	dres, err = supervisor.Decide(ctx, c, supervisor.DecideInput{Query: q, Context: conv, Tools: tools, Observations: obs, Iteration: 2, MaxIterations: 5})
	d = dres.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionCallTool || d.Tool != "search_knowledge" || d.Arguments["query"] != "business plan billed annually" {
		t.Errorf("Decide() after the rewrite = %s %s %v, want search_knowledge with the internal query", d.Action, d.Tool, d.Arguments)
	}
}

// A follow-up that asks for the competitor comparison still gets the
// pricing workflow, whose query_rewriter step resolves the pronoun.
func TestFollowUpComparisonIsAWorkflow(t *testing.T) {
	c := offlineClient(t)
	tools := append([]model.ToolDef{{Name: "search_knowledge"}, {Name: "web_search"}}, operators...)
	dres2, err := supervisor.Decide(context.Background(), c, supervisor.DecideInput{Query: "Compare its pricing to competitors",
		Context: "user: Tell me about the Business plan\nassistant: Business costs $89 per editor per month.", Tools: tools, Iteration: 1, MaxIterations: 5})
	d := dres2.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionCreateWorkflow || len(d.Workflow.Steps) == 0 || d.Workflow.Steps[0].Operator != "query_rewriter" {
		t.Errorf("Decide() = %s %s, want the pricing workflow", d.Action, d.Tool)
	}
}
