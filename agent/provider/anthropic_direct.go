package provider

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/resilience"
)

// AnthropicDirect returns a model of Anthropic's Messages API that speaks
// the API itself, without langchaingo, and so carries what langchaingo's
// client cannot (see the package documentation): thinking blocks with their
// signatures sent back, so a thinking model can continue a tool loop;
// signatures and tool-call pieces streamed as they come; several blocks per
// message; tool_choice; is_error on tool results; images by URL; and the
// provider's message id as the response's ID (model.Response.ID; the
// reply's Message.ID stays empty, see model.Response). ResponseFormat has no
// Anthropic counterpart and is not sent (put the schema in the prompt, as
// agent.Call does). Errors of HTTP status 400 and above wrap a
// *resilience.HTTPError, with the Retry-After delay, for a resilience policy
// to classify.
func AnthropicDirect(cfg AnthropicConfig) (*Model, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("provider: AnthropicConfig.APIKey is empty: set it or %s", EnvAnthropicKey)
	}
	limit, err := replyCap(cfg.MaxReplyBytes, "AnthropicConfig.MaxReplyBytes")
	if err != nil {
		return nil, err
	}
	hc := capClient(cfg.HTTPClient, limit, "AnthropicConfig.MaxReplyBytes")
	id := cmp.Or(cfg.Model, DefaultAnthropicModel)
	return &Model{provider: NameAnthropic, id: id, direct: &anthropicAPI{
		key: cfg.APIKey, url: strings.TrimRight(cmp.Or(cfg.BaseURL, "https://api.anthropic.com/v1"), "/") + "/messages", hc: hc,
		limit: limit}}, nil
}

type anthropicAPI struct {
	key, url string
	hc       *http.Client
	limit    int64 // the reply cap, which also bounds a line of a stream
}

type aBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []aBlock        `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Source    *aSource        `json:"source,omitempty"`
}

type aSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type aMessage struct {
	Role    string   `json:"role"`
	Content []aBlock `json:"content"`
}

type aTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type aRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int            `json:"max_tokens"`
	System        string         `json:"system,omitempty"`
	Messages      []aMessage     `json:"messages"`
	Temperature   *float64       `json:"temperature,omitempty"`
	StopSequences []string       `json:"stop_sequences,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	Thinking      map[string]any `json:"thinking,omitempty"`
	Tools         []aTool        `json:"tools,omitempty"`
	ToolChoice    map[string]any `json:"tool_choice,omitempty"`
}

// aUsage holds the figures as the server wrote them (json.Number), so that
// a fraction or an overflowing figure is clamped, not a decoding error.
type aUsage struct {
	InputTokens              json.Number `json:"input_tokens"`
	OutputTokens             json.Number `json:"output_tokens"`
	CacheReadInputTokens     json.Number `json:"cache_read_input_tokens"`
	CacheCreationInputTokens json.Number `json:"cache_creation_input_tokens"`
}

// usage returns the usage of u, each figure clamped to [0, math.MaxInt] as
// lcmodel clamps every provider's.
func (u aUsage) usage() model.Usage {
	return model.Usage{InputTokens: lcmodel.Count(u.InputTokens), OutputTokens: lcmodel.Count(u.OutputTokens),
		CacheReadTokens: lcmodel.Count(u.CacheReadInputTokens), CacheWriteTokens: lcmodel.Count(u.CacheCreationInputTokens)}
}

type aResponse struct {
	ID         string   `json:"id"`
	Model      string   `json:"model"`
	Content    []aBlock `json:"content"`
	StopReason string   `json:"stop_reason"`
	Usage      aUsage   `json:"usage"`
}

// body builds the wire request.
func (a *anthropicAPI) body(req *model.Request, id string, stream bool) ([]byte, error) {
	out := aRequest{Model: id, MaxTokens: cmp.Or(req.MaxTokens, lcmodel.DefaultMaxTokens), StopSequences: req.Stop, Stream: stream}
	var system []string
	add := func(role string, blocks ...aBlock) {
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
			return
		}
		out.Messages = append(out.Messages, aMessage{Role: role, Content: blocks})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case model.RoleSystem:
			system = append(system, m.Text())
		case model.RoleUser, model.RoleAssistant:
			var blocks []aBlock
			for _, p := range m.Parts {
				b, err := blockOf(p, false)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				if b != nil {
					blocks = append(blocks, *b)
				}
			}
			if len(blocks) > 0 {
				add(string(m.Role), blocks...)
			}
		case model.RoleTool:
			var blocks []aBlock
			for _, p := range m.Parts {
				if p.Kind != model.PartToolResult || p.ToolResult == nil {
					return nil, fmt.Errorf("message %d: a tool message holds only tool results, not %s", i, p.Kind)
				}
				r := p.ToolResult
				b := aBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
				for _, c := range r.Content {
					cb, err := blockOf(c, true)
					if err != nil {
						return nil, fmt.Errorf("message %d: tool result %s: %w", i, r.CallID, err)
					}
					if cb != nil {
						b.Content = append(b.Content, *cb)
					}
				}
				if len(b.Content) == 0 && len(r.Structured) > 0 {
					b.Content = []aBlock{{Type: "text", Text: string(r.Structured)}}
				}
				blocks = append(blocks, b)
			}
			add("user", blocks...)
		default:
			return nil, fmt.Errorf("message %d: unknown role %q: use system, user, assistant or tool", i, m.Role)
		}
	}
	if len(out.Messages) == 0 {
		return nil, errors.New("the request has no messages: add at least one user message")
	}
	out.System = strings.Join(system, "\n\n")
	if t := req.Thinking; t != nil && !t.Disabled {
		budget := cmp.Or(t.Budget, 10000)
		out.Thinking = map[string]any{"type": "enabled", "budget_tokens": budget}
		out.MaxTokens += budget // max_tokens must exceed the budget
	} else {
		out.Temperature = req.Temperature
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, aTool{Name: t.Name, Description: t.Description,
			InputSchema: orJSON(t.Parameters, `{"type":"object","properties":{}}`)})
	}
	if len(out.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case model.ToolNone:
			out.ToolChoice = map[string]any{"type": "none"}
		case model.ToolRequired:
			out.ToolChoice = map[string]any{"type": "any"}
		case model.ToolNamed:
			out.ToolChoice = map[string]any{"type": "tool", "name": req.ToolChoice.Name}
		}
	}
	return json.Marshal(out)
}

// blockOf converts a part to a content block; nil for an empty text.
// Binary data goes as an image when its bytes are a PNG, JPEG, GIF or
// WebP image, as a document when they are a PDF; other data in a tool's
// result (its server chose it) is named in a note, and in a user's or an
// assistant's message it is an error, so that no one believes the model
// saw a file it was never sent.
func blockOf(p model.Part, toolResult bool) (*aBlock, error) {
	switch p.Kind {
	case model.PartText:
		if p.Text == "" {
			return nil, nil
		}
		return &aBlock{Type: "text", Text: p.Text}, nil
	case model.PartThinking:
		if p.Redacted {
			return &aBlock{Type: "redacted_thinking", Data: p.Text}, nil
		}
		return &aBlock{Type: "thinking", Thinking: p.Text, Signature: p.Signature}, nil
	case model.PartBinary:
		if len(p.Data) > 0 {
			// Only images go in image blocks, with the type their bytes
			// have: other data is named in a note rather than sent as an
			// image the API rejects or misreads.
			mt, ok := model.ImageType(p.Data)
			if !ok && bytes.HasPrefix(p.Data, []byte("%PDF-")) {
				return &aBlock{Type: "document", Source: &aSource{Type: "base64", MediaType: "application/pdf",
					Data: base64.StdEncoding.EncodeToString(p.Data)}}, nil
			}
			if !ok && toolResult {
				return &aBlock{Type: "text", Text: fmt.Sprintf("[%s, %d bytes, not shown]", cmp.Or(p.MIMEType, "application/octet-stream"), len(p.Data))}, nil
			}
			if !ok {
				return nil, fmt.Errorf("a binary part of type %q (%d bytes) is neither a PNG, JPEG, GIF or WebP image nor a PDF, the data Anthropic's API reads; convert it, or send its text", cmp.Or(p.MIMEType, "unknown"), len(p.Data))
			}
			return &aBlock{Type: "image", Source: &aSource{Type: "base64", MediaType: mt,
				Data: base64.StdEncoding.EncodeToString(p.Data)}}, nil
		}
		if p.URL != "" {
			return &aBlock{Type: "image", Source: &aSource{Type: "url", URL: p.URL}}, nil
		}
		return nil, errors.New("binary part has neither Data nor URL")
	case model.PartToolCall:
		if p.ToolCall == nil {
			return nil, errors.New("tool call part without ToolCall")
		}
		return &aBlock{Type: "tool_use", ID: p.ToolCall.ID, Name: p.ToolCall.Name,
			Input: orJSON(p.ToolCall.Arguments, `{}`)}, nil
	}
	return nil, fmt.Errorf("a %s part cannot be sent in this message", p.Kind)
}

func (a *anthropicAPI) post(ctx context.Context, body []byte) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("content-type", "application/json")
	hr.Header.Set("x-api-key", a.key)
	hr.Header.Set("anthropic-version", "2023-06-01")
	resp, err := a.hc.Do(hr)
	if err != nil {
		return nil, err
	}
	if herr := resilience.CheckResponse(resp); herr != nil {
		defer resp.Body.Close()
		var e struct {
			Error struct{ Type, Message string } `json:"error"`
		}
		// The body is read for its message only: its cap error, if any,
		// is not the call's (see capTransport).
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			return nil, fmt.Errorf("%s: %s: %w", e.Error.Type, e.Error.Message, herr)
		}
		return nil, herr
	}
	return resp, nil
}

func (a *anthropicAPI) generate(ctx context.Context, req *model.Request, id string) (*model.Response, error) {
	body, err := a.body(req, id, false)
	if err != nil {
		return nil, err
	}
	resp, err := a.post(ctx, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ar aResponse
	if err := json.NewDecoder(resp.Body).Decode(&ar); err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	out := &model.Response{Message: model.Message{Role: model.RoleAssistant}, ID: ar.ID, Usage: ar.Usage.usage(), Model: cmp.Or(ar.Model, id)}
	for _, b := range ar.Content {
		switch b.Type {
		case "text":
			out.Message.Parts = append(out.Message.Parts, model.TextPart(b.Text))
		case "thinking":
			out.Message.Parts = append(out.Message.Parts, model.ThinkingPart(b.Thinking, b.Signature))
		case "redacted_thinking":
			out.Message.Parts = append(out.Message.Parts, model.Part{Kind: model.PartThinking, Text: b.Data, Redacted: true})
		case "tool_use":
			out.Message.Parts = append(out.Message.Parts, model.ToolCallPart(model.ToolCall{ID: b.ID, Name: b.Name,
				Arguments: orJSON(b.Input, `{}`)}))
		}
	}
	out.FinishReason = lcmodel.Finish(ar.StopReason, len(out.Message.ToolCalls()) > 0)
	return out, nil
}

// stream reads the server-sent events on the caller's goroutine, yielding
// each delta as it arrives.
func (a *anthropicAPI) stream(ctx context.Context, req *model.Request, id string, yield func(model.Chunk, error) bool) error {
	body, err := a.body(req, id, true)
	if err != nil {
		return err
	}
	resp, err := a.post(ctx, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out := &model.Response{Message: model.Message{Role: model.RoleAssistant}, Model: id}
	var usage aUsage
	stop := ""
	// An open block; its text, signature and input grow in builders, so a
	// reply of many small deltas costs linear time.
	type open struct {
		kind                   string
		stopped                bool // after its content_block_stop
		part                   model.Part
		call                   int // tool-call index
		text, signature, input strings.Builder
	}
	var blocks []*open
	calls := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), lineMax(a.limit))
	for sc.Scan() {
		line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		var ev struct {
			Type    string `json:"type"`
			Index   int    `json:"index"`
			Message struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage aUsage `json:"usage"`
			} `json:"message"`
			ContentBlock aBlock `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
			Usage *aUsage                        `json:"usage"`
			Error struct{ Type, Message string } `json:"error"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(line), &ev); err != nil {
			return fmt.Errorf("reading the stream: %w", err)
		}
		block := func() (*open, error) {
			if ev.Index < 0 || ev.Index >= len(blocks) {
				return nil, fmt.Errorf("reading the stream: %s for unknown block %d", ev.Type, ev.Index)
			}
			return blocks[ev.Index], nil
		}
		var chunk *model.Chunk
		switch ev.Type {
		case "message_start":
			out.ID, out.Model = ev.Message.ID, cmp.Or(ev.Message.Model, id)
			usage = ev.Message.Usage
		case "content_block_start":
			// Blocks start in order, each at the next index: any other
			// index is a broken stream (and must not size an allocation).
			if ev.Index != len(blocks) {
				return fmt.Errorf("reading the stream: content_block_start for block %d, expected block %d", ev.Index, len(blocks))
			}
			b := &open{kind: ev.ContentBlock.Type}
			switch b.kind {
			case "text":
				b.part = model.TextPart("")
				b.text.WriteString(ev.ContentBlock.Text)
			case "thinking":
				b.part = model.ThinkingPart("", "")
				b.text.WriteString(ev.ContentBlock.Thinking)
				b.signature.WriteString(ev.ContentBlock.Signature)
			case "redacted_thinking":
				b.part = model.Part{Kind: model.PartThinking, Text: ev.ContentBlock.Data, Redacted: true}
			case "tool_use":
				b.call = calls
				calls++
				b.part = model.ToolCallPart(model.ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name})
				chunk = &model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: b.call, ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}}
			}
			blocks = append(blocks, b)
		case "content_block_delta":
			b, err := block()
			if err != nil {
				return err
			}
			if b.stopped {
				return fmt.Errorf("reading the stream: content_block_delta for block %d after its content_block_stop", ev.Index)
			}
			// A delta of a known type must match its block's kind: an
			// input_json_delta of a text block is not a tool call.
			if want, known := deltaKinds[ev.Delta.Type]; known && want != b.kind {
				return fmt.Errorf("reading the stream: %s for a %s block", ev.Delta.Type, cmp.Or(b.kind, "untyped"))
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text.WriteString(ev.Delta.Text)
				chunk = &model.Chunk{Kind: model.ChunkText, Text: ev.Delta.Text}
			case "thinking_delta":
				b.text.WriteString(ev.Delta.Thinking)
				chunk = &model.Chunk{Kind: model.ChunkThinking, Text: ev.Delta.Thinking}
			case "signature_delta":
				b.signature.WriteString(ev.Delta.Signature)
			case "input_json_delta":
				b.input.WriteString(ev.Delta.PartialJSON)
				if ev.Delta.PartialJSON != "" {
					chunk = &model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: b.call, Arguments: ev.Delta.PartialJSON}}
				}
			}
		case "content_block_stop":
			b, err := block()
			if err != nil {
				return err
			}
			b.stopped = true
		case "message_delta":
			stop = cmp.Or(ev.Delta.StopReason, stop)
			if u := ev.Usage; u != nil {
				usage.OutputTokens = u.OutputTokens
				if lcmodel.Count(u.InputTokens) > 0 {
					usage.InputTokens = u.InputTokens
				}
				usage.CacheReadInputTokens = cmp.Or(u.CacheReadInputTokens, usage.CacheReadInputTokens)
				usage.CacheCreationInputTokens = cmp.Or(u.CacheCreationInputTokens, usage.CacheCreationInputTokens)
			}
		case "error":
			return fmt.Errorf("stream error %s: %s", ev.Error.Type, ev.Error.Message)
		case "message_stop":
			for _, b := range blocks {
				switch b.kind {
				case "tool_use":
					b.part.ToolCall.Arguments = orJSON(json.RawMessage(b.input.String()), `{}`)
				case "text", "thinking":
					b.part.Text, b.part.Signature = b.text.String(), b.signature.String()
				}
				if b.part.Kind == "" || b.kind == "text" && b.part.Text == "" {
					continue
				}
				out.Message.Parts = append(out.Message.Parts, b.part)
			}
			out.Usage = usage.usage()
			out.FinishReason = lcmodel.Finish(stop, calls > 0)
			yield(model.Chunk{Kind: model.ChunkDone, Response: out}, nil)
			return nil
		}
		if chunk != nil && !yield(*chunk, nil) {
			return errStopped
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the stream: %w", err)
	}
	return model.ErrIncompleteStream
}

// deltaKinds maps each delta type read to the kind of block it belongs to.
var deltaKinds = map[string]string{
	"text_delta":       "text",
	"thinking_delta":   "thinking",
	"signature_delta":  "thinking",
	"input_json_delta": "tool_use",
}

// errStopped marks a stream whose consumer stopped reading.
var errStopped = errors.New("stopped")

func (m *Model) directStream(ctx context.Context, req *model.Request, id string) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		ctx, _ := withCapState(ctx)
		err := m.direct.stream(ctx, req, id, yield)
		if err == nil || errors.Is(err, errStopped) {
			return
		}
		yield(model.Chunk{}, m.callError(ctx, id, err))
	}
}

// orJSON returns v, or def when v is empty.
func orJSON(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage(def)
	}
	return v
}
