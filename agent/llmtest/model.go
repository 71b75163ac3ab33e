package llmtest

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
)

// Generate implements model.Model: it answers req with the next scripted
// reply, in process and without delay unless the reply has one. The reply's
// thinking, text and tool calls become the parts of the response's message,
// in that order; its Err is returned as it is.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r, _, err := m.answer(ctx, req)
	if err != nil {
		return nil, err
	}
	if r.Model != nil {
		return r.Model.Generate(ctx, req)
	}
	return responseOf(r, req.Model), nil
}

// Stream implements model.Model: it streams the next scripted reply as
// thinking chunks, text chunks (the reply's Chunks, or its Text cut by the
// chunk size) and, for each tool call, a first chunk with its id and name
// followed by its arguments cut by the chunk size; then the ChunkDone chunk
// with the response Generate would have returned. The chunks are yielded on
// the caller's goroutine, with no allocation beyond the chunks' own.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		r, size, err := m.answer(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if r.Model != nil {
			for c, err := range r.Model.Stream(ctx, req) {
				if !yield(c, err) || err != nil {
					return
				}
			}
			return
		}
		send := func(c model.Chunk) bool {
			if err := ctx.Err(); err != nil {
				yield(model.Chunk{}, err)
				return false
			}
			return yield(c, nil)
		}
		for _, t := range split(r.Thinking, size) {
			if !send(model.Chunk{Kind: model.ChunkThinking, Text: t}) {
				return
			}
		}
		chunks := r.Chunks
		if chunks == nil {
			chunks = split(r.Text, size)
		}
		for _, t := range chunks {
			if t != "" && !send(model.Chunk{Kind: model.ChunkText, Text: t}) {
				return
			}
		}
		for i, c := range r.ToolCalls {
			pieces := split(string(c.Arguments), size)
			first := ""
			if len(pieces) > 0 {
				first, pieces = pieces[0], pieces[1:]
			}
			if !send(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: first}}) {
				return
			}
			for _, p := range pieces {
				if !send(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, Arguments: p}}) {
					return
				}
			}
		}
		send(model.Chunk{Kind: model.ChunkDone, Response: responseOf(r, req.Model)})
	}
}

// answer records a vocabulary call, picks its reply and plays the reply's
// delay, hang or error.
func (m *Model) answer(ctx context.Context, req *model.Request) (Reply, int, error) {
	if req == nil {
		req = &model.Request{}
	}
	call := Call{Request: req}
	call.System, call.Prompt = requestTexts(req.Messages)
	r, size, err := m.pick(call)
	if err != nil {
		return Reply{}, 0, err
	}
	if err := play(ctx, r); err != nil {
		return Reply{}, 0, err
	}
	return r, size, nil
}

// play waits out a reply's Hang, Delay or Wait and returns its Err.
func play(ctx context.Context, r Reply) error {
	if r.Hang {
		<-ctx.Done()
		return ctx.Err()
	}
	if r.Wait != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.Wait:
		}
	}
	if r.Delay > 0 {
		t := time.NewTimer(r.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if r.Err != nil {
		return r.Err
	}
	return ctx.Err()
}

func responseOf(r Reply, name string) *model.Response {
	n := len(r.ToolCalls)
	if r.Thinking != "" {
		n++
	}
	if r.Text != "" {
		n++
	}
	parts := make([]model.Part, 0, n)
	if r.Thinking != "" {
		parts = append(parts, model.ThinkingPart(r.Thinking, Signature))
	}
	if r.Text != "" {
		parts = append(parts, model.TextPart(r.Text))
	}
	for _, c := range r.ToolCalls {
		parts = append(parts, model.ToolCallPart(c))
	}
	return &model.Response{
		Message:      model.Message{Role: model.RoleAssistant, Parts: parts},
		FinishReason: lcmodel.Finish(r.StopReason, len(r.ToolCalls) > 0),
		Usage:        r.Usage,
		Model:        name,
	}
}

// Signature is the signature of every thinking part the scripted model and
// the Anthropic server return.
const Signature = "llmtest-signature"

func requestTexts(msgs []model.Message) (system, prompt string) {
	var s, p []string
	for _, m := range msgs {
		switch m.Role {
		case model.RoleSystem:
			s = append(s, m.Text())
		case model.RoleUser:
			p = append(p, m.Text())
		}
	}
	if len(s) == 1 && len(p) == 1 {
		return s[0], p[0]
	}
	return strings.Join(s, "\n"), strings.Join(p, "\n")
}
