package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
)

// TokenUsage merges by its own method, as the agent package's does.
type TokenUsage struct{ Input, Output int }

func (u TokenUsage) Merge(v TokenUsage) TokenUsage {
	return TokenUsage{Input: u.Input + v.Input, Output: u.Output + v.Output}
}

type Inner struct {
	Score float64
}

type rich struct {
	Name   string
	Count  int
	Total  float64
	Tags   []string
	Seen   map[string]int
	Usage  TokenUsage
	Best   int
	Flag   bool
	Nested Inner
}

var (
	richName      = graph.Replace(func(s *rich) *string { return &s.Name })
	richCount     = graph.Declare(func(s *rich) *int { return &s.Count }) // not a Merger: replaces
	richTotal     = graph.Sum(func(s *rich) *float64 { return &s.Total })
	richTags      = graph.Append(func(s *rich) *[]string { return &s.Tags })
	richSeen      = graph.MergeMap(func(s *rich) *map[string]int { return &s.Seen })
	richUsage     = graph.Declare(func(s *rich) *TokenUsage { return &s.Usage }) // a Merger: merges
	richBest      = graph.Reduce(func(s *rich) *int { return &s.Best }, func(old, new int) int { return max(old, new) })
	richFlag      = graph.Replace(func(s *rich) *bool { return &s.Flag })
	richScore     = graph.Sum(func(s *rich) *float64 { return &s.Nested.Score })
	richTagsReset = graph.Replace(func(s *rich) *[]string { return &s.Tags })
)

func TestFieldHandles(t *testing.T) {
	tests := []struct {
		field interface {
			Name() string
			Reducer() string
		}
		name    string
		reducer string
	}{
		{richName, "Name", "replace"},
		{richCount, "Count", "replace"},
		{richTotal, "Total", "sum"},
		{richTags, "Tags", "append"},
		{richSeen, "Seen", "merge map"},
		{richUsage, "Usage", "merge method"},
		{richBest, "Best", "reduce"},
		{richScore, "Nested.Score", "sum"},
		{richTagsReset, "Tags", "replace"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.reducer, func(t *testing.T) {
			if got := tt.field.Name(); got != tt.name {
				t.Errorf("Name() = %q, want %q", got, tt.name)
			}
			if got := tt.field.Reducer(); got != tt.reducer {
				t.Errorf("Reducer() = %q, want %q", got, tt.reducer)
			}
		})
	}
}

func TestFieldHandleMisuse(t *testing.T) {
	var outside int
	tests := []struct {
		name string
		make func()
		want string
	}{
		{"nil accessor", func() { graph.Replace[rich, int](nil) }, "nil accessor"},
		{"nil result", func() { graph.Replace(func(*rich) *int { return nil }) }, "returned nil"},
		{"outside the state", func() { graph.Replace(func(*rich) *int { return &outside }) }, "does not point into the state"},
		{"not a struct", func() { graph.Replace(func(s *int) *int { return s }) }, "is not a struct"},
		{"nil reducer", func() { graph.Reduce(func(s *rich) *int { return &s.Best }, nil) }, "nil function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tt.want) {
					t.Errorf("panic %q, want it to mention %q", msg, tt.want)
				}
			}()
			tt.make()
		})
	}
}

// runOne runs a one-node graph whose node returns upd, from input.
func runOne(t *testing.T, input rich, upd graph.Update[rich]) rich {
	t.Helper()
	g := graph.New[rich]()
	g.AddNode("n", func(context.Context, rich) (graph.Update[rich], error) { return upd, nil })
	g.AddEdge(graph.START, "n").AddEdge("n", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Invoke(context.Background(), input)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReducers(t *testing.T) {
	base := rich{
		Name: "old", Count: 7, Total: 1.5, Tags: []string{"x"}, Seen: map[string]int{"a": 1, "b": 2},
		Usage: TokenUsage{Input: 10, Output: 1}, Best: 5, Flag: true, Nested: Inner{Score: 1},
	}
	tests := []struct {
		name string
		upd  graph.Update[rich]
		want func(s *rich)
	}{
		{"empty update touches nothing", graph.Update[rich]{}, func(*rich) {}},
		{"replace", richName.Set("new"), func(s *rich) { s.Name = "new" }},
		{"replace with zero value", richName.Set(""), func(s *rich) { s.Name = "" }},
		{"replace bool with false", richFlag.Set(false), func(s *rich) { s.Flag = false }},
		{"declared non-merger replaces", richCount.Set(0), func(s *rich) { s.Count = 0 }},
		{"sum", richTotal.Set(2), func(s *rich) { s.Total = 3.5 }},
		{"sum nested field", richScore.Set(0.5), func(s *rich) { s.Nested.Score = 1.5 }},
		{"append", richTags.Set([]string{"y", "z"}), func(s *rich) { s.Tags = []string{"x", "y", "z"} }},
		{"append nothing", richTags.Set(nil), func(*rich) {}},
		{"replace a slice through a second handle", richTagsReset.Set(nil), func(s *rich) { s.Tags = nil }},
		{"merge map", richSeen.Set(map[string]int{"b": 20, "c": 3}), func(s *rich) { s.Seen = map[string]int{"a": 1, "b": 20, "c": 3} }},
		{"merge method", richUsage.Set(TokenUsage{Input: 5, Output: 2}), func(s *rich) { s.Usage = TokenUsage{Input: 15, Output: 3} }},
		{"reduce", richBest.Set(3), func(*rich) {}},
		{"reduce raises", richBest.Set(9), func(s *rich) { s.Best = 9 }},
		{"several fields", graph.Updates(richName.Set("n"), richTotal.Set(1), richTags.Set([]string{"t"})), func(s *rich) {
			s.Name, s.Total, s.Tags = "n", 2.5, []string{"x", "t"}
		}},
		{"same field twice in one update reduces in order", graph.Updates(richTags.Set([]string{"1"}), richTags.Set([]string{"2"})), func(s *rich) {
			s.Tags = []string{"x", "1", "2"}
		}},
		{"replace twice in one update keeps the last", graph.Updates(richName.Set("a"), richName.Set("b")), func(s *rich) { s.Name = "b" }},
		{"reset then append in one update", graph.Updates(richTagsReset.Set([]string{"r"}), richTags.Set([]string{"a"})), func(s *rich) {
			s.Tags = []string{"x", "a"} // the later write, through the append handle, replaces the reset
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			in.Tags = append([]string(nil), base.Tags...)
			want := in
			want.Seen = base.Seen
			tt.want(&want)
			got := runOne(t, in, tt.upd)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]int{"a": 1, "b": 2}, base.Seen); diff != "" {
				t.Errorf("the input map was modified (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateAccessors(t *testing.T) {
	u := graph.Updates(richName.Set(""), richTags.Set([]string{"a"})).Goto("next")
	if v, ok := richName.Get(u); !ok || v != "" {
		t.Errorf("Name.Get = %q, %v; want the written zero value", v, ok)
	}
	if _, ok := richTotal.Get(u); ok {
		t.Error("Total.Get reports a write that did not happen")
	}
	if diff := cmp.Diff([]string{"Name", "Tags"}, u.Fields()); diff != "" {
		t.Errorf("Fields (-want +got):\n%s", diff)
	}
	if got, want := u.String(), "{Name: Tags:[a]} -> next"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"next"}, u.Route().Targets()); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	var s rich
	u.ApplyTo(&s)
	if diff := cmp.Diff(rich{Tags: []string{"a"}}, s); diff != "" {
		t.Errorf("ApplyTo (-want +got):\n%s", diff)
	}
	if !(graph.Update[rich]{}).IsZero() || u.IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestCompileReportsEveryProblem(t *testing.T) {
	noop := func(context.Context, rich) (graph.Update[rich], error) { return graph.Update[rich]{}, nil }
	route := func(context.Context, rich) (graph.Route, error) { return graph.To(graph.END), nil }
	tests := []struct {
		name  string
		build func(g *graph.Graph[rich])
		want  []string
	}{
		{"no entry", func(g *graph.Graph[rich]) {
			g.AddNode("a", noop).AddEdge("a", graph.END)
		}, []string{"no entry", `node "a" is unreachable from START`}},
		{"duplicate and reserved names", func(g *graph.Graph[rich]) {
			g.AddNode("a", noop).AddNode("a", noop).AddNode(graph.END, noop).AddNode("", noop)
			g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
		}, []string{`node "a" is added twice`, `node name "__end__" is reserved`, "empty name"}},
		{"unknown targets and sources", func(g *graph.Graph[rich]) {
			g.AddNode("a", noop, graph.Targets("ghost"))
			g.AddEdge(graph.START, "a").AddEdge("a", "nowhere").AddEdge("phantom", "a").AddEdge("a", graph.END)
			g.AddConditionalEdges("a", route, "missing", graph.END)
		}, []string{`edge "a" -> "nowhere": unknown target "nowhere"`, `edge "phantom" -> "a": unknown source "phantom"`,
			`conditional edge from "a": unknown target "missing"`, `node "a": unknown target "ghost"`}},
		{"conditional edge without targets", func(g *graph.Graph[rich]) {
			g.AddNode("a", noop).AddEdge(graph.START, "a").AddEdge("a", graph.END)
			g.AddConditionalEdges("a", route)
		}, []string{`conditional edge from "a": no targets declared`}},
		{"unreachable and dead-end nodes", func(g *graph.Graph[rich]) {
			g.AddNode("a", noop).AddNode("island", noop).AddNode("trap", noop).AddNode("loop", noop)
			g.AddEdge(graph.START, "a").AddEdge("a", graph.END).AddEdge("island", graph.END)
			g.AddEdge("a", "trap").AddEdge("trap", "loop").AddEdge("loop", "trap")
		}, []string{`node "island" is unreachable from START`, `node "trap" has no way to END`, `node "loop" has no way to END`}},
		{"static edge into a task node", func(g *graph.Graph[rich]) {
			graph.AddTask(g, "work", func(context.Context, int) (graph.Update[rich], error) { return graph.Update[rich]{}, nil })
			g.AddEdge(graph.START, "work").AddEdge("work", graph.END)
		}, []string{`"work" is a task node and takes its input from Send`}},
		{"nil functions", func(g *graph.Graph[rich]) {
			g.AddNode("a", nil).AddConditionalEdges(graph.START, nil, "a")
		}, []string{`node "a" has a nil function`, `conditional edge from "__start__" has a nil router`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := graph.New[rich]()
			tt.build(g)
			c, err := g.Compile()
			if err == nil || c != nil {
				t.Fatalf("Compile() = %v, %v; want an error", c, err)
			}
			if !errors.Is(err, graph.ErrInvalidGraph) {
				t.Errorf("error does not match ErrInvalidGraph: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
			if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n < len(tt.want) {
				t.Errorf("got %d joined problems, want at least %d", n, len(tt.want))
			}
		})
	}
}

func TestCompileRejectsNonStructState(t *testing.T) {
	g := graph.New[int]()
	g.AddNode("a", func(context.Context, int) (graph.Update[int], error) { return graph.Update[int]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	if _, err := g.Compile(); err == nil || !strings.Contains(err.Error(), "state type int is not a struct") {
		t.Errorf("Compile() error = %v, want one saying the state is not a struct", err)
	}
}
