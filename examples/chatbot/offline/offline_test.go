package offline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/operator/plan"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// toolbox connects to the bundled MCP servers in-process and lists their
// tools as the supervisor sees them.
type toolbox struct {
	byTool map[string]*client.Client
	tools  []model.ToolDef
}

func newToolbox(t *testing.T) *toolbox {
	t.Helper()
	tb := &toolbox{byTool: map[string]*client.Client{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, b := range mcpservers.Bundled() {
		srv, err := b.New()
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.NewInProcessClient(srv)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ClientInfo = mcp.Implementation{Name: "offline-test", Version: "1"}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			tb.byTool[tool.Name] = c
			tb.tools = append(tb.tools, model.ToolDef{Name: tool.Name, Description: tool.Description})
		}
	}
	return tb
}

func (tb *toolbox) call(t *testing.T, name string, args map[string]any) supervisor.Observation {
	t.Helper()
	c, ok := tb.byTool[name]
	if !ok {
		t.Fatalf("the model called %q, which no server offers", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return supervisor.Observation{Source: name, Err: err.Error()}
	}
	var text []string
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if res.IsError {
		return supervisor.Observation{Source: name, Err: strings.Join(text, "\n")}
	}
	return supervisor.Observation{Source: name, Content: strings.Join(text, "\n")}
}

// operators are the workflow operators the chatbot offers beside the MCP
// tools.
var operators = []model.ToolDef{
	{Name: "query_rewriter", Description: "Rewrites the question into an internal and an external search query."},
	{Name: "rag_retriever", Description: "Searches the internal documents."},
	{Name: "web_searcher", Description: "Searches the web."},
	{Name: "synthesizer", Description: "Combines several sources into one account."},
}

func offlineClient(t *testing.T) *agent.Client {
	t.Helper()
	c, err := agent.New(agent.Config{Model: offline.New(offline.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecideFirstAction(t *testing.T) {
	tb := newToolbox(t)
	tools := append(append([]model.ToolDef{}, tb.tools...), operators...)
	c := offlineClient(t)
	tests := []struct {
		query string
		want  supervisor.Decision // Reasoning and, for ANSWER and CLARIFY, the texts are not compared
	}{
		{"Hello!", supervisor.Decision{Action: supervisor.ActionAnswer}},
		{"thanks a lot", supervisor.Decision{Action: supervisor.ActionAnswer}},
		{"Update the document", supervisor.Decision{Action: supervisor.ActionClarify}},
		{"help", supervisor.Decision{Action: supervisor.ActionClarify}},
		{"do it", supervisor.Decision{Action: supervisor.ActionClarify}},
		{"What is 15% of 240?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "calculate", Arguments: map[string]any{"expression": "(15/100*240)"}}},
		{"How much is 1,200 * 12 + 50?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "calculate", Arguments: map[string]any{"expression": "1200 * 12 + 50"}}},
		{"What is 7 times 6", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "calculate", Arguments: map[string]any{"expression": "7 * 6"}}},
		{"How much does the Team plan cost?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "search_knowledge", Arguments: map[string]any{"query": "team plan cost"}}},
		{"What is your refund policy?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "search_knowledge", Arguments: map[string]any{"query": "refund policy"}}},
		{"Do you support SAML single sign-on?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "search_knowledge", Arguments: map[string]any{"query": "support saml single sign"}}},
		{"What's the latest news about Northwind Metrics?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "web_search", Arguments: map[string]any{"query": "latest news northwind metrics"}}},
		{"What do competitors charge for viewers?", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "web_search", Arguments: map[string]any{"query": "competitors charge viewers"}}},
		{"What is the Go programming language?", supervisor.Decision{Action: supervisor.ActionAnswer}},
		{"Search the web for the Go programming language", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "web_search", Arguments: map[string]any{"query": "search web go programming language"}}},
		{"I'd like to book a demo, my email is ana@example.com", supervisor.Decision{Action: supervisor.ActionCallTool, Tool: "book_demo", Arguments: map[string]any{"email": "ana@example.com"}}},
		{"Compare our pricing to competitors", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Workflow: &plan.Plan{
			Goal: "Compare our pricing to competitors",
			Steps: []plan.Step{
				{ID: "step_1", Name: "Rewrite Query", Operator: "query_rewriter", InputMapping: map[string]any{"query": "{{user_query}}"}},
				{ID: "step_2", Name: "Search Internal Docs", Operator: "rag_retriever", InputMapping: map[string]any{"query": "{{step_1.internal_query}}"}, DependsOn: []string{"step_1"}},
				{ID: "step_3", Name: "Search Web", Operator: "web_searcher", InputMapping: map[string]any{"query": "{{step_1.external_query}}"}, DependsOn: []string{"step_1"}},
				{ID: "step_4", Name: "Synthesize", Operator: "synthesizer", InputMapping: map[string]any{"sources": []any{"{{step_2.results}}", "{{step_3.results}}"}}, DependsOn: []string{"step_2", "step_3"}},
			},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			dres, err := supervisor.Decide(context.Background(), c, supervisor.DecideInput{Query: tt.query, Tools: tools, Iteration: 1, MaxIterations: 5})
			got, usage := dres.Value, dres.Usage
			if err != nil {
				t.Fatal(err)
			}
			if dres.Fallback {
				t.Fatalf("Decide fell back: %s", got.Reasoning)
			}
			if got.Reasoning == "" || usage.InputTokens == 0 || usage.OutputTokens == 0 {
				t.Errorf("reasoning %q, usage %+v: want both set", got.Reasoning, usage)
			}
			switch got.Action {
			case supervisor.ActionAnswer:
				if got.Response == "" {
					t.Error("ANSWER without a response")
				}
				got.Response = ""
			case supervisor.ActionClarify:
				if !strings.HasSuffix(got.Question, "?") {
					t.Errorf("question %q is not a question", got.Question)
				}
				got.Question = ""
			}
			got.Reasoning = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

// TestReActLoop runs the supervisor loop against the real bundled tools:
// decide, call the tool, reflect, decide again, until an answer.
func TestReActLoop(t *testing.T) {
	tb := newToolbox(t)
	c := offlineClient(t)
	tests := []struct {
		query     string
		wantTools []string
		wantFacts []string // quoted in the answer
	}{
		{"How much does the Team plan cost?", []string{"search_knowledge"}, []string{"Team costs $49 per editor per month"}},
		{"What is 15% of 240?", []string{"calculate"}, []string{"36"}},
		{"What's the latest news about Northwind Metrics pricing?", []string{"web_search"}, []string{"$75"}},
		{"Search the web for the Go programming language", []string{"web_search"}, []string{"Go is a statically typed, compiled programming language"}},
		{"What is the Go programming language?", nil, []string{"Go (Golang) is an open-source, statically typed, compiled programming language"}},
		{"Hi there", nil, []string{"Hello"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ctx := context.Background()
			var obs []supervisor.Observation
			var called []string
			for it := 1; ; it++ {
				if it > 5 {
					t.Fatalf("no answer after 5 iterations; called %v", called)
				}
				dres2, err := supervisor.Decide(ctx, c, supervisor.DecideInput{Query: tt.query, Tools: tb.tools, Observations: obs, Iteration: it, MaxIterations: 5})
				d := dres2.Value
				if err != nil {
					t.Fatal(err)
				}
				if d.Action == supervisor.ActionAnswer {
					t.Logf("answer after %v:\n%s", called, d.Response)
					for _, f := range tt.wantFacts {
						if !strings.Contains(d.Response, f) {
							t.Errorf("answer lacks %q:\n%s", f, d.Response)
						}
					}
					break
				}
				if d.Action != supervisor.ActionCallTool {
					t.Fatalf("iteration %d: %s (%s), want CALL_TOOL or ANSWER", it, d.Action, d.Reasoning)
				}
				called = append(called, d.Tool)
				obs = append(obs, tb.call(t, d.Tool, d.Arguments))
				rres, err := supervisor.Reflect(ctx, c, supervisor.ReflectInput{Query: tt.query, Observations: obs, Iteration: it, MaxIterations: 5})
				r := rres.Value
				if err != nil {
					t.Fatal(err)
				}
				if r.Assessment != supervisor.AssessSatisfied {
					t.Fatalf("reflection after %s: %s (%s %s)", d.Tool, r.Assessment, r.Reasoning, r.Missing)
				}
				// Satisfied: the supervisor answers from the results.
			}
			if diff := cmp.Diff(tt.wantTools, called); diff != "" {
				t.Errorf("tools called (-want +got):\n%s", diff)
			}
			// The writer quotes the same facts from the results.
			if len(obs) > 0 {
				resp, err := supervisor.Write(ctx, c, supervisor.WriteInput{Query: tt.query, Observations: obs})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range tt.wantFacts {
					if !strings.Contains(resp.Value, f) {
						t.Errorf("written answer lacks %q:\n%s", f, resp.Value)
					}
				}
			}
		})
	}
}

func TestReflect(t *testing.T) {
	c := offlineClient(t)
	tests := []struct {
		name string
		in   supervisor.ReflectInput
		want supervisor.Assessment
	}{
		{"covering result", supervisor.ReflectInput{Query: "How much does the Team plan cost?",
			Observations: []supervisor.Observation{{Source: "search_knowledge", Content: "[1] pricing § Team (score 5.10)\nTeam costs $49 per editor per month."}}}, supervisor.AssessSatisfied},
		{"off-topic result", supervisor.ReflectInput{Query: "What is the SLA uptime for Enterprise?",
			Observations: []supervisor.Observation{{Source: "web_search", Content: "1. Go (programming language)\n   Go is a compiled language."}}}, supervisor.AssessNeedMore},
		{"off-topic at the last iteration", supervisor.ReflectInput{Query: "What is the SLA uptime for Enterprise?", Iteration: 5, MaxIterations: 5,
			Observations: []supervisor.Observation{{Source: "web_search", Content: "1. Go (programming language)\n   Go is a compiled language."}}}, supervisor.AssessSatisfied},
		{"failed call", supervisor.ReflectInput{Query: "What is 2+2?",
			Observations: []supervisor.Observation{{Source: "calculate", Err: "timeout"}}}, supervisor.AssessNeedMore},
		{"failed at the last iteration", supervisor.ReflectInput{Query: "What is 2+2?", Iteration: 3, MaxIterations: 3,
			Observations: []supervisor.Observation{{Source: "calculate", Err: "timeout"}}}, supervisor.AssessBlocked},
		// Nothing matched in the knowledge base: the web may cover it.
		{"no match, web untried", supervisor.ReflectInput{Query: "Tell me about zebras",
			Observations: []supervisor.Observation{{Source: "search_knowledge", Content: `No passages match "zebras". Try other words.`}}}, supervisor.AssessNeedMore},
		{"no match anywhere", supervisor.ReflectInput{Query: "Tell me about zebras",
			Observations: []supervisor.Observation{{Source: "search_knowledge", Content: `No passages match "zebras". Try other words.`},
				{Source: "web_search", Content: `No web results for "zebras".`}}}, supervisor.AssessBlocked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rres2, err := supervisor.Reflect(context.Background(), c, tt.in)
			got := rres2.Value
			if err != nil {
				t.Fatal(err)
			}
			if rres2.Fallback || got.Assessment != tt.want {
				t.Errorf("Reflect() = %s (fallback %v: %s), want %s", got.Assessment, rres2.Fallback, got.Reasoning, tt.want)
			}
		})
	}
}

func TestSupervisorTriesAnotherSource(t *testing.T) {
	c := offlineClient(t)
	tools := []model.ToolDef{{Name: "search_knowledge", Description: "Search the knowledge base."}, {Name: "web_search", Description: "Search the web."}}
	obs := []supervisor.Observation{{Source: "search_knowledge", Content: `No passages match "northwind pro plan". Try other words.`}}
	dres3, err := supervisor.Decide(context.Background(), c, supervisor.DecideInput{Query: "How much is the Northwind Pro plan?", Tools: tools, Observations: obs, Iteration: 2})
	d := dres3.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionCallTool || d.Tool != "web_search" {
		t.Errorf("Decide() = %s %s, want CALL_TOOL web_search after the knowledge base had nothing", d.Action, d.Tool)
	}
	dres3, err = supervisor.Decide(context.Background(), c, supervisor.DecideInput{Query: "How much is the Northwind Pro plan?", Tools: tools,
		Observations: append(obs, supervisor.Observation{Source: "web_search", Err: "connection refused"}), Iteration: 3})
	d = dres3.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionAnswer || !strings.Contains(d.Response, "web_search failed: connection refused") {
		t.Errorf("Decide() = %s %q, want an ANSWER that says what failed", d.Action, d.Response)
	}
}

func TestPlanWorkflow(t *testing.T) {
	c := offlineClient(t)
	pres, err := supervisor.Plan(context.Background(), c, supervisor.PlanInput{Query: "Compare our pricing to competitors", Operators: operators})
	got := pres.Value
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string][]string{}
	for _, s := range got.Steps {
		deps[s.ID] = s.DependsOn
	}
	want := map[string][]string{"step_1": nil, "step_2": {"step_1"}, "step_3": {"step_1"}, "step_4": {"step_2", "step_3"}}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	pres, err = supervisor.Plan(context.Background(), c, supervisor.PlanInput{Query: "Summarise our security policy", Operators: operators})
	got = pres.Value
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 2 || got.Steps[0].Operator != "rag_retriever" || got.Steps[1].Operator != "synthesizer" {
		t.Errorf("plan = %+v, want rag_retriever then synthesizer", got.Steps)
	}
}

// A markdown document among the results keeps its "## " headings without
// breaking the prompt's sections.
func TestMarkdownResult(t *testing.T) {
	c := offlineClient(t)
	doc := "# Acme Analytics: pricing and plans\n\n## Team\n\nTeam costs $49 per editor per month with no editor limit.\n\n## Business\n\nBusiness costs $89 per editor per month."
	dres4, err := supervisor.Decide(context.Background(), c, supervisor.DecideInput{Query: "How much does the Business plan cost?", Iteration: 2,
		Tools:        []model.ToolDef{{Name: "get_document", Description: "Read a document."}},
		Observations: []supervisor.Observation{{Source: "get_document", Content: doc}}})
	d := dres4.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionAnswer || !strings.Contains(d.Response, `"Business costs $89 per editor per month." (get_document: Business)`) {
		t.Errorf("Decide() = %s:\n%s", d.Action, d.Response)
	}
}

func TestFollowUp(t *testing.T) {
	c := offlineClient(t)
	tools := []model.ToolDef{{Name: "search_knowledge"}, {Name: "web_search"}}
	conversation := "## conversation.recent(5)\nuser: How much does the Team plan cost?\nassistant: Team costs $49 per editor per month.\nuser: And the Business plan?\n"
	tests := []struct {
		query, context string
		want           map[string]any
	}{
		// The name asked takes the place of the earlier one: Business, not Team too.
		{"And the Business plan?", conversation, map[string]any{"query": "business plan cost"}},
		{"Is it billed annually?", conversation, map[string]any{"query": "business plan billed annually"}},
		{"Is it billed annually?", "", map[string]any{"query": "billed annually"}},
		{"fix it", conversation, nil},
	}
	for _, tt := range tests {
		dres5, err := supervisor.Decide(context.Background(), c, supervisor.DecideInput{Query: tt.query, Context: tt.context, Tools: tools})
		d := dres5.Value
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == nil {
			if d.Action != supervisor.ActionClarify {
				t.Errorf("Decide(%q) = %s, want CLARIFY even after an earlier question", tt.query, d.Action)
			}
			continue
		}
		if d.Tool != "search_knowledge" || !cmp.Equal(tt.want, d.Arguments) {
			t.Errorf("Decide(%q) = %s %s %v, want search_knowledge %v", tt.query, d.Action, d.Tool, d.Arguments, tt.want)
		}
	}
}
