package offline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// toolCaller serves the operators' MCP calls from the bundled servers.
func (tb *toolbox) toolCaller(t *testing.T) operator.ToolCaller {
	return operator.ToolCallerFunc(func(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
		c, ok := tb.byTool[name]
		if !ok {
			t.Errorf("operator called %q, which no server offers", name)
			return &toolresult.Result{Tool: name, IsError: true, Error: "no such tool"}, nil
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return nil, err
		}
		out := &toolresult.Result{Tool: name, IsError: res.IsError}
		for _, ct := range res.Content {
			if tc, ok := ct.(mcp.TextContent); ok {
				out.Contents = append(out.Contents, toolresult.TextContent(tc.Text))
				if res.IsError {
					out.Error = tc.Text
				}
			}
		}
		return out, nil
	})
}

// TestPricingWorkflow runs the supervisor's workflow for "compare our
// pricing to competitors" with the built-in operators, whose LLM steps
// (query rewriting, synthesis) are answered by the offline model and whose
// searches go to the bundled MCP servers, then lets the supervisor answer
// from the synthesis.
func TestPricingWorkflow(t *testing.T) {
	t.Run("no context", func(t *testing.T) { testPricingWorkflow(t, false) })
	// With an assembler, the synthesizer's prompt also holds the turn's
	// results (results.all), the query rewriter's JSON among them; the
	// synthesis still quotes the search results.
	t.Run("assembled context", func(t *testing.T) { testPricingWorkflow(t, true) })
}

func testPricingWorkflow(t *testing.T, assemble bool) {
	tb := newToolbox(t)
	demo := offline.New(offline.Config{})
	ops := operator.NewRegistry(operator.Deps{Models: operator.ModelFunc(func(string) (model.Model, error) { return demo, nil })})
	if err := operator.RegisterBuiltins(ops, operator.BuiltinConfig{RAGSearchTool: "search_knowledge", WebSearchTool: "web_search"}); err != nil {
		t.Fatal(err)
	}
	var tools []model.ToolDef
	for _, name := range []string{"query_rewriter", "rag_retriever", "web_searcher", "synthesizer"} {
		m, ok := ops.Lookup(name)
		if !ok {
			t.Fatalf("no operator %s", name)
		}
		tools = append(tools, model.ToolDef{Name: m.Name, Description: m.Description})
	}
	c, err := agent.New(agent.Config{Model: demo})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const query = "Compare our pricing to competitors"

	dres, err := supervisor.Decide(ctx, c, supervisor.DecideInput{Query: query, Tools: tools, Iteration: 1, MaxIterations: 5})
	d := dres.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionCreateWorkflow {
		t.Fatalf("Decide() = %s, want CREATE_WORKFLOW", d.Action)
	}
	def := *d.Workflow
	cfg := workflow.Config{Operators: ops}
	env := operator.Env{Tools: tb.toolCaller(t)}
	if assemble {
		convs, err := memory.NewConversations(memory.ConversationConfig{Store: memory.NewInMemoryStore()})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Assembler = memory.NewAssembler(memory.AssemblerConfig{Conversations: convs, Budget: -1})
		if err := cfg.Assembler.Register("tools", memory.SourceFunc(func(_ context.Context, _ *memory.Turn, r memory.Requirement) (memory.Part, error) {
			return memory.Part{Priority: memory.PriorityRequested, Items: []memory.Item{{Text: `{"name":"` + r.Arg + `"}`}}}, nil
		})); err != nil {
			t.Fatal(err)
		}
		env.Turn = memory.NewTurn("c1", query)
	}
	wf, err := workflow.Compile(def, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := wf.Run(ctx, query, env)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.IDs(workflow.Succeeded); len(got) != 4 {
		t.Fatalf("succeeded steps %v, want all four", got)
	}
	rewritten, _ := res.Step("step_1")
	if q, _ := rewritten.Output.(map[string]any)["external_query"].(string); !strings.Contains(q, "competitors") {
		t.Errorf("rewritten queries %v, want competitors in the external one", rewritten.Output)
	}
	synth, _ := res.Step("step_4")
	synthesis, _ := synth.Output.(string)
	for _, fact := range []string{"$49", "Northwind"} {
		if !strings.Contains(synthesis, fact) {
			t.Errorf("synthesis lacks %q:\n%s", fact, synthesis)
		}
	}

	obs := []supervisor.Observation{{Source: "workflow: " + def.Goal, Content: synthesis}}
	rres, err := supervisor.Reflect(ctx, c, supervisor.ReflectInput{Query: query, Observations: obs, Iteration: 1, MaxIterations: 5})
	r := rres.Value
	if err != nil {
		t.Fatal(err)
	}
	if r.Assessment != supervisor.AssessSatisfied {
		t.Fatalf("Reflect() = %s (%s)", r.Assessment, r.Missing)
	}
	dres, err = supervisor.Decide(ctx, c, supervisor.DecideInput{Query: query, Tools: tools, Observations: obs, Iteration: 2, MaxIterations: 5})
	d = dres.Value
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != supervisor.ActionAnswer || !strings.Contains(d.Response, "$49") {
		t.Errorf("final decision %s:\n%s", d.Action, d.Response)
	}
	t.Logf("synthesis:\n%s\n\nanswer:\n%s", synthesis, d.Response)
}

// TestOperatorPrompts runs the built-in LLM operators on the offline model:
// the writer and the analyzer quote their material, the coder gets a
// placeholder program, and nothing is invented when there is no material.
func TestOperatorPrompts(t *testing.T) {
	demo := offline.New(offline.Config{})
	ops := operator.NewRegistry(operator.Deps{Models: operator.ModelFunc(func(string) (model.Model, error) { return demo, nil })})
	if err := operator.RegisterBuiltins(ops, operator.BuiltinConfig{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op, query string
		params    map[string]any
		want      string
	}{
		{"writer", "How much is Team?", map[string]any{"content": "Team costs $49 per editor per month. Viewers are free."},
			`- "Team costs $49 per editor per month." (content)`},
		{"analyzer", "What does Business cost?", map[string]any{"data": []any{"Business costs $89 per editor per month.", "Starter costs $19."}},
			`- "Business costs $89 per editor per month." (data [1])`},
		{"writer", "What is the capital of Peru?", map[string]any{"content": ""}, "I have no information to answer that."},
	}
	for _, tt := range tests {
		t.Run(tt.op+" "+tt.query, func(t *testing.T) {
			res, _, err := ops.Execute(context.Background(), tt.op, &operator.Context{Query: tt.query, Params: tt.params})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text(), tt.want) {
				t.Errorf("%s output lacks %q:\n%s", tt.op, tt.want, res.Text())
			}
		})
	}
}
