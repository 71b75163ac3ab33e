package graph_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// counter counts node calls by name.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
	return c.n[name]
}

func (c *counter) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// logNode returns a node that appends its name to the chat's messages,
// counting its calls; before, if set, runs first and may fail the node.
func logNode(c *counter, name string, before func(ctx context.Context, call int) error) graph.NodeFunc[chat] {
	return func(ctx context.Context, s chat) (graph.Update[chat], error) {
		n := c.add(name)
		if before != nil {
			if err := before(ctx, n); err != nil {
				return graph.Update[chat]{}, err
			}
		}
		return chatMessages.Set([]string{name}), nil
	}
}

// cancelFirstCall returns a logNode before function that, on the node's
// first call, cancels the run and fails with the cancellation.
func cancelFirstCall(cancel context.CancelFunc) func(ctx context.Context, call int) error {
	return func(ctx context.Context, call int) error {
		if call == 1 {
			cancel()
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
}

// A subgraph compiled with a checkpointer, run by a durable parent, saves
// its own steps on a thread of its own: a parent run cancelled inside the
// subgraph resumes the subgraph where it stopped, so its finished nodes
// do not run again, and its nodes still stream under the subgraph node's
// namespace.
func TestDurableSubgraphResumesWhereItStopped(t *testing.T) {
	saver := checkpoint.NewMemory()
	var c counter
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	child := graph.New[chat]()
	child.AddNode("a", logNode(&c, "a", nil))
	child.AddNode("b", logNode(&c, "b", cancelFirstCall(cancel)))
	child.AddNode("c", logNode(&c, "c", nil))
	child.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
	cc, err := child.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	parent := graph.New[chat]()
	parent.AddNode("pre", logNode(&c, "pre", nil))
	graph.AddSubgraph(parent, "sub", cc, func(s chat) chat { return chat{Draft: "from parent"} },
		func(s chat) graph.Update[chat] { return chatMessages.Set(s.Messages) })
	parent.AddEdge(graph.START, "pre").AddEdge("pre", "sub").AddEdge("sub", graph.END)
	pc, err := parent.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}

	cfg := graph.RunConfig{ThreadID: "p1"}
	if _, err := pc.Invoke(graph.WithConfig(runCtx, cfg), chat{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	thread := graph.SubgraphThread("p1", graph.TaskInfo{Step: 2, Node: "sub"})
	if thread != "p1|2:sub:0" {
		t.Errorf("SubgraphThread = %q", thread)
	}
	st, err := cc.Thread(thread).State(context.Background())
	if err != nil {
		t.Fatalf("the subgraph's thread: %v", err)
	}
	if diff := cmp.Diff([]string{"a"}, st.Values.Messages); diff != "" {
		t.Errorf("the subgraph's saved state (-want +got):\n%s", diff)
	}
	if st.Values.Draft != "from parent" {
		t.Errorf("the subgraph's input was %q", st.Values.Draft)
	}

	var nodes []string
	var final chat
	for ev, err := range pc.Stream(graph.WithConfig(context.Background(), cfg), chat{}, graph.WithModes(graph.StreamDebug, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mode == graph.StreamDebug && ev.Debug.Kind == graph.TaskStart {
			nodes = append(nodes, slices.Concat(ev.Namespace, []string{ev.Node})[0]+"/"+ev.Node)
		}
		if ev.Mode == graph.StreamValues && len(ev.Namespace) == 0 {
			final = ev.State
		}
	}
	if diff := cmp.Diff([]string{"sub/sub", "sub/b", "sub/c"}, nodes); diff != "" {
		t.Errorf("tasks of the resumed run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pre", "a", "b", "c"}, final.Messages); diff != "" {
		t.Errorf("final messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"pre": 1, "a": 1, "b": 2, "c": 1}, c.get()); diff != "" {
		t.Errorf("node calls over both runs (-want +got):\n%s", diff)
	}

	// The next turn on the parent's thread runs the subgraph afresh, on a
	// thread of its own.
	if _, err := pc.Invoke(graph.WithConfig(context.Background(), cfg), chat{Messages: []string{"again"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"pre": 2, "a": 2, "b": 3, "c": 2}, c.get()); diff != "" {
		t.Errorf("node calls over three runs (-want +got):\n%s", diff)
	}
}

// A subgraph without a checkpointer, or under a parent run without one,
// runs as before: a resumed parent step runs it again from its start.
func TestSubgraphWithoutCheckpointerRunsAgain(t *testing.T) {
	var c counter
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	child := graph.New[chat]()
	child.AddNode("a", logNode(&c, "a", nil))
	child.AddNode("b", logNode(&c, "b", cancelFirstCall(cancel)))
	child.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
	cc, err := child.Compile()
	if err != nil {
		t.Fatal(err)
	}
	parent := graph.New[chat]()
	graph.AddSubgraph(parent, "sub", cc, func(s chat) chat { return chat{} },
		func(s chat) graph.Update[chat] { return chatMessages.Set(s.Messages) })
	parent.AddEdge(graph.START, "sub").AddEdge("sub", graph.END)
	pc, err := parent.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := graph.RunConfig{ThreadID: "p2"}
	if _, err := pc.Invoke(graph.WithConfig(runCtx, cfg), chat{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want context.Canceled", err)
	}
	if _, err := pc.Invoke(graph.WithConfig(context.Background(), cfg), chat{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"a": 2, "b": 2}, c.get()); diff != "" {
		t.Errorf("node calls over both runs (-want +got):\n%s", diff)
	}
}

// An Interrupt inside a subgraph with a checkpointer pauses the parent
// with the subgraph's payload; each resume value reaches the interrupt it
// answers, here two interrupts of parallel nodes answered one at a time,
// and the subgraph's nodes that finished do not run again.
func TestInterruptInsideDurableSubgraph(t *testing.T) {
	saver := checkpoint.NewMemory()
	var c counter
	ask := func(q string) graph.NodeFunc[chat] {
		return func(ctx context.Context, s chat) (graph.Update[chat], error) {
			c.add(q)
			v, err := graph.Interrupt[string](ctx, q)
			if err != nil {
				return graph.Update[chat]{}, err
			}
			return chatMessages.Set([]string{q + " " + v}), nil
		}
	}
	child := graph.New[chat]()
	child.AddNode("first", logNode(&c, "first", nil))
	child.AddNode("name", ask("name?"))
	child.AddNode("city", ask("city?"))
	child.AddEdge(graph.START, "first").AddEdge("first", "name").AddEdge("first", "city").
		AddEdge("name", graph.END).AddEdge("city", graph.END)
	cc, err := child.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	parent := graph.New[chat]()
	graph.AddSubgraph(parent, "form", cc, func(s chat) chat { return chat{Draft: "x"} },
		func(s chat) graph.Update[chat] { return chatMessages.Set(s.Messages) })
	parent.AddEdge(graph.START, "form").AddEdge("form", graph.END)
	pc, err := parent.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("p3")

	var asked []string
	pause := func(err error) {
		t.Helper()
		var ie *graph.InterruptError
		if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].Node != "form" {
			t.Fatalf("err = %v, want one interrupt of the form node", err)
		}
		var q string
		if err := ie.Interrupts[0].Decode(&q); err != nil {
			t.Fatal(err)
		}
		asked = append(asked, q)
	}
	_, err = pc.Invoke(ctx, chat{})
	pause(err)
	answers := map[string]string{"name?": "Ada", "city?": "London"}
	_, err = pc.Invoke(ctx, chat{}, graph.Resume(answers[asked[0]]))
	pause(err)
	s, err := pc.Invoke(ctx, chat{}, graph.Resume(answers[asked[1]]))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	if diff := cmp.Diff([]string{"city?", "name?"}, asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"first", "name? Ada", "city? London"}, s.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if n := c.get()["first"]; n != 1 {
		t.Errorf("the subgraph's first node ran %d times, want once", n)
	}
}
