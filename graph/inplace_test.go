package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
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
