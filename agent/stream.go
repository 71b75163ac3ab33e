package agent

import (
	"context"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/tmc/langchaingo/llms"
)

// Chunk is one piece of a streamed reply: either answer text or thinking
// text, never both.
type Chunk struct {
	// Model is the name the call resolved, such as "sonnet".
	Model string `json:"model"`
	// Text is a piece of the answer.
	Text string `json:"text,omitempty"`
	// Thinking is a piece of the model's extended thinking.
	Thinking string `json:"thinking,omitempty"`
}

// streamOptions wires langchaingo's streaming callbacks to fn and the graph
// run's stream. Answer text arrives through the plain streaming func and
// thinking through the reasoning func; the reasoning func's second argument
// repeats the answer chunk (OpenAI), so it is ignored. Empty chunks, such as
// the one OpenAI sends at the end of a stream, are dropped.
func streamOptions(spec ModelSpec, fn func(context.Context, Chunk) error) []llms.CallOption {
	deliver := func(ctx context.Context, c Chunk) error {
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
	return []llms.CallOption{
		llms.WithStreamingFunc(func(ctx context.Context, b []byte) error {
			if len(b) == 0 {
				return nil
			}
			return deliver(ctx, Chunk{Model: spec.Name, Text: string(b)})
		}),
		llms.WithStreamingReasoningFunc(func(ctx context.Context, reasoning, _ []byte) error {
			if len(reasoning) == 0 {
				return nil
			}
			return deliver(ctx, Chunk{Model: spec.Name, Thinking: string(reasoning)})
		}),
	}
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
