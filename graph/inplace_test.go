package graph_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
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

// A parallel task that writes part of its update in place and then exits
// its goroutine (runtime.Goexit, as t.FailNow does) did not return: its
// writes are discarded, as a failed call's are. Its step ends with the
// update of its sibling alone, in the state and in every checkpoint. A
// streamed run's parallel tasks run on helpers, not on the goroutine of
// the loop.
func TestNodeInPlaceGoexitDiscardsWrites(t *testing.T) {
	never := func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		t.Error("the node's own function ran")
		return graph.Update[inplaceState]{}, nil
	}
	g := graph.New[inplaceState](graph.WithCheckpointer(checkpoint.NewMemory()))
	g.AddNode("a", func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		return inplaceLog.Set([]string{"a"}), nil
	})
	g.AddNode("b", never, inplaceOpt(func(_ context.Context, _ *inplaceState, u *graph.Update[inplaceState]) error {
		inplaceLog.Put(u, []string{"b"})
		inplaceN.Put(u, 7)
		runtime.Goexit()
		return nil
	}))
	for _, name := range []string{"a", "b"} {
		g.AddEdge(graph.START, name)
		g.AddEdge(name, graph.END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("goexit")
	var last inplaceState
	for ev, err := range th.Stream(t.Context(), inplaceState{}, graph.WithModes(graph.StreamValues, graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mode == graph.StreamUpdates && ev.Node == "b" {
			t.Errorf("an update of b was streamed: %+v", ev)
		}
		if ev.Mode == graph.StreamValues {
			last = ev.State
		}
	}
	if last.N != 0 || strings.Join(last.Log, ",") != "a" {
		t.Errorf("state %+v, want the update of a alone", last)
	}
	n := 0
	for snap, err := range th.History(t.Context(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if s := snap.Values; s.N != 0 || slices.Contains(s.Log, "b") {
			t.Errorf("checkpoint of step %d holds the writes of b: %+v", snap.Step, s)
		}
	}
	if n == 0 {
		t.Fatal("the run saved no checkpoint")
	}
}

// AddSubgraph takes no function to run in place: given one, Compile fails,
// naming the node and the fix.
func TestAddSubgraphInPlace(t *testing.T) {
	child := graph.New[inplaceState]()
	child.AddNode("c", func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		return graph.Update[inplaceState]{}, nil
	})
	child.AddEdge(graph.START, "c")
	child.AddEdge("c", graph.END)
	cc, err := child.Compile()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[inplaceState]()
	id := func(s inplaceState) inplaceState { return s }
	graph.AddSubgraph(g, "sub", cc, id, func(inplaceState) graph.Update[inplaceState] { return graph.Update[inplaceState]{} },
		inplaceOpt(func(context.Context, *inplaceState, *graph.Update[inplaceState]) error { return nil }))
	g.AddEdge(graph.START, "sub")
	g.AddEdge("sub", graph.END)
	_, err = g.Compile()
	const want = `subgraph node "sub" is given a function to run in place`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "drop that option") || !errors.Is(err, graph.ErrInvalidGraph) {
		t.Fatalf("%v, want an invalid graph error with %q and the fix", err, want)
	}
}

// inplaceRun builds a durable graph of nodes writing their updates in
// place (inPlace) or returning them, each node given opts: a pull node and
// a sibling in a parallel step, the pull node's two tasks in the next, and
// a last pull node alone in the third. It runs the graph on a thread,
// streamed or invoked with ropts, and returns the final state, the states
// of the streamed values events and the thread's history, oldest first.
func inplaceRun(t *testing.T, inPlace, streamed bool, opts []graph.NodeOption, ropts []graph.RunOption) (inplaceState, []inplaceState, []graph.StateSnapshot[inplaceState]) {
	t.Helper()
	type pullFunc = func(context.Context, *inplaceState, *graph.Update[inplaceState]) error
	g := graph.New[inplaceState](graph.WithCheckpointer(checkpoint.NewMemory()))
	var tasks *graph.TaskNode[inplaceState, int]
	pull := func(_ context.Context, s *inplaceState, u *graph.Update[inplaceState]) error {
		inplaceN.Put(u, s.N+1)
		inplaceLog.Put(u, []string{"pull"})
		*u = u.Send(tasks.Send(s.N), tasks.Send(s.N+10))
		return nil
	}
	task := func(_ context.Context, x int, u *graph.Update[inplaceState]) error {
		inplaceSent.Put(u, []int{x})
		return nil
	}
	last := func(_ context.Context, s *inplaceState, u *graph.Update[inplaceState]) error {
		inplaceN.Put(u, s.N*10)
		inplaceLog.Put(u, []string{"last"})
		return nil
	}
	node := func(name string, fn pullFunc, extra ...graph.NodeOption) {
		o := append(append([]graph.NodeOption(nil), opts...), extra...)
		if inPlace {
			g.AddNode(name, func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
				t.Errorf("node %s ran its own function", name)
				return graph.Update[inplaceState]{}, nil
			}, append(o, inplaceOpt(fn))...)
			return
		}
		g.AddNode(name, func(ctx context.Context, s inplaceState) (u graph.Update[inplaceState], err error) {
			err = fn(ctx, &s, &u)
			return u, err
		}, o...)
	}
	node("pull", pull, graph.Targets("task"))
	node("last", last)
	g.AddNode("side", func(context.Context, inplaceState) (graph.Update[inplaceState], error) {
		return inplaceLog.Set([]string{"side"}), nil
	}, opts...)
	taskOpts := opts
	if inPlace {
		taskOpts = append(append([]graph.NodeOption(nil), opts...), inplaceOpt(task))
	}
	tasks = graph.AddTask(g, "task", func(ctx context.Context, x int) (u graph.Update[inplaceState], err error) {
		if inPlace {
			t.Error("the task's own function ran")
		}
		err = task(ctx, x, &u)
		return u, err
	}, taskOpts...)
	g.AddEdge(graph.START, "pull")
	g.AddEdge(graph.START, "side")
	g.AddEdge("side", graph.END)
	g.AddEdge("task", "last")
	g.AddEdge("last", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("thread")
	var final inplaceState
	var values []inplaceState
	if streamed {
		for ev, err := range th.Stream(t.Context(), inplaceState{N: 2}, ropts...) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Mode == graph.StreamValues {
				values = append(values, ev.State)
				final = ev.State
			}
		}
	} else if final, err = th.Invoke(t.Context(), inplaceState{N: 2}, ropts...); err != nil {
		t.Fatal(err)
	}
	var hist []graph.StateSnapshot[inplaceState]
	for snap, err := range th.History(t.Context(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		hist = append(hist, snap)
	}
	slices.Reverse(hist)
	return final, values, hist
}

// A graph whose nodes write their updates in place ends with the state,
// the streamed values and the checkpoints of the same graph whose nodes
// return them, on every way a task is called: plainly, under a node
// Timeout, with node hooks (timed attempts), and streamed (where the
// parallel steps' tasks run on helpers) with and without both.
func TestNodeInPlaceSameAsReturned(t *testing.T) {
	var started atomic.Int64
	hooks := graph.WithHooks(graph.Hooks{
		NodeStart: func(ctx context.Context, _ graph.TaskInfo) context.Context { started.Add(1); return ctx },
		NodeEnd:   func(context.Context, graph.TaskInfo, time.Duration) {},
	})
	timeout := []graph.NodeOption{graph.Timeout(time.Hour)}
	stream := graph.WithModes(graph.StreamValues, graph.StreamUpdates)
	for _, tc := range []struct {
		name     string
		streamed bool
		opts     []graph.NodeOption
		ropts    []graph.RunOption
	}{
		{name: "invoke"},
		{name: "invoke timeout", opts: timeout},
		{name: "invoke hooks", ropts: []graph.RunOption{hooks}},
		{name: "stream", streamed: true, ropts: []graph.RunOption{stream}},
		{name: "stream timeout", streamed: true, opts: timeout, ropts: []graph.RunOption{stream}},
		{name: "stream hooks debug", streamed: true, ropts: []graph.RunOption{hooks, graph.WithModes(graph.StreamValues, graph.StreamDebug)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started.Store(0)
			wantFinal, wantValues, wantHist := inplaceRun(t, false, tc.streamed, tc.opts, tc.ropts)
			hooked := started.Swap(0)
			final, values, hist := inplaceRun(t, true, tc.streamed, tc.opts, tc.ropts)
			if n := started.Load(); n != hooked {
				t.Errorf("NodeStart called %d times in place, %d returned", n, hooked)
			}
			if wantFinal.N != 30 || strings.Join(wantFinal.Log, ",") != "pull,side,last" || !slices.Equal(wantFinal.Sent, []int{2, 12}) {
				t.Fatalf("returned: final state %+v", wantFinal)
			}
			if diff := cmp.Diff(wantFinal, final); diff != "" {
				t.Errorf("final state (-returned +in place):\n%s", diff)
			}
			if diff := cmp.Diff(wantValues, values); diff != "" {
				t.Errorf("streamed values (-returned +in place):\n%s", diff)
			}
			if len(wantHist) < 4 {
				t.Fatalf("returned: %d checkpoints, want the input's and one per step", len(wantHist))
			}
			if len(wantHist) != len(hist) {
				t.Fatalf("%d checkpoints in place, %d returned", len(hist), len(wantHist))
			}
			for i := range hist {
				w, g := wantHist[i], hist[i]
				if diff := cmp.Diff([]any{w.Step, w.Values, w.Next, w.Ran, w.Metadata[graph.MetaSource]},
					[]any{g.Step, g.Values, g.Next, g.Ran, g.Metadata[graph.MetaSource]}); diff != "" {
					t.Errorf("checkpoint %d (-returned +in place):\n%s", i, diff)
				}
			}
		})
	}
}

// inplace.Route gives the routing of the update itself: Sends and targets
// added through it are the update's, and those it had stay.
func TestRouteInPlace(t *testing.T) {
	g := graph.New[inplaceState]()
	tasks := graph.AddTask(g, "task", func(_ context.Context, x int) (graph.Update[inplaceState], error) {
		var u graph.Update[inplaceState]
		inplaceSent.Put(&u, []int{x})
		return u, nil
	})
	var u graph.Update[inplaceState]
	inplaceN.Put(&u, 7)
	u = u.Send(tasks.Send(1))
	r := inplace.Route(&u).(*graph.Route)
	*r = r.Send(tasks.Send(2), tasks.Send(3))
	*r = r.To("task")
	if n, ok := inplaceN.Get(u); !ok || n != 7 {
		t.Fatalf("the write is lost: %d, %v", n, ok)
	}
	if got := u.Route().String(); got != "-> task; send task×3" {
		t.Fatalf("route %q, want %q", got, "-> task; send task×3")
	}
	var args []any
	for _, s := range u.Route().Sends() {
		args = append(args, s.Arg())
	}
	if !slices.Equal(args, []any{1, 2, 3}) {
		t.Fatalf("sends %v, want [1 2 3]", args)
	}
}
