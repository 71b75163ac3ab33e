package supervisor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var testTools = []model.ToolDef{
	{Name: "search_knowledge", Description: "Search the company knowledge base. Arguments: query."},
	{Name: "web_search", Description: "Search the web. Arguments: query."},
	{Name: "calculate", Description: "Evaluate arithmetic. Arguments: expression."},
	{Name: "query_rewriter", Description: "Rewrite a query for internal and external search."},
	{Name: "synthesizer", Description: "Combine sources."},
}

// seedWorkflow is the four-step pricing comparison: steps 2 and 3 both
// depend on step 1 only, so they run in parallel.
func seedWorkflow() *plan.Plan {
	return &plan.Plan{Goal: "Compare our pricing to competitors", Steps: []plan.Step{
		{ID: "step_1", Name: "Rewrite Query", Operator: "query_rewriter", InputMapping: map[string]any{"query": "{{user_query}}"}},
		{ID: "step_2", Name: "Search Internal Docs", Operator: "search_knowledge", InputMapping: map[string]any{"query": "{{step_1.output}}"}, DependsOn: []string{"step_1"}},
		{ID: "step_3", Name: "Search Web", Operator: "web_search", InputMapping: map[string]any{"query": "{{step_1.output}}"}, DependsOn: []string{"step_1"}},
		{ID: "step_4", Name: "Synthesize", Operator: "synthesizer", InputMapping: map[string]any{"sources": []any{"{{step_2.results}}", "{{step_3.results}}"}}, DependsOn: []string{"step_2", "step_3"}},
	}}
}

func fieldErrors(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var fe *agent.FieldError
		if errors.As(e, &fe) {
			out = append(out, fe.Field+": "+fe.Message)
		} else {
			out = append(out, e.Error())
		}
	}
	walk(err)
	return out
}

func TestDecisionValidate(t *testing.T) {
	cyclic := seedWorkflow()
	cyclic.Steps[0].DependsOn = []string{"step_4"}
	broken := &plan.Plan{Steps: []plan.Step{
		{ID: "a", Name: "A", Operator: "web_search"},
		{ID: "a", Name: "A again", Operator: "web_search"},
		{ID: "c d", Name: "C", DependsOn: []string{"zz"}},
	}}
	// The three plans an earlier validator let through and the executor
	// rejected one supervisor iteration later.
	reserved := &plan.Plan{Goal: "g", Steps: []plan.Step{{ID: "user_query", Name: "Q", Operator: "web_search"}}}
	undeclared := &plan.Plan{Goal: "g", Steps: []plan.Step{
		{ID: "a", Name: "A", Operator: "web_search"},
		{ID: "b", Name: "B", Operator: "synthesizer", InputMapping: map[string]any{"text": "{{a.output}}"}},
	}}
	twice := &plan.Plan{Goal: "g", Steps: []plan.Step{
		{ID: "a", Name: "A", Operator: "web_search"},
		{ID: "b", Name: "B", Operator: "synthesizer", DependsOn: []string{"a", "a"}},
	}}
	tests := []struct {
		name string
		d    supervisor.Decision
		want []string
	}{
		{"answer", supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "r", Response: "Hi"}, nil},
		{"answer without response", supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "r"},
			[]string{"response: response is required when action is ANSWER"}},
		{"call without tool", supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "r"},
			[]string{"tool: tool is required when action is CALL_TOOL"}},
		{"clarify without question", supervisor.Decision{Action: supervisor.ActionClarify, Reasoning: "r", Question: "  "},
			[]string{"question: question is required when action is CLARIFY"}},
		{"workflow missing", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r"},
			[]string{"workflow: workflow is required when action is CREATE_WORKFLOW"}},
		{"seed workflow", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r", Workflow: seedWorkflow()}, nil},
		{"cycle", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r", Workflow: cyclic},
			[]string{"workflow: plan: dependency cycle step_1 -> step_2 -> step_4 -> step_1; remove one of its depends_on entries"}},
		{"broken workflow", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r", Workflow: broken},
			[]string{"workflow: plan: step a: id is used by steps 1 and 2; ids must be unique"}},
		{"reserved step id", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r", Workflow: reserved},
			[]string{`workflow: plan: step user_query: id is reserved for the user's query in templates; rename the step, such as "step_1"`}},
		{"template reads a step not depended on", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r", Workflow: undeclared},
			[]string{"workflow: plan: step b: input_mapping.text uses {{a.output}}, but a is not among depends_on; add it there"}},
		{"dependency listed twice", supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "r", Workflow: twice},
			[]string{`workflow: plan: step b: depends_on names "a" twice; list each dependency once`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fieldErrors(tt.d.Validate())); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	u := model.Usage{InputTokens: 100, OutputTokens: 10}
	reply := func(s string) llmtest.Reply { return llmtest.Reply{Text: s, Usage: u} }
	callWeb := `{"action":"CALL_TOOL","reasoning":"needs news","tool":"web_search","arguments":{"query":"AI news"}}`
	tests := []struct {
		name      string
		in        supervisor.DecideInput
		replies   []llmtest.Reply
		want      supervisor.Decision
		calls     int
		feedback  string // in the last prompt
		wantError bool
		fallback  bool
	}{
		{
			name:    "call tool",
			in:      supervisor.DecideInput{Query: "latest AI news", Tools: testTools},
			replies: []llmtest.Reply{reply(callWeb)},
			want:    supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "needs news", Tool: "web_search", Arguments: map[string]any{"query": "AI news"}},
			calls:   1,
		},
		{
			name: "invalid then valid",
			in:   supervisor.DecideInput{Query: "latest AI news", Tools: testTools},
			replies: []llmtest.Reply{
				reply(`I will search: {action: CALL_TOOL}`),
				reply(`{"action":"CALL_TOOL","reasoning":"needs news"}`),
				reply("```json\n" + callWeb + "\n```"),
			},
			want:     supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "needs news", Tool: "web_search", Arguments: map[string]any{"query": "AI news"}},
			calls:    3,
			feedback: "tool is required when action is CALL_TOOL",
		},
		{
			name: "unknown tool is fed back",
			in:   supervisor.DecideInput{Query: "latest AI news", Tools: testTools},
			replies: []llmtest.Reply{
				reply(`{"action":"CALL_TOOL","reasoning":"needs news","tool":"news_search"}`),
				reply(callWeb),
			},
			want:     supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "needs news", Tool: "web_search", Arguments: map[string]any{"query": "AI news"}},
			calls:    2,
			feedback: `unknown tool "news_search"; use one of: search_knowledge, web_search, calculate, query_rewriter, synthesizer`,
		},
		{
			name: "no tool at the last iteration",
			in:   supervisor.DecideInput{Query: "latest AI news", Tools: testTools, Iteration: 5, MaxIterations: 5},
			replies: []llmtest.Reply{
				reply(callWeb),
				reply(`{"action":"ANSWER","reasoning":"enough","response":"Here is what I found."}`),
			},
			want:     supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "enough", Response: "Here is what I found."},
			calls:    2,
			feedback: "this is the last iteration",
		},
		{
			name: "workflow",
			in:   supervisor.DecideInput{Query: "Compare our pricing to competitors", Tools: testTools},
			replies: []llmtest.Reply{
				llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: seedWorkflow()}),
			},
			want:  supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: seedWorkflow()},
			calls: 1,
		},
		{
			name: "plan the executor would reject is fed back",
			in:   supervisor.DecideInput{Query: "Compare our pricing to competitors", Tools: testTools},
			replies: []llmtest.Reply{
				llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: &plan.Plan{Goal: "g", Steps: []plan.Step{
					{ID: "a", Name: "A", Operator: "web_search"},
					{ID: "b", Name: "B", Operator: "synthesizer", InputMapping: map[string]any{"text": "{{a.output}}"}},
				}}}),
				llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: seedWorkflow()}),
			},
			want:     supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: seedWorkflow()},
			calls:    2,
			feedback: "step b: input_mapping.text uses {{a.output}}, but a is not among depends_on; add it there",
		},
		{
			name: "workflow step with an unlisted operator is fed back",
			in:   supervisor.DecideInput{Query: "Compare our pricing to competitors", Tools: testTools},
			replies: []llmtest.Reply{
				llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: &plan.Plan{Goal: "g", Steps: []plan.Step{
					{ID: "a", Name: "A", Operator: "google"},
				}}}),
				llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: seedWorkflow()}),
			},
			want:     supervisor.Decision{Action: supervisor.ActionCreateWorkflow, Reasoning: "two sources", Workflow: seedWorkflow()},
			calls:    2,
			feedback: `step a: operator "google" is not registered; registered: search_knowledge, web_search, calculate, query_rewriter, synthesizer`,
		},
		{
			name: "clarify fallback",
			in:   supervisor.DecideInput{Query: "update it", Tools: testTools},
			replies: []llmtest.Reply{
				reply(`{"action":"SEARCH","reasoning":"x"}`),
				reply(`not json`),
				reply(`{"action":"CALL_TOOL","reasoning":"x","tool":"nope"}`),
			},
			want:     supervisor.Decision{Action: supervisor.ActionClarify, Question: supervisor.ClarifyFallback},
			calls:    3,
			fallback: true,
		},
		{
			name:      "provider failure is an error",
			in:        supervisor.DecideInput{Query: "hello", Tools: testTools},
			replies:   []llmtest.Reply{llmtest.Fail(&agent.ProviderError{Provider: "openai", StatusCode: 400, Err: errors.New("bad request")})},
			calls:     1,
			wantError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(tt.replies...)
			c := newClient(t, agent.Config{Model: m})
			res, err := supervisor.Decide(context.Background(), c, tt.in)
			got, usage := res.Value, res.Usage
			if (err != nil) != tt.wantError {
				t.Fatalf("Decide() error = %v, want error %v", err, tt.wantError)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(supervisor.Decision{}, "Reasoning")); !tt.wantError && diff != "" {
				t.Errorf("Decide() (-want +got):\n%s", diff)
			}
			if res.Fallback != tt.fallback {
				t.Errorf("Fallback = %v, want %v", res.Fallback, tt.fallback)
			}
			if !tt.fallback && got.Reasoning != tt.want.Reasoning {
				t.Errorf("Reasoning = %q, want %q", got.Reasoning, tt.want.Reasoning)
			}
			calls := m.Calls()
			if len(calls) != tt.calls {
				t.Fatalf("model called %d times, want %d", len(calls), tt.calls)
			}
			if !tt.wantError {
				var want model.Usage
				for _, r := range tt.replies {
					want = want.Merge(r.Usage)
				}
				if diff := cmp.Diff(want, usage); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
			}
			first := calls[0]
			if r, ok := supervisortest.Parse(first.Prompt); !ok || r.Step != supervisortest.Decide || r.Query != tt.in.Query ||
				!strings.Contains(first.System, "You are the supervisor") {
				t.Errorf("first call does not carry the supervisor prompts:\nsystem: %.80q\nprompt: %.80q", first.System, first.Prompt)
			}
			if tt.feedback != "" && !strings.Contains(calls[len(calls)-1].Prompt, tt.feedback) {
				t.Errorf("last prompt lacks feedback %q:\n%s", tt.feedback, calls[len(calls)-1].Prompt)
			}
		})
	}
}

func TestDecideRejectsEmptyQuery(t *testing.T) {
	m := llmtest.New()
	_, err := supervisor.Decide(context.Background(), newClient(t, agent.Config{Model: m}), supervisor.DecideInput{Query: " "})
	if err == nil || !strings.Contains(err.Error(), "DecideInput.Query") {
		t.Fatalf("Decide(empty query) error = %v, want one naming DecideInput.Query", err)
	}
	if n := len(m.Calls()); n != 0 {
		t.Errorf("model called %d times, want 0", n)
	}
}

func TestReflect(t *testing.T) {
	good := []supervisor.Observation{{Source: "search_knowledge", Content: "Team plan: $49 per seat per month."}}
	failed := []supervisor.Observation{{Source: "web_search", Err: "connection refused"}}
	tests := []struct {
		name    string
		in      supervisor.ReflectInput
		replies []llmtest.Reply
		want    supervisor.Reflection
		calls   int
	}{
		{
			name:    "satisfied",
			in:      supervisor.ReflectInput{Query: "price of Team?", Observations: good},
			replies: []llmtest.Reply{llmtest.Text(`{"assessment":"satisfied","reasoning":"the price is there"}`)},
			want:    supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "the price is there"},
			calls:   1,
		},
		{
			name: "need_more without missing is retried",
			in:   supervisor.ReflectInput{Query: "compare with competitors", Observations: good},
			replies: []llmtest.Reply{
				llmtest.Text(`{"assessment":"need_more","reasoning":"only ours"}`),
				llmtest.Text(`{"assessment":"need_more","reasoning":"only ours","missing":"competitor prices"}`),
			},
			want:  supervisor.Reflection{Assessment: supervisor.AssessNeedMore, Reasoning: "only ours", Missing: "competitor prices"},
			calls: 2,
		},
		{
			name:    "need_more at the last iteration with results",
			in:      supervisor.ReflectInput{Query: "compare", Observations: good, Iteration: 5, MaxIterations: 5},
			replies: []llmtest.Reply{llmtest.Text(`{"assessment":"need_more","reasoning":"only ours","missing":"competitor prices"}`)},
			want:    supervisor.Reflection{Assessment: supervisor.AssessSatisfied},
			calls:   1,
		},
		{
			name:    "need_more at the last iteration without results",
			in:      supervisor.ReflectInput{Query: "compare", Observations: failed, Iteration: 3, MaxIterations: 3},
			replies: []llmtest.Reply{llmtest.Text(`{"assessment":"need_more","reasoning":"failed","missing":"anything"}`)},
			want:    supervisor.Reflection{Assessment: supervisor.AssessBlocked, Blocker: "every call failed: web_search: connection refused"},
			calls:   1,
		},
		{
			name:  "direct response asks no model",
			in:    supervisor.ReflectInput{Query: "chart it", Observations: good, DirectResponse: true},
			want:  supervisor.Reflection{Assessment: supervisor.AssessDirectResponse},
			calls: 0,
		},
		{
			name:    "fallback from the results",
			in:      supervisor.ReflectInput{Query: "price of Team?", Observations: good},
			replies: []llmtest.Reply{llmtest.Text("ok"), llmtest.Text("fine"), llmtest.Text(`{"assessment":"done"}`)},
			want:    supervisor.Reflection{Assessment: supervisor.AssessSatisfied},
			calls:   3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(tt.replies...)
			res, err := supervisor.Reflect(context.Background(), newClient(t, agent.Config{Model: m}), tt.in)
			got := res.Value
			if err != nil {
				t.Fatal(err)
			}
			ignore := cmpopts.IgnoreFields(supervisor.Reflection{}, "Reasoning")
			if tt.want.Reasoning != "" {
				ignore = cmpopts.IgnoreFields(supervisor.Reflection{})
			}
			if diff := cmp.Diff(tt.want, got, ignore); diff != "" {
				t.Errorf("Reflect() (-want +got):\n%s", diff)
			}
			if got.Reasoning == "" {
				t.Error("Reasoning is empty")
			}
			if n := len(m.Calls()); n != tt.calls {
				t.Fatalf("model called %d times, want %d", n, tt.calls)
			}
			if want := strings.HasPrefix(tt.name, "fallback"); res.Fallback != want {
				t.Errorf("Fallback = %v, want %v", res.Fallback, want)
			}
			if r, ok := supervisortest.Parse(firstPrompt(m)); tt.calls > 0 && (!ok || r.Step != supervisortest.Reflect) {
				t.Errorf("prompt does not start with the reflection marker: %.60q", m.Calls()[0].Prompt)
			}
		})
	}
}

func TestPlanWorkflow(t *testing.T) {
	bad := seedWorkflow()
	bad.Steps[2].Operator = "google"
	m := llmtest.New(llmtest.JSON(bad), llmtest.JSON(seedWorkflow()))
	res, err := supervisor.Plan(context.Background(), newClient(t, agent.Config{Model: m}),
		supervisor.PlanInput{Query: "Compare our pricing to competitors", Operators: testTools})
	got := res.Value
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*seedWorkflow(), got); diff != "" {
		t.Errorf("PlanWorkflow() (-want +got):\n%s", diff)
	}
	calls := m.Calls()
	if len(calls) != 2 || !isStep(calls[0].Prompt, supervisortest.Plan) ||
		!strings.Contains(calls[1].Prompt, `step step_3: operator "google" is not registered`) {
		t.Errorf("calls = %d, want 2 with the plan marker and the unknown operator fed back", len(calls))
	}
}

func TestWriteStreams(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Text: "The Team plan costs $49 per seat per month.", Chunks: []string{"The Team plan ", "costs $49 ", "per seat per month."}})
	var got []string
	res, err := supervisor.Write(context.Background(), newClient(t, agent.Config{Model: m}), supervisor.WriteInput{
		Query:        "How much is Team?",
		Observations: []supervisor.Observation{{Source: "search_knowledge", Content: "Team: $49 per seat per month"}},
	}, agent.WithStreaming(func(_ context.Context, c model.Chunk) error {
		if c.Kind == model.ChunkText {
			got = append(got, c.Text)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"The Team plan ", "costs $49 ", "per seat per month."}, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if res.Value != "The Team plan costs $49 per seat per month." {
		t.Errorf("Value = %q", res.Value)
	}
	p := m.Calls()[0]
	if !isStep(p.Prompt, supervisortest.Write) || !strings.Contains(p.Prompt, "### search_knowledge\nTeam: $49 per seat per month") {
		t.Errorf("writer prompt lacks the marker or the results:\n%s", p.Prompt)
	}
}

func TestSupervisorPrompt(t *testing.T) {
	m := llmtest.New(llmtest.Text(`{"action":"ANSWER","reasoning":"r","response":"$49"}`))
	_, err := supervisor.Decide(context.Background(), m, supervisor.DecideInput{
		Query:        "How much is Team?",
		Tools:        testTools[:2],
		Context:      "user: hi\nassistant: Hello!",
		Observations: []supervisor.Observation{{Source: "search_knowledge", Content: "Team: $49"}, {Source: "web_search", Err: "timeout"}},
		Iteration:    2, MaxIterations: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := firstPrompt(m)
	want := `# Task: supervisor decision

## Question
How much is Team?

## Tools
- search_knowledge: Search the company knowledge base. Arguments: query.
- web_search: Search the web. Arguments: query.

## Conversation
user: hi
assistant: Hello!

## Results
### search_knowledge
Team: $49

### web_search (failed)
Error: timeout

## Iteration
2 of 2 (last: ANSWER or CLARIFY)

Decide the next action.`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decide's prompt (-want +got):\n%s", diff)
	}
}

// TestDecideFallbackAttempts: the fallback's Result carries every rejected
// reply with why it was rejected.
func TestDecideFallbackAttempts(t *testing.T) {
	m := llmtest.New().Default(llmtest.Text(`{"action":"CALL_TOOL","reasoning":"x","tool":"nope"}`))
	res, err := supervisor.Decide(context.Background(), newClient(t, agent.Config{Model: m}), supervisor.DecideInput{Query: "latest news", Tools: testTools})
	if err != nil || !res.Fallback || res.Value.Action != supervisor.ActionClarify {
		t.Fatalf("Decide() = %+v, %v; want the CLARIFY fallback", res, err)
	}
	if len(res.Attempts) != 3 {
		t.Fatalf("Attempts = %d, want 3", len(res.Attempts))
	}
	for _, a := range res.Attempts {
		if !strings.Contains(a.Message, `unknown tool "nope"`) {
			t.Errorf("attempt %d: message %q does not name the unknown tool", a.Number, a.Message)
		}
	}
}

func firstPrompt(m *llmtest.Model) string {
	if calls := m.Calls(); len(calls) > 0 {
		return calls[0].Prompt
	}
	return ""
}

func isStep(prompt string, step supervisortest.Step) bool {
	r, ok := supervisortest.Parse(prompt)
	return ok && r.Step == step
}
