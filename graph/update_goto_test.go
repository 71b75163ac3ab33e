package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestUpdateGotoOutside: an update without AsNode that routes (a client's
// Command with goto) adds its targets and Sends to the thread's next
// tasks, to any node of the graph, and the next run goes there.
func TestUpdateGotoOutside(t *testing.T) {
	ctx := context.Background()
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"from a"}), nil
	})
	g.AddNode("b", func(context.Context, chat) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"from b"}), nil
	})
	note := graph.AddTask(g, "note", func(_ context.Context, x string) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"note " + x}), nil
	})
	// a ends the run; b and note are reachable only by a route a never
	// takes.
	g.AddEdge(graph.START, "a").AddEdge("b", graph.END).AddEdge("note", graph.END)
	g.AddConditionalEdges("a", func(context.Context, chat) (graph.Route, error) { return graph.To(graph.END), nil }, "b", "note", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("t")
	if _, err := th.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	s, err := c.SendTo("note", func(p any) error { return json.Unmarshal([]byte(`"x"`), p) })
	if err != nil {
		t.Fatal(err)
	}
	if s.Node() != "note" || s.Arg() != "x" {
		t.Fatalf("SendTo gave a task of %q with %v; want note with x", s.Node(), s.Arg())
	}
	if _, err := th.Update(ctx, chatDraft.Set("d").Goto("b", graph.END).Send(s, note.Send("y"))); err != nil {
		t.Fatal(err)
	}
	st, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(st.Next)); !slices.Equal(got, []string{"b", "note", "note"}) {
		t.Fatalf("next after the update = %v; want b and two note tasks", st.Next)
	}
	out, err := th.Invoke(ctx, chat{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hi", "from a", "note x", "note y", "from b"}
	if got := slices.Sorted(slices.Values(out.Messages)); !slices.Equal(got, slices.Sorted(slices.Values(want))) || out.Draft != "d" {
		t.Fatalf("state after the run = %+v; want messages %v and draft d", out, want)
	}

	for _, tc := range []struct {
		u    graph.Update[chat]
		want string
	}{
		{graph.Update[chat]{}.Goto("nowhere"), `unknown node "nowhere"`},
		{graph.Update[chat]{}.Goto("note"), `task node "note"`},
	} {
		if _, err := th.Update(ctx, tc.u); !errors.Is(err, graph.ErrBadRoute) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Update routing %v: err = %v; want ErrBadRoute naming %s", tc.u.Route(), err, tc.want)
		}
	}
	if _, err := c.SendTo("a", func(any) error { return nil }); !errors.Is(err, graph.ErrBadRoute) {
		t.Errorf("SendTo a plain node: err = %v; want ErrBadRoute", err)
	}
	if _, err := c.SendTo("zz", func(any) error { return nil }); !errors.Is(err, graph.ErrBadRoute) || !strings.Contains(err.Error(), "a, b, note") {
		t.Errorf("SendTo an unknown node: err = %v; want ErrBadRoute listing the nodes", err)
	}
	if _, err := th.Update(ctx, graph.Update[chat]{}.Goto("b"), graph.AsNode(graph.END)); !errors.Is(err, graph.ErrBadRoute) {
		t.Errorf("Update as END with routing: err = %v; want ErrBadRoute", err)
	}
}

// TestUpdateGotoDeferredWaiting: an update routing to a deferred node
// that waits, triggered, in the thread's next step makes it a task of
// that step instead of adding a second one: it runs once.
func TestUpdateGotoDeferredWaiting(t *testing.T) {
	ctx := context.Background()
	g := graph.New[chat]()
	say := func(text string) func(context.Context, chat) (graph.Update[chat], error) {
		return func(context.Context, chat) (graph.Update[chat], error) {
			return chatMessages.Set([]string{text}), nil
		}
	}
	g.AddNode("a", say("a"))
	g.AddNode("long", say("long"))
	g.AddNode("wait", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		answer, err := graph.Interrupt[string](ctx, "go on?")
		if err != nil {
			return graph.Update[chat]{}, err
		}
		return chatMessages.Set([]string{"wait " + answer}), nil
	})
	g.AddNode("d", say("d"), graph.Defer())
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "long").AddEdge("a", "d").AddEdge("long", "wait").
		AddEdge("wait", graph.END).AddEdge("d", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("t")
	if _, err := th.Invoke(ctx, chat{}); err != nil && !errors.Is(err, graph.ErrInterrupted) {
		t.Fatal(err)
	}
	st, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Next, []string{"wait"}) {
		t.Fatalf("next when paused = %v; want wait (d, deferred, waits)", st.Next)
	}
	if _, err := th.Update(ctx, graph.Update[chat]{}.Goto("d")); err != nil {
		t.Fatal(err)
	}
	out, err := th.Invoke(ctx, chat{}, graph.Resume("yes"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "d", "long", "wait yes"}
	if got := slices.Sorted(slices.Values(out.Messages)); !slices.Equal(got, want) {
		t.Errorf("messages after the run = %v; want %v (d once)", got, want)
	}
}

// TestUpdateAsStartRoutes: an update as START that routes (LangGraph's
// Command in a run's input) adds its targets and Sends to START's next
// tasks, to any node of the graph.
func TestUpdateAsStartRoutes(t *testing.T) {
	ctx := context.Background()
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"from a"}), nil
	})
	g.AddNode("b", func(context.Context, chat) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"from b"}), nil
	})
	note := graph.AddTask(g, "note", func(_ context.Context, x string) (graph.Update[chat], error) {
		return chatMessages.Set([]string{"note " + x}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge("b", graph.END).AddEdge("note", graph.END)
	g.AddConditionalEdges("a", func(context.Context, chat) (graph.Route, error) { return graph.To(graph.END), nil }, "b", "note", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("t")
	if _, err := th.Update(ctx, chatMessages.Set([]string{"hi"}).Goto("b").Send(note.Send("y")), graph.AsNode(graph.START)); err != nil {
		t.Fatal(err)
	}
	st, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(st.Next)); !slices.Equal(got, []string{"a", "b", "note"}) {
		t.Fatalf("next after the update = %v; want a, b and note", st.Next)
	}
	out, err := th.Invoke(ctx, chat{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"from a", "from b", "hi", "note y"}
	if got := slices.Sorted(slices.Values(out.Messages)); !slices.Equal(got, want) {
		t.Fatalf("messages after the run = %v; want %v", out.Messages, want)
	}
	if _, err := th.Update(ctx, graph.Update[chat]{}.Goto("nowhere"), graph.AsNode(graph.START)); !errors.Is(err, graph.ErrBadRoute) || !strings.Contains(err.Error(), `unknown node "nowhere"`) {
		t.Errorf("Update as START routing to an unknown node: err = %v; want ErrBadRoute naming it", err)
	}
}
