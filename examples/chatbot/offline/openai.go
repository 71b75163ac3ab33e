package offline

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Handler returns an http.Handler speaking OpenAI's chat completions API,
// answered by m:
//
//   - POST /v1/chat/completions (also /chat/completions): messages with
//     string or text-part content; "stream": true answers with server-sent
//     events (a role chunk, content chunks, a chunk with the finish reason,
//     then, when stream_options.include_usage is set as langchaingo's
//     client does, a usage chunk with no choices, then [DONE]); a
//     tool_choice naming a function gets the JSON answer as that
//     function's call. Usage is the EstimateTokens estimate.
//   - GET /v1/models (also /models): the model's name.
//
// Point an OpenAI client at the server's URL + "/v1" with any API key.
func (m *Model) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, prefix := range []string{"/v1", ""} {
		mux.HandleFunc("POST "+prefix+"/chat/completions", m.chatCompletions)
		mux.HandleFunc("GET "+prefix+"/models", m.models)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "offline: no such endpoint "+r.Method+" "+r.URL.Path+"; use POST /v1/chat/completions")
	})
	return mux
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

var completionSeq atomic.Int64

func (m *Model) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "offline: the request body is not a chat completions request: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "offline: messages is empty; send at least one user message")
		return
	}
	var mreq model.Request
	for i, msg := range req.Messages {
		role, ok := roles[msg.Role]
		if !ok {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("offline: messages[%d].role %q is not one of system, developer, user, assistant, tool", i, msg.Role))
			return
		}
		text, err := contentText(msg.Content)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("offline: messages[%d].content: %v", i, err))
			return
		}
		mreq.Messages = append(mreq.Messages, model.Message{Role: role, Parts: []model.Part{model.TextPart(text)}})
	}
	var choice struct {
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(req.ToolChoice) > 0 && json.Unmarshal(req.ToolChoice, &choice) == nil && choice.Function != nil {
		mreq.ToolChoice = model.ToolChoice{Mode: model.ToolNamed, Name: choice.Function.Name}
	}
	rep := m.answer(&mreq)

	id := fmt.Sprintf("chatcmpl-offline-%d", completionSeq.Add(1))
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
		"total_tokens": rep.PromptTokens + rep.CompletionTokens}
	finish := "stop"
	var toolCalls []any
	if rep.ToolCall != nil {
		finish = "tool_calls"
		toolCalls = []any{map[string]any{"index": 0, "id": rep.ToolCall.ID, "type": "function",
			"function": map[string]any{"name": rep.ToolCall.Name, "arguments": string(rep.ToolCall.Arguments)}}}
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": rep.Text}
		if toolCalls != nil {
			msg["tool_calls"] = toolCalls
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": created, "model": m.name,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	chunk := func(delta map[string]any, finish any) bool {
		return send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": m.name,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	if !chunk(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for _, piece := range chunks(rep.Text, m.chunk) {
		if !chunk(map[string]any{"content": piece}, nil) {
			return
		}
	}
	if toolCalls != nil && !chunk(map[string]any{"tool_calls": toolCalls}, nil) {
		return
	}
	if !chunk(map[string]any{}, finish) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		if !send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": m.name,
			"choices": []any{}, "usage": usage}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func (m *Model) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list",
		"data": []any{map[string]any{"id": m.name, "object": "model", "created": 0, "owned_by": "agentgraph-offline-demo"}}})
}

var roles = map[string]model.Role{
	"system": model.RoleSystem, "developer": model.RoleSystem,
	"user": model.RoleUser, "assistant": model.RoleAssistant, "tool": model.RoleTool,
}

// contentText reads a message's content: a string, null, or a list of
// parts whose text parts are joined.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or a list of content parts: %v", err)
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}
