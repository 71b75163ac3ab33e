package graph_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// wide is a state type with more fields than a field set holds inline:
// the 300 int fields of big, embedded, and Last.
type wide struct {
	big
	Last string
}

// wideSum has a Sum handle on every int field of wide, in field order.
var wideSum = func() []*graph.Field[wide, int] {
	hs := make([]*graph.Field[wide, int], len(bigAcc))
	for i, acc := range bigAcc {
		hs[i] = graph.Sum(func(s *wide) *int { return acc(&s.big) })
	}
	return hs
}()

// wideLast is declared after the 300 Sum handles, so its number is above
// the inline ones.
var wideLast = graph.Replace(func(s *wide) *string { return &s.Last })

// TestWideState runs a graph over a state of 301 fields written through
// 301 handles: a node writes every field, two parallel nodes each add to
// every field (merged through Sum, numbers above 128 included), and two
// parallel writes of a Replace handle numbered above 128 conflict.
func TestWideState(t *testing.T) {
	all := func(k int) graph.Update[wide] {
		var u graph.Update[wide]
		for i, f := range wideSum {
			u = graph.Updates(u, f.Set(k*i))
		}
		return u
	}
	g := graph.New[wide]().
		AddNode("init", func(ctx context.Context, s wide) (graph.Update[wide], error) {
			return graph.Updates(all(1), wideLast.Set("init")), nil
		}).
		AddNode("a", func(ctx context.Context, s wide) (graph.Update[wide], error) { return all(10), nil }).
		AddNode("b", func(ctx context.Context, s wide) (graph.Update[wide], error) { return all(100), nil }).
		AddEdge(graph.START, "init").AddEdge("init", "a").AddEdge("init", "b").
		AddEdge("a", graph.END).AddEdge("b", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Invoke(context.Background(), wide{})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range wideSum {
		if v := f.Value(got); v != 111*i {
			t.Fatalf("%s = %d, want %d", f.Name(), v, 111*i)
		}
	}
	if got.Last != "init" {
		t.Fatalf("Last = %q, want init", got.Last)
	}
	u := graph.Updates(wideSum[150].Set(1), wideLast.Set("x"))
	if fs := u.Fields(); len(fs) != 2 || fs[0] != "big.F150" || fs[1] != "Last" {
		t.Fatalf("Fields() = %v, want [big.F150 Last]", fs)
	}

	last := func(v string) graph.NodeFunc[wide] {
		return func(ctx context.Context, s wide) (graph.Update[wide], error) { return wideLast.Set(v), nil }
	}
	conflict, err := graph.New[wide]().AddNode("x", last("x")).AddNode("y", last("y")).
		AddEdge(graph.START, "x").AddEdge(graph.START, "y").AddEdge("x", graph.END).AddEdge("y", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	_, err = conflict.Invoke(context.Background(), wide{})
	var ce *graph.ConflictError
	if !errors.As(err, &ce) || ce.Field != "Last" || ce.Nodes != [2]string{"x", "y"} {
		t.Fatalf("err = %v, want a conflict of x and y on Last", err)
	}
}

func maxInt(old, new int) int { return max(old, new) }
func minInt(old, new int) int { return min(old, new) }

// TestReduceSharedByFunction declares Reduce handles as a graph factory
// would, many times over: the same function value gives the same handle,
// so the state's handles do not pile up, and two graphs over one state
// type with different reducers on one field run at the same time without
// changing each other's merging.
func TestReduceSharedByFunction(t *testing.T) {
	type st struct{ N int }
	acc := func(s *st) *int { return &s.N }
	build := func(fn func(old, new int) int) *graph.Compiled[st] {
		h := graph.Reduce(acc, fn)
		write := func(v int) graph.NodeFunc[st] {
			return func(ctx context.Context, s st) (graph.Update[st], error) { return h.Set(v), nil }
		}
		c, err := graph.New[st]().AddNode("a", write(3)).AddNode("b", write(7)).AddNode("c", write(5)).
			AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge(graph.START, "c").
			AddEdge("a", graph.END).AddEdge("b", graph.END).AddEdge("c", graph.END).Compile()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := graph.Reduce(acc, maxInt)
	for range 500 {
		if h := graph.Reduce(acc, maxInt); h.Reducer() != "reduce" || h.Set(1).Fields()[0] != "N" {
			t.Fatal("bad handle")
		}
		if graph.Updates(first.Set(2), graph.Reduce(acc, maxInt).Set(1)).String() != "{N:2}" {
			t.Fatal("two declarations of one Reduce handle are not the same handle")
		}
	}
	hi, lo := build(maxInt), build(minInt)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 100 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if s, err := hi.Invoke(context.Background(), st{N: 4}); err != nil || s.N != 7 {
				errs <- errors.New("max graph: wrong result")
			}
		}()
		go func() {
			defer wg.Done()
			if s, err := lo.Invoke(context.Background(), st{N: 4}); err != nil || s.N != 3 {
				errs <- errors.New("min graph: wrong result")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
