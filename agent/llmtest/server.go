package llmtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
)

// NewOpenAIServer starts a server speaking OpenAI's chat completions API
// (POST /v1/chat/completions) that answers from m. Point an OpenAI client at
// URL+"/v1".
//
// The server reads the request into the model vocabulary (messages with
// tool calls and tool results, tools, tool choice, temperature, max tokens,
// stop, response format), which m records as Call.Request, and answers with
// m's reply: plain, or streamed as server-sent events where text arrives as
// "content" deltas, thinking as "reasoning_content" deltas and each tool
// call as "tool_calls" deltas (the first with its id, type and name, the
// others with pieces of its arguments), then the finish reason and a final
// usage chunk. A reply whose Err is an *agent.ProviderError with a
// StatusCode is answered with that status, an OpenAI error body and, for a
// RetryAfter, the Retry-After and retry-after-ms headers; any other Err with
// 500. Close the server when done.
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
		mreq, err := req.request()
		if err != nil {
			writeError(w, http.StatusBadRequest, openAIErrorBody, "llmtest: "+err.Error(), 0)
			return
		}
		id := "chatcmpl-llmtest"
		if !req.Stream {
			resp, err := m.Generate(r.Context(), mreq)
			if err != nil {
				writeModelError(w, err, openAIErrorBody)
				return
			}
			msg := map[string]any{"role": "assistant", "content": nilIfEmpty(resp.Text())}
			if th := resp.Message.Thinking(); th != "" {
				msg["reasoning_content"] = th
			}
			if calls := resp.ToolCalls(); len(calls) > 0 {
				tcs := make([]any, len(calls))
				for i, c := range calls {
					tcs[i] = map[string]any{"id": c.ID, "type": "function",
						"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}}
				}
				msg["tool_calls"] = tcs
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": openAIFinish(resp.FinishReason)}},
				"usage":   openAIUsage(resp.Usage)})
			return
		}
		sse := &sseWriter{w: w}
		chunk := func(delta map[string]any, finish any) {
			sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		}
		for c, err := range m.Stream(r.Context(), mreq) {
			if err != nil {
				if !sse.started {
					writeModelError(w, err, openAIErrorBody)
				}
				return
			}
			switch c.Kind {
			case model.ChunkText:
				chunk(map[string]any{"content": c.Text}, nil)
			case model.ChunkThinking:
				chunk(map[string]any{"reasoning_content": c.Text}, nil)
			case model.ChunkToolCall:
				d := c.ToolCall
				tc := map[string]any{"index": d.Index, "function": map[string]any{"arguments": d.Arguments}}
				if d.ID != "" || d.Name != "" {
					tc["id"], tc["type"] = d.ID, "function"
					tc["function"] = map[string]any{"name": d.Name, "arguments": d.Arguments}
				}
				chunk(map[string]any{"tool_calls": []any{tc}}, nil)
			case model.ChunkDone:
				chunk(map[string]any{}, openAIFinish(c.Response.FinishReason))
				sse.data(map[string]any{"id": id, "object": "chat.completion.chunk", "model": req.Model,
					"choices": []any{}, "usage": openAIUsage(c.Response.Usage)})
				sse.raw("[DONE]")
			}
		}
	}))
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func openAIFinish(f model.FinishReason) string {
	if f == "" {
		return "stop"
	}
	return string(f)
}

func openAIUsage(u model.Usage) map[string]any {
	return map[string]any{
		"prompt_tokens": u.InputTokens + u.CacheReadTokens, "completion_tokens": u.OutputTokens + u.ThinkingTokens,
		"total_tokens":              u.Total() - u.CacheWriteTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheReadTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ThinkingTokens},
	}
}

// NewAnthropicServer starts a server speaking Anthropic's Messages API
// (POST /v1/messages) that answers from m. Point an Anthropic client at
// URL+"/v1".
//
// The server reads the request into the model vocabulary (system prompt,
// text, image, tool_use, tool_result and thinking blocks, tools, tool
// choice, thinking budget, temperature, max tokens, stop sequences), which
// m records as Call.Request, and answers with m's reply as content blocks:
// a thinking block with its signature (Signature), a text block and one
// tool_use block per tool call. Streamed, each block arrives as
// content_block_start, its deltas (thinking_delta then signature_delta,
// text_delta, or input_json_delta pieces of the tool's input) and
// content_block_stop, between message_start and message_delta (with the
// stop reason and usage) and message_stop. Usage reports thinking within
// output_tokens, as Anthropic does. Errors are answered as NewOpenAIServer
// does, with Anthropic's error body. Close the server when done.
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
		mreq, err := req.request()
		if err != nil {
			writeError(w, http.StatusBadRequest, anthropicErrorBody, "llmtest: "+err.Error(), 0)
			return
		}
		if !req.Stream {
			resp, err := m.Generate(r.Context(), mreq)
			if err != nil {
				writeModelError(w, err, anthropicErrorBody)
				return
			}
			var content []any
			for _, p := range resp.Message.Parts {
				switch p.Kind {
				case model.PartThinking:
					content = append(content, map[string]any{"type": "thinking", "thinking": p.Text, "signature": p.Signature})
				case model.PartText:
					content = append(content, map[string]any{"type": "text", "text": p.Text})
				case model.PartToolCall:
					content = append(content, map[string]any{"type": "tool_use", "id": p.ToolCall.ID, "name": p.ToolCall.Name,
						"input": inputOf(p.ToolCall.Arguments)})
				}
			}
			if len(content) == 0 {
				content = append(content, map[string]any{"type": "text", "text": ""})
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_llmtest", "type": "message", "role": "assistant",
				"model": req.Model, "content": content, "stop_reason": anthropicStop(resp.FinishReason),
				"stop_sequence": nil, "usage": anthropicUsage(resp.Usage)})
			return
		}
		// The scripted reply is collected first, so that message_start can
		// carry the input usage as Anthropic's does; the scripted model has
		// no latency of its own to hide.
		var chunks []model.Chunk
		for c, err := range m.Stream(r.Context(), mreq) {
			if err != nil {
				writeModelError(w, err, anthropicErrorBody)
				return
			}
			chunks = append(chunks, c)
		}
		done := chunks[len(chunks)-1].Response
		sse := &sseWriter{w: w}
		u := anthropicUsage(done.Usage)
		sse.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_llmtest", "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": u["input_tokens"], "output_tokens": 1,
				"cache_read_input_tokens": u["cache_read_input_tokens"], "cache_creation_input_tokens": u["cache_creation_input_tokens"]}}})
		block, kind, call := -1, model.ChunkKind(""), -1
		delta := func(d map[string]any) {
			sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": block, "delta": d})
		}
		stop := func() {
			if kind == model.ChunkThinking {
				delta(map[string]any{"type": "signature_delta", "signature": Signature})
			}
			if kind != "" {
				sse.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": block})
			}
			kind = ""
		}
		start := func(k model.ChunkKind, cb map[string]any) {
			stop()
			block++
			kind = k
			sse.event("content_block_start", map[string]any{"type": "content_block_start", "index": block, "content_block": cb})
		}
		for _, c := range chunks[:len(chunks)-1] {
			switch c.Kind {
			case model.ChunkThinking:
				if kind != c.Kind {
					start(c.Kind, map[string]any{"type": "thinking", "thinking": ""})
				}
				delta(map[string]any{"type": "thinking_delta", "thinking": c.Text})
			case model.ChunkText:
				if kind != c.Kind {
					start(c.Kind, map[string]any{"type": "text", "text": ""})
				}
				delta(map[string]any{"type": "text_delta", "text": c.Text})
			case model.ChunkToolCall:
				if kind != c.Kind || c.ToolCall.Index != call {
					call = c.ToolCall.Index
					start(c.Kind, map[string]any{"type": "tool_use", "id": c.ToolCall.ID, "name": c.ToolCall.Name, "input": map[string]any{}})
				}
				if c.ToolCall.Arguments != "" {
					delta(map[string]any{"type": "input_json_delta", "partial_json": c.ToolCall.Arguments})
				}
			}
		}
		stop()
		sse.event("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": anthropicStop(done.FinishReason), "stop_sequence": nil}, "usage": u})
		sse.event("message_stop", map[string]any{"type": "message_stop"})
	}))
}

func inputOf(args json.RawMessage) any {
	var input any = map[string]any{}
	if len(args) > 0 {
		_ = json.Unmarshal(args, &input)
	}
	return input
}

func anthropicStop(f model.FinishReason) string {
	switch f {
	case model.FinishToolCalls:
		return "tool_use"
	case model.FinishLength:
		return "max_tokens"
	case model.FinishContentFilter:
		return "refusal"
	}
	return "end_turn"
}

func anthropicUsage(u model.Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens + u.ThinkingTokens,
		"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens}
}

type openAIRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Stream              bool            `json:"stream"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	Stop                json.RawMessage `json:"stop"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// request reads the wire request into the model vocabulary.
func (req *openAIRequest) request() (*model.Request, error) {
	out := &model.Request{Model: req.Model, Temperature: req.Temperature, MaxTokens: max(req.MaxTokens, req.MaxCompletionTokens)}
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			out.Messages = append(out.Messages, model.Message{Role: model.RoleSystem, Parts: openAIParts(m.Content)})
		case "user":
			out.Messages = append(out.Messages, model.Message{Role: model.RoleUser, Name: m.Name, Parts: openAIParts(m.Content)})
		case "assistant":
			msg := model.Message{Role: model.RoleAssistant, Name: m.Name, Parts: openAIParts(m.Content)}
			for _, tc := range m.ToolCalls {
				msg.Parts = append(msg.Parts, model.ToolCallPart(model.ToolCall{ID: tc.ID, Name: tc.Function.Name,
					Arguments: json.RawMessage(tc.Function.Arguments)}))
			}
			out.Messages = append(out.Messages, msg)
		case "tool":
			res := model.ToolResult{CallID: m.ToolCallID, Content: openAIParts(m.Content)}
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == model.RoleTool {
				out.Messages[n-1].Parts = append(out.Messages[n-1].Parts, model.Part{Kind: model.PartToolResult, ToolResult: &res})
			} else {
				out.Messages = append(out.Messages, model.ToolResults(res))
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if len(req.Stop) > 0 {
		var one string
		if json.Unmarshal(req.Stop, &one) == nil {
			out.Stop = []string{one}
		} else {
			_ = json.Unmarshal(req.Stop, &out.Stop)
		}
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "text" {
		out.ResponseFormat = &model.ResponseFormat{}
		if rf.JSONSchema != nil {
			out.ResponseFormat.Name, out.ResponseFormat.Schema = rf.JSONSchema.Name, rf.JSONSchema.Schema
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, model.ToolDef{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	if len(req.ToolChoice) > 0 {
		var mode string
		var named struct {
			Function struct{ Name string } `json:"function"`
		}
		switch {
		case json.Unmarshal(req.ToolChoice, &mode) == nil:
			switch mode {
			case "none":
				out.ToolChoice.Mode = model.ToolNone
			case "required":
				out.ToolChoice.Mode = model.ToolRequired
			}
		case json.Unmarshal(req.ToolChoice, &named) == nil && named.Function.Name != "":
			out.ToolChoice = model.ToolChoice{Mode: model.ToolNamed, Name: named.Function.Name}
		}
	}
	return out, nil
}

// openAIParts reads a message content that is a string or a list of parts.
func openAIParts(raw json.RawMessage) []model.Part {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil
		}
		return []model.Part{model.TextPart(s)}
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []model.Part
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, model.TextPart(p.Text))
		case "image_url":
			out = append(out, dataURLPart(p.ImageURL.URL))
		}
	}
	return out
}

// dataURLPart reads an image given as a data: URL into a binary part, and
// keeps any other URL as a reference.
func dataURLPart(u string) model.Part {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		if meta, data, ok := strings.Cut(rest, ","); ok {
			if mime, ok := strings.CutSuffix(meta, ";base64"); ok {
				if b, err := base64.StdEncoding.DecodeString(data); err == nil {
					return model.BinaryPart(mime, b)
				}
			}
		}
	}
	return model.Part{Kind: model.PartBinary, URL: u}
}

type anthropicRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MaxTokens     int      `json:"max_tokens"`
	Temperature   *float64 `json:"temperature"`
	StopSequences []string `json:"stop_sequences"`
	Stream        bool     `json:"stream"`
	Thinking      *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// request reads the wire request into the model vocabulary. A user message's
// tool_result blocks become a tool message, its other blocks a user message;
// consecutive messages of one role are joined, as Anthropic joins them.
func (req *anthropicRequest) request() (*model.Request, error) {
	out := &model.Request{Model: req.Model, Temperature: req.Temperature, MaxTokens: req.MaxTokens, Stop: req.StopSequences}
	if sys := anthropicBlocks(req.System); len(sys) > 0 {
		msg := model.Message{Role: model.RoleSystem}
		for _, b := range sys {
			msg.Parts = append(msg.Parts, model.TextPart(b.Text))
		}
		out.Messages = append(out.Messages, msg)
	}
	for i, m := range req.Messages {
		var role model.Role
		switch m.Role {
		case "user":
			role = model.RoleUser
		case "assistant":
			role = model.RoleAssistant
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		msg := model.Message{Role: role}
		var results []model.ToolResult
		for _, b := range anthropicBlocks(m.Content) {
			switch b.Type {
			case "text":
				msg.Parts = append(msg.Parts, model.TextPart(b.Text))
			case "thinking":
				msg.Parts = append(msg.Parts, model.ThinkingPart(b.Thinking, b.Signature))
			case "redacted_thinking":
				msg.Parts = append(msg.Parts, model.Part{Kind: model.PartThinking, Text: b.Data, Redacted: true})
			case "image":
				if b.Source.Type == "base64" {
					data, err := base64.StdEncoding.DecodeString(b.Source.Data)
					if err != nil {
						return nil, fmt.Errorf("message %d: image data: %w", i, err)
					}
					msg.Parts = append(msg.Parts, model.BinaryPart(b.Source.MediaType, data))
				} else {
					msg.Parts = append(msg.Parts, model.Part{Kind: model.PartBinary, URL: b.Source.URL})
				}
			case "tool_use":
				msg.Parts = append(msg.Parts, model.ToolCallPart(model.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input}))
			case "tool_result":
				res := model.ToolResult{CallID: b.ToolUseID, IsError: b.IsError}
				for _, c := range anthropicBlocks(b.Content) {
					if c.Type == "text" {
						res.Content = append(res.Content, model.TextPart(c.Text))
					}
				}
				results = append(results, res)
			default:
				return nil, fmt.Errorf("message %d: unknown content block type %q", i, b.Type)
			}
		}
		// Consecutive turns of one role are one turn, as Anthropic combines them.
		if len(results) > 0 {
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == model.RoleTool {
				out.Messages[n-1].Parts = append(out.Messages[n-1].Parts, model.ToolResults(results...).Parts...)
			} else {
				out.Messages = append(out.Messages, model.ToolResults(results...))
			}
		}
		if len(msg.Parts) > 0 || len(results) == 0 {
			if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == msg.Role && msg.Role != model.RoleSystem {
				out.Messages[n-1].Parts = append(out.Messages[n-1].Parts, msg.Parts...)
			} else {
				out.Messages = append(out.Messages, msg)
			}
		}
	}
	if t := req.Thinking; t != nil {
		switch t.Type {
		case "enabled":
			out.Thinking = &model.Thinking{Budget: t.BudgetTokens}
		case "disabled":
			out.Thinking = &model.Thinking{Disabled: true}
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, model.ToolDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	if tc := req.ToolChoice; tc != nil {
		switch tc.Type {
		case "any":
			out.ToolChoice.Mode = model.ToolRequired
		case "none":
			out.ToolChoice.Mode = model.ToolNone
		case "tool":
			out.ToolChoice = model.ToolChoice{Mode: model.ToolNamed, Name: tc.Name}
		}
	}
	return out, nil
}

// anthropicBlocks reads a content that is a string or a list of blocks.
func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	return blocks
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
