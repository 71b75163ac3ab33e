package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

// TestWireStreamingToolCallNotText streams, through Client.Stream and
// langchaingo's real OpenAI client against llmtest's OpenAI server, a reply
// with text and two tool calls offered in the request: the text chunks hold
// the text alone, never the calls' JSON.
func TestWireStreamingToolCallNotText(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Text: "Checking both.", ToolCalls: []model.ToolCall{
		llmtest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`),
		llmtest.ToolCall("call_2", "get_weather", `{"city":"Rome"}`),
	}})
	c := openAIClient(t, m)
	req := &model.Request{Messages: []model.Message{model.User("Weather in Paris and Rome?")}, Tools: []model.ToolDef{weatherTool}}
	var text strings.Builder
	var resp *model.Response
	for ch, err := range c.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		switch ch.Kind {
		case model.ChunkText:
			text.WriteString(ch.Text)
		case model.ChunkDone:
			resp = ch.Response
		}
	}
	if text.String() != "Checking both." {
		t.Errorf("streamed answer text = %q, want %q alone", text.String(), "Checking both.")
	}
	if resp == nil || resp.Text() != "Checking both." || len(resp.ToolCalls()) != 2 {
		t.Errorf("response %+v", resp)
	}
	if got := m.Calls()[0].Request.Tools; len(got) != 1 || got[0].Name != "get_weather" {
		t.Errorf("tools sent = %+v", got)
	}
}

// TestWireStreamingToolCallChunks: the tool calls streamed through
// agent.WithStreaming arrive as model.Chunk.ToolCall pieces that rebuild each
// call, by index.
func TestWireStreamingToolCallChunks(t *testing.T) {
	m := llmtest.New(llmtest.Reply{ToolCalls: []model.ToolCall{
		llmtest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`),
		llmtest.ToolCall("call_2", "get_weather", `{"city":"Rome"}`),
	}})
	c := openAIClient(t, m)
	var rec recorder
	if _, err := agent.Complete(context.Background(), c, "Weather?", agent.WithStreaming(rec.add)); err != nil {
		t.Fatal(err)
	}
	args, ids := map[int]string{}, map[int]string{}
	for _, ch := range rec.chunks {
		if ch.Kind != model.ChunkToolCall || ch.ToolCall == nil || ch.Text != "" {
			t.Errorf("chunk %+v: want a tool-call piece alone", ch)
			continue
		}
		args[ch.ToolCall.Index] += ch.ToolCall.Arguments
		if ch.ToolCall.ID != "" {
			ids[ch.ToolCall.Index] = ch.ToolCall.ID
		}
	}
	if args[0] != `{"city":"Paris"}` || args[1] != `{"city":"Rome"}` || ids[0] != "call_1" || ids[1] != "call_2" {
		t.Errorf("rebuilt calls: ids %v, arguments %v", ids, args)
	}
}
