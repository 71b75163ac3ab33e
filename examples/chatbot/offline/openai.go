package offline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

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
		Role    string         `json:"role"`
		Content messageContent `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ToolChoice toolChoice `json:"tool_choice"`
}

// messageContent is a message's content read as text (see contentText);
// a content that is neither is kept as err, so that the handler can say
// which message it was.
type messageContent struct {
	text string
	err  error
}

func (c *messageContent) UnmarshalJSON(data []byte) error {
	c.text, c.err = contentText(data)
	return nil
}

// toolChoice is the function a tool_choice names, if any ("auto", "none"
// and "required" name none).
type toolChoice struct{ name string }

func (c *toolChoice) UnmarshalJSON(data []byte) error {
	var choice struct {
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &choice) == nil && choice.Function != nil {
		c.name = choice.Function.Name
	}
	return nil
}

var completionSeq atomic.Int64

// bodyBuffers are the buffers requests are read into.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxBufferKept is the largest buffer put back into bodyBuffers.
const maxBufferKept = 256 << 10

func (m *Model) chatCompletions(w http.ResponseWriter, r *http.Request) {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxBufferKept {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	buf.Reset()
	var req chatRequest
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 8<<20))
	if err == nil {
		err = json.Unmarshal(buf.Bytes(), &req) // strings are copied out of buf
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "offline: the request body is not a chat completions request: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "offline: messages is empty; send at least one user message")
		return
	}
	mreq := model.Request{Messages: make([]model.Message, 0, len(req.Messages))}
	for i, msg := range req.Messages {
		role, ok := roles[msg.Role]
		if !ok {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("offline: messages[%d].role %q is not one of system, developer, user, assistant, tool", i, msg.Role))
			return
		}
		if err := msg.Content.err; err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("offline: messages[%d].content: %v", i, err))
			return
		}
		mreq.Messages = append(mreq.Messages, model.Message{Role: role, Parts: []model.Part{model.TextPart(msg.Content.text)}})
	}
	if req.ToolChoice.name != "" {
		mreq.ToolChoice = model.ToolChoice{Mode: model.ToolNamed, Name: req.ToolChoice.name}
	}
	rep := m.answer(&mreq)

	id := "chatcmpl-offline-" + strconv.FormatInt(completionSeq.Add(1), 10)
	created := time.Now().Unix()
	usage := &wireUsage{PromptTokens: rep.PromptTokens, CompletionTokens: rep.CompletionTokens,
		TotalTokens: rep.PromptTokens + rep.CompletionTokens}
	finish := "stop"
	var toolCalls []wireToolCall
	if rep.ToolCall != nil {
		finish = "tool_calls"
		toolCalls = []wireToolCall{{ID: rep.ToolCall.ID, Type: "function",
			Function: wireFunction{Name: rep.ToolCall.Name, Arguments: string(rep.ToolCall.Arguments)}}}
	}
	buf.Reset()
	enc := json.NewEncoder(buf)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = enc.Encode(wireCompletion{ID: id, Object: "chat.completion", Created: created, Model: m.name,
			Choices: []wireChoice{{Message: &wireMessage{Role: "assistant", Content: &rep.Text, ToolCalls: toolCalls}, FinishReason: &finish}},
			Usage:   usage})
		_, _ = w.Write(buf.Bytes())
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	// Each chunk is one event, written and flushed on its own, as a
	// provider streams them.
	send := func(v any) bool {
		buf.Reset()
		buf.WriteString("data: ")
		_ = enc.Encode(v) // ends with a newline
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	var (
		delta wireMessage
		text  string // the content of the delta being sent
	)
	c := wireCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: m.name, Choices: []wireChoice{{Delta: &delta}}}
	chunk := func(d wireMessage, finish *string) bool {
		delta, c.Choices[0].FinishReason = d, finish
		return send(&c)
	}
	if !chunk(wireMessage{Role: "assistant", Content: &text}, nil) {
		return
	}
	for text = range chunkSeq(rep.Text, m.chunk) {
		if !chunk(wireMessage{Content: &text}, nil) {
			return
		}
	}
	if toolCalls != nil && !chunk(wireMessage{ToolCalls: toolCalls}, nil) {
		return
	}
	if !chunk(wireMessage{}, &finish) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		c.Choices, c.Usage = []wireChoice{}, usage
		if !send(&c) {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// The chat completions wire format, as the handler writes it.
type (
	wireCompletion struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage,omitempty"`
	}
	wireChoice struct {
		Index        int          `json:"index"`
		Message      *wireMessage `json:"message,omitempty"`
		Delta        *wireMessage `json:"delta,omitempty"`
		FinishReason *string      `json:"finish_reason"`
	}
	wireMessage struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireToolCall struct {
		Index    int          `json:"index"`
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
)

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
func contentText(raw []byte) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if s, ok := unquoteJSON(raw); ok {
		return s, nil
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

// unquoteJSON decodes raw, a JSON string the request's decoder has already
// checked, as json.Unmarshal would, without scanning it a second time (a
// prompt is most of a request). It reports false when raw is not a
// string or holds what only json.Unmarshal should judge (a control
// character, a bad escape).
func unquoteJSON(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	raw = raw[1 : len(raw)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		for _, c := range raw {
			if c < 0x20 || c == '"' {
				return "", false
			}
		}
		return string(raw), true
	}
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '\\':
			if i+1 >= len(raw) {
				return "", false
			}
			switch e := raw[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(raw[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(raw[min(i+2, len(raw)):]); ok && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							b = utf8.AppendRune(b, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, raw[i:i+size]...)
			}
			i += size
		}
	}
	return string(b), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
