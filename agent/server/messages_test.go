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
