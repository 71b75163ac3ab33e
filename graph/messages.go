package graph

import (
	"context"

	"github.com/agentgraph/agentgraph/agent/model"
)

// StreamMessages yields the chunks of model replies as nodes receive them:
// text, thinking and tool-call deltas and each reply's final [model.ChunkDone]
// chunk with its usage. The chunk is the event's Payload (see [Event.Chunk]);
// Node, Task and Namespace say which node, task and subgraph called the
// model. A node's model call streams when it goes through [Generate] (or
// forwards chunks with [EmitMessage]); the model package knows nothing of
// the engine.
const StreamMessages StreamMode = StreamInterrupt + 1

// EmitMessage writes a chunk of a model reply to the stream of the run that
// ctx belongs to, as a [StreamMessages] event naming the node, task and
// subgraph namespace. Outside a run streamed with StreamMessages it does
// nothing and returns nil. Like [Emit] it blocks until the consumer takes
// the event and returns the context's error once the run has stopped.
func EmitMessage(ctx context.Context, c model.Chunk) error {
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	if sc == nil || sc.sink == nil || !sc.sink.wants(StreamMessages) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return sc.sink.send(ctx, rawEvent{mode: StreamMessages, info: sc.info, payload: c})
}

// StreamsMessages reports whether ctx belongs to a run streamed with
// [StreamMessages], where a node's model call should stream.
func StreamsMessages(ctx context.Context) bool {
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	return sc != nil && sc.sink != nil && sc.sink.wants(StreamMessages)
}

// Generate calls m for the node whose context is ctx. In a run streamed with
// [StreamMessages] it streams the reply and writes every chunk to the run's
// stream with [EmitMessage] as it arrives, then returns the complete reply of
// the last chunk; otherwise it calls m.Generate. Either way the node gets
// the same response, so a node that calls its model through Generate
// streams its tokens when, and only when, someone listens.
func Generate(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
	if !StreamsMessages(ctx) {
		return m.Generate(ctx, req)
	}
	return streamGenerate(ctx, m, req)
}

// streamGenerate is Generate in a run streamed with StreamMessages. It is a
// function of its own because the range-over-func loop moves the variables
// it captures to the heap: kept in Generate, every call would pay for them.
func streamGenerate(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if err := EmitMessage(ctx, c); err != nil {
			return nil, err
		}
		if c.Kind == model.ChunkDone && c.Response != nil {
			return c.Response, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, model.ErrIncompleteStream
}

// Chunk returns the model chunk of a [StreamMessages] event.
func (e Event[S]) Chunk() (model.Chunk, bool) {
	c, ok := e.Payload.(model.Chunk)
	return c, ok && e.Mode == StreamMessages
}
