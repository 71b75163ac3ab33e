package graph_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestUpdateFrom: an update from an earlier checkpoint edits that
// checkpoint's state, starts a branch whose parent is it, and becomes the
// thread's latest state; the old branch stays in the history.
func TestUpdateFrom(t *testing.T) {
	ctx := context.Background()
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"from a"}), nil
	})
	g.AddNode("b", func(context.Context, chat) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"from b"}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("t")
	if _, err := th.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	// The checkpoint after a ran, before b.
	var afterA graph.StateSnapshot[chat]
	for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(s.Next, []string{"b"}) {
			afterA = s
		}
	}
	if afterA.CheckpointID == "" {
		t.Fatal("no checkpoint with b next")
	}
	id, err := th.Update(ctx, chatDraft.Set("edited"), graph.UpdateFrom(afterA.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	st, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.CheckpointID != id || st.ParentID != afterA.CheckpointID {
		t.Fatalf("latest is %s with parent %s; want the update %s with parent %s", st.CheckpointID, st.ParentID, id, afterA.CheckpointID)
	}
	if !slices.Equal(st.Values.Messages, []string{"hi", "from a"}) || st.Values.Draft != "edited" || !slices.Equal(st.Next, []string{"b"}) {
		t.Fatalf("state after UpdateFrom = %+v; want a's state, edited, with b next", st)
	}
	// Running on continues the branch.
	out, err := th.Invoke(ctx, chat{})
	if err != nil || !slices.Equal(out.Messages, []string{"hi", "from a", "from b"}) || out.Draft != "edited" {
		t.Fatalf("run after UpdateFrom = %+v, %v", out, err)
	}
	if _, err := th.Update(ctx, chatDraft.Set("x"), graph.UpdateFrom("no-such-checkpoint")); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("UpdateFrom an unknown checkpoint: %v; want checkpoint.ErrNotFound", err)
	}
}
