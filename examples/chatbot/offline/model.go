package offline

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/model"
)

// DefaultName is the model name the offline model reports when
// Config.Name is empty.
const DefaultName = "offline-demo"

// Config configures a Model. The zero Config is ready to use.
type Config struct {
	// Name is the model name reported in responses and by GET /v1/models.
	// Empty means DefaultName.
	Name string
	// ChunkRunes is the size, in runes, of the streamed pieces of an
	// answer; the last piece may be shorter. Zero means 16.
	ChunkRunes int
}

// Model is the rule-based offline demo model. It is a model.Model and
// serves OpenAI's chat completions API through Handler. It keeps no state
// between calls and is safe for concurrent use.
type Model struct {
	name  string
	chunk int
}

var _ model.Model = (*Model)(nil)

// New returns a Model.
func New(cfg Config) *Model {
	m := &Model{name: cfg.Name, chunk: cfg.ChunkRunes}
	if m.name == "" {
		m.name = DefaultName
	}
	if m.chunk <= 0 {
		m.chunk = 16
	}
	return m
}

// Name returns the model name it reports.
func (m *Model) Name() string { return m.name }

// reply is the model's answer to one request: the text or, when the
// request's tool choice named a function, the answer's JSON as that
// function's arguments; and the estimated usage.
type reply struct {
	Text                           string
	ToolCall                       *model.ToolCall
	PromptTokens, CompletionTokens int
}

// answer computes the reply to req. The system messages and the last user
// message are read (earlier turns reach the model through the prompts'
// Conversation section, as the chatbot assembles it). A tool choice naming
// a function turns a JSON answer into that function's arguments.
func (m *Model) answer(req *model.Request) reply {
	var system []string
	var human string
	prompt := 0
	for _, msg := range req.Messages {
		text := msg.Text()
		prompt += EstimateTokens(text) + 4
		switch msg.Role {
		case model.RoleSystem:
			system = append(system, text)
		case model.RoleUser:
			human = text
		}
	}
	text := respond(strings.Join(system, "\n\n"), human)
	r := reply{Text: text, PromptTokens: prompt}
	if req.ToolChoice.Mode == model.ToolNamed && json.Valid([]byte(text)) {
		r.ToolCall = &model.ToolCall{ID: "call_offline_1", Name: req.ToolChoice.Name, Arguments: json.RawMessage(text)}
		r.Text = ""
	}
	r.CompletionTokens = EstimateTokens(text)
	return r
}

// respond dispatches on the kind of prompt.
func respond(system, human string) string {
	if isLearnPrompt(human) {
		return mustJSON(learn(human))
	}
	if isConversationSummary(system) {
		return summarizeConversation(human)
	}
	if k, ok := summaryKind(system); ok {
		sp := readSummaryPrompt(k, human)
		if k == kindChunkSummary {
			return summarizeChunk(sp.text)
		}
		return combineSummaries(sp.name, sp.summaries)
	}
	p := classify(system, human)
	switch p.kind {
	case kindSupervisor:
		return mustJSON(decide(p))
	case kindReflection:
		return mustJSON(reflect(p))
	case kindPlan:
		return mustJSON(planFor(p))
	case kindRewrite:
		in, ex := rewrite(resolve(p.question, p.conversation))
		return mustJSON(map[string]string{"internal_query": in, "external_query": ex})
	case kindCode:
		return code(p)
	}
	return write(p)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("offline: encoding a reply: " + err.Error()) // only plain values are encoded
	}
	return string(b)
}

// EstimateTokens is the offline model's token count for s: one token per
// four bytes, rounded up (so any non-empty text is at least one token).
// Real tokenizers average about four bytes per token on English text.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// chunkSeq yields s in pieces of n runes.
func chunkSeq(s string, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			i, k := 0, 0
			for i < len(s) && k < n {
				_, size := utf8.DecodeRuneInString(s[i:])
				i += size
				k++
			}
			if !yield(s[:i]) {
				return
			}
			s = s[i:]
		}
	}
}

// Generate implements model.Model. The usage is the model's estimate
// (EstimateTokens).
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil || len(req.Messages) == 0 {
		return nil, errors.New("offline: no messages; send at least one user message")
	}
	r := m.answer(req)
	resp := &model.Response{FinishReason: model.FinishStop, Model: m.name,
		Usage: model.Usage{InputTokens: r.PromptTokens, OutputTokens: r.CompletionTokens}}
	if r.ToolCall != nil {
		resp.Message = model.Message{Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(*r.ToolCall)}}
		resp.FinishReason = model.FinishToolCalls
		return resp, nil
	}
	resp.Message = model.Assistant(r.Text)
	return resp, nil
}

// Stream implements model.Model: the answer of Generate in pieces of
// Config.ChunkRunes runes, then the complete response.
func (m *Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if text := resp.Text(); text != "" {
			for piece := range chunkSeq(text, m.chunk) {
				if err := ctx.Err(); err != nil {
					yield(model.Chunk{}, err)
					return
				}
				if !yield(model.Chunk{Kind: model.ChunkText, Text: piece}, nil) {
					return
				}
			}
		}
		for _, tc := range resp.ToolCalls() {
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)}}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}
