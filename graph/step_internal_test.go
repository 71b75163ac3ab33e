package graph

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

type stepState struct {
	Done []string `json:"done"`
}

var stepDone = Append(func(s *stepState) *[]string { return &s.Done })

// A parallel step ends when its last task has finished: a helper the
// scheduler has not run by then (here, one held back until the runs are
// over) is not waited for, and the next parallel steps start no helper
// while one is waiting to run. Once let go, the waiting helper finds no
// step to join and returns.
func TestParallelStepDoesNotWaitForIdleHelpers(t *testing.T) {
	g := New[stepState]()
	for _, name := range []string{"a", "b"} {
		g.AddNode(name, func(context.Context, stepState) (Update[stepState], error) {
			return stepDone.Set([]string{name}), nil
		})
		g.AddEdge(START, name)
		g.AddEdge(name, END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var started atomic.Int32
	var returned sync.WaitGroup
	var runs []*run[stepState]
	c.pool.New = func() any {
		r := c.newRun()
		runs = append(runs, r)
		help := r.help
		r.help = func() {
			started.Add(1)
			returned.Add(1)
			defer returned.Done()
			<-release // the scheduler has not run this helper yet
			help()
		}
		return r
	}
	for range 10 {
		s, err := c.Invoke(context.Background(), stepState{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Done) != 2 || s.Done[0] != "a" || s.Done[1] != "b" {
			t.Fatalf("done %q, want [a b]", s.Done)
		}
	}
	close(release)
	for _, r := range runs {
		for r.waiting.Load() > 0 {
			runtime.Gosched()
		}
	}
	returned.Wait()
	// One helper per run of the pool: sync.Pool may hand out a run made
	// afresh, with no helper waiting.
	if n := int(started.Load()); n < 1 || n > len(runs) {
		t.Fatalf("%d helpers started for 10 steps of two tasks on %d runs, want 1 per run", n, len(runs))
	}
}

// A parallel task that exits its goroutine (runtime.Goexit, as t.FailNow
// does) counts as finished: its step ends, with the update of its sibling.
// A streamed run's parallel tasks run on helpers, not on the goroutine of
// the loop.
func TestParallelTaskGoexitEndsStep(t *testing.T) {
	g := New[stepState]()
	g.AddNode("a", func(context.Context, stepState) (Update[stepState], error) {
		return stepDone.Set([]string{"a"}), nil
	})
	g.AddNode("b", func(context.Context, stepState) (Update[stepState], error) {
		runtime.Goexit()
		return Update[stepState]{}, nil
	})
	for _, name := range []string{"a", "b"} {
		g.AddEdge(START, name)
		g.AddEdge(name, END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var last stepState
	for ev, err := range c.Stream(context.Background(), stepState{}, WithModes(StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev.State
	}
	if len(last.Done) != 1 || last.Done[0] != "a" {
		t.Fatalf("done %q, want [a]", last.Done)
	}
}

// A streamed step bounded by max concurrency has as many helpers as the
// bound and its loop's goroutine runs no task: when the helpers' tasks
// exit their goroutines, others must take their place for the tasks left,
// or the step never ends.
func TestBoundedServedStepGoexitRunsTheRest(t *testing.T) {
	g := New[stepState]()
	for _, name := range []string{"x", "y", "z", "w"} {
		g.AddNode(name, func(context.Context, stepState) (Update[stepState], error) {
			if name == "x" || name == "y" {
				runtime.Goexit()
			}
			return stepDone.Set([]string{name}), nil
		})
		g.AddEdge(START, name)
		g.AddEdge(name, END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		var last stepState
		for ev, err := range c.Stream(t.Context(), stepState{}, WithModes(StreamValues), WithMaxConcurrency(2)) {
			if err != nil {
				t.Fatal(err)
			}
			last = ev.State
		}
		if len(last.Done) != 2 || last.Done[0] != "z" || last.Done[1] != "w" {
			t.Fatalf("done %q, want [z w] (the tasks that did not exit, in order)", last.Done)
		}
	}
}

// Each task of consecutive parallel steps of different sizes runs once:
// a helper of a step that ended must not claim a task of the next one.
// (The window is a few instructions wide; this runs many steps to give
// the scheduler chances to land in it, and cannot show its absence.)
func TestParallelStepsRunEachTaskOnce(t *testing.T) {
	var ran [4]atomic.Int64
	g := New[stepState]()
	work := AddTask(g, "work", func(_ context.Context, i int) (Update[stepState], error) {
		ran[i].Add(1)
		return Update[stepState]{}, nil
	})
	const rounds = 50
	var step atomic.Int64
	next := func(context.Context, stepState) (Route, error) {
		k := step.Add(1)
		if k > rounds {
			return To(END), nil
		}
		if k%2 == 0 {
			return Route{}.Send(work.Send(0), work.Send(1)), nil
		}
		return Route{}.Send(work.Send(0), work.Send(1), work.Send(2), work.Send(3)), nil
	}
	g.AddConditionalEdges(START, next, "work", END)
	g.AddConditionalEdges("work", next, "work", END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		step.Store(0)
		for i := range ran {
			ran[i].Store(0)
		}
		if _, err := c.Invoke(t.Context(), stepState{}); err != nil {
			t.Fatal(err)
		}
		// Steps 1, 3, ..., 49 send four tasks, steps 2, ..., 50 two.
		want := [4]int64{rounds, rounds, rounds / 2, rounds / 2}
		for i := range ran {
			if got := ran[i].Load(); got != want[i] {
				t.Fatalf("task %d ran %d times over %d steps, want %d", i, got, rounds, want[i])
			}
		}
	}
}

// stepRounds returns a graph whose run has rounds parallel steps of two
// tasks that write nothing.
func stepRounds(t *testing.T, rounds int) *Compiled[stepState] {
	g := New[stepState]()
	work := AddTask(g, "work", func(context.Context, int) (Update[stepState], error) {
		return Update[stepState]{}, nil
	})
	n := 0
	next := func(context.Context, stepState) (Route, error) {
		if n++; n > rounds {
			n = 0
			return To(END), nil
		}
		return Route{}.Send(work.Send(1), work.Send(2)), nil
	}
	g.AddConditionalEdges(START, next, "work", END)
	g.AddConditionalEdges("work", next, "work", END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A parallel step of a streamed run whose tasks send no event allocates
// no channel: 5 allocations are its cancellable context (2), the scopes of
// its two tasks and the router's Sends. The mark of its tasks' contexts as
// off the loop is held in the stream's sink: it costs nothing per step.
func TestStreamedParallelStepAllocations(t *testing.T) {
	allocs := func(rounds int) float64 {
		c := stepRounds(t, rounds)
		return MinAllocs(50, func() {
			for _, err := range c.Stream(context.Background(), stepState{}, WithModes(StreamCustom)) {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	one, three := allocs(1), allocs(3)
	if per := (three - one) / 2; per > 5 {
		t.Fatalf("a streamed parallel step allocates %v times, want 5", per)
	}
}

// A task that exits the goroutine running a parallel step that is not
// served (runtime.Goexit, as t.FailNow does) cancels the step, and the
// step's other tasks have returned before that goroutine is gone: the
// goroutine of Invoke, and a parent's task running a subgraph's step in a
// stream. Without the wait, the sibling below would block until release.
func TestStepGoexitWaitsForTheOtherTasks(t *testing.T) {
	for _, mode := range []string{"invoke", "subgraph"} {
		t.Run(mode, func(t *testing.T) {
			var owner atomic.Int64 // the goroutine running the step
			var finished atomic.Bool
			release := make(chan struct{})
			defer close(release)
			child := New[stepState]()
			for _, name := range []string{"x", "y"} {
				child.AddNode(name, func(ctx context.Context, _ stepState) (Update[stepState], error) {
					if goroutineID() == owner.Load() {
						runtime.Goexit()
					}
					select {
					case <-ctx.Done():
						finished.Store(true)
					case <-release:
					}
					return Update[stepState]{}, nil
				})
				child.AddEdge(START, name)
				child.AddEdge(name, END)
			}
			c, err := child.Compile()
			if err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			switch mode {
			case "invoke":
				go func() {
					defer close(exited)
					owner.Store(goroutineID())
					_, _ = c.Invoke(t.Context(), stepState{})
				}()
			case "subgraph":
				parent := New[stepState]()
				AddSubgraph(parent, "sub", c, func(s stepState) stepState {
					owner.Store(goroutineID())
					return s
				}, func(stepState) Update[stepState] { return Update[stepState]{} })
				parent.AddNode("p", func(context.Context, stepState) (Update[stepState], error) {
					return Update[stepState]{}, nil
				})
				for _, n := range []string{"sub", "p"} {
					parent.AddEdge(START, n)
					parent.AddEdge(n, END)
				}
				pc, err := parent.Compile()
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					defer close(exited)
					for _, err := range pc.Stream(t.Context(), stepState{}, WithModes(StreamValues)) {
						_ = err
					}
				}()
			}
			<-exited
			if !finished.Load() {
				t.Fatal("the step's goroutine exited before its other task returned")
			}
		})
	}
}

// goroutineID returns the id of the calling goroutine, from the header of
// its stack trace ("goroutine 7 [running]:").
func goroutineID() int64 {
	var buf [64]byte
	f := strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))
	id, _ := strconv.ParseInt(f[1], 10, 64)
	return id
}

// A helper that the scheduler runs once its step's tasks are all claimed
// (here, held back until the step's goroutine runs its second task) takes
// no ticket of the step, so it makes no room on its stack for nothing;
// and the tickets left when the step ends are withdrawn, so that no
// helper of a later moment takes one.
func TestHelperWithNothingToClaimTakesNoTicket(t *testing.T) {
	bStarted, bGo := make(chan struct{}), make(chan struct{})
	g := New[stepState]()
	g.AddNode("a", func(context.Context, stepState) (Update[stepState], error) {
		return stepDone.Set([]string{"a"}), nil
	})
	g.AddNode("b", func(context.Context, stepState) (Update[stepState], error) {
		close(bStarted)
		<-bGo
		return stepDone.Set([]string{"b"}), nil
	})
	for _, name := range []string{"a", "b"} {
		g.AddEdge(START, name)
		g.AddEdge(name, END)
	}
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var r *run[stepState]
	let, helped := make(chan struct{}), make(chan struct{})
	c.pool.New = func() any {
		r = c.newRun()
		help := r.help
		r.help = func() {
			defer close(helped)
			<-let // the scheduler runs this helper late
			help()
		}
		return r
	}
	type result struct {
		s   stepState
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := c.Invoke(context.Background(), stepState{})
		done <- result{s, err}
	}()
	select {
	case <-bStarted: // a and b are claimed, by the step's own goroutine
	case res := <-done:
		t.Fatalf("the run ended before b started: %+v", res)
	}
	close(let)
	<-helped
	if n := uint32(r.tickets.Load()); n != 1 {
		t.Errorf("the step has %d tickets left once its helper came with every task claimed, want 1 (the helper took none)", n)
	}
	close(bGo)
	res := <-done
	if res.err != nil || len(res.s.Done) != 2 {
		t.Fatalf("state %+v, error %v", res.s, res.err)
	}
	if n := uint32(r.tickets.Load()); n != 0 {
		t.Errorf("%d tickets left after the step ended, want 0", n)
	}
}
