package graph_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type nestOuter struct{ Log []string }

type nestInner struct{ N int }

var (
	nestOuterLog = graph.Append(func(s *nestOuter) *[]string { return &s.Log })
	nestInnerN   = graph.Replace(func(s *nestInner) *int { return &s.N })
)

// nestInnerGraph is a graph of two steps, the second a subgraph node, whose
// nodes emit a custom event each; opts compile it and its subgraph.
func nestInnerGraph(t *testing.T, opts ...graph.CompileOption) *graph.Compiled[nestInner] {
	t.Helper()
	leaf := graph.New[nestInner]()
	leaf.AddNode("leaf", func(ctx context.Context, s nestInner) (graph.Update[nestInner], error) {
		if err := graph.Emit(ctx, "leaf"); err != nil {
			return graph.Update[nestInner]{}, err
		}
		return nestInnerN.Set(s.N + 10), nil
	})
	leaf.AddEdge(graph.START, "leaf").AddEdge("leaf", graph.END)
	lc, err := leaf.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[nestInner]()
	g.AddNode("one", func(ctx context.Context, s nestInner) (graph.Update[nestInner], error) {
		if err := graph.Emit(ctx, "one"); err != nil {
			return graph.Update[nestInner]{}, err
		}
		return nestInnerN.Set(s.N + 1), nil
	})
	graph.AddSubgraph(g, "sub", lc, func(s nestInner) nestInner { return s },
		func(s nestInner) graph.Update[nestInner] { return nestInnerN.Set(s.N) })
	g.AddEdge(graph.START, "one").AddEdge("one", "sub").AddEdge("sub", graph.END)
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nestOuterGraph is a graph of one step, the node call, which logs the
// entry call returns; opts compile it.
func nestOuterGraph(t *testing.T, call func(ctx context.Context) (string, error), opts ...graph.CompileOption) *graph.Compiled[nestOuter] {
	t.Helper()
	g := graph.New[nestOuter]()
	g.AddNode("call", func(ctx context.Context, s nestOuter) (graph.Update[nestOuter], error) {
		entry, err := call(ctx)
		if err != nil {
			return graph.Update[nestOuter]{}, err
		}
		return nestOuterLog.Set([]string{entry}), nil
	})
	g.AddEdge(graph.START, "call").AddEdge("call", graph.END)
	c, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A graph run with Invoke inside a node of a streamed graph is a run of its
// own, not a subgraph node: none of its events (its nodes' custom events,
// its subgraph's values and updates) reach the outer stream, and no event of
// the outer stream is a values event the outer run did not make.
func TestInvokeInsideANodeDoesNotStreamIntoTheParent(t *testing.T) {
	inner := nestInnerGraph(t)
	outer := nestOuterGraph(t, func(ctx context.Context) (string, error) {
		out, err := inner.Invoke(ctx, nestInner{})
		if err == nil && out.N != 11 {
			t.Errorf("inner N = %d, want 11", out.N)
		}
		return "called", err
	})
	modes := []graph.StreamMode{graph.StreamValues, graph.StreamUpdates, graph.StreamCustom, graph.StreamDebug}
	var got []string
	for ev, err := range outer.Stream(context.Background(), nestOuter{}, graph.WithModes(modes...)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamValues:
			if len(ev.Namespace) == 0 && !slices.Equal(ev.State.Log, []string{"called"}) {
				t.Errorf("values event of the outer run with state %+v (payload %#v), want the state after its step", ev.State, ev.Payload)
			}
		case graph.StreamCustom:
			t.Errorf("custom event %v from %q %v reached the outer stream", ev.Payload, ev.Node, ev.Namespace)
		}
		got = append(got, ev.Mode.String()+" "+ev.Node)
	}
	want := []string{"debug call", "debug call", "updates call", "values "}
	if !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}

// The values events of a subgraph node carry the subgraph's namespace, with
// the subgraph's own state in Payload; the root's values events alone have
// none.
func TestSubgraphValuesEventsCarryTheirNamespace(t *testing.T) {
	inner := nestInnerGraph(t)
	var values []string
	for ev, err := range inner.Stream(context.Background(), nestInner{}, graph.WithModes(graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Namespace) == 0 {
			values = append(values, "root "+itoa(ev.State.N))
			continue
		}
		sub, ok := ev.Payload.(graph.Event[nestInner])
		if !ok {
			t.Fatalf("subgraph values event %v has payload %#v, want a graph.Event[nestInner]", ev.Namespace, ev.Payload)
		}
		values = append(values, ev.Namespace[0]+" "+itoa(sub.State.N))
	}
	want := []string{"root 1", "sub 11", "root 11"}
	if !slices.Equal(values, want) {
		t.Errorf("values events = %q, want %q", values, want)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

type nestNum struct{ V int }

type nestText struct{ V string }

// A graph without a checkpointer invoked inside a node of a durable run,
// whose two subgraph nodes are compiled with a checkpointer (with state
// types of their own), runs them inside that node as a graph without a
// checkpointer does: neither runs as a durable child of the enclosing
// node, on the one thread that node names, where the second would load
// the first's checkpoint of another state type.
func TestInvokeInsideADurableNodeRunsCheckpointedSubgraphsInside(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	num := graph.New[nestNum]()
	num.AddNode("inc", func(ctx context.Context, s nestNum) (graph.Update[nestNum], error) {
		return graph.Replace(func(s *nestNum) *int { return &s.V }).Set(s.V + 1), nil
	})
	num.AddEdge(graph.START, "inc").AddEdge("inc", graph.END)
	numc, err := num.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	text := graph.New[nestText]()
	text.AddNode("say", func(ctx context.Context, s nestText) (graph.Update[nestText], error) {
		return graph.Replace(func(s *nestText) *string { return &s.V }).Set(s.V + "!"), nil
	})
	text.AddEdge(graph.START, "say").AddEdge("say", graph.END)
	textc, err := text.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	ig := graph.New[nestInner]()
	graph.AddSubgraph(ig, "num", numc, func(s nestInner) nestNum { return nestNum{V: s.N} },
		func(s nestNum) graph.Update[nestInner] { return nestInnerN.Set(s.V) })
	graph.AddSubgraph(ig, "text", textc, func(s nestInner) nestText { return nestText{V: itoa(s.N)} },
		func(s nestText) graph.Update[nestInner] { return nestInnerN.Set(len(s.V)) })
	ig.AddEdge(graph.START, "num").AddEdge("num", "text").AddEdge("text", graph.END)
	inner, err := ig.Compile()
	if err != nil {
		t.Fatal(err)
	}
	outer := nestOuterGraph(t, func(ctx context.Context) (string, error) {
		out, err := inner.Invoke(ctx, nestInner{N: 9})
		return "inner " + itoa(out.N), err
	}, graph.WithCheckpointer(saver))
	for _, observed := range []bool{false, true} {
		thread := "plain"
		var opts []graph.RunOption
		if observed {
			thread = "observed"
			opts = append(opts, graph.WithHooks(graph.Hooks{NodeStart: func(ctx context.Context, _ graph.TaskInfo) context.Context { return ctx }}))
		}
		out, err := outer.Thread(thread).Invoke(ctx, nestOuter{}, opts...)
		if err != nil {
			t.Fatalf("%s: %v", thread, err)
		}
		// num: 9+1 = 10; text: "10!" has 3 bytes.
		if want := []string{"inner 3"}; !slices.Equal(out.Log, want) {
			t.Errorf("%s: log = %q, want %q", thread, out.Log, want)
		}
		child := graph.SubgraphThread(thread, graph.TaskInfo{Step: 1, Node: "call"})
		if _, err := saver.Get(ctx, child, ""); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("%s: thread %q of the enclosing node: %v, want checkpoint.ErrNotFound", thread, child, err)
		}
	}
}

// Interrupt in a graph invoked inside a node of a durable run pauses the
// enclosing run; resuming it runs the node, and so the graph, again, where
// Interrupt returns the resume value.
func TestInterruptInAnInvokeInsideADurableNodePausesTheEnclosingRun(t *testing.T) {
	ctx := context.Background()
	ig := graph.New[nestInner]()
	ig.AddNode("ask", func(ctx context.Context, s nestInner) (graph.Update[nestInner], error) {
		n, err := graph.Interrupt[int](ctx, "how many?")
		if err != nil {
			return graph.Update[nestInner]{}, err
		}
		return nestInnerN.Set(n), nil
	})
	ig.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	inner, err := ig.Compile()
	if err != nil {
		t.Fatal(err)
	}
	outer := nestOuterGraph(t, func(ctx context.Context) (string, error) {
		out, err := inner.Invoke(ctx, nestInner{})
		return "answer " + itoa(out.N), err
	}, graph.WithCheckpointer(checkpoint.NewMemory()))
	th := outer.Thread("t")
	_, err = th.Invoke(ctx, nestOuter{})
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].Node != "call" {
		t.Fatalf("first run: %v, want an *InterruptError of the node call", err)
	}
	out, err := th.Invoke(ctx, nestOuter{}, graph.Resume(7))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"answer 7"}; !slices.Equal(out.Log, want) {
		t.Errorf("log = %q, want %q", out.Log, want)
	}
}

// A graph run on a thread of its own with Thread.Invoke inside a node of a
// streamed graph streams nothing into the enclosing run either.
func TestThreadInvokeInsideANodeDoesNotStreamIntoTheParent(t *testing.T) {
	saver := checkpoint.NewMemory()
	inner := nestInnerGraph(t, graph.WithCheckpointer(saver))
	outer := nestOuterGraph(t, func(ctx context.Context) (string, error) {
		out, err := inner.Thread("inner").Invoke(ctx, nestInner{})
		if err == nil && out.N != 11 {
			t.Errorf("inner N = %d, want 11", out.N)
		}
		return "called", err
	}, graph.WithCheckpointer(saver))
	modes := []graph.StreamMode{graph.StreamValues, graph.StreamUpdates, graph.StreamCustom, graph.StreamDebug}
	var got []string
	for ev, err := range outer.Thread("outer").Stream(context.Background(), nestOuter{}, graph.WithModes(modes...)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamValues:
			if len(ev.Namespace) == 0 && len(ev.State.Log) > 0 && !slices.Equal(ev.State.Log, []string{"called"}) {
				t.Errorf("values event of the outer run with state %+v, want the outer run's state", ev.State)
			}
			if len(ev.Namespace) > 0 {
				t.Errorf("values event of the subgraph %v reached the outer stream", ev.Namespace)
			}
		case graph.StreamCustom:
			t.Errorf("custom event %v from %q %v reached the outer stream", ev.Payload, ev.Node, ev.Namespace)
		}
		got = append(got, ev.Mode.String()+" "+ev.Node)
	}
	want := []string{"debug call", "debug call", "updates call", "values "}
	if !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}
