package agent

import (
	"context"

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
				return err
			}
		}
		return emit(ctx, c)
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
