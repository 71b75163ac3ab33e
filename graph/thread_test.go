package graph_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestThreadHandle drives one thread through every method of the handle:
// Invoke, Stream, State, StateAt, History and Update with and without
// AsNode, and checks that nodes see the thread in their RunConfig.
func TestThreadHandle(t *testing.T) {
	ctx := context.Background()
	var seen []string
	g := graph.New[chat]()
	g.AddNode("reply", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		seen = append(seen, graph.ConfigFrom(ctx).ThreadID+"/"+graph.ConfigFrom(ctx).RunID)
		last := s.Messages[len(s.Messages)-1]
		return graph.Updates(chatMessages.Set([]string{"echo: " + last}), chatTurns.Set(1)), nil
	})
	g.AddNode("review", func(_ context.Context, s chat) (graph.Update[chat], error) {
		return chatDraft.Set("reviewed"), nil
	})
	g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END).AddEdge("review", graph.END)
	g.AddConditionalEdges("reply", func(context.Context, chat) (graph.Route, error) { return graph.To(graph.END), nil }, "review", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("conv-1")
	if th.ID() != "conv-1" {
		t.Fatalf("ID() = %q", th.ID())
	}
	// The run's RunConfig reaches the nodes, with the thread's id.
	rctx := graph.WithConfig(ctx, graph.RunConfig{RunID: "r1", ThreadID: "ignored"})
	if _, err := th.Invoke(rctx, chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	var last chat
	for ev, err := range th.Stream(ctx, chat{Messages: []string{"again"}}, graph.WithModes(graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev.State
	}
	want := chat{Messages: []string{"hi", "echo: hi", "again", "echo: again"}, Turns: 2}
	if d := cmp.Diff(want, last); d != "" {
		t.Fatalf("streamed state (-want +got):\n%s", d)
	}
	if !slices.Equal(seen, []string{"conv-1/r1", "conv-1/"}) {
		t.Fatalf("nodes saw thread/run %q, want [conv-1/r1 conv-1/]", seen)
	}
	// A plain Update changes the state and leaves nothing to run.
	id, err := th.Update(ctx, chatDraft.Set("edited"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.CheckpointID != id || st.Values.Draft != "edited" || len(st.Next) != 0 || st.Metadata[graph.MetaSource] != "update" {
		t.Fatalf("State after Update = %+v", st)
	}
	if _, err := th.Update(ctx, chatDraft.Set("plan"), graph.AsNode("nope")); err == nil || !strings.Contains(err.Error(), `unknown node "nope"`) || !strings.Contains(err.Error(), "("+strings.Join(c.Nodes(), ", ")+")") {
		t.Fatalf("Update as an unknown node: %v, want an error listing the nodes", err)
	}
	// With AsNode the update counts as that node's: the next task is the
	// one its edge leads to.
	g2 := graph.New[chat]()
	g2.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return chatTurns.Set(1), nil })
	g2.AddNode("b", func(context.Context, chat) (graph.Update[chat], error) { return chatTurns.Set(10), nil })
	g2.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	c2, err := g2.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th2 := c2.Thread("x")
	if _, err := th2.Update(ctx, chatDraft.Set("as a"), graph.AsNode("a")); err != nil {
		t.Fatal(err)
	}
	if st, err := th2.State(ctx); err != nil || !slices.Equal(st.Next, []string{"b"}) {
		t.Fatalf("after Update AsNode(a): next %v, err %v; want [b]", st.Next, err)
	}
	out, err := th2.Invoke(ctx, chat{})
	if err != nil || out.Turns != 10 || out.Draft != "as a" {
		t.Fatalf("resumed after AsNode: %+v, %v; want b alone to run", out, err)
	}
	// History and StateAt see the same checkpoints.
	n := 0
	for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		at, err := th.StateAt(ctx, s.CheckpointID)
		if err != nil || at.CheckpointID != s.CheckpointID || at.Step != s.Step {
			t.Fatalf("StateAt(%s) = %+v, %v", s.CheckpointID, at, err)
		}
		n++
	}
	if n != 5 { // two runs of input + step, one update
		t.Fatalf("History has %d checkpoints, want 5", n)
	}
}

// TestThreadErrors: a handle on a graph without a checkpointer, or with an
// empty id, fails every method with the error that says so, and a durable
// graph run without a thread says how to give it one.
func TestThreadErrors(t *testing.T) {
	ctx := context.Background()
	plain, err := graph.New[chat]().
		AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil }).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	durable := echoGraph(t, checkpoint.NewMemory())
	for _, tc := range []struct {
		name string
		th   graph.Thread[chat]
		want error
	}{
		{"no checkpointer", plain.Thread("t"), graph.ErrNoCheckpointer},
		{"empty id", durable.Thread(""), graph.ErrNoThread},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.th.Invoke(ctx, chat{})
			errs := []error{err}
			for _, err := range tc.th.Stream(ctx, chat{}) {
				errs = append(errs, err)
			}
			_, err = tc.th.State(ctx)
			errs = append(errs, err)
			_, err = tc.th.Update(ctx, chatDraft.Set("x"))
			errs = append(errs, err)
			for _, err := range tc.th.History(ctx, checkpoint.ListOptions{}) {
				errs = append(errs, err)
			}
			for i, err := range errs {
				if !errors.Is(err, tc.want) {
					t.Errorf("call %d: err = %v, want %v", i, err, tc.want)
				}
			}
		})
	}
	_, err = durable.Invoke(ctx, chat{Messages: []string{"hi"}})
	if !errors.Is(err, graph.ErrNoThread) || !strings.Contains(err.Error(), "Thread(id)") {
		t.Fatalf("Invoke without a thread: %v, want ErrNoThread naming Thread(id)", err)
	}
}

// TestCompiledCheckpointer: Checkpointer answers the saver the graph was
// compiled with, and nil for a graph compiled without one.
func TestCompiledCheckpointer(t *testing.T) {
	plain, err := graph.New[chat]().
		AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil }).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Checkpointer(); got != nil {
		t.Errorf("Checkpointer of a graph without one = %v, want nil", got)
	}
	saver := checkpoint.NewMemory()
	if got := echoGraph(t, saver).Checkpointer(); got != checkpoint.Saver(saver) {
		t.Errorf("Checkpointer = %v, want the saver given to WithCheckpointer", got)
	}
}
