package lcmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"strings"

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
// "index"), and langchaingo drops the index. The provider's HTTP transport
// therefore carries each piece's index in its id (see [MarkToolCallID]):
// pieces so marked are assembled by index, and [Splitter.Complete] puts the
// calls so assembled in the response in place of langchaingo's. A piece
// with an id other than that of the call at its index starts a new call:
// Ollama's OpenAI-compatible API streams every call whole with the index 0.
//
// Clients that do not stream tool calls (langchaingo's Anthropic and Ollama
// clients, scripted llms.Models) are covered by Finish, which emits each
// tool call of the complete response whole when none was streamed.
type Splitter struct {
	emit     func(model.Chunk) error
	calls    int  // tool calls streamed so far
	sawTools bool // any tool-call chunk emitted
	sawAny   bool // any chunk emitted

	// The calls of marked pieces, in the order their indexes first came,
	// and the position in it of each index.
	indexed []model.ToolCall
	args    [][]byte // the arguments of indexed, piece by piece
	slots   map[int]int
	last    int // the index of the last marked piece
}

// NewSplitter returns a splitter delivering chunks to emit. An error of emit
// aborts the provider call with it.
func NewSplitter(emit func(model.Chunk) error) *Splitter { return &Splitter{emit: emit} }

// Reset forgets the chunks of a failed attempt, for the next one.
func (s *Splitter) Reset() {
	s.calls, s.sawTools, s.sawAny = 0, false, false
	s.indexed, s.args, s.slots, s.last = nil, nil, nil, 0
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
			if index, id, ok := unmarkToolCallID(d.ID); ok {
				if err := s.indexedDelta(index, id, d); err != nil {
					return err
				}
				continue
			}
			if s.indexed != nil {
				// A piece the transport could not mark (its line was
				// too long), among marked ones: it continues the last
				// call, or starts a new one when it has another id.
				if err := s.indexedDelta(s.last, d.ID, d); err != nil {
					return err
				}
				continue
			}
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

// indexedDelta emits the piece d of the call of the wire's index, and adds
// it to the call. A piece whose id differs from the id of the call at its
// index starts a new call, which then owns the index.
func (s *Splitter) indexedDelta(index int, id string, d wireDelta) error {
	if s.slots == nil {
		s.slots = map[int]int{}
	}
	s.last = index
	slot, ok := s.slots[index]
	if ok && id != "" && s.indexed[slot].ID != "" && s.indexed[slot].ID != id {
		// A piece naming another call at a known index: Ollama's
		// OpenAI-compatible stream gives every call the index 0, each
		// call whole in its own piece with its own id. It is a new call.
		ok = false
	}
	if !ok {
		slot = len(s.indexed)
		s.slots[index] = slot
		s.indexed = append(s.indexed, model.ToolCall{})
		s.args = append(s.args, nil)
	}
	c := &s.indexed[slot]
	delta := &model.ToolCallDelta{Index: slot, Arguments: d.Function.Arguments}
	if c.ID == "" && id != "" {
		c.ID, delta.ID = id, id
	}
	if c.Name == "" && d.Function.Name != "" {
		c.Name, delta.Name = d.Function.Name, d.Function.Name
	}
	s.args[slot] = append(s.args[slot], d.Function.Arguments...)
	s.sawTools = true
	if !ok || delta.ID != "" || delta.Name != "" || delta.Arguments != "" {
		return s.send(model.Chunk{Kind: model.ChunkToolCall, ToolCall: delta})
	}
	return nil
}

// Complete puts in resp the tool calls assembled from marked pieces, in
// place of the response's own, which langchaingo assembled without their
// indexes. A response of a stream without marked pieces is left as it is.
func (s *Splitter) Complete(resp *model.Response) {
	if s.indexed == nil || resp == nil {
		return
	}
	parts := resp.Message.Parts[:0:0]
	for _, p := range resp.Message.Parts {
		if p.Kind != model.PartToolCall {
			parts = append(parts, p)
		}
	}
	for i, c := range s.indexed {
		c.Arguments = nil
		if len(s.args[i]) > 0 {
			c.Arguments = json.RawMessage(s.args[i])
		}
		parts = append(parts, model.ToolCallPart(c))
	}
	resp.Message.Parts = parts
}

// The prefix of a marked tool-call id; see MarkToolCallID.
const markPrefix = "\x00agentgraph-index:"

// MarkToolCallID returns the id of a streamed tool-call piece that carries
// the wire's index of its call beside the call's id, for the Splitter. The
// provider's HTTP transport writes it in each piece of an OpenAI stream:
// langchaingo keeps a piece's id but drops its index.
func MarkToolCallID(index int, id string) string {
	return markPrefix + strconv.Itoa(index) + "\x00" + id
}

// unmarkToolCallID returns the index and id MarkToolCallID put in id.
func unmarkToolCallID(id string) (index int, orig string, ok bool) {
	rest, ok := strings.CutPrefix(id, markPrefix)
	if !ok {
		return 0, "", false
	}
	num, orig, ok := strings.Cut(rest, "\x00")
	if !ok {
		return 0, "", false
	}
	index, err := strconv.Atoi(num)
	if err != nil {
		return 0, "", false
	}
	return index, orig, true
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
