package agent

import (
	"context"

	"github.com/agentgraph/agentgraph/agent/model"
)

// sink returns the chunk receiver of a call with these options: the
// receiver of Client.Stream, or the WithStreaming callback; nil when the
// call does not stream. An error of the WithStreaming callback stops the
// call, unretried.
func (o *options) sink(ctx context.Context) func(model.Chunk) error {
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
		if err := fn(ctx, c); err != nil {
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
