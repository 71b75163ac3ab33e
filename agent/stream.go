package agent

import (
	"context"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
)

// Chunk is one piece of a streamed reply: answer text, thinking text or a
// piece of one tool call, exactly one of them.
type Chunk struct {
	// Model is the name the call resolved, such as "sonnet".
	Model string `json:"model"`
	// Text is a piece of the answer.
	Text string `json:"text,omitempty"`
	// Thinking is a piece of the model's extended thinking.
	Thinking string `json:"thinking,omitempty"`
	// ToolCall is a piece of one tool call the model asks for: its id and
	// name on the call's first piece, then pieces of its JSON arguments.
	// Tool calls never appear in Text.
	ToolCall *model.ToolCallDelta `json:"tool_call,omitempty"`
}

// chunkOf turns a chunk of the model vocabulary into a Chunk.
func chunkOf(name string, c model.Chunk) Chunk {
	switch c.Kind {
	case model.ChunkThinking:
		return Chunk{Model: name, Thinking: c.Text}
	case model.ChunkToolCall:
		return Chunk{Model: name, ToolCall: c.ToolCall}
	}
	return Chunk{Model: name, Text: c.Text}
}

// streamSplitter returns the splitter of a WithStreaming call: each chunk,
// of one kind, goes to fn and the graph run's stream. The splitter keeps
// tool-call deltas out of the answer text (langchaingo's OpenAI client
// passes them to the text callback as JSON) and thinking out of both.
func streamSplitter(ctx context.Context, spec ModelSpec, fn func(context.Context, Chunk) error) *lcmodel.Splitter {
	return lcmodel.NewSplitter(func(c model.Chunk) error {
		return deliver(ctx, fn, chunkOf(spec.Name, c))
	})
}

// deliver hands a chunk to fn and to the stream of the graph run the call
// belongs to. An error of either stops the call, unretried.
func deliver(ctx context.Context, fn func(context.Context, Chunk) error, c Chunk) error {
	if fn != nil {
		if err := fn(ctx, c); err != nil {
			return &streamAborted{err}
		}
	}
	if err := emit(ctx, c); err != nil {
		return &streamAborted{err}
	}
	return nil
}

// emit writes a chunk into the stream of the graph run the call belongs to,
// as a custom event whose payload is the Chunk (graph.StreamCustom). Outside
// a streamed run it does nothing. It blocks until the consumer takes the
// event, and fails once the run has stopped, which aborts the model call.
func emit(ctx context.Context, c Chunk) error { return graph.Emit(ctx, c) }

// streamAborted carries the error with which a chunk's receiver (the
// WithStreaming callback or the graph run's stream) stopped a call through
// the provider client, so that it is returned as it is and neither retried
// nor counted against the provider.
type streamAborted struct{ err error }

func (e *streamAborted) Error() string { return e.err.Error() }
func (e *streamAborted) Unwrap() error { return e.err }
