package graph_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run go test -run %s -update:\n%s", path, t.Name(), diff)
	}
}

func TestLabelOnMissingEdge(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", logs("a")).AddEdge(graph.START, "a").AddEdge("a", graph.END).Label("a", "b", "nope")
	if _, err := g.Compile(); err == nil || !strings.Contains(err.Error(), `label "nope" on edge "a" -> "b": there is no such edge`) {
		t.Errorf("Compile() error = %v, want a missing-edge label error", err)
	}
}

func TestMermaid(t *testing.T) {
	noop := func(context.Context, logState) (graph.Update[logState], error) { return graph.Update[logState]{}, nil }
	route := func(context.Context, logState) (graph.Route, error) { return graph.To(graph.END), nil }

	tests := []struct {
		name  string
		build func() *graph.Compiled[logState]
	}{
		{"chain.mmd", func() *graph.Compiled[logState] {
			g := graph.New[logState]()
			g.AddNode("a", noop).AddNode("b", noop)
			g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
			return mustCompile(t, g)
		}},
		{"everything.mmd", func() *graph.Compiled[logState] {
			g := graph.New[logState]()
			work := graph.AddTask(g, "work item", func(context.Context, int) (graph.Update[logState], error) {
				return graph.Update[logState]{}, nil
			})
			_ = work
			g.AddNode("plan", noop)
			g.AddNode("review", noop, graph.Targets("plan", graph.END))
			graph.AddSubgraph(g, "child", buildChild(t),
				func(logState) childState { return childState{} },
				func(childState) graph.Update[logState] { return graph.Update[logState]{} })
			g.AddEdge(graph.START, "plan")
			g.AddConditionalEdges("plan", route, "work item", "child", graph.END)
			g.AddEdge("work item", "review").AddEdge("child", "review")
			g.Label("plan", "child", "needs spelling").Label("review", "plan", "rework").Label("child", "review", "fixed")
			return mustCompile(t, g)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, tt.build().Mermaid())
		})
	}
}
