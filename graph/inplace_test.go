package graph_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/internal/inplace"
)

type inplaceState struct {
	N    int
	Log  []string
	Sent []int
}

var (
	inplaceN    = graph.Replace(func(s *inplaceState) *int { return &s.N })
	inplaceLog  = graph.Append(func(s *inplaceState) *[]string { return &s.Log })
	inplaceSent = graph.Append(func(s *inplaceState) *[]int { return &s.Sent })
)

func inplaceOpt(fn any) graph.NodeOption { return inplace.Node(fn).(graph.NodeOption) }

// A node given a function to run in place runs that one, not the function
// it was added with: a pull node reads the run's state through its pointer
// and writes a zero update in place, a task node takes its Send's argument.
// A failed attempt's writes are discarded, and the retry starts from a zero
// update.
func TestNodeInPlace(t *testing.T) {
	never := func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		t.Error("the node's own function ran")
		return graph.Update[inplaceState]{}, nil
	}
	g := graph.New[inplaceState]()
	var tasks *graph.TaskNode[inplaceState, int]
	attempts := 0
	g.AddNode("pull", never, graph.Targets("task"), graph.Retry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond}),
		inplaceOpt(func(_ context.Context, s *inplaceState, u *graph.Update[inplaceState]) error {
			if !u.IsZero() {
				t.Errorf("attempt %d starts from a written update: %v", attempts+1, u.Fields())
			}
			attempts++
			inplaceLog.Put(u, []string{"pull read " + strings.Repeat("x", s.N)})
			if attempts == 1 {
				return errors.New("first attempt fails")
			}
			inplaceN.Put(u, s.N+1)
			*u = u.Send(tasks.Send(s.N), tasks.Send(s.N+10))
			return nil
		}))
	tasks = graph.AddTask(g, "task", func(context.Context, int) (graph.Update[inplaceState], error) {
		t.Error("the task's own function ran")
		return graph.Update[inplaceState]{}, nil
	}, inplaceOpt(func(_ context.Context, x int, u *graph.Update[inplaceState]) error {
		if !u.IsZero() {
			t.Error("a task starts from a written update")
		}
		inplaceSent.Put(u, []int{x})
		return nil
	}))
	g.AddEdge(graph.START, "pull")
	g.AddEdge("task", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Invoke(context.Background(), inplaceState{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 3 || strings.Join(s.Log, ",") != "pull read xx" || len(s.Sent) != 2 || s.Sent[0] != 2 || s.Sent[1] != 12 || attempts != 2 {
		t.Fatalf("state %+v after %d attempts", s, attempts)
	}
}

// A function of the wrong type to run in place fails Compile, naming the
// node and the type it takes.
func TestNodeInPlaceWrongType(t *testing.T) {
	fn := func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		return graph.Update[inplaceState]{}, nil
	}
	for _, tc := range []struct {
		name string
		add  func(g *graph.Graph[inplaceState])
		want string
	}{
		{"pull", func(g *graph.Graph[inplaceState]) {
			g.AddNode("pull", fn, inplaceOpt(func(context.Context, inplaceState, *graph.Update[inplaceState]) error { return nil }))
			g.AddEdge(graph.START, "pull")
		}, `node "pull" is given a function of type`},
		{"task", func(g *graph.Graph[inplaceState]) {
			g.AddNode("pull", fn)
			g.AddEdge(graph.START, "pull")
			graph.AddTask(g, "task", func(context.Context, int) (graph.Update[inplaceState], error) {
				return graph.Update[inplaceState]{}, nil
			},
				inplaceOpt(func(context.Context, string, *graph.Update[inplaceState]) error { return nil }))
		}, `task node "task" is given a function of type`},
	} {
		g := graph.New[inplaceState]()
		tc.add(g)
		_, err := g.Compile()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// A parallel task that writes part of its update in place and then exits
// its goroutine (runtime.Goexit, as t.FailNow does) did not return: its
// writes are discarded, as a failed call's are. Its step ends with the
// update of its sibling alone, in the state and in every checkpoint. A
// streamed run's parallel tasks run on helpers, not on the goroutine of
// the loop.
func TestNodeInPlaceGoexitDiscardsWrites(t *testing.T) {
	never := func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		t.Error("the node's own function ran")
		return graph.Update[inplaceState]{}, nil
	}
	g := graph.New[inplaceState](graph.WithCheckpointer(checkpoint.NewMemory()))
	g.AddNode("a", func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		return inplaceLog.Set([]string{"a"}), nil
	})
	g.AddNode("b", never, inplaceOpt(func(_ context.Context, _ *inplaceState, u *graph.Update[inplaceState]) error {
		inplaceLog.Put(u, []string{"b"})
		inplaceN.Put(u, 7)
		runtime.Goexit()
		return nil
	}))
	for _, name := range []string{"a", "b"} {
		g.AddEdge(graph.START, name)
		g.AddEdge(name, graph.END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("goexit")
	var last inplaceState
	for ev, err := range th.Stream(t.Context(), inplaceState{}, graph.WithModes(graph.StreamValues, graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mode == graph.StreamUpdates && ev.Node == "b" {
			t.Errorf("an update of b was streamed: %+v", ev)
		}
		if ev.Mode == graph.StreamValues {
			last = ev.State
		}
	}
	if last.N != 0 || strings.Join(last.Log, ",") != "a" {
		t.Errorf("state %+v, want the update of a alone", last)
	}
	n := 0
	for snap, err := range th.History(t.Context(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if s := snap.Values; s.N != 0 || slices.Contains(s.Log, "b") {
			t.Errorf("checkpoint of step %d holds the writes of b: %+v", snap.Step, s)
		}
	}
	if n == 0 {
		t.Fatal("the run saved no checkpoint")
	}
}

// AddSubgraph takes no function to run in place: given one, Compile fails,
// naming the node and the fix.
func TestAddSubgraphInPlace(t *testing.T) {
	child := graph.New[inplaceState]()
	child.AddNode("c", func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		return graph.Update[inplaceState]{}, nil
	})
	child.AddEdge(graph.START, "c")
	child.AddEdge("c", graph.END)
	cc, err := child.Compile()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[inplaceState]()
	id := func(s inplaceState) inplaceState { return s }
	graph.AddSubgraph(g, "sub", cc, id, func(inplaceState) graph.Update[inplaceState] { return graph.Update[inplaceState]{} },
		inplaceOpt(func(context.Context, *inplaceState, *graph.Update[inplaceState]) error { return nil }))
	g.AddEdge(graph.START, "sub")
	g.AddEdge("sub", graph.END)
	_, err = g.Compile()
	const want = `subgraph node "sub" is given a function to run in place`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "drop that option") || !errors.Is(err, graph.ErrInvalidGraph) {
		t.Fatalf("%v, want an invalid graph error with %q and the fix", err, want)
	}
}
