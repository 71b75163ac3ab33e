package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
)

var weatherTool = model.ToolDef{Name: "get_weather", Description: "Weather of a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}

// TestClientIsModel runs a native tool round trip through a *Client used as
// a model.Model, over the OpenAI wire.
func TestClientIsModel(t *testing.T) {
	usage := model.Usage{InputTokens: 11, OutputTokens: 4}
	m := llmtest.New(llmtest.Reply{ToolCalls: []model.ToolCall{llmtest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`)}, Usage: usage},
		llmtest.Reply{Text: "Sunny.", Usage: usage})
	var mm model.Model = openAIClient(t, m)
	req := &model.Request{Messages: []model.Message{model.User("Weather in Paris?")}, Tools: []model.ToolDef{weatherTool}}
	resp, err := mm.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if calls := resp.ToolCalls(); len(calls) != 1 || calls[0].Name != "get_weather" || resp.Model != "gpt-test" ||
		resp.FinishReason != model.FinishToolCalls || resp.Usage != usage {
		t.Fatalf("response = %+v", resp)
	}
	req.Messages = append(req.Messages, resp.Message,
		model.ToolResults(model.ToolResult{CallID: "call_1", Name: "get_weather", Content: []model.Part{model.TextPart("sunny")}}))
	final, err := model.Collect(mm.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	if final.Text() != "Sunny." || final.Usage != usage {
		t.Errorf("final = %+v", final)
	}
	sent := m.Calls()[1].Request.Messages
	if len(sent) != 3 || sent[2].Role != model.RoleTool || sent[2].Parts[0].ToolResult.Text() != "sunny" {
		t.Errorf("second request messages = %+v", sent)
	}
}

// TestClientStreamKindsApart streams thinking, text and a tool call through
// a *Client on the Anthropic wire: each chunk is of one kind.
func TestClientStreamKindsApart(t *testing.T) {
	m := llmtest.New(llmtest.Reply{Thinking: "Paris, then.", Text: "Let me look.",
		ToolCalls: []model.ToolCall{llmtest.ToolCall("toolu_1", "get_weather", `{"city":"Paris"}`)}})
	c := anthropicClient(t, m)
	var text, thinking, args string
	var final *model.Response
	for ch, err := range c.Stream(context.Background(), &model.Request{Model: "sonnet",
		Messages: []model.Message{model.User("Weather?")}, Tools: []model.ToolDef{weatherTool}, Thinking: &model.Thinking{Budget: 2048}}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ch.Kind {
		case model.ChunkText:
			text += ch.Text
		case model.ChunkThinking:
			thinking += ch.Text
		case model.ChunkToolCall:
			args += ch.ToolCall.Arguments
		case model.ChunkDone:
			final = ch.Response
		}
	}
	if text != "Let me look." || thinking != "Paris, then." || args != `{"city":"Paris"}` {
		t.Errorf("text %q thinking %q tool arguments %q", text, thinking, args)
	}
	if final == nil || len(final.ToolCalls()) != 1 || final.Message.Thinking() != "Paris, then." {
		t.Errorf("final = %+v", final)
	}
}

// TestClientStreamRetriesBeforeFirstChunk: a failure before any chunk is
// retried under the resilience policy.
func TestClientStreamRetriesBeforeFirstChunk(t *testing.T) {
	m := llmtest.New(llmtest.Transient(), llmtest.Text("ok"))
	c := openAIClient(t, m)
	resp, err := model.Collect(c.Stream(context.Background(), &model.Request{Messages: []model.Message{model.User("hi")}}))
	if err != nil || resp.Text() != "ok" || len(m.Calls()) != 2 {
		t.Errorf("resp %+v, err %v after %d calls; want ok after 2", resp, err, len(m.Calls()))
	}
}

// brokenStream is a model that streams one chunk and then fails like a
// provider answering 503.
type brokenStream struct{ calls atomic.Int32 }

func (b *brokenStream) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return model.Collect(b.Stream(ctx, req))
}

func (b *brokenStream) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		b.calls.Add(1)
		if !yield(model.Chunk{Kind: model.ChunkText, Text: "partial"}, nil) {
			return
		}
		yield(model.Chunk{}, &agent.ProviderError{Provider: "test", StatusCode: http.StatusServiceUnavailable, Err: errors.New("connection reset mid-stream")})
	}
}

// TestClientStreamNoRetryAfterChunk: once a chunk has been yielded, a
// failure ends the stream rather than starting it again.
func TestClientStreamNoRetryAfterChunk(t *testing.T) {
	b := &brokenStream{}
	c := newClient(t, agent.Config{Model: b, Resilience: fastPolicy()})
	var chunks []string
	var err error
	for ch, e := range c.Stream(context.Background(), &model.Request{Messages: []model.Message{model.User("hi")}}) {
		if e != nil {
			err = e
			break
		}
		chunks = append(chunks, ch.Text)
	}
	if err == nil || !strings.Contains(err.Error(), "mid-stream") || b.calls.Load() != 1 || len(chunks) != 1 {
		t.Errorf("err %v after %d calls and chunks %q; want the 503 after 1 call and 1 chunk", err, b.calls.Load(), chunks)
	}
}

// TestCallOnModel runs Call[T] on models that are not a *Client: the
// in-process scripted model (JSON mode with T's schema, a rejected reply
// retried) and a provider model on the OpenAI wire (tool forcing).
func TestCallOnModel(t *testing.T) {
	t.Run("scripted", func(t *testing.T) {
		m := llmtest.New(llmtest.Text(`{"action":"ANSWER"}`),
			llmtest.Text(`{"action":"ANSWER","reasoning":"simple","response":"4"}`))
		res, err := agent.Call[SupervisorDecision](context.Background(), m, "What is 2+2?")
		if err != nil {
			t.Fatal(err)
		}
		if res.Value.Response != "4" || len(res.Attempts) != 1 {
			t.Errorf("value %+v after %d rejected attempts", res.Value, len(res.Attempts))
		}
		req := m.Calls()[0].Request
		if req.ResponseFormat == nil || !strings.Contains(string(req.ResponseFormat.Schema), `"reasoning"`) ||
			!strings.Contains(req.Messages[0].Text(), "reasoning") {
			t.Errorf("first request: response format %+v, system %q", req.ResponseFormat, req.Messages[0].Text())
		}
		if !strings.Contains(m.Calls()[1].Prompt, "Schema Validation Error") {
			t.Errorf("retry prompt = %q", m.Calls()[1].Prompt)
		}
	})
	t.Run("provider tool", func(t *testing.T) {
		m := llmtest.New(llmtest.Reply{ToolCalls: []model.ToolCall{
			llmtest.ToolCall("call_1", "supervisor_decision", `{"action":"ANSWER","reasoning":"r","response":"hi"}`)}})
		srv := llmtest.NewOpenAIServer(m)
		defer srv.Close()
		pm, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", Model: "gpt-test"})
		if err != nil {
			t.Fatal(err)
		}
		var chunks int
		res, err := agent.Call[SupervisorDecision](context.Background(), pm, "say hi", agent.WithOutputMode(agent.OutputTool),
			agent.WithStreaming(func(context.Context, model.Chunk) error { chunks++; return nil }))
		if err != nil {
			t.Fatal(err)
		}
		req := m.Calls()[0].Request
		if res.Value.Response != "hi" || req.ToolChoice != (model.ToolChoice{Mode: model.ToolNamed, Name: "supervisor_decision"}) ||
			len(req.Tools) != 1 || chunks == 0 {
			t.Errorf("value %+v; tool choice %+v, %d tools, %d chunks", res.Value, req.ToolChoice, len(req.Tools), chunks)
		}
	})
}

// BenchmarkClientModelGenerate measures a Client used as a model.Model
// around a scripted model that costs nothing: resolution, the request's
// settings, the resilience policy.
func BenchmarkClientModelGenerate(b *testing.B) {
	m := llmtest.New().Default(llmtest.Reply{Text: "ok", ToolCalls: []model.ToolCall{llmtest.ToolCall("c", "f", `{}`)}}).KeepCalls(0)
	c, err := agent.New(agent.Config{Model: m})
	if err != nil {
		b.Fatal(err)
	}
	req := &model.Request{Messages: []model.Message{model.System("s"), model.User("hi")}, Tools: []model.ToolDef{weatherTool}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestResponseIDReachesResponse checks that the provider's id of a reply
// (Anthropic's "msg_…", here over llmtest's Anthropic server with
// AnthropicDirect) reaches Response.ResponseID on every path: Complete and
// Call[T] on a *Client, Call[T] on the provider model itself, streamed or
// not.
func TestResponseIDReachesResponse(t *testing.T) {
	const answer = `{"action":"ANSWER","reasoning":"simple","response":"4"}`
	m := llmtest.New().Default(llmtest.Text(answer))
	srv := llmtest.NewAnthropicServer(m)
	defer srv.Close()
	pm, err := provider.AnthropicDirect(provider.AnthropicConfig{APIKey: "sk-ant-test", BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, agent.Config{Model: pm, Resilience: wirePolicy()})
	ctx := context.Background()
	for _, stream := range []bool{false, true} {
		var opts []agent.Option
		if stream {
			opts = append(opts, agent.WithStreaming(func(context.Context, model.Chunk) error { return nil }))
		}
		resp, err := agent.Complete(ctx, c, "2+2?", opts...)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ResponseID != "msg_llmtest" {
			t.Errorf("stream=%v: Complete: ResponseID = %q, want msg_llmtest", stream, resp.ResponseID)
		}
		for name, mm := range map[string]model.Model{"client": c, "provider": pm} {
			res, err := agent.Call[SupervisorDecision](ctx, mm, "2+2?", opts...)
			if err != nil {
				t.Fatal(err)
			}
			if res.Response == nil || res.Response.ResponseID != "msg_llmtest" {
				t.Errorf("stream=%v: Call on the %s: Response = %+v, want ResponseID msg_llmtest", stream, name, res.Response)
			}
		}
	}
}
