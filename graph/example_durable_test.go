package graph_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type Order struct {
	Item     string
	Approved bool
	Events   []string
}

var (
	orderApproved = graph.Replace(func(s *Order) *bool { return &s.Approved })
	orderEvents   = graph.Append(func(s *Order) *[]string { return &s.Events })
)

// A human approves a purchase before it is placed. The run pauses inside
// the "approve" node, the caller gets the question, and a later run of the
// same thread (here in the same process; after a restart it works the same
// with a durable Saver) resumes with the answer.
func ExampleInterrupt() {
	g := graph.New[Order]()
	g.AddNode("approve", func(ctx context.Context, o Order) (graph.Update[Order], error) {
		// Code before Interrupt runs again on resume: keep it free of
		// side effects.
		ok, err := graph.Interrupt[bool](ctx, "buy "+o.Item+"?")
		if err != nil {
			return graph.Update[Order]{}, err // the pause: return it as is
		}
		return orderApproved.Set(ok), nil
	})
	g.AddNode("place", func(_ context.Context, o Order) (graph.Update[Order], error) {
		if !o.Approved {
			return orderEvents.Set([]string{"cancelled"}), nil
		}
		return orderEvents.Set([]string{"placed " + o.Item}), nil
	})
	g.AddEdge(graph.START, "approve").AddEdge("approve", "place").AddEdge("place", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	order := c.Thread("order-42")

	_, err = order.Invoke(ctx, Order{Item: "laptop"})
	var pause *graph.InterruptError
	if errors.As(err, &pause) {
		var question string
		pause.Interrupts[0].Decode(&question)
		fmt.Println("asked:", question, "id:", pause.Interrupts[0].ID)
	}
	st, _ := order.State(ctx)
	fmt.Println("waiting at:", st.Next)

	final, err := order.Invoke(ctx, Order{}, graph.Resume(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(final.Events)
	// Output:
	// asked: buy laptop? id: 1:approve:0#0
	// waiting at: [approve]
	// [placed laptop]
}

// orderLog compiles, with an in-memory checkpointer, the graph of the
// examples below: one node that logs each order.
func orderLog() (*graph.Compiled[Order], error) {
	g := graph.New[Order]()
	g.AddNode("log", func(_ context.Context, o Order) (graph.Update[Order], error) {
		return orderEvents.Set([]string{"ordered " + o.Item}), nil
	})
	g.AddEdge(graph.START, "log").AddEdge("log", graph.END)
	return g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
}

// Time travel: list a thread's history, then run again from an earlier
// checkpoint with different input. The new run forks the thread; the old
// branch stays in the history.
func ExampleFromCheckpoint() {
	c, err := orderLog()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	th := c.Thread("t")
	for _, item := range []string{"tea", "cake"} {
		if _, err := th.Invoke(ctx, Order{Item: item}); err != nil {
			fmt.Println(err)
			return
		}
	}
	var afterTea string
	for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d %-5s %v\n", s.Step, s.Metadata[graph.MetaSource], s.Values.Events)
		if s.Step == 1 && s.Metadata[graph.MetaSource] == "loop" {
			afterTea = s.CheckpointID
		}
	}
	forked, err := th.Invoke(ctx, Order{Item: "coffee"}, graph.FromCheckpoint(afterTea))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("fork:", forked.Events)
	// Output:
	// step 2 loop  [ordered tea ordered cake]
	// step 1 input [ordered tea]
	// step 1 loop  [ordered tea]
	// step 0 input []
	// fork: [ordered tea ordered coffee]
}

// A caller that reads a thread's state before running it (to show it, or
// to check it is not paused) passes that state to the run, which then does
// not read it again. If another writer moved the thread on in between,
// the run saves nothing and fails with checkpoint.ErrConflict.
func ExampleContinueFrom() {
	c, err := orderLog()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	th := c.Thread("t")
	if _, err := th.Invoke(ctx, Order{Item: "tea"}); err != nil {
		fmt.Println(err)
		return
	}
	st, err := th.State(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("before:", st.Values.Events, "paused:", len(st.Next) > 0)
	o, err := th.Invoke(ctx, Order{Item: "cake"}, graph.ContinueFrom(st))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("after:", o.Events)
	// st is no longer the thread's latest state.
	_, err = th.Invoke(ctx, Order{Item: "coffee"}, graph.ContinueFrom(st))
	fmt.Println("stale:", errors.Is(err, checkpoint.ErrConflict))
	// Output:
	// before: [ordered tea] paused: false
	// after: [ordered tea ordered cake]
	// stale: true
}

// A run saved at its exit writes one checkpoint where a run saved step by
// step writes one per step (and one for its input).
func ExampleWithDurability() {
	build := func(opts ...graph.CompileOption) *graph.Compiled[Order] {
		g := graph.New[Order]()
		for _, name := range []string{"check", "reserve", "place"} {
			g.AddNode(name, func(context.Context, Order) (graph.Update[Order], error) {
				return orderEvents.Set([]string{name}), nil
			})
		}
		g.AddEdge(graph.START, "check").AddEdge("check", "reserve").AddEdge("reserve", "place").AddEdge("place", graph.END)
		c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(checkpoint.NewMemory())}, opts...)...)
		if err != nil {
			panic(err)
		}
		return c
	}
	for _, d := range []graph.Durability{graph.DurabilityStep, graph.DurabilityExit} {
		c := build(graph.WithDurability(d))
		ctx := context.Background()
		th := c.Thread("order-7")
		if _, err := th.Invoke(ctx, Order{Item: "chair"}); err != nil {
			panic(err)
		}
		saved := 0
		for _, err := range th.History(ctx, checkpoint.ListOptions{}) {
			if err != nil {
				panic(err)
			}
			saved++
		}
		st, _ := th.State(ctx)
		fmt.Printf("%s: %d checkpoint(s), state %v\n", d, saved, st.Values.Events)
	}
	// Output:
	// step: 4 checkpoint(s), state [check reserve place]
	// exit: 1 checkpoint(s), state [check reserve place]
}
