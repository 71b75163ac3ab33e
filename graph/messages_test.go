package graph_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// wordModel is a language-model fake that answers "<prefix> <last message>"
// and streams it word by word, counting its calls by kind.
type wordModel struct {
	prefix            string
	generate, streams atomic.Int32
}

func (m *wordModel) reply(req *model.Request) *model.Response {
	last := req.Messages[len(req.Messages)-1].Text()
	return &model.Response{Message: model.Assistant(m.prefix + " " + last), Usage: model.Usage{InputTokens: 2, OutputTokens: 1}}
}

func (m *wordModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	m.generate.Add(1)
	return m.reply(req), ctx.Err()
}

func (m *wordModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	m.streams.Add(1)
	return func(yield func(model.Chunk, error) bool) {
		resp := m.reply(req)
		for _, w := range strings.SplitAfter(resp.Text(), " ") {
			if !yield(model.Chunk{Kind: model.ChunkText, Text: w}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

type convo struct {
	Messages model.Messages
	Usage    model.Usage
}

var (
	convoMessages = graph.Declare(func(s *convo) *model.Messages { return &s.Messages })
	convoUsage    = graph.Declare(func(s *convo) *model.Usage { return &s.Usage })
)

// chatNode answers the conversation through graph.Generate.
func chatNode(m model.Model) graph.NodeFunc[convo] {
	return func(ctx context.Context, s convo) (graph.Update[convo], error) {
		resp, err := graph.Generate(ctx, m, &model.Request{Messages: s.Messages})
		if err != nil {
			return graph.Update[convo]{}, err
		}
		return graph.Updates(convoMessages.Set(model.Messages{resp.Message}), convoUsage.Set(resp.Usage)), nil
	}
}

func chatGraph(t testing.TB, m model.Model, opts ...graph.CompileOption) *graph.Compiled[convo] {
	g := graph.New[convo]()
	g.AddNode("chat", chatNode(m))
	g.AddEdge(graph.START, "chat")
	g.AddEdge("chat", graph.END)
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A Messages field is a thread's conversation: each run's input merges into
// the saved messages, every message gets an id, and a later update can
// replace or remove a message by id.
func TestMessagesFieldWithCheckpointer(t *testing.T) {
	m := &wordModel{prefix: "echo:"}
	saver := checkpoint.NewMemory()
	c := chatGraph(t, m, graph.WithCheckpointer(saver))
	ctx := onThread("chat")
	for _, q := range []string{"one", "two"} {
		if _, err := c.Invoke(ctx, convo{Messages: model.Messages{model.User(q)}}); err != nil {
			t.Fatal(err)
		}
	}
	// A process that knows only the saver reads the same conversation.
	snap, err := chatGraph(t, m, graph.WithCheckpointer(saver)).Thread("chat").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := snap.Values
	var got []string
	for _, msg := range s.Messages {
		if msg.ID == "" {
			t.Fatalf("message without id: %+v", msg)
		}
		got = append(got, msg.Text())
	}
	if strings.Join(got, "|") != "one|echo: one|two|echo: two" {
		t.Fatalf("conversation %q", got)
	}
	if s.Usage != (model.Usage{InputTokens: 4, OutputTokens: 2}) {
		t.Fatalf("usage %+v", s.Usage)
	}
	edit := s.Messages[1]
	edit.Parts = []model.Part{model.TextPart("edited")}
	if _, err := c.Thread("chat").Update(context.Background(), convoMessages.Set(model.Messages{edit, model.Remove(s.Messages[0].ID)}), graph.AsNode("chat")); err != nil {
		t.Fatal(err)
	}
	snap, err = c.Thread("chat").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, msg := range snap.Values.Messages {
		got = append(got, msg.Text())
	}
	if strings.Join(got, "|") != "edited|two|echo: two" {
		t.Fatalf("after update %q", got)
	}
}

// idModel is wordModel whose replies carry a message id, the same in
// every reply, as a provider's reply id may be.
type idModel struct{ wordModel }

func (m *idModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := m.wordModel.Generate(ctx, req)
	resp.Message.ID = "msg_same"
	return resp, err
}

func (m *idModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for c, err := range m.wordModel.Stream(ctx, req) {
			if c.Response != nil {
				c.Response.Message.ID = "msg_same"
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

// A model that puts the same id in every reply's message does not make a
// reply appended through Generate replace an earlier message: Generate
// moves the id to Response.ID, and the merge gives each reply its own. In
// a run streamed with StreamMessages, Generate gives each reply a new id,
// which its chunks carry (Chunk.MessageID) and the conversation keeps.
func TestGenerateDropsReplyMessageID(t *testing.T) {
	for _, mode := range []string{"invoke", "stream"} {
		t.Run(mode, func(t *testing.T) {
			m := &idModel{wordModel{prefix: "echo:"}}
			var ids []string
			g := graph.New[convo]()
			g.AddNode("chat", func(ctx context.Context, s convo) (graph.Update[convo], error) {
				resp, err := graph.Generate(ctx, m, &model.Request{Messages: s.Messages})
				if err != nil {
					return graph.Update[convo]{}, err
				}
				ids = append(ids, resp.ID+"/"+resp.Message.ID)
				return convoMessages.Set(model.Messages{resp.Message}), nil
			})
			g.AddEdge(graph.START, "chat")
			g.AddEdge("chat", graph.END)
			c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
			if err != nil {
				t.Fatal(err)
			}
			ctx := onThread("ids")
			var s convo
			streamed := map[string]bool{} // the MessageID of each chunk
			for _, q := range []string{"one", "two"} {
				in := convo{Messages: model.Messages{model.User(q)}}
				if mode == "invoke" {
					if s, err = c.Invoke(ctx, in); err != nil {
						t.Fatal(err)
					}
					continue
				}
				for ev, err := range c.Stream(ctx, in, graph.WithModes(graph.StreamMessages, graph.StreamValues)) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Mode == graph.StreamValues {
						s = ev.State
					}
					if ch, ok := ev.Chunk(); ok {
						streamed[ch.MessageID] = true
					}
				}
			}
			switch mode {
			case "invoke":
				if strings.Join(ids, " ") != "msg_same/ msg_same/" {
					t.Fatalf("Response.ID/Message.ID of the replies: %q, want the model's id in Response.ID only", ids)
				}
			case "stream":
				// Message.ID is the id Generate streamed the reply under,
				// one of its own for each call.
				if len(ids) != 2 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "msg_same/m-") || !strings.HasPrefix(ids[1], "msg_same/m-") {
					t.Fatalf("Response.ID/Message.ID of the replies: %q, want the model's id in Response.ID and a new id of Generate's in Message.ID", ids)
				}
				// Every chunk carried it: the id the reply has in the
				// conversation.
				if len(streamed) != 2 || len(s.Messages) != 4 || !streamed[s.Messages[1].ID] || !streamed[s.Messages[3].ID] {
					t.Fatalf("the chunks carried message ids %v; want those of the replies in the conversation, %+v", streamed, s.Messages)
				}
			}
			var got []string
			seen := map[string]bool{}
			for _, msg := range s.Messages {
				if msg.ID == "" || seen[msg.ID] {
					t.Fatalf("message id %q empty or repeated", msg.ID)
				}
				seen[msg.ID] = true
				got = append(got, msg.Text())
			}
			if strings.Join(got, "|") != "one|echo: one|two|echo: two" {
				t.Fatalf("conversation %q", got)
			}
		})
	}
}

// In a run streamed with StreamMessages, Generate streams the model's reply
// and each chunk names the node and subgraph; elsewhere it calls Generate.
func TestStreamMessages(t *testing.T) {
	m := &wordModel{prefix: "re:"}
	child := chatGraph(t, m)
	g := graph.New[convo]()
	g.AddNode("chat", chatNode(m))
	graph.AddSubgraph(g, "inner", child, func(s convo) convo { return s },
		func(s convo) graph.Update[convo] {
			last, _ := s.Messages.Last()
			return convoMessages.Set(model.Messages{last})
		})
	g.AddEdge(graph.START, "chat")
	g.AddEdge("chat", "inner")
	g.AddEdge("inner", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ ns, node string }
	text := map[key]string{}
	done := map[key]*model.Response{}
	var order []string
	for ev, err := range c.Stream(context.Background(), convo{Messages: model.Messages{model.User("hi")}}, graph.WithModes(graph.StreamMessages)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mode != graph.StreamMessages {
			t.Fatalf("unwanted %s event", ev.Mode)
		}
		ch, ok := ev.Chunk()
		if !ok {
			t.Fatalf("event %+v has no chunk", ev)
		}
		k := key{strings.Join(ev.Namespace, "/"), ev.Node}
		if ev.Task.Node != ev.Node {
			t.Fatalf("task %+v of node %s", ev.Task, ev.Node)
		}
		switch ch.Kind {
		case model.ChunkText:
			text[k] += ch.Text
		case model.ChunkDone:
			done[k] = ch.Response
			order = append(order, k.ns+":"+k.node)
		}
	}
	if got := strings.Join(order, ","); got != ":chat,inner:chat" {
		t.Fatalf("replies from %s", got)
	}
	if text[key{"", "chat"}] != "re: hi" || text[key{"inner", "chat"}] != "re: re: hi" {
		t.Fatalf("streamed text %q", text)
	}
	if done[key{"inner", "chat"}].Text() != "re: re: hi" {
		t.Fatalf("done %+v", done)
	}
	if m.streams.Load() != 2 || m.generate.Load() != 0 {
		t.Fatalf("%d streams, %d generates", m.streams.Load(), m.generate.Load())
	}
	// Not streamed (Invoke, or a stream without the mode): Generate.
	if _, err := c.Invoke(context.Background(), convo{Messages: model.Messages{model.User("hi")}}); err != nil {
		t.Fatal(err)
	}
	for _, err := range c.Stream(context.Background(), convo{Messages: model.Messages{model.User("hi")}}, graph.WithModes(graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m.streams.Load() != 2 || m.generate.Load() != 4 {
		t.Fatalf("%d streams, %d generates", m.streams.Load(), m.generate.Load())
	}
	if graph.StreamMessages.String() != "messages" {
		t.Fatal(graph.StreamMessages.String())
	}
}

// A consumer that stops reading ends the model's stream.
func TestStreamMessagesBreak(t *testing.T) {
	m := &wordModel{prefix: "a b c d e f"}
	c := chatGraph(t, m)
	n := 0
	for _, err := range c.Stream(context.Background(), convo{Messages: model.Messages{model.User("x")}}, graph.WithModes(graph.StreamMessages)) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("%d events", n)
	}
}

// In a parallel step each task's update is streamed when the task finishes:
// "slow" does not finish until the consumer has received the update of
// "fast", which could not happen if updates waited for the end of the step.
func TestParallelUpdatesStreamAsTasksFinish(t *testing.T) {
	gotFast := make(chan struct{})
	g := graph.New[convo]()
	g.AddNode("fast", func(context.Context, convo) (graph.Update[convo], error) {
		return convoMessages.Set(model.Messages{model.User("fast")}), nil
	})
	g.AddNode("slow", func(ctx context.Context, _ convo) (graph.Update[convo], error) {
		select {
		case <-gotFast:
			return convoMessages.Set(model.Messages{model.User("slow")}), nil
		case <-ctx.Done():
			return graph.Update[convo]{}, ctx.Err()
		case <-time.After(30 * time.Second):
			return graph.Update[convo]{}, errors.New("the update of fast was not streamed before the step ended")
		}
	})
	g.AddEdge(graph.START, "fast")
	g.AddEdge(graph.START, "slow")
	g.AddEdge("fast", graph.END)
	g.AddEdge("slow", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	var final convo
	for ev, err := range c.Stream(context.Background(), convo{}, graph.WithModes(graph.StreamUpdates, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamUpdates:
			nodes = append(nodes, ev.Node)
			if ev.Node == "fast" {
				if ev.Task.Index != 0 || ev.Step != 1 {
					t.Fatalf("task %+v", ev.Task)
				}
				close(gotFast)
			}
		case graph.StreamValues:
			final = ev.State
		}
	}
	if !slices.Equal(nodes, []string{"fast", "slow"}) {
		t.Fatalf("updates of %q", nodes)
	}
	// The merge order is still the task order.
	if len(final.Messages) != 2 || final.Messages[0].Text() != "fast" || final.Messages[1].Text() != "slow" {
		t.Fatalf("state %+v", final.Messages)
	}
}

// askGraph fans out one task per prompt to node "ask", which answers its
// prompt through graph.Generate, and runs the subgraph inner beside them
// when it is not nil.
func askGraph(t *testing.T, m model.Model, prompts []string, inner *graph.Compiled[convo]) *graph.Compiled[convo] {
	g := graph.New[convo]()
	ask := graph.AddTask(g, "ask", func(ctx context.Context, p string) (graph.Update[convo], error) {
		resp, err := graph.Generate(ctx, m, &model.Request{Messages: model.Messages{model.User(p)}})
		if err != nil {
			return graph.Update[convo]{}, err
		}
		return convoMessages.Set(model.Messages{resp.Message}), nil
	})
	targets := []string{"ask"}
	if inner != nil {
		graph.AddSubgraph(g, "inner", inner, func(s convo) convo { return s },
			func(s convo) graph.Update[convo] { return convoMessages.Set(s.Messages) })
		g.AddEdge("inner", graph.END)
		targets = append(targets, "inner")
	}
	g.AddConditionalEdges(graph.START, func(context.Context, convo) (graph.Route, error) {
		var r graph.Route
		if inner != nil {
			r = r.To("inner")
		}
		for _, p := range prompts {
			r = r.Send(ask.Send(p))
		}
		return r, nil
	}, targets...)
	g.AddEdge("ask", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every chunk of every model call reaches the consumer once, in its task's
// order, named by its node, task and namespace, from parallel tasks and
// from the parallel tasks of a subgraph running beside them; and a chunk
// the consumer keeps still holds its own data after the later chunks have
// arrived. The chunk is read with Event.Chunk; a messages event's Payload is
// nil.
func TestStreamMessagesParallelChunksKeptWhole(t *testing.T) {
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + strconv.Itoa(i)
	}
	m := &wordModel{prefix: strings.Join(words, " ")}
	inner := askGraph(t, m, []string{"i0", "i1", "i2"}, nil)
	c := askGraph(t, m, []string{"p0", "p1", "p2"}, inner)

	type kept struct {
		chunk   model.Chunk
		payload any
		text    string // the chunk's text when it arrived
	}
	got := map[string][]kept{} // by namespace and task
	prompt := map[string]string{}
	for ev, err := range c.Stream(context.Background(), convo{}, graph.WithModes(graph.StreamMessages)) {
		if err != nil {
			t.Fatal(err)
		}
		ch, ok := ev.Chunk()
		if !ok || ev.Node != "ask" || ev.Task.Node != "ask" || !slices.Equal(ev.Namespace, ev.Task.Namespace) {
			t.Fatalf("event %+v", ev)
		}
		k := strings.Join(ev.Namespace, "/") + "#" + strconv.Itoa(ev.Task.Index)
		got[k] = append(got[k], kept{chunk: ch, payload: ev.Payload, text: ch.Text})
		if ch.Kind == model.ChunkDone {
			prompt[k] = strings.TrimPrefix(ch.Response.Text(), m.prefix+" ")
		}
	}
	// The parent's tasks: inner is task 0, the asks 1-3; the subgraph's
	// asks are its tasks 0-2.
	wantPrompts := map[string]string{"#1": "p0", "#2": "p1", "#3": "p2", "inner#0": "i0", "inner#1": "i1", "inner#2": "i2"}
	if len(got) != len(wantPrompts) {
		t.Fatalf("chunks from %d tasks, want %d: %v", len(got), len(wantPrompts), prompt)
	}
	for k, p := range wantPrompts {
		if prompt[k] != p {
			t.Fatalf("task %s answered %q, want %q", k, prompt[k], p)
		}
		want := strings.SplitAfter(m.prefix+" "+p, " ")
		chunks := got[k]
		if len(chunks) != len(want)+1 {
			t.Fatalf("task %s: %d chunks, want %d", k, len(chunks), len(want)+1)
		}
		for i, w := range want {
			c := chunks[i]
			if c.chunk.Kind != model.ChunkText || c.chunk.Text != w || c.text != w {
				t.Fatalf("task %s, chunk %d: %+v (text %q on arrival), want %q", k, i, c.chunk, c.text, w)
			}
			if c.payload != nil {
				t.Fatalf("task %s, chunk %d: payload %#v, want nil (the chunk is read with Event.Chunk)", k, i, c.payload)
			}
		}
		if last := chunks[len(want)]; last.chunk.Kind != model.ChunkDone || last.chunk.Response == nil {
			t.Fatalf("task %s: last chunk %+v", k, last.chunk)
		}
	}
}

// chunkModel streams n text chunks of its preset text, then the reply,
// allocating nothing per chunk.
type chunkModel struct {
	n    int
	resp *model.Response
}

func (m *chunkModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	return m.resp, nil
}

func (m *chunkModel) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for range m.n {
			if !yield(model.Chunk{Kind: model.ChunkText, Text: "w "}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: m.resp}, nil)
	}
}

// A streamed reply's chunks reach the consumer without an allocation per
// chunk: a run whose model streams 200 chunks allocates as much as one
// whose model streams 10.
func TestStreamMessagesChunkAllocatesNothing(t *testing.T) {
	m := &chunkModel{resp: &model.Response{Message: model.Assistant("done")}}
	c := chatGraph(t, m)
	in := convo{Messages: model.Messages{model.User("hi")}}
	run := func(n int) float64 {
		m.n = n
		return testing.AllocsPerRun(50, func() {
			chunks := 0
			for ev, err := range c.Stream(context.Background(), in, graph.WithModes(graph.StreamMessages)) {
				if err != nil {
					t.Fatal(err)
				}
				if ch, ok := ev.Chunk(); ok && ch.Kind == model.ChunkText {
					chunks++
				}
			}
			if chunks != n {
				t.Fatalf("%d text chunks, want %d", chunks, n)
			}
		})
	}
	// Under the race detector sync.Pool drops pooled runs at random, so
	// the two counts differ by a few allocations either way; an
	// allocation per chunk shows as 190 more.
	few, many := run(10), run(200)
	if per := (many - few) / 190; per >= 0.5 {
		t.Fatalf("a run of 200 chunks allocates %v times, one of 10 %v: %.2f allocations per chunk, want none",
			many, few, per)
	}
}

// One Stream iterator may be ranged over again, also concurrently: each
// range is a run of its own with all its events (run with -race).
func TestStreamIteratorRangedAgain(t *testing.T) {
	m := &wordModel{prefix: "a b c"}
	c := askGraph(t, m, []string{"p0", "p1", "p2"}, nil)
	seq := c.Stream(context.Background(), convo{}, graph.WithModes(graph.StreamMessages, graph.StreamValues))
	collect := func() error {
		chunks, msgs := 0, 0
		for ev, err := range seq {
			if err != nil {
				return err
			}
			if _, ok := ev.Chunk(); ok {
				chunks++
			}
			if ev.Mode == graph.StreamValues {
				msgs = len(ev.State.Messages)
			}
		}
		// Three tasks, each streaming "a b c pN" in 4 pieces and a done chunk.
		if chunks != 15 || msgs != 3 {
			return fmt.Errorf("%d chunks and %d messages, want 15 and 3", chunks, msgs)
		}
		return nil
	}
	for range 2 {
		if err := collect(); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- collect() }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// drainStream consumes a reply's stream without the engine: what a
// model's stream allocates of its own.
//
//go:noinline
func drainStream(ctx context.Context, m model.Model, req *model.Request) {
	m.Stream(ctx, req)(func(model.Chunk, error) bool { return true })
}

// A model call through Generate in a run streamed with StreamMessages
// allocates two objects beyond what the model's stream allocates (the
// function the stream yields to, and the response it returns with the
// reply's message id): the call's state is kept in the task's scope.
func TestStreamedGenerateAllocatesOnce(t *testing.T) {
	m := &chunkModel{n: 3, resp: &model.Response{Message: model.Assistant("done")}}
	req := &model.Request{}
	viaGenerate := false
	g := graph.New[convo]()
	g.AddNode("chat", func(ctx context.Context, _ convo) (graph.Update[convo], error) {
		if viaGenerate {
			_, err := graph.Generate(ctx, m, req)
			return graph.Update[convo]{}, err
		}
		drainStream(ctx, m, req)
		return graph.Update[convo]{}, nil
	})
	g.AddEdge(graph.START, "chat")
	g.AddEdge("chat", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	run := func(gen bool) float64 {
		viaGenerate = gen
		return graph.MinAllocs(50, func() {
			for _, err := range c.Stream(context.Background(), convo{}, graph.WithModes(graph.StreamMessages)) {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if d := run(true) - run(false); d != 2 {
		t.Fatalf("a streamed Generate allocates %v times beyond its model's stream, want 2", d)
	}
}
