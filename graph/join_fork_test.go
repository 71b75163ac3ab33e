package graph_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// A run from a checkpoint saved while a join waits (FromCheckpoint, a
// rollback to it or a branch from it) keeps the join waiting: the edges
// that fired it, stored with its waiting trigger, come back, so it runs
// once, after the longer branch, as in the run that saved the checkpoint.
// Run twice from the same checkpoint, each branch gives the same log.
func TestForkFromCheckpointWhereJoinWaits(t *testing.T) {
	g := graph.New[roundState]()
	logs := func(name string) graph.NodeFunc[roundState] {
		return func(context.Context, roundState) (graph.Update[roundState], error) {
			return lpLog.Set([]string{name}), nil
		}
	}
	g.AddNode("a", logs("a")).AddNode("b", logs("b")).AddNode("c1", logs("c1")).AddNode("c2", logs("c2")).AddNode("d", logs("d"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("a", "c1").AddEdge("c1", "c2")
	g.AddEdge("b", "d").AddEdge("c2", "d").AddEdge("d", graph.END)
	c := mustCompile(t, g, graph.WithCheckpointer(checkpoint.NewMemory()))
	want := []string{"a", "b", "c1", "c2", "d"}
	th := c.Thread("join-fork")
	ctx := context.Background()
	out, err := th.Invoke(ctx, roundState{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, out.Log); d != "" {
		t.Fatalf("log of the first run (-want +got):\n%s", d)
	}
	// The checkpoint after step 2 (b and c1 ran): d waits for c2.
	var waiting graph.StateSnapshot[roundState]
	for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if s.Step == 2 {
			waiting = s
			break
		}
	}
	if waiting.CheckpointID == "" || !cmp.Equal(waiting.Next, []string{"c2"}) {
		t.Fatalf("checkpoint of step 2: %+v, want one whose next is [c2] (d waiting)", waiting)
	}
	for i := range 2 {
		out, err := th.Invoke(ctx, roundState{}, graph.FromCheckpoint(waiting.CheckpointID))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, out.Log); d != "" {
			t.Fatalf("log of fork %d (-want +got):\n%s", i+1, d)
		}
		st, err := th.State(ctx)
		if err != nil || st.ParentID == "" || len(st.Next) != 0 {
			t.Fatalf("state after fork %d: %+v, %v; want a finished branch", i+1, st, err)
		}
	}
	// A branch that edits the waiting checkpoint first (Thread.Update with
	// UpdateFrom and KeepWrites) keeps the wait too.
	if _, err := th.Update(ctx, graph.Update[roundState]{}, graph.UpdateFrom(waiting.CheckpointID), graph.KeepWrites()); err != nil {
		t.Fatal(err)
	}
	out, err = th.Invoke(ctx, roundState{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, out.Log); d != "" {
		t.Fatalf("log of the branch made by Update (-want +got):\n%s", d)
	}
}
