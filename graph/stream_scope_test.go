package graph_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
)

// countingContext counts the lookups of values its children ask it for.
type countingContext struct {
	context.Context
	lookups atomic.Int64
}

func (c *countingContext) Value(key any) any {
	c.lookups.Add(1)
	return c.Context.Value(key)
}

// A node's events sent with its own context reach the consumer without
// asking the run's context chain per event: a run whose node emits 200
// chunks and 200 custom events looks up as many values in the context
// given to Stream as one whose node emits 10 of each. That claim is the
// single-task pass's: a parallel step's task contexts never asked the
// context given to Stream per event, so its pass checks only that every
// event is delivered, in order.
func TestStreamEventsDoNotWalkTheContextPerEvent(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		n := 0
		g := graph.New[convo]()
		emit := func(ctx context.Context, _ convo) (graph.Update[convo], error) {
			for i := range n {
				if err := graph.EmitMessage(ctx, model.Chunk{Kind: model.ChunkText, Text: string(rune('a' + i%26))}); err != nil {
					return graph.Update[convo]{}, err
				}
				if err := graph.Emit(ctx, i); err != nil {
					return graph.Update[convo]{}, err
				}
			}
			return graph.Update[convo]{}, nil
		}
		g.AddNode("a", emit)
		g.AddEdge(graph.START, "a")
		g.AddEdge("a", graph.END)
		if parallel {
			g.AddNode("b", emit)
			g.AddEdge(graph.START, "b")
			g.AddEdge("b", graph.END)
		}
		c, err := g.Compile()
		if err != nil {
			t.Fatal(err)
		}
		tasks := 1
		if parallel {
			tasks = 2
		}
		run := func(events int) int64 {
			n = events
			ctx := &countingContext{Context: context.Background()}
			chunks, customs := map[string]int{}, map[string]int{}
			for ev, err := range c.Stream(ctx, convo{}, graph.WithModes(graph.StreamMessages, graph.StreamCustom)) {
				if err != nil {
					t.Fatal(err)
				}
				switch ev.Mode {
				case graph.StreamMessages:
					ch, _ := ev.Chunk()
					if want := string(rune('a' + chunks[ev.Node]%26)); ch.Text != want {
						t.Fatalf("parallel %v: chunk %d of %s is %q, want %q", parallel, chunks[ev.Node], ev.Node, ch.Text, want)
					}
					chunks[ev.Node]++
				case graph.StreamCustom:
					if ev.Payload != customs[ev.Node] {
						t.Fatalf("parallel %v: custom event %d of %s is %v", parallel, customs[ev.Node], ev.Node, ev.Payload)
					}
					customs[ev.Node]++
				}
			}
			for node, k := range chunks {
				if k != events || customs[node] != events {
					t.Fatalf("parallel %v: %s sent %d chunks and %d custom events, want %d", parallel, node, k, customs[node], events)
				}
			}
			if len(chunks) != tasks {
				t.Fatalf("parallel %v: events of %d nodes, want %d", parallel, len(chunks), tasks)
			}
			return ctx.lookups.Load()
		}
		few, many := run(10), run(200)
		if many > few {
			t.Fatalf("parallel %v: the run's context was asked %d times for 200 events per task, %d times for 10", parallel, many, few)
		}
	}
}

// WithModes allocates nothing: a stream's options cost no allocation per
// run.
func TestWithModesAllocatesNothing(t *testing.T) {
	var opt graph.Option
	if n := testing.AllocsPerRun(100, func() {
		opt = graph.WithModes(graph.StreamMessages, graph.StreamValues)
	}); n != 0 {
		t.Fatalf("WithModes allocates %v times, want none", n)
	}
	_ = opt
}

// The run's own events (values and updates after each step) are yielded
// without asking the context given to Stream: a run of 100 steps looks up
// as many values in it as a run of 5, and every step's events arrive.
func TestStreamStepEventsDoNotWalkTheContext(t *testing.T) {
	type counter struct{ N int }
	n := graph.Replace(func(s *counter) *int { return &s.N })
	limit := 0
	g := graph.New[counter]()
	g.AddNode("inc", func(_ context.Context, s counter) (graph.Update[counter], error) {
		return graph.Updates(n.Set(s.N + 1)), nil
	})
	g.AddEdge(graph.START, "inc")
	g.AddConditionalEdges("inc", func(_ context.Context, s counter) (graph.Route, error) {
		if s.N < limit {
			return graph.To("inc"), nil
		}
		return graph.To(graph.END), nil
	}, "inc", graph.END)
	c, err := g.Compile(graph.WithStepLimit(1000))
	if err != nil {
		t.Fatal(err)
	}
	run := func(steps int) int64 {
		limit = steps
		ctx := &countingContext{Context: context.Background()}
		values, updates := 0, 0
		for ev, err := range c.Stream(ctx, counter{}, graph.WithModes(graph.StreamValues, graph.StreamUpdates)) {
			if err != nil {
				t.Fatal(err)
			}
			switch ev.Mode {
			case graph.StreamValues:
				values++
				if ev.State.N != values {
					t.Fatalf("values event %d holds N=%d", values, ev.State.N)
				}
			case graph.StreamUpdates:
				updates++
			}
		}
		if values != steps || updates != steps {
			t.Fatalf("%d values and %d updates events for %d steps", values, updates, steps)
		}
		return ctx.lookups.Load()
	}
	few, many := run(5), run(100)
	if many > few {
		t.Fatalf("the run's context was asked %d times in a run of 100 steps, %d times in one of 5", many, few)
	}
}

// A streamed run's parallel step, served on the loop's goroutine, costs
// one allocation for its context (a context.WithCancel child took two):
// ten such steps more, each with a step of one task after it, cost 22
// allocations more, where a context.WithCancel child per step made 32.
func TestStreamParallelStepAllocs(t *testing.T) {
	type st struct{ N int }
	n := graph.Reduce(func(s *st) *int { return &s.N }, func(a, b int) int { return a + b })
	steps := 0
	g := graph.New[st]()
	one := func(_ context.Context, s st) (graph.Update[st], error) { return graph.Updates(n.Set(1)), nil }
	g.AddNode("a", one)
	g.AddNode("b", one)
	g.AddNode("join", func(context.Context, st) (graph.Update[st], error) { return graph.Update[st]{}, nil })
	g.AddEdge(graph.START, "a")
	g.AddEdge(graph.START, "b")
	g.AddEdge("a", "join")
	g.AddEdge("b", "join")
	g.AddConditionalEdges("join", func(_ context.Context, s st) (graph.Route, error) {
		if s.N < 2*steps {
			return graph.To("a", "b"), nil
		}
		return graph.To(graph.END), nil
	}, "a", "b", graph.END)
	c, err := g.Compile(graph.WithStepLimit(1000))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := func(k int) float64 {
		steps = k
		return graph.MinAllocs(20, func() {
			for _, err := range c.Stream(ctx, st{}, graph.WithModes(graph.StreamValues)) {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	few, many := run(1), run(11)
	if many-few > 24 {
		t.Fatalf("ten parallel steps more cost %v allocations more (%v for 1, %v for 11), want at most 24", many-few, few, many)
	}
}
