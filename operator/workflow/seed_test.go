package workflow_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/internal/mcpserver"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/workflow"
	"github.com/google/go-cmp/cmp"
)

// The seed's example plan run by the built-in operators: the query
// rewriter and the synthesizer on a scripted model, the two searches over
// MCP against an in-process server, with the assembler feeding each
// operator its context requirements.
func TestSeedPricingWorkflowWithBuiltins(t *testing.T) {
	ctx := context.Background()
	srv := mcpserver.New()
	both := barrier(2)
	srv.Hook = func(ctx context.Context, tool string) error {
		if tool == "rag_search" || tool == "web_search" {
			return both(ctx)
		}
		return nil
	}
	session, err := mcpserver.Connect(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	model := llmtest.New().
		On("search queries", llmtest.Text(`{"internal_query": "Acme pricing plans", "external_query": "competitor pricing per user"}`)).
		On("combine research results", llmtest.Text("Acme Pro ($49) is cheaper than Globex ($59) and dearer than Initech ($45)."))
	ops := operator.NewRegistry(operator.Deps{Models: operator.OneModel(model)})
	if err := operator.RegisterBuiltins(ops, operator.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	conv, err := memory.NewConversations(memory.ConversationConfig{Store: memory.NewInMemoryStore()})
	if err != nil {
		t.Fatal(err)
	}
	asm := memory.NewAssembler(memory.AssemblerConfig{Conversations: conv, Tools: session})

	wf := newWorkflow(t, parsePricing(t), workflow.Config{Operators: ops, Assembler: asm})
	em := newRecorder()
	turn := memory.NewTurn("conv-1", "Compare our pricing to competitors")
	res, err := wf.Run(ctx, turn.Query, operator.Env{Reporter: em, Tools: session, Turn: turn})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	// The MCP tools the search steps call are reported as tools, each
	// between its step's start and end.
	got := drain(t, em)
	for _, tool := range []struct{ name, step string }{{"rag_search", "2"}, {"web_search", "3"}} {
		start, done := slices.Index(got, "tool.start tool="+tool.name), slices.Index(got, "tool.complete tool="+tool.name)
		stepStart := slices.IndexFunc(got, func(l string) bool { return strings.HasPrefix(l, "workflow.step.start step="+tool.step+" ") })
		stepEnd := slices.Index(got, "workflow.step.complete step="+tool.step)
		if !(stepStart < start && start < done && done < stepEnd) {
			t.Errorf("reports %q: want %s's tool.start and tool.complete inside step %s", got, tool.name, tool.step)
		}
	}
	checkPricingEvents(t, em)
	mcpCalls := srv.CallLog()
	slices.Sort(mcpCalls)
	wantCalls := []string{`rag_search({"query":"Acme pricing plans","top_k":5})`, `web_search({"query":"competitor pricing per user"})`}
	if diff := cmp.Diff(wantCalls, mcpCalls); diff != "" {
		t.Errorf("MCP calls (-want +got):\n%s", diff)
	}
	calls := model.Calls()
	synth := calls[len(calls)-1].Prompt
	for _, s := range []string{mcpserver.Docs["pricing"], mcpserver.Web["pricing"], "Question: Compare our pricing to competitors"} {
		if !strings.Contains(synth, s) {
			t.Errorf("the synthesizer's prompt lacks %q:\n%s", s, synth)
		}
	}
	s4, _ := res.Step("step_4")
	if !strings.HasPrefix(s4.Output.(string), "Acme Pro ($49)") {
		t.Errorf("step_4 output %q", s4.Output)
	}
	if n := turn.Actions.Len(); n != 4 {
		t.Errorf("%d actions in the turn, want one per step", n)
	}
	if a := turn.Actions.All()[0]; a.Kind != workflow.ActionKind || a.Name != "query_rewriter" || a.Detail != "step_1: Rewrite Query" || a.Status != memory.StatusSucceeded {
		t.Errorf("first action %+v", a)
	}
	// Each step's result is in the turn, for results.step(ID).
	ids := turn.Results.IDs()
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"step_1", "step_2", "step_3", "step_4"}, ids); diff != "" {
		t.Errorf("turn results (-want +got):\n%s", diff)
	}
}
