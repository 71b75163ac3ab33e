package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// scripted is a language-model fake: reply decides each response from the
// request (so a test scripts the conversation), and Stream splits the
// response into text and tool-call chunks the way providers do. It records
// the requests it received.
type scripted struct {
	reply func(n int, req *model.Request) (*model.Response, error)

	mu   sync.Mutex
	reqs []*model.Request
}

func (s *scripted) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	n := len(s.reqs)
	cp := *req
	cp.Messages = append([]model.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, &cp)
	s.mu.Unlock()
	return s.reply(n, req)
}

func (s *scripted) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := s.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		for _, p := range resp.Message.Parts {
			switch p.Kind {
			case model.PartText:
				for _, w := range strings.SplitAfter(p.Text, " ") {
					if !yield(model.Chunk{Kind: model.ChunkText, Text: w}, nil) {
						return
					}
				}
			}
		}
		for i, c := range resp.Message.ToolCalls() {
			args := string(c.Arguments)
			half := len(args) / 2
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: args[:half]}}, nil) {
				return
			}
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, Arguments: args[half:]}}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

func (s *scripted) requests() []*model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*model.Request(nil), s.reqs...)
}

func call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// calls returns a response calling the given tools, with usage.
func calls(cs ...model.ToolCall) *model.Response {
	m := model.Message{Role: model.RoleAssistant}
	for _, c := range cs {
		m.Parts = append(m.Parts, model.ToolCallPart(c))
	}
	return &model.Response{Message: m, FinishReason: model.FinishToolCalls, Usage: model.Usage{InputTokens: 10, OutputTokens: 5}}
}

// answer returns a text response, with usage.
func answer(text string) *model.Response {
	return &model.Response{Message: model.Assistant(text), FinishReason: model.FinishStop, Usage: model.Usage{InputTokens: 20, OutputTokens: 3}}
}

// toolResults returns the results the model read in its last request's
// trailing tool messages, by call id.
func toolResults(req *model.Request) map[string]model.ToolResult {
	out := map[string]model.ToolResult{}
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
		for _, p := range req.Messages[i].Parts {
			if p.ToolResult != nil {
				out[p.ToolResult.CallID] = *p.ToolResult
			}
		}
	}
	return out
}

// intTool is a tool of two integers {a, b} written directly against
// operator.Tool, validating its arguments itself.
type intTool struct {
	name string
	fn   func(ctx context.Context, a, b int) (int, error)
}

func (t intTool) Definition() model.ToolDef {
	return model.ToolDef{Name: t.name, Description: t.name + " two integers",
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)}
}

func (t intTool) Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error) {
	var in struct {
		A *int `json:"a"`
		B *int `json:"b"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.A == nil || in.B == nil {
		msg := "arguments must be {\"a\": integer, \"b\": integer}"
		if err != nil {
			msg += ": " + err.Error()
		}
		return &model.ToolResult{Content: []model.Part{model.TextPart(msg)}, IsError: true}, nil
	}
	v, err := t.fn(ctx, *in.A, *in.B)
	if err != nil {
		return nil, err
	}
	return &model.ToolResult{Content: []model.Part{model.TextPart(fmt.Sprint(v))}, Structured: json.RawMessage(fmt.Sprint(v))}, nil
}

var (
	addTool = intTool{"add", func(_ context.Context, a, b int) (int, error) { return a + b, nil }}
	mulTool = intTool{"mul", func(_ context.Context, a, b int) (int, error) { return a * b, nil }}
)

var errBoom = errors.New("boom")

func onThread(id string) context.Context {
	return graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: id})
}
