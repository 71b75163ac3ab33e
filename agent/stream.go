package agent

import (
	"context"

	"github.com/agentgraph/agentgraph/agent/model"
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

// sink returns the chunk receiver of a call with these options: the
// receiver of Client.Stream, or the WithStreaming callback (each chunk as a
// Chunk); nil when the call does not stream. An error of the WithStreaming
// callback stops the call, unretried.
func (o *options) sink(ctx context.Context, spec ModelSpec) func(model.Chunk) error {
	if o.emit != nil {
		return o.emit
	}
	if !o.stream {
		return nil
	}
	fn := o.onChunk
	return func(c model.Chunk) error {
		if fn == nil {
			return nil
		}
		if err := fn(ctx, chunkOf(spec.Name, c)); err != nil {
			return &streamAborted{err}
		}
		return nil
	}
}

// streamAborted carries the error with which the WithStreaming callback
// stopped a call, so that it is returned as it is and neither retried nor
// counted against the provider.
type streamAborted struct{ err error }

func (e *streamAborted) Error() string { return e.err.Error() }
func (e *streamAborted) Unwrap() error { return e.err }
