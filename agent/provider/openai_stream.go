package provider

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strings"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/tmc/langchaingo/llms"
)

// An OpenAI model's streamed replies are read here, not by langchaingo:
// langchaingo builds and sends the request, but its stream reader grows the
// reply by string concatenation (quadratic in the number of deltas), fails
// on a line over 64 KiB (a tool call sent whole, as Ollama does), and drops
// the index of tool-call pieces, which OpenAI's protocol lets interleave.
//
// So Model.Stream puts an openAIStream in the request's context, the
// model's HTTP transport (streamTransport) reads the reply's events with
// it, delivering chunks as they come and building the response in linear
// time, and hands langchaingo an empty stream in place of the reply.

type openAIStreamKey struct{}

// openAIStream is one streamed OpenAI call.
type openAIStream struct {
	emit  func(model.Chunk) error
	id    string // the model id of the call
	limit int64  // the reply cap, which also bounds a line

	read bool            // the transport read the reply
	resp *model.Response // the response read, when read and err is nil
	err  error           // the reader's error
}

type streamTransport struct{ base http.RoundTripper }

// streamClient returns a copy of base (an empty client when nil) whose
// transport reads the streamed replies of calls with an openAIStream.
func streamClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base //nolint:govet // copying the exported configuration is intended
	}
	c.Transport = streamTransport{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport)}
	return c
}

func (t streamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	st, _ := r.Context().Value(openAIStreamKey{}).(*openAIStream)
	resp, err := t.base.RoundTrip(r)
	if st == nil || err != nil || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		return resp, nil // not a stream: langchaingo reads it
	}
	st.read = true
	st.resp, st.err = st.readEvents(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader("data: [DONE]\n\n"))
	resp.ContentLength = -1
	return resp, nil
}

// The members of an OpenAI stream's events that are read.
type (
	oEvent struct {
		Choices []oChoice `json:"choices"`
		Usage   *oUsage   `json:"usage"`
		Error   *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	oChoice struct {
		Index *int `json:"index"`
		Delta struct {
			Content          string      `json:"content"`
			ReasoningContent string      `json:"reasoning_content"`
			ToolCalls        []oToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	}
	oToolCall struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	oUsage struct {
		PromptTokens        json.Number `json:"prompt_tokens"`
		CompletionTokens    json.Number `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens json.Number `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens json.Number `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
)

// readEvents reads the server-sent events of a reply, delivering its text,
// thinking and tool-call pieces as chunks, and returns its response.
// Like langchaingo it skips data lines that are not JSON and ends at
// "[DONE]" or at the end of the body.
func (st *openAIStream) readEvents(body io.Reader) (*model.Response, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), int(min(st.limit, math.MaxInt32))+1)
	var text, thinking strings.Builder
	var calls toolCallSet
	var usage *oUsage
	finish := ""
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		var ev oEvent
		if json.Unmarshal(data, &ev) != nil {
			continue
		}
		if ev.Error != nil && ev.Error.Message != "" {
			return nil, fmt.Errorf("stream error %s: %s", ev.Error.Type, ev.Error.Message)
		}
		if ev.Usage != nil {
			usage = ev.Usage
		}
		for _, c := range ev.Choices {
			if c.Index != nil && *c.Index != 0 {
				continue // another choice (n > 1): only the first is read
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
			if d := c.Delta.ReasoningContent; d != "" {
				thinking.WriteString(d)
				if err := st.emit(model.Chunk{Kind: model.ChunkThinking, Text: d}); err != nil {
					return nil, err
				}
			}
			if d := c.Delta.Content; d != "" {
				text.WriteString(d)
				if err := st.emit(model.Chunk{Kind: model.ChunkText, Text: d}); err != nil {
					return nil, err
				}
			}
			for _, tc := range c.Delta.ToolCalls {
				if delta := calls.add(tc); delta != nil {
					if err := st.emit(model.Chunk{Kind: model.ChunkToolCall, ToolCall: delta}); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the stream: %w", err)
	}
	resp := &model.Response{Message: model.Message{Role: model.RoleAssistant}, Model: st.id}
	if thinking.Len() > 0 {
		resp.Message.Parts = append(resp.Message.Parts, model.ThinkingPart(thinking.String(), ""))
	}
	if text.Len() > 0 {
		resp.Message.Parts = append(resp.Message.Parts, model.TextPart(text.String()))
	}
	for i := range calls.calls {
		resp.Message.Parts = append(resp.Message.Parts, model.ToolCallPart(calls.call(i)))
	}
	if usage != nil {
		resp.Usage = lcmodel.Usage(&llms.ContentResponse{Choices: []*llms.ContentChoice{{GenerationInfo: map[string]any{
			"PromptTokens":       usage.PromptTokens,
			"CompletionTokens":   usage.CompletionTokens,
			"ReasoningTokens":    usage.CompletionTokensDetails.ReasoningTokens,
			"PromptCachedTokens": usage.PromptTokensDetails.CachedTokens,
		}}}})
	}
	resp.FinishReason = lcmodel.Finish(finish, len(calls.calls) > 0)
	return resp, nil
}

// toolCallSet assembles streamed tool calls from their pieces, by the
// index the wire gives each piece: the pieces of several calls may
// interleave. A piece naming an id other than that of the call at its index
// starts a new call, which then owns the index: Ollama's OpenAI-compatible
// API streams every call whole, each with its own id, all at the index 0. A
// piece without an index continues the call of the last piece.
type toolCallSet struct {
	calls []model.ToolCall
	args  [][]byte    // the arguments of calls, grown by append
	slots map[int]int // the position in calls of each wire index
	last  int         // the wire index of the last piece
}

// add adds a piece and returns the delta to deliver for it, or nil when
// it carries nothing new.
func (s *toolCallSet) add(tc oToolCall) *model.ToolCallDelta {
	if s.slots == nil {
		s.slots = map[int]int{}
	}
	index := s.last
	if tc.Index != nil {
		index = *tc.Index
	}
	s.last = index
	slot, ok := s.slots[index]
	if ok && tc.ID != "" && s.calls[slot].ID != "" && s.calls[slot].ID != tc.ID {
		ok = false
	}
	if !ok {
		slot = len(s.calls)
		s.slots[index] = slot
		s.calls = append(s.calls, model.ToolCall{})
		s.args = append(s.args, nil)
	}
	c := &s.calls[slot]
	delta := &model.ToolCallDelta{Index: slot, Arguments: tc.Function.Arguments}
	if c.ID == "" && tc.ID != "" {
		c.ID, delta.ID = tc.ID, tc.ID
	}
	if c.Name == "" && tc.Function.Name != "" {
		c.Name, delta.Name = tc.Function.Name, tc.Function.Name
	}
	s.args[slot] = append(s.args[slot], tc.Function.Arguments...)
	if !ok || delta.ID != "" || delta.Name != "" || delta.Arguments != "" {
		return delta
	}
	return nil
}

// call returns the call at position i, with its arguments.
func (s *toolCallSet) call(i int) model.ToolCall {
	c := s.calls[i]
	if len(s.args[i]) > 0 {
		c.Arguments = json.RawMessage(s.args[i])
	}
	return c
}

// streamOpenAI runs a streamed call of an OpenAI model: langchaingo sends
// the request, the model's transport reads the reply (see streamTransport).
func (m *Model) streamOpenAI(ctx context.Context, req *model.Request, msgs []llms.MessageContent, opts []llms.CallOption, id string,
	emit func(model.Chunk) error) (*model.Response, error) {
	st := &openAIStream{emit: emit, id: id, limit: m.limit}
	ctx = context.WithValue(ctx, openAIStreamKey{}, st)
	// A streaming function makes langchaingo ask for a stream (with usage);
	// it sees only the empty stream the transport hands it.
	opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	raw, err := m.llm.GenerateContent(m.withSchema(ctx, req), msgs, opts...)
	if st.read {
		if st.err != nil {
			return nil, m.callError(ctx, id, st.err)
		}
		return st.resp, nil
	}
	if err != nil {
		return nil, m.callError(ctx, id, err)
	}
	// A reply that was not a stream, as langchaingo read it.
	resp, err := lcmodel.Response(raw, m.dialect, id)
	if err != nil {
		return nil, fmt.Errorf("provider %s:%s: %w", m.provider, id, err)
	}
	s := lcmodel.NewSplitter(emit)
	if err := s.Finish(resp.ToolCalls()); err != nil {
		return nil, err
	}
	return resp, nil
}
