package chatbot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// TestConfiguredProvider runs the bot on a configured provider: a scripted
// model served over OpenAI's wire protocol, the path a real provider takes
// (langchaingo's OpenAI client over HTTP: the model is reachable only
// through the server, while the demo calls its model directly). Its first
// decision names a tool that does not exist; the decision is refused with
// the reason, the model corrects itself, the tool runs and the writer's
// answer is streamed.
func TestConfiguredProvider(t *testing.T) {
	model := llmtest.New(
		llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "arithmetic", Tool: "calculator", Arguments: map[string]any{"expression": "2+2"}}),
		llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "the real name", Tool: "calculate", Arguments: map[string]any{"expression": "2+2"}}),
		llmtest.JSON(supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "the sum is there"}),
		llmtest.Text("2 + 2 = 4."),
	)
	bot, srv := scriptedServer(t, model)
	if bot.Demo() {
		t.Error("Demo() with a configured provider")
	}

	tr := chat(t, srv, "", "What is 2+2?")
	if diff := cmp.Diff([]string{"call_tool"}, tr.decisions()); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"calculate"}, tr.tools()); diff != "" {
		t.Errorf("tools run (-want +got):\n%s", diff)
	}
	if got := tr.answer(); got != "2 + 2 = 4." {
		t.Errorf("answer %q", got)
	}
	calls := model.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls, want 4", len(calls))
	}
	var models []string
	for _, c := range calls {
		models = append(models, c.Request.Model)
	}
	if diff := cmp.Diff([]string{"scripted", "scripted", "scripted", "scripted"}, models); diff != "" {
		t.Errorf("models called (-want +got):\n%s", diff)
	}
	if p := calls[1].Prompt; !strings.Contains(p, "calculator") {
		t.Errorf("the retried decision's prompt does not name the refused tool:\n%s", p)
	}

	// A request may name the model that writes its answer.
	model.Add(
		llmtest.JSON(supervisor.Decision{Action: supervisor.ActionCallTool, Reasoning: "arithmetic", Tool: "calculate", Arguments: map[string]any{"expression": "3*3"}}),
		llmtest.JSON(supervisor.Reflection{Assessment: supervisor.AssessSatisfied, Reasoning: "the product is there"}),
		llmtest.Text("3 × 3 = 9."),
	)
	resp := postJSON(t, srv.URL+"/api/v1/chat/sync", map[string]string{"message": "What is 3*3?", "model": "haiku"})
	defer resp.Body.Close()
	var got chatbot.SyncResponse
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Response != "3 × 3 = 9." {
		t.Errorf("answer %q", got.Response)
	}
	models = nil
	for _, c := range model.Calls()[4:] {
		models = append(models, c.Request.Model)
	}
	if diff := cmp.Diff([]string{"scripted", "scripted", "scripted-small"}, models); diff != "" {
		t.Errorf("models of the second turn (-want +got):\n%s", diff)
	}
}
