package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/tmc/langchaingo/llms"
)

// NewOpenAIServer starts a server speaking OpenAI's chat completions API
// (POST /v1/chat/completions, plain and streamed as server-sent events, usage
// included) that answers from m. Point an OpenAI client at URL+"/v1". A
// reply whose Err is an *agent.ProviderError with a StatusCode is answered
// with that status, an OpenAI error body and, for a RetryAfter, the
// Retry-After and retry-after-ms headers; any other Err with 500. Close the
// server when done.
func NewOpenAIServer(m *Model) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"llmtest: no such endpoint","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		var req openAIRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, openAIErrorBody, "llmtest: bad request body: "+err.Error(), 0)
			return
		}
		msgs, opts := req.llms()
		sse := &sseWriter{w: w}
		id := "chatcmpl-llmtest"
		chunk := func(delta map[string]any, finish any) {
			sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		}
		if req.Stream {
			opts = append(opts,
				llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
					chunk(map[string]any{"content": string(c)}, nil)
					return nil
				}),
				llms.WithStreamingReasoningFunc(func(_ context.Context, rc, _ []byte) error {
					if len(rc) > 0 {
						chunk(map[string]any{"reasoning_content": string(rc)}, nil)
					}
					return nil
				}))
		}
		resp, err := m.GenerateContent(r.Context(), msgs, opts...)
		if err != nil {
			if !sse.started {
				writeModelError(w, err, openAIErrorBody)
			}
			return
		}
		ch := resp.Choices[0]
		u, _ := ch.GenerationInfo[agent.UsageKey].(agent.TokenUsage)
		usage := map[string]any{
			"prompt_tokens": u.InputTokens + u.CacheReadTokens, "completion_tokens": u.OutputTokens + u.ThinkingTokens,
			"total_tokens":              u.Total() - u.CacheWriteTokens,
			"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheReadTokens},
			"completion_tokens_details": map[string]any{"reasoning_tokens": u.ThinkingTokens},
		}
		var toolCalls []any
		for _, tc := range ch.ToolCalls {
			toolCalls = append(toolCalls, map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.FunctionCall.Name, "arguments": tc.FunctionCall.Arguments}})
		}
		finish := ch.StopReason
		if len(toolCalls) > 0 {
			finish = "tool_calls"
		}
		if req.Stream {
			if len(toolCalls) > 0 {
				for i, tc := range toolCalls {
					tcm := tc.(map[string]any)
					tcm["index"] = i
					chunk(map[string]any{"tool_calls": []any{tcm}}, nil)
				}
			}
			chunk(map[string]any{}, finish)
			sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "model": req.Model, "choices": []any{}, "usage": usage})
			sse.raw("[DONE]")
			return
		}
		msg := map[string]any{"role": "assistant", "content": ch.Content}
		if ch.ReasoningContent != "" {
			msg["reasoning_content"] = ch.ReasoningContent
		}
		if len(toolCalls) > 0 {
			msg["tool_calls"] = toolCalls
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
	}))
}

// NewAnthropicServer starts a server speaking Anthropic's Messages API
// (POST /v1/messages, plain and streamed as server-sent events) that answers
// from m. Point an Anthropic client at URL+"/v1". A reply's Thinking comes
// back as a thinking content block before the text block, as Anthropic's
// extended thinking does; its usage reports thinking within output_tokens,
// as Anthropic does. Errors are answered as NewOpenAIServer does, with
// Anthropic's error body. Close the server when done.
func NewAnthropicServer(m *Model) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"llmtest: no such endpoint"}}`, http.StatusNotFound)
			return
		}
		var req anthropicRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, anthropicErrorBody, "llmtest: bad request body: "+err.Error(), 0)
			return
		}
		msgs, opts := req.llms()
		sse := &sseWriter{w: w}
		block, kind := -1, ""
		startBlock := func(k string) {
			if kind == k {
				return
			}
			if kind == "thinking" {
				sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
					"delta": map[string]any{"type": "signature_delta", "signature": "llmtest-signature"}})
			}
			if kind != "" {
				sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
			}
			block++
			kind = k
			cb := map[string]any{"type": "text", "text": ""}
			if k == "thinking" {
				cb = map[string]any{"type": "thinking", "thinking": ""}
			}
			sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": block, "content_block": cb})
		}
		var once sync.Once
		messageStart := func(u agent.TokenUsage) {
			once.Do(func() {
				sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
					"id": "msg_llmtest", "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
					"stop_reason": nil, "usage": map[string]any{"input_tokens": u.InputTokens, "output_tokens": 1,
						"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens}}})
			})
		}
		if req.Stream {
			// Input usage is known only at the end; Anthropic sends it first,
			// so the stream is started from the scripted reply when it comes.
			opts = append(opts,
				llms.WithStreamingReasoningFunc(func(_ context.Context, rc, _ []byte) error {
					messageStart(agent.TokenUsage{})
					startBlock("thinking")
					sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
						"delta": map[string]any{"type": "thinking_delta", "thinking": string(rc)}})
					return nil
				}),
				llms.WithStreamingFunc(func(_ context.Context, c []byte) error {
					messageStart(agent.TokenUsage{})
					startBlock("text")
					sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
						"delta": map[string]any{"type": "text_delta", "text": string(c)}})
					return nil
				}))
		}
		resp, err := m.GenerateContent(r.Context(), msgs, opts...)
		if err != nil {
			if !sse.started {
				writeModelError(w, err, anthropicErrorBody)
			}
			return
		}
		ch := resp.Choices[0]
		u, _ := ch.GenerationInfo[agent.UsageKey].(agent.TokenUsage)
		stop := ch.StopReason
		if stop == "" || stop == "stop" {
			stop = "end_turn"
		}
		if len(ch.ToolCalls) > 0 {
			stop = "tool_use"
		}
		var content []any
		if ch.ReasoningContent != "" {
			content = append(content, map[string]any{"type": "thinking", "thinking": ch.ReasoningContent, "signature": "llmtest-signature"})
		}
		if ch.Content != "" || len(ch.ToolCalls) == 0 {
			content = append(content, map[string]any{"type": "text", "text": ch.Content})
		}
		for _, tc := range ch.ToolCalls {
			var input any = map[string]any{}
			_ = json.Unmarshal([]byte(tc.FunctionCall.Arguments), &input)
			content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.FunctionCall.Name, "input": input})
		}
		usage := map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens + u.ThinkingTokens,
			"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_llmtest", "type": "message", "role": "assistant",
				"model": req.Model, "content": content, "stop_reason": stop, "usage": usage})
			return
		}
		messageStart(u)
		for _, tc := range ch.ToolCalls {
			kind = "" // tool blocks are sent whole
			block++
			sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": block,
				"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.FunctionCall.Name, "input": map[string]any{}}})
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": tc.FunctionCall.Arguments}})
			sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		}
		if kind == "thinking" {
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block,
				"delta": map[string]any{"type": "signature_delta", "signature": "llmtest-signature"}})
		}
		if kind != "" {
			sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
		}
		sse.event("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
		sse.event("message_stop", map[string]any{"type": "message_stop"})
	}))
}

type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream              bool                   `json:"stream"`
	MaxTokens           int                    `json:"max_tokens"`
	MaxCompletionTokens int                    `json:"max_completion_tokens"`
	Temperature         *float64               `json:"temperature"`
	ResponseFormat      *struct{ Type string } `json:"response_format"`
	Tools               []llms.Tool            `json:"tools"`
	ToolChoice          any                    `json:"tool_choice"`
}

func (req *openAIRequest) llms() ([]llms.MessageContent, []llms.CallOption) {
	var msgs []llms.MessageContent
	for _, m := range req.Messages {
		role := map[string]llms.ChatMessageType{"system": llms.ChatMessageTypeSystem, "user": llms.ChatMessageTypeHuman,
			"assistant": llms.ChatMessageTypeAI, "tool": llms.ChatMessageTypeTool}[m.Role]
		msgs = append(msgs, llms.TextParts(role, contentText(m.Content)))
	}
	opts := []llms.CallOption{llms.WithModel(req.Model), llms.WithMaxTokens(max(req.MaxTokens, req.MaxCompletionTokens))}
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	if req.ResponseFormat != nil && req.ResponseFormat.Type == "json_object" {
		opts = append(opts, llms.WithJSONMode())
	}
	if len(req.Tools) > 0 {
		opts = append(opts, llms.WithTools(req.Tools))
	}
	if req.ToolChoice != nil {
		opts = append(opts, llms.WithToolChoice(req.ToolChoice))
	}
	return msgs, opts
}

type anthropicRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature *float64 `json:"temperature"`
	Stream      bool     `json:"stream"`
	Thinking    *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	Tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"input_schema"`
	} `json:"tools"`
}

func (req *anthropicRequest) llms() ([]llms.MessageContent, []llms.CallOption) {
	var msgs []llms.MessageContent
	if s := contentText(req.System); s != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, s))
	}
	for _, m := range req.Messages {
		role := llms.ChatMessageTypeHuman
		if m.Role == "assistant" {
			role = llms.ChatMessageTypeAI
		}
		msgs = append(msgs, llms.TextParts(role, contentText(m.Content)))
	}
	opts := []llms.CallOption{llms.WithModel(req.Model), llms.WithMaxTokens(req.MaxTokens)}
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	if req.Thinking != nil && req.Thinking.Type == "enabled" {
		opts = append(opts, llms.WithThinkingBudget(req.Thinking.BudgetTokens))
	}
	if len(req.Tools) > 0 {
		tools := make([]llms.Tool, len(req.Tools))
		for i, t := range req.Tools {
			tools[i] = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}}
		}
		opts = append(opts, llms.WithTools(tools))
	}
	return msgs, opts
}

// contentText reads a message content that is a string or a list of parts.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}

type sseWriter struct {
	w       http.ResponseWriter
	started bool
}

func (s *sseWriter) start() {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.Header().Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
}

func (s *sseWriter) data(v any) {
	b, _ := json.Marshal(v)
	s.raw(string(b))
}

func (s *sseWriter) raw(data string) {
	s.start()
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	s.w.(http.Flusher).Flush()
}

func (s *sseWriter) event(name string, v any) {
	s.start()
	b, _ := json.Marshal(v)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	s.w.(http.Flusher).Flush()
}

func openAIErrorBody(typ, msg string) any {
	return map[string]any{"error": map[string]any{"message": msg, "type": typ}}
}

func anthropicErrorBody(typ, msg string) any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeModelError(w http.ResponseWriter, err error, body func(typ, msg string) any) {
	status, retryAfter := http.StatusInternalServerError, time.Duration(0)
	var pe *agent.ProviderError
	if errors.As(err, &pe) && pe.StatusCode != 0 {
		status, retryAfter = pe.StatusCode, pe.RetryAfter
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return // the client has gone
	}
	writeError(w, status, body, err.Error(), retryAfter)
}

func writeError(w http.ResponseWriter, status int, body func(typ, msg string) any, msg string, retryAfter time.Duration) {
	typ := "api_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status < 500:
		typ = "invalid_request_error"
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body(typ, msg))
}
