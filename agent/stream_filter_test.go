package agent_test

import (
	"context"
	"iter"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
)

// oddStream streams what a careless model.Model might: an empty tool-call
// delta, a chunk of an unknown kind, an empty text delta, then the answer.
type oddStream struct{}

func (oddStream) Generate(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{Message: model.Assistant("ok")}, nil
}

func (oddStream) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, c := range []model.Chunk{
			{Kind: model.ChunkToolCall},
			{Kind: model.ChunkKind("unknown"), Text: "unknown"},
			{Kind: model.ChunkText},
			{Kind: model.ChunkText, Text: "ok"},
			{Kind: model.ChunkDone, Response: &model.Response{Message: model.Assistant("ok")}},
		} {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// TestStreamingDeliversOnlyNonEmptyKnownChunks: Complete on a bare
// model.Model hands the WithStreaming callback what Client does: no empty
// deltas, no tool-call chunk without its delta, no unknown kinds.
func TestStreamingDeliversOnlyNonEmptyKnownChunks(t *testing.T) {
	var got []model.Chunk
	_, err := agent.Complete(t.Context(), oddStream{}, "hi", agent.WithStreaming(func(_ context.Context, c model.Chunk) error {
		got = append(got, c)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != model.ChunkText || got[0].Text != "ok" {
		t.Fatalf("chunks delivered: %+v, want the one text chunk \"ok\"", got)
	}
}
