package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

var update = flag.Bool("update", false, "rewrite golden files")

// SupervisorDecision is the supervisor's next action, as in the chatbot design.
type SupervisorDecision struct {
	Action    string           `json:"action" jsonschema:"enum=ANSWER,enum=CALL_TOOL,enum=CREATE_WORKFLOW,enum=CLARIFY,description=What to do next"`
	Reasoning string           `json:"reasoning" jsonschema:"description=Why this action was chosen" validate:"required"`
	Response  string           `json:"response,omitempty" jsonschema:"description=The answer (ANSWER)"`
	Operator  string           `json:"operator,omitempty" jsonschema:"description=The operator to call (CALL_TOOL)"`
	Params    map[string]any   `json:"params,omitempty" jsonschema:"description=The operator's parameters (CALL_TOOL)"`
	Goal      string           `json:"goal,omitempty" jsonschema:"description=The workflow's goal (CREATE_WORKFLOW)"`
	Steps     []map[string]any `json:"steps,omitempty" jsonschema:"description=The workflow's steps (CREATE_WORKFLOW)"`
	Question  string           `json:"question,omitempty" jsonschema:"description=The question for the user (CLARIFY)"`
}

// Validate adds the rule a schema cannot say.
func (d SupervisorDecision) Validate() error {
	if d.Action == "CALL_TOOL" && d.Operator == "" {
		return &agent.FieldError{Field: "operator", Message: "operator is required when action is CALL_TOOL"}
	}
	return nil
}

func TestSchemaGolden(t *testing.T) {
	got, err := agent.SchemaOf[SupervisorDecision]()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "supervisor_decision.schema.json", got)

	type step struct {
		Tool  string            `json:"tool" jsonschema:"minLength=1"`
		Input map[string]string `json:"input,omitempty"`
	}
	type plan struct {
		Goal  string  `json:"goal" jsonschema:"description=What the plan achieves"`
		Steps []step  `json:"steps" jsonschema:"minItems=1"`
		Score float64 `json:"score" jsonschema:"minimum=0,maximum=1"`
	}
	got, err = agent.SchemaOf[plan]()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "plan.schema.json", got)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(string(got))); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

const supervisorSystem = "You are the supervisor of a chatbot. Decide the next action."

// TestCallSeedExample reproduces the design's validation-feedback example:
// invalid JSON, then a schema error on action, then success.
func TestCallSeedExample(t *testing.T) {
	const prompt = "User: find the Go 1.26 release notes"
	m := llmtest.New(
		llmtest.Reply{Text: `I'll help with that. Here's my decision: {action: CALL_TOOL...`,
			Usage: model.Usage{InputTokens: 100, OutputTokens: 12}},
		llmtest.Reply{Text: `{"action": "SEARCH", "reasoning": "..."}`,
			Usage: model.Usage{InputTokens: 180, OutputTokens: 10, CacheReadTokens: 50}},
		llmtest.Reply{Text: `{"action": "CALL_TOOL", "reasoning": "User wants to search", "operator": "web_searcher", "params": {"query": "Go 1.26 release notes"}}`,
			Usage: model.Usage{InputTokens: 190, OutputTokens: 30, ThinkingTokens: 5}},
	)
	c := newClient(t, agent.Config{Model: m})

	res, err := agent.Call[SupervisorDecision](context.Background(), c, prompt, agent.WithSystem(supervisorSystem))
	if err != nil {
		t.Fatal(err)
	}
	want := SupervisorDecision{Action: "CALL_TOOL", Reasoning: "User wants to search", Operator: "web_searcher",
		Params: map[string]any{"query": "Go 1.26 release notes"}}
	if diff := cmp.Diff(want, res.Value); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	wantAttempts := []agent.Attempt{
		{Number: 1, Raw: `I'll help with that. Here's my decision: {action: CALL_TOOL...`, Kind: agent.FailureJSONParse,
			Message: "Invalid JSON: Expecting property name enclosed in double quotes at position 42",
			Usage:   model.Usage{InputTokens: 100, OutputTokens: 12}},
		{Number: 2, Raw: `{"action": "SEARCH", "reasoning": "..."}`, Kind: agent.FailureSchemaValidation,
			Message: "- Field 'action': Input should be 'ANSWER', 'CALL_TOOL', 'CREATE_WORKFLOW' or 'CLARIFY'",
			Usage:   model.Usage{InputTokens: 180, OutputTokens: 10, CacheReadTokens: 50}},
	}
	if diff := cmp.Diff(wantAttempts, res.Attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	wantUsage := model.Usage{InputTokens: 470, OutputTokens: 52, ThinkingTokens: 5, CacheReadTokens: 50}
	if diff := cmp.Diff(wantUsage, res.Usage); diff != "" {
		t.Errorf("usage summed over attempts (-want +got):\n%s", diff)
	}

	calls := m.Calls()
	if len(calls) != 3 {
		t.Fatalf("model called %d times, want 3", len(calls))
	}
	schema, _ := agent.SchemaOf[SupervisorDecision]()
	wantSystem := supervisorSystem + "\n\nYou MUST respond with valid JSON matching this schema:\n\n```json\n" + string(schema) +
		"\n```\n\nRules:\n1. Output ONLY valid JSON, no explanations before or after\n2. All required fields must be present\n" +
		"3. Field types must match the schema exactly\n4. Use null for optional fields if not applicable"
	wantPrompts := []string{
		prompt,
		prompt + "\n\n---\nPREVIOUS ATTEMPT FAILED - Please fix and try again.\n\n" +
			"Error Type: JSON Parse Error\n" +
			"Error Details: Invalid JSON: Expecting property name enclosed in double quotes at position 42\n\n" +
			"Your previous output was:\n```\nI'll help with that. Here's my decision: {action: CALL_TOOL...\n```\n\n" +
			"Please provide a corrected JSON response that fixes these issues.",
		prompt + "\n\n---\nPREVIOUS ATTEMPT FAILED - Please fix and try again.\n\n" +
			"Error Type: Schema Validation Error\n" +
			"Error Details: - Field 'action': Input should be 'ANSWER', 'CALL_TOOL', 'CREATE_WORKFLOW' or 'CLARIFY'\n\n" +
			"Your previous output was:\n```\n{\"action\": \"SEARCH\", \"reasoning\": \"...\"}\n```\n\n" +
			"Please provide a corrected JSON response that fixes these issues.",
	}
	for i, call := range calls {
		if diff := cmp.Diff(wantSystem, call.System); diff != "" {
			t.Errorf("call %d system prompt (-want +got):\n%s", i+1, diff)
		}
		if diff := cmp.Diff(wantPrompts[i], call.Prompt); diff != "" {
			t.Errorf("call %d prompt (-want +got):\n%s", i+1, diff)
		}
		// The request the model kept is the attempt's own.
		if got := requestTexts(call.Request); !slices.Equal(got, []string{wantSystem, wantPrompts[i]}) {
			t.Errorf("call %d: the kept request's messages are %q, want the system prompt and the attempt's prompt", i+1, got)
		}
	}
}

// requestTexts returns the texts of req's messages.
func requestTexts(req *model.Request) []string {
	var texts []string
	for _, m := range req.Messages {
		texts = append(texts, m.Text())
	}
	return texts
}

// TestCallAttemptsAreOwnRequests: through any model.Model, each attempt
// sends a request of its own, which the model may keep.
func TestCallAttemptsAreOwnRequests(t *testing.T) {
	m := llmtest.New(llmtest.Text("no json"), llmtest.Text(`{"action": "ANSWER", "reasoning": "easy"}`))
	if _, err := agent.Call[SupervisorDecision](context.Background(), m, "decide"); err != nil {
		t.Fatal(err)
	}
	calls := m.Calls()
	if len(calls) != 2 {
		t.Fatalf("model called %d times, want 2", len(calls))
	}
	for i, call := range calls {
		texts := requestTexts(call.Request)
		if len(texts) != 2 || texts[1] != call.Prompt {
			t.Errorf("call %d: the kept request's messages end with %q, want the attempt's prompt %q", i+1, texts, call.Prompt)
		}
	}
}

func TestCallFailsAfterMaxAttempts(t *testing.T) {
	u := model.Usage{InputTokens: 10, OutputTokens: 3}
	m := llmtest.New(
		llmtest.Reply{Text: "I cannot decide.", Usage: u},
		llmtest.Reply{Text: `{"action": "CALL_TOOL", "reasoning": "search"}`, Usage: u},
		llmtest.Reply{Text: "```json\n{\"action\": \"ANSWER\", \"reasoning\": \"ok\", \"confidence\": 0.9}\n```", Usage: u},
		llmtest.Text(`{"action":"ANSWER","reasoning":"never asked for"}`),
	)
	c := newClient(t, agent.Config{Model: m})
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "hi")
	var se *agent.StructuredOutputError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StructuredOutputError", err)
	}
	if !errors.Is(err, agent.ErrStructuredOutput) {
		t.Error("errors.Is(err, ErrStructuredOutput) = false")
	}
	want := &agent.StructuredOutputError{
		Type: "SupervisorDecision",
		Attempts: []agent.Attempt{
			{Number: 1, Raw: "I cannot decide.", Kind: agent.FailureJSONParse,
				Message: "Invalid JSON: no JSON object found in the reply", Usage: u},
			{Number: 2, Raw: `{"action": "CALL_TOOL", "reasoning": "search"}`, Kind: agent.FailureSchemaValidation,
				Message: "- Field 'operator': operator is required when action is CALL_TOOL", Usage: u},
			{Number: 3, Raw: "```json\n{\"action\": \"ANSWER\", \"reasoning\": \"ok\", \"confidence\": 0.9}\n```",
				Kind: agent.FailureSchemaValidation, Message: "- Field 'confidence': Extra inputs are not permitted", Usage: u},
		},
		Usage: model.Usage{InputTokens: 30, OutputTokens: 9},
	}
	if diff := cmp.Diff(want, se); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Usage, res.Usage); diff != "" {
		t.Errorf("result usage on failure (-want +got):\n%s", diff)
	}
	if got := m.Remaining(); got != 1 {
		t.Errorf("model has %d unused replies, want 1 (exactly 3 attempts)", got)
	}
	if !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("error %q does not say how many attempts were made", err)
	}
}

func TestCallMaxAttemptsOption(t *testing.T) {
	m := llmtest.New().Default(llmtest.Text("no json"))
	c := newClient(t, agent.Config{Model: m, MaxAttempts: 5})
	_, err := agent.Call[SupervisorDecision](context.Background(), c, "hi")
	var se *agent.StructuredOutputError
	if !errors.As(err, &se) || len(se.Attempts) != 5 {
		t.Fatalf("err = %v, want 5 attempts from Config.MaxAttempts", err)
	}
	_, err = agent.Call[SupervisorDecision](context.Background(), c, "hi", agent.WithMaxAttempts(1))
	if !errors.As(err, &se) || len(se.Attempts) != 1 {
		t.Fatalf("err = %v, want 1 attempt from WithMaxAttempts", err)
	}
}

func TestCallValidation(t *testing.T) {
	type item struct {
		Name  string `json:"name" validate:"min=2"`
		Count int    `json:"count" jsonschema:"minimum=1"`
	}
	type order struct {
		Items []item `json:"items" validate:"dive"`
		Note  string `json:"note,omitempty"`
	}
	tests := []struct {
		name, reply string
		kind        agent.FailureKind
		message     string
	}{
		{"missing required", `{"note": "x"}`, agent.FailureSchemaValidation, "- Field 'items': Field required"},
		{"wrong type", `{"items": "none"}`, agent.FailureSchemaValidation, "- Field 'items': Input should be a valid array, got string"},
		{"nested missing", `{"items": [{"name": "ab"}]}`, agent.FailureSchemaValidation, "- Field 'items[0].count': Field required"},
		{"nested bound", `{"items": [{"name": "ab", "count": 0}]}`, agent.FailureSchemaValidation,
			"- Field 'items[0].count': minimum: got 0, want 1"},
		{"validate tag", `{"items": [{"name": "a", "count": 1}]}`, agent.FailureSchemaValidation,
			"- Field 'items[0].name': Input should be at least 2"},
		{"truncated", `{"items": [{"name": "ab"`, agent.FailureJSONParse,
			"Invalid JSON: Unexpected end of input (the JSON is cut off or a bracket is not closed) at position 24"},
		{"empty", "  ", agent.FailureJSONParse, "Invalid JSON: the reply was empty"},
		{"missing comma", `Order: {"items": [] "note": "x"}`, agent.FailureJSONParse,
			"Invalid JSON: Expecting ',' delimiter at position 20"},
		{"missing colon", `{"items" []}`, agent.FailureJSONParse, "Invalid JSON: Expecting ':' delimiter at position 9"},
		{"bad value", `{"items": [tru]}`, agent.FailureJSONParse, "Invalid JSON: invalid character ']' in literal true (expecting 'e') at position 14"},
		{"array for object", `[1, 2]`, agent.FailureSchemaValidation, "- Input should be a valid object, got array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, agent.Config{Model: llmtest.New(llmtest.Text(tt.reply))})
			_, err := agent.Call[order](context.Background(), c, "order", agent.WithMaxAttempts(1))
			var se *agent.StructuredOutputError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *StructuredOutputError", err)
			}
			got := se.Attempts[0]
			if got.Kind != tt.kind || got.Message != tt.message {
				t.Errorf("got %s %q, want %s %q", got.Kind, got.Message, tt.kind, tt.message)
			}
		})
	}
}

func TestCallNullMeansAbsent(t *testing.T) {
	c := newClient(t, agent.Config{Model: llmtest.New(llmtest.Text(
		`{"action": "ANSWER", "reasoning": "easy", "response": "4", "operator": null, "params": null}`))})
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "2+2?")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SupervisorDecision{Action: "ANSWER", Reasoning: "easy", Response: "4"}, res.Value); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCallArrayResult(t *testing.T) {
	type task struct {
		ID   int    `json:"id"`
		Goal string `json:"goal"`
	}
	reply := "Here are the tasks [in order]:\n```\n[{\"id\": 1, \"goal\": \"find {x}\"}, {\"id\": 2, \"goal\": \"sum\"}]\n```\nDone."
	m := llmtest.New(llmtest.Text(reply))
	c := newClient(t, agent.Config{Model: m, Registry: mustRegistry(t, agent.ModelSpec{Name: "gpt", Provider: "openai",
		ID: "gpt-test", Capabilities: agent.Capabilities{JSONMode: true}})})
	res, err := agent.Call[[]task](context.Background(), c, "plan", agent.WithModel("gpt"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]task{{1, "find {x}"}, {2, "sum"}}, res.Value); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if m.Calls()[0].Request.ResponseFormat != nil {
		t.Error("JSON mode was switched on for an array result; it forces an object")
	}
}

func TestCallPointerResult(t *testing.T) {
	type step struct {
		Tool string `json:"tool" validate:"min=2"`
	}
	m := llmtest.New(llmtest.Text(`{"tool": "x"}`), llmtest.Text(`{"tool": "search"}`))
	c := newClient(t, agent.Config{Model: m})
	res, err := agent.Call[*step](context.Background(), c, "next step")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&step{Tool: "search"}, res.Value); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
	want := []agent.Attempt{{Number: 1, Raw: `{"tool": "x"}`, Kind: agent.FailureSchemaValidation,
		Message: "- Field 'tool': Input should be at least 2"}}
	if diff := cmp.Diff(want, res.Attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
}

func TestCallSystemPromptPerCall(t *testing.T) {
	m := llmtest.New().Default(llmtest.Text(`{"action": "ANSWER", "reasoning": "r"}`))
	c := newClient(t, agent.Config{Model: m})
	systems := []string{"You are A.", "You are B.", "", "You are A."}
	for _, system := range systems {
		var opts []agent.Option
		if system != "" {
			opts = append(opts, agent.WithSystem(system))
		}
		if _, err := agent.Call[SupervisorDecision](context.Background(), c, "q", opts...); err != nil {
			t.Fatal(err)
		}
	}
	for i, call := range m.Calls() {
		want := "You MUST respond with valid JSON"
		if systems[i] != "" {
			want = systems[i] + "\n\n" + want
		}
		if !strings.HasPrefix(call.System, want) {
			t.Errorf("call %d: system prompt %.60q..., want it to start with %q", i+1, call.System, want)
		}
	}
}

func TestCallOutputModes(t *testing.T) {
	reg := mustRegistry(t,
		agent.ModelSpec{Name: "json", Provider: "openai", ID: "gpt-test", Capabilities: agent.Capabilities{JSONMode: true, ToolCalling: true}},
		agent.ModelSpec{Name: "plain", Provider: "anthropic", ID: "claude-test", Capabilities: agent.Capabilities{ToolCalling: true}},
	)
	ok := `{"action":"ANSWER","reasoning":"r","response":"x"}`
	t.Run("auto uses JSON mode where the model has it", func(t *testing.T) {
		m := llmtest.New(llmtest.Text(ok), llmtest.Text(ok))
		c := newClient(t, agent.Config{Model: m, Registry: reg})
		if _, err := agent.Call[SupervisorDecision](context.Background(), c, "q", agent.WithModel("json")); err != nil {
			t.Fatal(err)
		}
		if _, err := agent.Call[SupervisorDecision](context.Background(), c, "q", agent.WithModel("plain")); err != nil {
			t.Fatal(err)
		}
		calls := m.Calls()
		if calls[0].Request.ResponseFormat == nil || calls[1].Request.ResponseFormat != nil {
			t.Errorf("response formats %+v, %+v; want JSON for the JSON-mode model, none for the other",
				calls[0].Request.ResponseFormat, calls[1].Request.ResponseFormat)
		}
	})
	t.Run("tool mode reads the tool call", func(t *testing.T) {
		m := llmtest.New(llmtest.Reply{ToolCalls: []model.ToolCall{toolCall("supervisor_decision", ok)}})
		c := newClient(t, agent.Config{Model: m, Registry: reg})
		res, err := agent.Call[SupervisorDecision](context.Background(), c, "q", agent.WithModel("plain"),
			agent.WithOutputMode(agent.OutputTool))
		if err != nil {
			t.Fatal(err)
		}
		if res.Value.Response != "x" {
			t.Errorf("value = %+v", res.Value)
		}
		req := m.Calls()[0].Request
		if len(req.Tools) != 1 || req.Tools[0].Name != "supervisor_decision" ||
			req.ToolChoice != (model.ToolChoice{Mode: model.ToolNamed, Name: "supervisor_decision"}) {
			t.Fatalf("tools = %+v, choice %+v; want the one schema tool, forced", req.Tools, req.ToolChoice)
		}
		var params map[string]any
		_ = json.Unmarshal(req.Tools[0].Parameters, &params)
		if params["type"] != "object" || params["required"] == nil {
			t.Errorf("tool parameters are not the schema: %v", params)
		}
	})
}

func TestCallThinkingKeptApart(t *testing.T) {
	m := llmtest.New(llmtest.Reply{
		Thinking: "The user asks for arithmetic; {\"action\": \"CLARIFY\"} would be wrong.",
		Text:     `{"action": "ANSWER", "reasoning": "arithmetic", "response": "4"}`,
		Usage:    model.Usage{InputTokens: 20, OutputTokens: 15, ThinkingTokens: 40},
	})
	c := newClient(t, agent.Config{Model: m})
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "2+2?", agent.WithModel("thinking"), agent.WithThinking(2048))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Action != "ANSWER" || res.Thinking != "The user asks for arithmetic; {\"action\": \"CLARIFY\"} would be wrong." {
		t.Errorf("value %+v thinking %q", res.Value, res.Thinking)
	}
	if res.Usage.ThinkingTokens != 40 || res.Usage.Total() != 75 {
		t.Errorf("usage = %+v", res.Usage)
	}
}

func TestCallProviderErrorStopsAttempts(t *testing.T) {
	m := llmtest.New(llmtest.Text("not json"), llmtest.Fail(errors.New("boom")))
	c := newClient(t, agent.Config{Model: m})
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "q")
	if err == nil || errors.Is(err, agent.ErrStructuredOutput) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v, want the provider's error", err)
	}
	if len(res.Attempts) != 1 {
		t.Errorf("attempts = %d, want the 1 rejected before the failure", len(res.Attempts))
	}
}

func TestCallToolModeFallsBackToText(t *testing.T) {
	// Anthropic cannot force a tool; a model that answers in text instead is
	// still understood.
	m := llmtest.New(llmtest.Text(`{"action": "CLARIFY", "reasoning": "vague", "question": "Which city?"}`))
	c := newClient(t, agent.Config{Model: m})
	res, err := agent.Call[SupervisorDecision](context.Background(), c, "weather", agent.WithOutputMode(agent.OutputTool))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Question != "Which city?" {
		t.Errorf("value = %+v", res.Value)
	}
}

func TestCallLogsRejections(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	m := llmtest.New(llmtest.Text("nope"), llmtest.Text(`{"action":"ANSWER","reasoning":"r"}`))
	c := newClient(t, agent.Config{Model: m, Logger: zap.New(core)})
	if _, err := agent.Call[SupervisorDecision](context.Background(), c, "q"); err != nil {
		t.Fatal(err)
	}
	warns := logs.FilterMessage("structured reply rejected").All()
	if len(warns) != 1 {
		t.Fatalf("got %d rejection warnings, want 1: %v", len(warns), logs.All())
	}
	f := warns[0].ContextMap()
	if f["attempt"] != int64(1) || f["kind"] != "json_parse" || f["type"] != "SupervisorDecision" || f["model"] != "sonnet" {
		t.Errorf("fields = %v", f)
	}
	if n := logs.FilterMessage("model call").Len(); n != 2 {
		t.Errorf("%d debug lines for model calls, want 2", n)
	}
}

func TestCallConcurrent(t *testing.T) {
	type small struct {
		N int `json:"n"`
	}
	m := llmtest.New().
		On("decide", llmtest.Text(`{"action":"ANSWER","reasoning":"r","response":"x"}`)).
		Default(llmtest.Text(`{"n": 7}`))
	c := newClient(t, agent.Config{Model: m})
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				var r agent.Result[SupervisorDecision]
				r, err = agent.Call[SupervisorDecision](context.Background(), c, "decide", agent.WithModel([]string{"haiku", "sonnet"}[i%4/2]))
				if err == nil && r.Value.Response != "x" {
					t.Errorf("decision = %+v", r.Value)
				}
			} else {
				var r agent.Result[small]
				r, err = agent.Call[small](context.Background(), c, "count")
				if err == nil && r.Value.N != 7 {
					t.Errorf("small = %+v", r.Value)
				}
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
