package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/resilience"
)

// TestAnthropicDirectThinkingToolLoop: a thinking model calls a tool and
// continues: the signed thinking block goes back with the tool call, from a
// plain and from a streamed turn, as Anthropic requires; the message id,
// is_error and tool choice reach the wire.
func TestAnthropicDirectThinkingToolLoop(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[stream], func(t *testing.T) {
			turn := llmtest.Reply{Thinking: "I need the weather.", Text: "Checking.",
				ToolCalls: []model.ToolCall{llmtest.ToolCall("toolu_1", "get_weather", `{"city":"Paris"}`)},
				Usage:     model.Usage{InputTokens: 30, OutputTokens: 12}}
			script := llmtest.New(turn, llmtest.Text("Sunny."))
			srv := llmtest.NewAnthropicServer(script)
			defer srv.Close()
			m, err := provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: srv.URL + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			req := &model.Request{Messages: []model.Message{model.System("Be brief."), model.User("Weather in Paris?")},
				Tools: []model.ToolDef{weatherTool}, ToolChoice: model.ToolChoice{Mode: model.ToolRequired},
				Thinking: &model.Thinking{Budget: 1024}}
			var resp *model.Response
			if stream {
				_, resp = collect(t, m, req)
			} else if resp, err = m.Generate(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if resp.ID != "msg_llmtest" || resp.FinishReason != model.FinishToolCalls || resp.Usage.Total() != 42 {
				t.Errorf("response id %q finish %s usage %+v", resp.ID, resp.FinishReason, resp.Usage)
			}
			// The wire id is no conversation id: the server repeats it.
			if resp.Message.ID != "" {
				t.Errorf("reply message id %q, want none (the wire id is Response.ID)", resp.Message.ID)
			}
			if p := resp.Message.Parts[0]; p.Kind != model.PartThinking || p.Signature != llmtest.Signature || p.Text != "I need the weather." {
				t.Fatalf("first part = %+v, want the signed thinking", p)
			}
			req.Messages = append(req.Messages, resp.Message, model.ToolResults(model.ToolResult{CallID: "toolu_1", Name: "get_weather",
				Content: []model.Part{model.TextPart("no data for Paris")}, IsError: true}))
			final, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if final.Text() != "Sunny." {
				t.Errorf("answer = %q", final.Text())
			}
			calls := script.Calls()
			first := calls[0].Request
			if first.ToolChoice.Mode != model.ToolRequired || first.Thinking == nil || first.Thinking.Budget != 1024 || calls[0].System != "Be brief." {
				t.Errorf("first request: tool choice %+v, thinking %+v, system %q", first.ToolChoice, first.Thinking, calls[0].System)
			}
			sent := calls[1].Request.Messages
			if len(sent) != 4 {
				t.Fatalf("second request has %d messages: %+v", len(sent), sent)
			}
			a := sent[2]
			if a.Role != model.RoleAssistant || len(a.Parts) != 3 || a.Parts[0].Kind != model.PartThinking ||
				a.Parts[0].Signature != llmtest.Signature || a.Parts[2].Kind != model.PartToolCall {
				t.Errorf("assistant turn sent back = %+v, want signed thinking, text, tool call", a)
			}
			if r := sent[3].Parts[0].ToolResult; r == nil || !r.IsError || r.Text() != "no data for Paris" {
				t.Errorf("tool result sent = %+v", sent[3])
			}
		})
	}
}

// TestAnthropicDirectHTTPError: an error status wraps a
// *resilience.HTTPError with the Retry-After delay.
func TestAnthropicDirectHTTPError(t *testing.T) {
	script := llmtest.New(llmtest.RateLimited(2e9))
	srv := llmtest.NewAnthropicServer(script)
	defer srv.Close()
	m, err := provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "k", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.User("hi")}})
	var he *resilience.HTTPError
	if !errors.As(err, &he) || he.StatusCode != 429 || he.RetryAfter.Seconds() != 2 || !strings.Contains(err.Error(), "rate_limit_error") {
		t.Errorf("err = %v", err)
	}
	if resilience.Classify(err) != resilience.RateLimited {
		t.Errorf("class = %v, want rate limited", resilience.Classify(err))
	}
}
