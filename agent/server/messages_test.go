package server_test

import (
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/server"
)

func TestMessagesRoundTripTheLangChainForm(t *testing.T) {
	ms, err := server.DecodeMessages(json.RawMessage(`[{"role":"user","content":"hi"},{"type":"ai","id":"a1","content":[{"type":"text","text":"hel"},{"type":"text","text":"lo"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Role != model.RoleUser || ms[0].Text() != "hi" || ms[0].ID == "" || ms[1].Role != model.RoleAssistant || ms[1].Text() != "hello" || ms[1].ID != "a1" {
		t.Fatalf("decoded %+v", ms)
	}
	call := model.ToolCall{ID: "c1", Name: "add", Arguments: json.RawMessage(`{"a":1}`)}
	ms = append(ms, model.Message{ID: "a2", Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(call)}},
		model.ToolResults(model.ToolResult{CallID: "c1", Name: "add", Content: []model.Part{model.TextPart("2")}}))
	enc := server.EncodeMessages(ms)
	if len(enc) != 4 || enc[0]["type"] != "human" || enc[1]["type"] != "ai" || enc[3]["type"] != "tool" || enc[3]["tool_call_id"] != "c1" || enc[3]["content"] != "2" {
		t.Fatalf("encoded %v", enc)
	}
	calls := enc[2]["tool_calls"].([]map[string]any)
	if len(calls) != 1 || calls[0]["name"] != "add" || calls[0]["args"].(map[string]any)["a"] != float64(1) {
		t.Fatalf("tool calls %v", calls)
	}
	if _, err := server.DecodeMessages(json.RawMessage(`[{"role":"robot","content":"x"}]`)); err == nil {
		t.Fatal("an unknown role decoded")
	}
}

// TestDecodeMessagesForms: DecodeMessages reads model.Message's own form,
// one message given alone (a string or an object), removal markers,
// images and an ai message's tool_use blocks, and refuses a tool message
// without tool_call_id naming it.
func TestDecodeMessagesForms(t *testing.T) {
	ms, err := server.DecodeMessages(json.RawMessage(`[
		{"id":"n1","role":"user","parts":[{"kind":"text","text":"native"}]},
		{"type":"remove","id":"old"},
		{"type":"human","content":[{"type":"image_url","image_url":{"url":"https://x/a.png"}},{"type":"image","base64":"iVBORw0KGgoAAAA=","mime_type":"image/png"}]},
		{"type":"AIMessageChunk","content":[{"type":"tool_use","id":"c1","name":"f","input":{"a":1}}],"tool_calls":[{"id":"c1","name":"f","args":{"a":1}}]},
		{"type":"tool","tool_call_id":"c1","content":"boom","status":"error"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 || ms[0].ID != "n1" || ms[0].Text() != "native" || ms[1].Role != model.RoleRemove || ms[1].ID != "old" ||
		len(ms[2].Parts) != 2 || ms[2].Parts[0].URL != "https://x/a.png" || ms[2].Parts[1].MIMEType != "image/png" ||
		len(ms[3].ToolCalls()) != 1 || string(ms[3].ToolCalls()[0].Arguments) != `{"a":1}` ||
		ms[4].Role != model.RoleTool || !ms[4].Parts[0].ToolResult.IsError || ms[4].Parts[0].ToolResult.Text() != "boom" {
		b, _ := json.Marshal(ms)
		t.Fatalf("decoded %s", b)
	}
	for _, one := range []string{`"hi"`, `{"role":"user","content":"hi"}`} {
		ms, err := server.DecodeMessages(json.RawMessage(one))
		if err != nil || len(ms) != 1 || ms[0].Role != model.RoleUser || ms[0].Text() != "hi" || ms[0].ID == "" {
			t.Errorf("DecodeMessages(%s) = %+v, %v; want one user message with an id", one, ms, err)
		}
	}
	_, err = server.DecodeMessages(json.RawMessage(`[{"role":"user","content":"x"},{"type":"tool","content":"r"}]`))
	if err == nil || err.Error() != "messages[1].tool_call_id: required for a tool message; give the id of the call it answers" {
		t.Errorf("a tool message without tool_call_id: %v", err)
	}
}
