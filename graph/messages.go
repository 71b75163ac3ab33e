package graph

import (
	"context"
	"math/rand/v2"
	"unsafe"

	"github.com/agentgraph/agentgraph/agent/model"
)

// StreamMessages yields the chunks of model replies as nodes receive them:
// text, thinking and tool-call deltas and each reply's final [model.ChunkDone]
// chunk with its usage. [Event.Chunk] returns the chunk (the event's Payload
// is nil: the chunk is kept unboxed, so that streaming a reply token by token
// allocates nothing per token); Node, Task and Namespace say which node, task
// and subgraph called the model. A node's model call streams when it goes through [Generate] (or
// forwards chunks with [EmitMessage]); the model package knows nothing of
// the engine.
const StreamMessages StreamMode = StreamInterrupt + 1

// EmitMessage writes a chunk of a model reply to the stream of the run that
// ctx belongs to, as a [StreamMessages] event naming the node, task and
// subgraph namespace. Outside a run streamed with StreamMessages it does
// nothing and returns nil. Like [Emit] it blocks until the consumer takes
// the event and returns the context's error once the run has stopped.
func EmitMessage(ctx context.Context, c model.Chunk) error {
	sc, own := scopeOf(ctx)
	if sc == nil || !sc.modes.has(StreamMessages) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return sc.sink.sendTask(ctx, sc, own, StreamMessages, nil, c)
}

// StreamsMessages reports whether ctx belongs to a run streamed with
// [StreamMessages], where a node's model call should stream.
func StreamsMessages(ctx context.Context) bool {
	sc, _ := scopeOf(ctx)
	return sc != nil && sc.modes.has(StreamMessages)
}

// Generate calls m for the node whose context is ctx. In a run streamed with
// [StreamMessages] it streams the reply and writes every chunk to the run's
// stream with [EmitMessage] as it arrives, then returns the complete reply of
// the last chunk; otherwise it calls m.Generate. Either way the node gets
// the same reply (but for its Message.ID, below), so a node that calls its model through Generate
// streams its tokens when, and only when, someone listens.
//
// In a run streamed with StreamMessages, the reply's Message.ID in the
// response Generate returns is a new id ([model.NewID]'s form) that every
// chunk of the reply carried to the stream as [model.Chunk.MessageID]: a
// node that appends the reply to a conversation ([model.Messages]) keeps
// it, so that a client that streamed the reply finds it in the state
// under the same id (and merges the two instead of showing the reply
// twice). Each call gets an id of its own. Otherwise Message.ID is empty,
// as [model.Response] asks of every model, and the merge gives the reply
// a new id. Either way a model's own Message.ID is moved to Response.ID
// (when that is empty), in a copy of its response: a provider's id is no
// conversation id (a server may answer every call with the same one), and
// kept, it would make each reply replace the previous one.
func Generate(ctx context.Context, m model.Model, req *model.Request) (*model.Response, error) {
	sc, own := scopeOf(ctx)
	if sc == nil || !sc.modes.has(StreamMessages) {
		resp, err := m.Generate(ctx, req)
		if resp != nil && resp.Message.ID != "" {
			resp = withoutMessageID(resp)
		}
		return resp, err
	}
	// One allocation holds the reply's id and the copy of the response
	// that carries it.
	r := new(replyWithID)
	r.newID()
	id := unsafe.String(&r.id[0], len(r.id))
	resp, err := streamGenerate(ctx, sc, own, m, req, id)
	if resp != nil {
		r.resp = *resp
		if r.resp.ID == "" {
			r.resp.ID = r.resp.Message.ID
		}
		r.resp.Message.ID = id
		resp = &r.resp
	}
	return resp, err
}

// withoutMessageID returns a copy of r whose Message.ID is empty, moved to
// ID when that is empty. The model may keep r, so r is not modified.
//
//go:noinline
func withoutMessageID(r *model.Response) *model.Response {
	c := *r
	if c.ID == "" {
		c.ID = c.Message.ID
	}
	c.Message.ID = ""
	return &c
}

// replyWithID is the response a streamed Generate returns, with the room
// for its message id.
type replyWithID struct {
	resp model.Response
	id   [18]byte
}

// newID writes a random id of model.NewID's form ("m-" and 16 hexadecimal
// digits) to r.id, which is written only here, once.
func (r *replyWithID) newID() {
	const hex = "0123456789abcdef"
	u := rand.Uint64()
	r.id[0], r.id[1] = 'm', '-'
	for i := range 16 {
		r.id[2+i] = hex[(u>>(60-4*i))&0xf]
	}
}

// streamGenerate is Generate in a run streamed with StreamMessages, in
// the task of scope sc (ctx being the scope's own context when own is
// set, see scopeOf). Its state is a generation, which the yield
// function is a method of (a range-over-func loop would move each
// variable it captures to the heap): the one in the scope for the task's
// first call, so that the method value is the call's only allocation.
func streamGenerate(ctx context.Context, sc *scope, own bool, m model.Model, req *model.Request, id string) (*model.Response, error) {
	var g *generation
	if sc.genTaken.CompareAndSwap(false, true) {
		g = &sc.gen
	} else {
		g = new(generation)
	}
	g.ctx, g.sc, g.own, g.id, g.done = ctx, sc, own, id, false
	m.Stream(ctx, req)(g.chunk)
	// The outcome leaves the generation: the scope is part of a room
	// of scopes that a node keeping its task's context keeps whole, and
	// must not keep each call's response with it. The context and scope
	// stay, so that a model yielding after its call ended finds the
	// generation done, not a nil context.
	resp, err := g.resp, g.err
	g.resp, g.err, g.done = nil, nil, true
	if resp != nil || err != nil {
		return resp, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, model.ErrIncompleteStream
}

// generation is the state of one streamed model call: its context, the
// scope that context carries (and whether it is the scope's own), so that
// each chunk goes to the stream without looking the scope up again, and
// the call's outcome until the call returns it; id is the reply's
// message id, which each chunk carries; done says the call took its last
// chunk (or returned), after which chunks are ignored.
type generation struct {
	ctx  context.Context
	sc   *scope
	own  bool
	id   string
	done bool
	resp *model.Response
	err  error
}

// chunk takes one chunk of the stream: it writes it to the run's stream
// and stops at an error or at the final chunk.
func (g *generation) chunk(c model.Chunk, err error) bool {
	if g.done {
		return false // a model that goes on after being told to stop
	}
	if err != nil {
		g.err, g.done = err, true
		return false
	}
	// As EmitMessage(g.ctx, c) does, from the scope found once.
	c.MessageID = g.id
	err = g.ctx.Err()
	if err == nil {
		err = g.sc.sink.sendTask(g.ctx, g.sc, g.own, StreamMessages, nil, c)
	}
	if err != nil {
		g.err, g.done = err, true
		return false
	}
	if c.Kind == model.ChunkDone && c.Response != nil {
		g.resp, g.done = c.Response, true
		return false
	}
	return true
}

// Chunk returns the model chunk of a [StreamMessages] event, and false for
// an event of another mode. It is the only way to read the chunk: a
// messages event's Payload is nil. Its receiver is a pointer, so that
// reading a chunk does not copy the event, which is several hundred bytes:
// call it on a variable, such as the loop variable of a range over
// [Compiled.Stream]. Only the engine sets the chunk: an Event built
// outside this package with Mode StreamMessages holds a zero chunk, and
// code that forwards events (from a subgraph's stream, say) forwards the
// Event value itself.
func (e *Event[S]) Chunk() (model.Chunk, bool) {
	if e.Mode != StreamMessages {
		return model.Chunk{}, false
	}
	return e.chunk, true
}
