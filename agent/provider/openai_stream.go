package provider

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	// The body, not its Content-Type, tells a whole reply from a stream:
	// servers label either one wrongly.
	st.read = true
	br := bufio.NewReader(resp.Body)
	if first, err := firstByte(br); err == nil && first == '{' {
		st.resp, st.err = st.readWhole(br)
	} else {
		st.resp, st.err = st.readEvents(br)
	}
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader("data: [DONE]\n\n"))
	resp.ContentLength = -1
	return resp, nil
}

// firstByte returns the first byte of r that is not white space, leaving
// it unread.
func firstByte(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			return b, r.UnreadByte()
		}
	}
}

// The members of an OpenAI stream's events, and of a whole reply, that are
// read.
type (
	oEvent struct {
		ID      string          `json:"id"`
		Choices []oChoice       `json:"choices"`
		Usage   *oUsage         `json:"usage"`
		Error   json.RawMessage `json:"error"`
	}
	oChoice struct {
		Index        *int     `json:"index"`
		Delta        oMessage `json:"delta"`
		FinishReason string   `json:"finish_reason"`
	}
	// oWhole is a reply that is not a stream (a chat.completion).
	oWhole struct {
		ID      string `json:"id"`
		Choices []struct {
			Index        *int     `json:"index"`
			Message      oMessage `json:"message"`
			FinishReason string   `json:"finish_reason"`
		} `json:"choices"`
		Usage *oUsage         `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	// oMessage is a choice's delta, or the message of a whole reply.
	// Reasoning is the thinking of servers (Ollama, OpenRouter, Groq, vLLM)
	// that name it so in place of ReasoningContent. Refusal is OpenAI's
	// refusal text.
	oMessage struct {
		Content          string      `json:"content"`
		ReasoningContent string      `json:"reasoning_content"`
		Reasoning        string      `json:"reasoning"`
		Refusal          string      `json:"refusal"`
		ToolCalls        []oToolCall `json:"tool_calls"`
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

// streamError returns the error of an event's error member, or nil when
// it has none: servers send an object (with message, code or type, any of
// them possibly empty) or a string (TGI).
func streamError(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var msg string
	if json.Unmarshal(raw, &msg) == nil {
		return fmt.Errorf("stream error: %s", cmp.Or(msg, "(no message)"))
	}
	var e struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("reading the stream: the error member is %s: %w", raw, err)
	}
	code := strings.Trim(string(e.Code), `"`)
	if code == "null" {
		code = ""
	}
	what := strings.TrimSpace(e.Type + " " + code)
	return fmt.Errorf("stream error %s: %s", cmp.Or(what, "(no type)"), cmp.Or(e.Message, "(no message)"))
}

// decodeEvent decodes an event's data into ev. It reports false for data
// that is not JSON, which is skipped as langchaingo does; JSON whose
// members have the wrong types is an error, not silently dropped content.
func decodeEvent(data []byte, ev *oEvent) (bool, error) {
	err := json.Unmarshal(data, ev)
	if err == nil {
		return true, nil
	}
	if syntax := (*json.SyntaxError)(nil); errors.As(err, &syntax) {
		return false, nil
	}
	return false, fmt.Errorf("reading the stream: %w", err)
}

// reply assembles a response from the pieces of a reply.
type reply struct {
	st             *openAIStream
	id             string // the provider's id of the reply
	text, thinking strings.Builder
	calls          toolCallSet
	usage          *oUsage
	finish         string
	refused        bool
}

// add adds the message or delta of the first choice, delivering its pieces.
// A refusal is delivered as text, and the reply then finishes with
// FinishContentFilter.
func (r *reply) add(m *oMessage) error {
	think := cmp.Or(m.ReasoningContent, m.Reasoning)
	if think != "" {
		r.thinking.WriteString(think)
		if err := r.st.emit(model.Chunk{Kind: model.ChunkThinking, Text: think}); err != nil {
			return err
		}
	}
	for _, d := range [...]string{m.Content, m.Refusal} {
		if d == "" {
			continue
		}
		r.text.WriteString(d)
		if err := r.st.emit(model.Chunk{Kind: model.ChunkText, Text: d}); err != nil {
			return err
		}
	}
	r.refused = r.refused || m.Refusal != ""
	for _, tc := range m.ToolCalls {
		if delta := r.calls.add(tc); delta != nil {
			if err := r.st.emit(model.Chunk{Kind: model.ChunkToolCall, ToolCall: delta}); err != nil {
				return err
			}
		}
	}
	return nil
}

// response returns the response of the reply.
func (r *reply) response() *model.Response {
	resp := &model.Response{Message: model.Message{Role: model.RoleAssistant}, ID: r.id, Model: r.st.id}
	if r.thinking.Len() > 0 {
		resp.Message.Parts = append(resp.Message.Parts, model.ThinkingPart(r.thinking.String(), ""))
	}
	if r.text.Len() > 0 {
		resp.Message.Parts = append(resp.Message.Parts, model.TextPart(r.text.String()))
	}
	for i := range r.calls.calls {
		resp.Message.Parts = append(resp.Message.Parts, model.ToolCallPart(r.calls.call(i)))
	}
	if u := r.usage; u != nil {
		resp.Usage = lcmodel.Usage(&llms.ContentResponse{Choices: []*llms.ContentChoice{{GenerationInfo: map[string]any{
			"PromptTokens":       u.PromptTokens,
			"CompletionTokens":   u.CompletionTokens,
			"ReasoningTokens":    u.CompletionTokensDetails.ReasoningTokens,
			"PromptCachedTokens": u.PromptTokensDetails.CachedTokens,
		}}}})
	}
	resp.FinishReason = lcmodel.Finish(r.finish, len(r.calls.calls) > 0)
	if r.refused {
		resp.FinishReason = model.FinishContentFilter
	}
	return resp
}

// readWhole reads a reply that is not a stream (a chat.completion object,
// which some servers send to a streamed request), delivering its parts as
// chunks, and returns its response.
func (st *openAIStream) readWhole(body io.Reader) (*model.Response, error) {
	var ev oWhole
	if err := json.NewDecoder(body).Decode(&ev); err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if err := streamError(ev.Error); err != nil {
		return nil, err
	}
	r := &reply{st: st, id: ev.ID, usage: ev.Usage}
	for _, c := range ev.Choices {
		if c.Index != nil && *c.Index != 0 {
			continue // another choice (n > 1): only the first is read
		}
		r.finish = c.FinishReason
		if err := r.add(&c.Message); err != nil {
			return nil, err
		}
		break
	}
	return r.response(), nil
}

// readEvents reads the server-sent events of a reply, delivering its text,
// thinking and tool-call pieces as chunks, and returns its response.
// Like langchaingo it skips data lines that are not JSON. It ends at
// "[DONE]" or at the end of the body; a body that ends before "[DONE]"
// and without a finish reason is an incomplete reply
// (model.ErrIncompleteStream).
func (st *openAIStream) readEvents(body io.Reader) (*model.Response, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), lineMax(st.limit))
	r := &reply{st: st}
	done := false
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var ev oEvent
		if ok, err := decodeEvent(data, &ev); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		if err := streamError(ev.Error); err != nil {
			return nil, err
		}
		if ev.Usage != nil {
			r.usage = ev.Usage
		}
		if r.id == "" {
			r.id = ev.ID // every chunk carries the reply's id
		}
		for i := range ev.Choices {
			c := &ev.Choices[i]
			if c.Index != nil && *c.Index != 0 {
				continue // another choice (n > 1): only the first is read
			}
			if c.FinishReason != "" {
				r.finish = c.FinishReason
			}
			if err := r.add(&c.Delta); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the stream: %w", err)
	}
	if !done && r.finish == "" {
		return nil, model.ErrIncompleteStream
	}
	return r.response(), nil
}

// toolCallSet assembles streamed tool calls from their pieces, by the
// index the wire gives each piece: the pieces of several calls may
// interleave. A piece without an index has the index of the last piece.
// A piece carrying a function name starts a new call, which then owns the
// index, when the call at its index already has a name, or has an id other
// than the piece's: Ollama's OpenAI-compatible API streams every call
// whole, each with its own id, all at the index 0, and some servers send
// whole calls with neither index nor id. A piece without a name continues
// the call at its index, whatever its id (a server may send a fresh id with
// every piece); so does a piece with the call's own id.
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
	if ok && tc.Function.Name != "" {
		c := &s.calls[slot]
		sameID := tc.ID != "" && tc.ID == c.ID
		otherID := tc.ID != "" && c.ID != "" && tc.ID != c.ID
		if !sameID && (c.Name != "" || otherID) {
			ok = false
		}
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
