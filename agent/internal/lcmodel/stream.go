package lcmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/tmc/langchaingo/llms"
)

// Splitter turns langchaingo's streaming callbacks into chunks of one kind
// each: text, thinking or a piece of one tool call.
//
// langchaingo's OpenAI client hands the plain streaming function the JSON of
// each tool-call delta (an array of {"id","type","function":{"name",
// "arguments"}} objects) in place of text, and the reasoning function the
// same bytes as its second argument. The Splitter recognises those arrays
// and turns them into ChunkToolCall chunks, numbering the calls as the
// client does (a delta with a type or without arguments starts a new call,
// the others continue the last one). Thinking comes only from the reasoning
// function's first argument. Empty pieces are dropped.
//
// That numbering is wrong when the wire interleaves the pieces of several
// calls, which OpenAI's protocol allows (each piece names its call by
// "index"), and langchaingo drops the index: the provider package therefore
// reads OpenAI streams itself, and a Splitter serves the other clients.
//
// Clients that do not stream tool calls (langchaingo's Anthropic and Ollama
// clients, scripted llms.Models) are covered by Finish, which emits each
// tool call of the complete response whole when none was streamed.
type Splitter struct {
	emit     func(model.Chunk) error
	calls    int  // tool calls streamed so far
	sawTools bool // any tool-call chunk emitted
	sawAny   bool // any chunk emitted
}

// NewSplitter returns a splitter delivering chunks to emit. An error of emit
// aborts the provider call with it.
func NewSplitter(emit func(model.Chunk) error) *Splitter { return &Splitter{emit: emit} }

// Reset forgets the chunks of a failed attempt, for the next one.
func (s *Splitter) Reset() {
	s.calls, s.sawTools, s.sawAny = 0, false, false
}

// Emitted reports whether any chunk has been delivered.
func (s *Splitter) Emitted() bool { return s.sawAny }

// Options returns the streaming call options.
func (s *Splitter) Options() []llms.CallOption {
	return []llms.CallOption{
		llms.WithStreamingFunc(func(_ context.Context, b []byte) error { return s.text(b) }),
		llms.WithStreamingReasoningFunc(func(_ context.Context, reasoning, _ []byte) error {
			if len(reasoning) == 0 {
				return nil
			}
			return s.send(model.Chunk{Kind: model.ChunkThinking, Text: string(reasoning)})
		}),
	}
}

func (s *Splitter) send(c model.Chunk) error {
	s.sawAny = true
	return s.emit(c)
}

func (s *Splitter) text(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if deltas, ok := toolDeltas(b); ok {
		for _, d := range deltas {
			if d.Type != "" || d.Function.Arguments == "" || s.calls == 0 {
				s.calls++
				if err := s.send(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{
					Index: s.calls - 1, ID: d.ID, Name: d.Function.Name, Arguments: d.Function.Arguments}}); err != nil {
					return err
				}
			} else if err := s.send(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{
				Index: s.calls - 1, Arguments: d.Function.Arguments}}); err != nil {
				return err
			}
			s.sawTools = true
		}
		return nil
	}
	return s.send(model.Chunk{Kind: model.ChunkText, Text: string(b)})
}

// Finish emits the tool calls of the complete response whole when the
// provider streamed none of them, so every stream carries its calls as
// ChunkToolCall chunks before its ChunkDone chunk.
func (s *Splitter) Finish(calls []model.ToolCall) error {
	if s.sawTools {
		return nil
	}
	for i, c := range calls {
		if err := s.send(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{
			Index: i, ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)}}); err != nil {
			return err
		}
	}
	return nil
}

// wireDelta is the JSON langchaingo's OpenAI client passes for a tool-call
// delta.
type wireDelta struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// toolDeltas reports whether b is the JSON of tool-call deltas: an array of
// objects each with exactly the members of a delta ("type" and a "function"
// object of "name" and "arguments", optionally "id"). Answer text is
// streamed token by token, so a text piece never has that shape.
func toolDeltas(b []byte) ([]wireDelta, bool) {
	if len(b) < 4 || b[0] != '[' || b[1] != '{' || !bytes.Contains(b, []byte(`"function":{`)) {
		return nil, false
	}
	var raw []map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil || len(raw) == 0 {
		return nil, false
	}
	for _, obj := range raw {
		if _, ok := obj["type"]; !ok {
			return nil, false
		}
		fn, ok := obj["function"]
		if !ok {
			return nil, false
		}
		for k := range obj {
			if k != "id" && k != "type" && k != "function" {
				return nil, false
			}
		}
		var f map[string]json.RawMessage
		if json.Unmarshal(fn, &f) != nil {
			return nil, false
		}
		for k := range f {
			if k != "name" && k != "arguments" {
				return nil, false
			}
		}
	}
	var deltas []wireDelta
	if json.Unmarshal(b, &deltas) != nil {
		return nil, false
	}
	return deltas, true
}

// Stream runs call in a goroutine and yields the chunks it emits, then a
// ChunkDone chunk with its response, or its error. langchaingo calls the
// streaming functions on goroutines of its own (Anthropic), so chunks are
// handed over a channel. Breaking the loop cancels the call and waits for it
// to end.
func Stream(ctx context.Context, call func(ctx context.Context, emit func(model.Chunk) error) (*model.Response, error)) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		chunks := make(chan model.Chunk)
		type result struct {
			resp *model.Response
			err  error
		}
		done := make(chan result, 1)
		go func() {
			resp, err := call(ctx, func(c model.Chunk) error {
				select {
				case chunks <- c:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			done <- result{resp, err}
		}()
		for {
			select {
			case c := <-chunks:
				if !yield(c, nil) {
					cancel()
					<-done
					return
				}
			case r := <-done:
				if r.err != nil {
					yield(model.Chunk{}, ctxErr(ctx, r.err))
					return
				}
				yield(model.Chunk{Kind: model.ChunkDone, Response: r.resp}, nil)
				return
			}
		}
	}
}

// ctxErr returns the context's error for a call that failed because its
// context ended, and err otherwise.
func ctxErr(ctx context.Context, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	return err
}
