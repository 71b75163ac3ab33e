package agent_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/google/go-cmp/cmp"
)

type chatState struct {
	Query  string
	Answer string
	Usage  model.Usage
}

var (
	chatAnswer = graph.Replace(func(s *chatState) *string { return &s.Answer })
	chatUsage  = graph.Declare(func(s *chatState) *model.Usage { return &s.Usage })
)

// emitChunk forwards a streamed chunk to the graph run's stream as a custom
// event: a node streams its model's reply only when it says so.
func emitChunk(ctx context.Context, c model.Chunk) error { return graph.Emit(ctx, c) }

// TestGraphStreamAndUsage runs a model call inside a streaming graph run:
// the answer's chunks, forwarded by the node, reach the run's stream as
// custom events, thinking chunks apart, and the usage of both nodes sums in
// the state.
func TestGraphStreamAndUsage(t *testing.T) {
	m := llmtest.New().
		On("plan", llmtest.Reply{Text: "search first", Usage: model.Usage{InputTokens: 10, OutputTokens: 2}}).
		On("write", llmtest.Reply{Thinking: "be brief", Text: "Go 1.26 is out.", Chunks: []string{"Go 1.26", " is out."},
			Usage: model.Usage{InputTokens: 20, OutputTokens: 5, ThinkingTokens: 3}})
	c := newClient(t, agent.Config{Model: m})

	g := graph.New[chatState]()
	g.AddNode("plan", func(ctx context.Context, s chatState) (graph.Update[chatState], error) {
		resp, err := agent.Complete(ctx, c, "plan: "+s.Query)
		if err != nil {
			return graph.Update[chatState]{}, err
		}
		return chatUsage.Set(resp.Usage), nil
	})
	g.AddNode("write", func(ctx context.Context, s chatState) (graph.Update[chatState], error) {
		resp, err := agent.Complete(ctx, c, "write: "+s.Query, agent.WithModel("thinking"), agent.WithStreaming(emitChunk))
		if err != nil {
			return graph.Update[chatState]{}, err
		}
		return graph.Updates(chatAnswer.Set(resp.Text), chatUsage.Set(resp.Usage)), nil
	})
	g.AddEdge(graph.START, "plan").AddEdge("plan", "write").AddEdge("write", graph.END)
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}

	var chunks []model.Chunk
	var final chatState
	for ev, err := range app.Stream(context.Background(), chatState{Query: "Go news"}, graph.WithModes(graph.StreamCustom, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamCustom:
			c, ok := ev.Payload.(model.Chunk)
			if !ok || ev.Node != "write" {
				t.Errorf("custom event %T from %q", ev.Payload, ev.Node)
			}
			chunks = append(chunks, c)
		case graph.StreamValues:
			final = ev.State
		}
	}
	want := []model.Chunk{
		{Kind: model.ChunkThinking, Text: "be b"}, {Kind: model.ChunkThinking, Text: "rief"},
		{Kind: model.ChunkText, Text: "Go 1.26"}, {Kind: model.ChunkText, Text: " is out."},
	}
	if diff := cmp.Diff(want, chunks); diff != "" {
		t.Errorf("stream chunks (-want +got):\n%s", diff)
	}
	wantState := chatState{Query: "Go news", Answer: "Go 1.26 is out.",
		Usage: model.Usage{InputTokens: 30, OutputTokens: 7, ThinkingTokens: 3}}
	if diff := cmp.Diff(wantState, final); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}

	// Outside a streamed run the same node runs without a stream.
	out, err := app.Invoke(context.Background(), chatState{Query: "Go news"})
	if err != nil || out.Answer != "Go 1.26 is out." || out.Usage.Total() != 40 {
		t.Errorf("Invoke = %+v, %v", out, err)
	}
}

// TestGraphStreamConsumerLeaves: when the consumer stops reading the run's
// stream, the streaming model call is aborted and nothing is left running.
func TestGraphStreamConsumerLeaves(t *testing.T) {
	m := llmtest.New().Default(llmtest.Reply{Text: "a long answer streamed in many small chunks"})
	c := newClient(t, agent.Config{Model: m})
	callErr := make(chan error, 1)
	g := graph.New[chatState]()
	g.AddNode("write", func(ctx context.Context, s chatState) (graph.Update[chatState], error) {
		_, err := agent.Complete(ctx, c, "write", agent.WithStreaming(emitChunk))
		callErr <- err
		return graph.Update[chatState]{}, err
	})
	g.AddEdge(graph.START, "write").AddEdge("write", graph.END)
	app, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range app.Stream(context.Background(), chatState{}, graph.WithModes(graph.StreamCustom)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Payload.(model.Chunk).Text != "a lo" {
			t.Errorf("first chunk = %+v", ev.Payload)
		}
		break
	}
	if err := <-callErr; err == nil {
		t.Error("the model call went on after the consumer left")
	}
}
