package graph_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// shared is a state type two unrelated graphs use.
type shared struct {
	Log   []string
	Count int
	Tag   string
}

var sharedLog = graph.Append(func(s *shared) *[]string { return &s.Log })

// TestGraphsOverOneStateType: a graph over a state type keeps working,
// checkpoints included, while another graph over the same type declares
// hundreds of new handles (Reduce closures made anew, each a handle of its
// own): handles added later do not change how the first graph merges,
// encodes or resumes, and no cap is hit.
func TestGraphsOverOneStateType(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	buildA := func() *graph.Compiled[shared] {
		c, err := graph.New[shared]().
			AddNode("log", func(_ context.Context, s shared) (graph.Update[shared], error) {
				return sharedLog.Set([]string{"a" + string(rune('0'+len(s.Log)))}), nil
			}).
			AddEdge(graph.START, "log").AddEdge("log", graph.END).
			Compile(graph.WithCheckpointer(saver))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := buildA()
	if _, err := a.Thread("t").Invoke(ctx, shared{}); err != nil {
		t.Fatal(err)
	}

	// Another graph over the same type, declaring 300 handles: a Reduce
	// closure made anew each time is a handle of its own.
	var count []*graph.Field[shared, int]
	for i := range 300 {
		count = append(count, graph.Reduce(func(s *shared) *int { return &s.Count }, func(old, new int) int { return old + new + i - i }))
	}
	tag := graph.Replace(func(s *shared) *string { return &s.Tag })
	b, err := graph.New[shared]().
		AddNode("many", func(_ context.Context, s shared) (graph.Update[shared], error) {
			// The last handle declared.
			return graph.Updates(count[len(count)-1].Set(1), tag.Set("b")), nil
		}).
		AddEdge(graph.START, "many").AddEdge("many", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Invoke(ctx, shared{Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 6 || got.Tag != "b" {
		t.Fatalf("graph b through its 301st handle: Count %d, Tag %q; want 6 (5 reduced with 1), b", got.Count, got.Tag)
	}

	// The first graph, and the same graph compiled again now that the type
	// has more handles, go on with the thread the first one saved.
	for i, c := range []*graph.Compiled[shared]{a, buildA()} {
		out, err := c.Thread("t").Invoke(ctx, shared{})
		if err != nil {
			t.Fatalf("run %d of graph a after b's handles: %v", i+2, err)
		}
		want := []string{"a0", "a1", "a2"}[:i+2]
		if !slices.Equal(out.Log, want) || out.Count != 0 || out.Tag != "" {
			t.Fatalf("run %d of graph a: %+v, want Log %v and nothing else", i+2, out, want)
		}
	}
	st, err := buildA().Thread("t").State(ctx)
	if err != nil || len(st.Values.Log) != 3 {
		t.Fatalf("State of a's thread: %+v, %v", st.Values, err)
	}
}
