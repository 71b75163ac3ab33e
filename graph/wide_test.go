package graph_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// wide is a state type with more fields than a field set holds inline.
type wide struct {
	F000 int
	F001 int
	F002 int
	F003 int
	F004 int
	F005 int
	F006 int
	F007 int
	F008 int
	F009 int
	F010 int
	F011 int
	F012 int
	F013 int
	F014 int
	F015 int
	F016 int
	F017 int
	F018 int
	F019 int
	F020 int
	F021 int
	F022 int
	F023 int
	F024 int
	F025 int
	F026 int
	F027 int
	F028 int
	F029 int
	F030 int
	F031 int
	F032 int
	F033 int
	F034 int
	F035 int
	F036 int
	F037 int
	F038 int
	F039 int
	F040 int
	F041 int
	F042 int
	F043 int
	F044 int
	F045 int
	F046 int
	F047 int
	F048 int
	F049 int
	F050 int
	F051 int
	F052 int
	F053 int
	F054 int
	F055 int
	F056 int
	F057 int
	F058 int
	F059 int
	F060 int
	F061 int
	F062 int
	F063 int
	F064 int
	F065 int
	F066 int
	F067 int
	F068 int
	F069 int
	F070 int
	F071 int
	F072 int
	F073 int
	F074 int
	F075 int
	F076 int
	F077 int
	F078 int
	F079 int
	F080 int
	F081 int
	F082 int
	F083 int
	F084 int
	F085 int
	F086 int
	F087 int
	F088 int
	F089 int
	F090 int
	F091 int
	F092 int
	F093 int
	F094 int
	F095 int
	F096 int
	F097 int
	F098 int
	F099 int
	F100 int
	F101 int
	F102 int
	F103 int
	F104 int
	F105 int
	F106 int
	F107 int
	F108 int
	F109 int
	F110 int
	F111 int
	F112 int
	F113 int
	F114 int
	F115 int
	F116 int
	F117 int
	F118 int
	F119 int
	F120 int
	F121 int
	F122 int
	F123 int
	F124 int
	F125 int
	F126 int
	F127 int
	F128 int
	F129 int
	F130 int
	F131 int
	F132 int
	F133 int
	F134 int
	F135 int
	F136 int
	F137 int
	F138 int
	F139 int
	F140 int
	F141 int
	F142 int
	F143 int
	F144 int
	F145 int
	F146 int
	F147 int
	F148 int
	F149 int
	F150 int
	F151 int
	F152 int
	F153 int
	F154 int
	F155 int
	F156 int
	F157 int
	F158 int
	F159 int
	Last string
}

// wideSum has a Sum handle on every int field of wide.
var wideSum = []*graph.Field[wide, int]{
	graph.Sum(func(s *wide) *int { return &s.F000 }),
	graph.Sum(func(s *wide) *int { return &s.F001 }),
	graph.Sum(func(s *wide) *int { return &s.F002 }),
	graph.Sum(func(s *wide) *int { return &s.F003 }),
	graph.Sum(func(s *wide) *int { return &s.F004 }),
	graph.Sum(func(s *wide) *int { return &s.F005 }),
	graph.Sum(func(s *wide) *int { return &s.F006 }),
	graph.Sum(func(s *wide) *int { return &s.F007 }),
	graph.Sum(func(s *wide) *int { return &s.F008 }),
	graph.Sum(func(s *wide) *int { return &s.F009 }),
	graph.Sum(func(s *wide) *int { return &s.F010 }),
	graph.Sum(func(s *wide) *int { return &s.F011 }),
	graph.Sum(func(s *wide) *int { return &s.F012 }),
	graph.Sum(func(s *wide) *int { return &s.F013 }),
	graph.Sum(func(s *wide) *int { return &s.F014 }),
	graph.Sum(func(s *wide) *int { return &s.F015 }),
	graph.Sum(func(s *wide) *int { return &s.F016 }),
	graph.Sum(func(s *wide) *int { return &s.F017 }),
	graph.Sum(func(s *wide) *int { return &s.F018 }),
	graph.Sum(func(s *wide) *int { return &s.F019 }),
	graph.Sum(func(s *wide) *int { return &s.F020 }),
	graph.Sum(func(s *wide) *int { return &s.F021 }),
	graph.Sum(func(s *wide) *int { return &s.F022 }),
	graph.Sum(func(s *wide) *int { return &s.F023 }),
	graph.Sum(func(s *wide) *int { return &s.F024 }),
	graph.Sum(func(s *wide) *int { return &s.F025 }),
	graph.Sum(func(s *wide) *int { return &s.F026 }),
	graph.Sum(func(s *wide) *int { return &s.F027 }),
	graph.Sum(func(s *wide) *int { return &s.F028 }),
	graph.Sum(func(s *wide) *int { return &s.F029 }),
	graph.Sum(func(s *wide) *int { return &s.F030 }),
	graph.Sum(func(s *wide) *int { return &s.F031 }),
	graph.Sum(func(s *wide) *int { return &s.F032 }),
	graph.Sum(func(s *wide) *int { return &s.F033 }),
	graph.Sum(func(s *wide) *int { return &s.F034 }),
	graph.Sum(func(s *wide) *int { return &s.F035 }),
	graph.Sum(func(s *wide) *int { return &s.F036 }),
	graph.Sum(func(s *wide) *int { return &s.F037 }),
	graph.Sum(func(s *wide) *int { return &s.F038 }),
	graph.Sum(func(s *wide) *int { return &s.F039 }),
	graph.Sum(func(s *wide) *int { return &s.F040 }),
	graph.Sum(func(s *wide) *int { return &s.F041 }),
	graph.Sum(func(s *wide) *int { return &s.F042 }),
	graph.Sum(func(s *wide) *int { return &s.F043 }),
	graph.Sum(func(s *wide) *int { return &s.F044 }),
	graph.Sum(func(s *wide) *int { return &s.F045 }),
	graph.Sum(func(s *wide) *int { return &s.F046 }),
	graph.Sum(func(s *wide) *int { return &s.F047 }),
	graph.Sum(func(s *wide) *int { return &s.F048 }),
	graph.Sum(func(s *wide) *int { return &s.F049 }),
	graph.Sum(func(s *wide) *int { return &s.F050 }),
	graph.Sum(func(s *wide) *int { return &s.F051 }),
	graph.Sum(func(s *wide) *int { return &s.F052 }),
	graph.Sum(func(s *wide) *int { return &s.F053 }),
	graph.Sum(func(s *wide) *int { return &s.F054 }),
	graph.Sum(func(s *wide) *int { return &s.F055 }),
	graph.Sum(func(s *wide) *int { return &s.F056 }),
	graph.Sum(func(s *wide) *int { return &s.F057 }),
	graph.Sum(func(s *wide) *int { return &s.F058 }),
	graph.Sum(func(s *wide) *int { return &s.F059 }),
	graph.Sum(func(s *wide) *int { return &s.F060 }),
	graph.Sum(func(s *wide) *int { return &s.F061 }),
	graph.Sum(func(s *wide) *int { return &s.F062 }),
	graph.Sum(func(s *wide) *int { return &s.F063 }),
	graph.Sum(func(s *wide) *int { return &s.F064 }),
	graph.Sum(func(s *wide) *int { return &s.F065 }),
	graph.Sum(func(s *wide) *int { return &s.F066 }),
	graph.Sum(func(s *wide) *int { return &s.F067 }),
	graph.Sum(func(s *wide) *int { return &s.F068 }),
	graph.Sum(func(s *wide) *int { return &s.F069 }),
	graph.Sum(func(s *wide) *int { return &s.F070 }),
	graph.Sum(func(s *wide) *int { return &s.F071 }),
	graph.Sum(func(s *wide) *int { return &s.F072 }),
	graph.Sum(func(s *wide) *int { return &s.F073 }),
	graph.Sum(func(s *wide) *int { return &s.F074 }),
	graph.Sum(func(s *wide) *int { return &s.F075 }),
	graph.Sum(func(s *wide) *int { return &s.F076 }),
	graph.Sum(func(s *wide) *int { return &s.F077 }),
	graph.Sum(func(s *wide) *int { return &s.F078 }),
	graph.Sum(func(s *wide) *int { return &s.F079 }),
	graph.Sum(func(s *wide) *int { return &s.F080 }),
	graph.Sum(func(s *wide) *int { return &s.F081 }),
	graph.Sum(func(s *wide) *int { return &s.F082 }),
	graph.Sum(func(s *wide) *int { return &s.F083 }),
	graph.Sum(func(s *wide) *int { return &s.F084 }),
	graph.Sum(func(s *wide) *int { return &s.F085 }),
	graph.Sum(func(s *wide) *int { return &s.F086 }),
	graph.Sum(func(s *wide) *int { return &s.F087 }),
	graph.Sum(func(s *wide) *int { return &s.F088 }),
	graph.Sum(func(s *wide) *int { return &s.F089 }),
	graph.Sum(func(s *wide) *int { return &s.F090 }),
	graph.Sum(func(s *wide) *int { return &s.F091 }),
	graph.Sum(func(s *wide) *int { return &s.F092 }),
	graph.Sum(func(s *wide) *int { return &s.F093 }),
	graph.Sum(func(s *wide) *int { return &s.F094 }),
	graph.Sum(func(s *wide) *int { return &s.F095 }),
	graph.Sum(func(s *wide) *int { return &s.F096 }),
	graph.Sum(func(s *wide) *int { return &s.F097 }),
	graph.Sum(func(s *wide) *int { return &s.F098 }),
	graph.Sum(func(s *wide) *int { return &s.F099 }),
	graph.Sum(func(s *wide) *int { return &s.F100 }),
	graph.Sum(func(s *wide) *int { return &s.F101 }),
	graph.Sum(func(s *wide) *int { return &s.F102 }),
	graph.Sum(func(s *wide) *int { return &s.F103 }),
	graph.Sum(func(s *wide) *int { return &s.F104 }),
	graph.Sum(func(s *wide) *int { return &s.F105 }),
	graph.Sum(func(s *wide) *int { return &s.F106 }),
	graph.Sum(func(s *wide) *int { return &s.F107 }),
	graph.Sum(func(s *wide) *int { return &s.F108 }),
	graph.Sum(func(s *wide) *int { return &s.F109 }),
	graph.Sum(func(s *wide) *int { return &s.F110 }),
	graph.Sum(func(s *wide) *int { return &s.F111 }),
	graph.Sum(func(s *wide) *int { return &s.F112 }),
	graph.Sum(func(s *wide) *int { return &s.F113 }),
	graph.Sum(func(s *wide) *int { return &s.F114 }),
	graph.Sum(func(s *wide) *int { return &s.F115 }),
	graph.Sum(func(s *wide) *int { return &s.F116 }),
	graph.Sum(func(s *wide) *int { return &s.F117 }),
	graph.Sum(func(s *wide) *int { return &s.F118 }),
	graph.Sum(func(s *wide) *int { return &s.F119 }),
	graph.Sum(func(s *wide) *int { return &s.F120 }),
	graph.Sum(func(s *wide) *int { return &s.F121 }),
	graph.Sum(func(s *wide) *int { return &s.F122 }),
	graph.Sum(func(s *wide) *int { return &s.F123 }),
	graph.Sum(func(s *wide) *int { return &s.F124 }),
	graph.Sum(func(s *wide) *int { return &s.F125 }),
	graph.Sum(func(s *wide) *int { return &s.F126 }),
	graph.Sum(func(s *wide) *int { return &s.F127 }),
	graph.Sum(func(s *wide) *int { return &s.F128 }),
	graph.Sum(func(s *wide) *int { return &s.F129 }),
	graph.Sum(func(s *wide) *int { return &s.F130 }),
	graph.Sum(func(s *wide) *int { return &s.F131 }),
	graph.Sum(func(s *wide) *int { return &s.F132 }),
	graph.Sum(func(s *wide) *int { return &s.F133 }),
	graph.Sum(func(s *wide) *int { return &s.F134 }),
	graph.Sum(func(s *wide) *int { return &s.F135 }),
	graph.Sum(func(s *wide) *int { return &s.F136 }),
	graph.Sum(func(s *wide) *int { return &s.F137 }),
	graph.Sum(func(s *wide) *int { return &s.F138 }),
	graph.Sum(func(s *wide) *int { return &s.F139 }),
	graph.Sum(func(s *wide) *int { return &s.F140 }),
	graph.Sum(func(s *wide) *int { return &s.F141 }),
	graph.Sum(func(s *wide) *int { return &s.F142 }),
	graph.Sum(func(s *wide) *int { return &s.F143 }),
	graph.Sum(func(s *wide) *int { return &s.F144 }),
	graph.Sum(func(s *wide) *int { return &s.F145 }),
	graph.Sum(func(s *wide) *int { return &s.F146 }),
	graph.Sum(func(s *wide) *int { return &s.F147 }),
	graph.Sum(func(s *wide) *int { return &s.F148 }),
	graph.Sum(func(s *wide) *int { return &s.F149 }),
	graph.Sum(func(s *wide) *int { return &s.F150 }),
	graph.Sum(func(s *wide) *int { return &s.F151 }),
	graph.Sum(func(s *wide) *int { return &s.F152 }),
	graph.Sum(func(s *wide) *int { return &s.F153 }),
	graph.Sum(func(s *wide) *int { return &s.F154 }),
	graph.Sum(func(s *wide) *int { return &s.F155 }),
	graph.Sum(func(s *wide) *int { return &s.F156 }),
	graph.Sum(func(s *wide) *int { return &s.F157 }),
	graph.Sum(func(s *wide) *int { return &s.F158 }),
	graph.Sum(func(s *wide) *int { return &s.F159 }),
}

// wideLast is declared after the 160 Sum handles, so its number is above
// the inline ones.
var wideLast = graph.Replace(func(s *wide) *string { return &s.Last })

// TestWideState runs a graph over a state of 160 fields written through
// 161 handles: a node writes every field, two parallel nodes each add to
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
	if fs := u.Fields(); len(fs) != 2 || fs[0] != "F150" || fs[1] != "Last" {
		t.Fatalf("Fields() = %v, want [F150 Last]", fs)
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
