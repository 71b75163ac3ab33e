package graph_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type editable struct {
	Log   []string
	Count int
	Note  string
	Plain string
}

var (
	editLog   = graph.Append(func(s *editable) *[]string { return &s.Log })
	editCount = graph.Sum(func(s *editable) *int { return &s.Count })
	editNote  = graph.Replace(func(s *editable) *string { return &s.Note })
)

// editGraph compiles a one-node graph over editable, for its UpdateOf.
func editGraph(t *testing.T) *graph.Compiled[editable] {
	t.Helper()
	c, err := graph.New[editable]().AddNode("a", func(context.Context, editable) (graph.Update[editable], error) { return graph.Update[editable]{}, nil }).
		AddEdge(graph.START, "a").AddEdge("a", graph.END).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestUpdateOfWritesNamedFieldsThroughTheirReducers(t *testing.T) {
	u, err := editGraph(t).UpdateOf(editable{Log: []string{"b"}, Count: 2, Note: "n", Plain: "ignored"}, "Log", "Count")
	if err != nil {
		t.Fatal(err)
	}
	s := editable{Log: []string{"a"}, Count: 1, Note: "old"}
	u.ApplyTo(&s)
	if strings.Join(s.Log, ",") != "a,b" || s.Count != 3 || s.Note != "old" {
		t.Fatalf("after UpdateOf(Log, Count): %+v; want Log a,b, Count 3, Note untouched", s)
	}
	if got := strings.Join(u.Fields(), ","); got != "Log,Count" {
		t.Fatalf("Fields() = %q", got)
	}
	_ = editNote
}

func TestUpdateOfNamesAFieldWithoutAHandle(t *testing.T) {
	_, err := editGraph(t).UpdateOf(editable{}, "Plain")
	if err == nil || !strings.Contains(err.Error(), `"Plain"`) || !strings.Contains(err.Error(), "Log") {
		t.Fatalf("err = %v; want one naming Plain and the fields that have handles", err)
	}
}

// A thread paused on an interrupt refuses new input; AsNode(END) finishes
// its run so the next run takes the input and starts from START.
func TestUpdateAsEndFinishesAPausedThread(t *testing.T) {
	ctx := context.Background()
	g := graph.New[editable]()
	g.AddNode("ask", func(ctx context.Context, s editable) (graph.Update[editable], error) {
		v, err := graph.Interrupt[string](ctx, "ok?")
		if err != nil {
			return graph.Update[editable]{}, err
		}
		return editLog.Set([]string{"answer " + v}), nil
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("t")
	if _, err := th.Invoke(ctx, editable{Log: []string{"first"}}); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("first run: %v; want an interrupt", err)
	}
	if _, err := th.Invoke(ctx, editable{Log: []string{"second"}}); !errors.Is(err, graph.ErrThreadPaused) {
		t.Fatalf("new input on the paused thread: %v; want ErrThreadPaused", err)
	}
	if _, err := th.Update(ctx, graph.Update[editable]{}, graph.AsNode(graph.END)); err != nil {
		t.Fatal(err)
	}
	st, err := th.State(ctx)
	if err != nil || len(st.Next) != 0 || len(st.Interrupts) != 0 {
		t.Fatalf("after AsNode(END): next %v, interrupts %v, err %v; want none", st.Next, st.Interrupts, err)
	}
	if _, err := th.Invoke(ctx, editable{Log: []string{"second"}}); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("run after AsNode(END): %v; want it to start from START and pause again", err)
	}
	st, _ = th.State(ctx)
	if strings.Join(st.Values.Log, ",") != "first,second" {
		t.Fatalf("Log = %v; want the first input kept and the new one merged", st.Values.Log)
	}
}
