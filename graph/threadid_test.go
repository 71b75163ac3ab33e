package graph_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestThreadIDRefusedBeforeRunning: a thread id no Saver can store (a NUL
// byte, invalid UTF-8, longer than checkpoint.MaxIDLen) fails the run with
// checkpoint.ErrInvalid naming the limit when the thread is loaded, before
// any node runs, and fails a read or update of the thread alike; with
// every Saver, not only with the one whose database refuses it.
func TestThreadIDRefusedBeforeRunning(t *testing.T) {
	var ran atomic.Int32
	g := graph.New[chat]()
	g.AddNode("reply", func(_ context.Context, s chat) (graph.Update[chat], error) {
		ran.Add(1)
		return graph.Updates(chatTurns.Set(1)), nil
	})
	g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"a\x00b", "\xff\xfe", strings.Repeat("x", checkpoint.MaxIDLen+1)} {
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, checkpoint.ErrInvalid) || !strings.Contains(err.Error(), "MaxIDLen") {
				t.Errorf("%s on thread %.10q: got %v; want an error wrapping checkpoint.ErrInvalid naming MaxIDLen", what, id, err)
			}
		}
		for _, mode := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
			_, err := c.Thread(id).Invoke(ctx, chat{Messages: []string{"hi"}}, graph.WithDurability(mode))
			check("Invoke "+mode.String(), err)
		}
		_, err := c.Thread(id).State(ctx)
		check("State", err)
		_, err = c.Thread(id).Update(ctx, graph.Updates(chatTurns.Set(1)))
		check("Update", err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the node ran %d times; want none", n)
	}
}

// TestNodeNameRefusedAtCompile: a node name no Saver can store in a task
// id (not valid UTF-8, a NUL byte, too long for "step:node:index" and an
// interrupt id built on it to fit checkpoint.MaxIDLen) fails Compile with
// a checkpointer, naming the node; the run failed at the step that first
// scheduled the node, after earlier steps were saved.
func TestNodeNameRefusedAtCompile(t *testing.T) {
	reply := func(_ context.Context, s chat) (graph.Update[chat], error) {
		return graph.Updates(chatTurns.Set(1)), nil
	}
	for _, name := range []string{"a\x00b", "\xff\xfe", strings.Repeat("n", checkpoint.MaxIDLen-10)} {
		g := graph.New[chat]()
		g.AddNode("first", reply).AddNode(name, reply)
		g.AddEdge(graph.START, "first").AddEdge("first", name).AddEdge(name, graph.END)
		_, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
		if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), "node name") || !strings.Contains(err.Error(), "MaxIDLen") {
			t.Errorf("Compile with node %.10q: got %v; want ErrInvalidGraph naming the node name and MaxIDLen", name, err)
		}
		// Without a checkpointer no id is built on the name.
		if _, err := g.Compile(); err != nil {
			t.Errorf("Compile without a checkpointer, node %.10q: %v", name, err)
		}
	}
	// The longest name that fits runs durably.
	long := strings.Repeat("n", checkpoint.MaxIDLen-63)
	g := graph.New[chat]()
	g.AddNode(long, reply).AddEdge(graph.START, long).AddEdge(long, graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatalf("Compile with a node name of %d bytes: %v", len(long), err)
	}
	if _, err := c.Thread("t").Invoke(context.Background(), chat{}); err != nil {
		t.Fatalf("run with a node name of %d bytes: %v", len(long), err)
	}
}

// TestThreadIDRoomForSubgraphs: a thread id that fits checkpoint.MaxIDLen
// but leaves no room for the subgraph threads (graph.SubgraphThread) its
// durable subgraphs run on fails the run before any node runs, naming the
// limit and the longest thread id that fits; the run failed inside the
// subgraph, after the parent's first steps were saved.
func TestThreadIDRoomForSubgraphs(t *testing.T) {
	var ran atomic.Int32
	count := func(_ context.Context, s chat) (graph.Update[chat], error) {
		ran.Add(1)
		return graph.Updates(chatTurns.Set(1)), nil
	}
	saver := checkpoint.NewMemory()
	cg := graph.New[chat]()
	cg.AddNode("inner", count).AddEdge(graph.START, "inner").AddEdge("inner", graph.END)
	child, err := cg.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	g.AddNode("first", count)
	graph.AddSubgraph(g, "sub", child, func(s chat) chat { return s }, func(c chat) graph.Update[chat] { return graph.Updates(chatTurns.Set(c.Turns)) })
	g.AddEdge(graph.START, "first").AddEdge("first", "sub").AddEdge("sub", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	thread := strings.Repeat("x", checkpoint.MaxIDLen-2)
	_, err = c.Thread(thread).Invoke(ctx, chat{})
	if !errors.Is(err, checkpoint.ErrInvalid) || !strings.Contains(err.Error(), "MaxIDLen") || !strings.Contains(err.Error(), "SubgraphThread") {
		t.Errorf("Invoke on a thread of %d bytes: got %v; want checkpoint.ErrInvalid naming MaxIDLen and SubgraphThread", len(thread), err)
	}
	if len(err.Error()) > 1000 {
		t.Errorf("error of %d bytes; want the thread id clipped", len(err.Error()))
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d nodes ran; want none", n)
	}
	if _, err := saver.Get(ctx, thread, ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("the thread was saved (%v); want nothing saved", err)
	}
	// The longest thread id the error allows runs, subgraph included.
	room := checkpoint.MaxIDLen - len("|:sub:") - 40
	if _, err := c.Thread(strings.Repeat("y", room)).Invoke(ctx, chat{}); err != nil {
		t.Errorf("Invoke on a thread of %d bytes: %v", room, err)
	}
	if n := ran.Load(); n != 2 {
		t.Errorf("%d nodes ran; want 2", n)
	}
}
