package graph_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/agentgraph/agentgraph/graph"
)

// A streamed run goes on the goroutine of the loop over Stream: an event of
// a step's only task is yielded before Emit returns to the node.
func TestStreamYieldsBeforeEmitReturns(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	g := graph.New[logState]()
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		for i := range 3 {
			if err := graph.Emit(ctx, i); err != nil {
				return graph.Update[logState]{}, err
			}
			note("emitted")
		}
		return graph.Update[logState]{}, nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	for ev, err := range mustCompile(t, g).Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
		if err != nil {
			t.Fatal(err)
		}
		note("yielded")
		_ = ev
	}
	want := []string{"yielded", "emitted", "yielded", "emitted", "yielded", "emitted"}
	if !slices.Equal(order, want) {
		t.Fatalf("order %q, want %q", order, want)
	}
}

// A panic in the loop body reaches the caller of the loop with its value,
// whichever goroutine the event came from, and the run stops: the node
// that emitted does not read the panic as its own failure.
func TestStreamBodyPanicReachesCaller(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		emitErr := make(chan error, 2)
		g := graph.New[logState]()
		emitter := func(ctx context.Context, s logState) (graph.Update[logState], error) {
			err := graph.Emit(ctx, "x")
			if err == nil && parallel {
				// From a parallel task the event is handed over to the
				// loop's goroutine, which then runs the body.
				<-ctx.Done()
				err = ctx.Err()
			}
			emitErr <- err
			return graph.Update[logState]{}, err
		}
		g.AddNode("a", emitter).AddEdge(graph.START, "a").AddEdge("a", graph.END)
		if parallel {
			g.AddNode("b", func(ctx context.Context, s logState) (graph.Update[logState], error) {
				<-ctx.Done() // the body's panic cancels the run
				emitErr <- ctx.Err()
				return graph.Update[logState]{}, ctx.Err()
			})
			g.AddEdge(graph.START, "b").AddEdge("b", graph.END)
		}
		c := mustCompile(t, g)
		boom := errors.New("boom")
		got := func() (v any) {
			defer func() { v = recover() }()
			for _, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
				if err != nil {
					t.Errorf("parallel %v: the run's error %v reached the loop", parallel, err)
					return nil
				}
				panic(boom)
			}
			return nil
		}()
		if got != boom {
			t.Fatalf("parallel %v: recovered %v, want the body's own panic value", parallel, got)
		}
		// The loop has returned: every node has returned and saw the stop.
		want := 1
		if parallel {
			want = 2
		}
		for range want {
			select {
			case err := <-emitErr:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("parallel %v: a node saw %v, want context.Canceled", parallel, err)
				}
			default:
				t.Fatalf("parallel %v: a node was still running after the loop ended", parallel)
			}
		}
	}
}

// A loop body that exits its goroutine (runtime.Goexit, as t.FailNow does)
// stops the run: a task running in parallel sees its context cancelled.
func TestStreamBodyGoexitStopsRun(t *testing.T) {
	stopped := make(chan error, 1)
	c := emitBeside(t, waitOnContext(stopped, false))
	goexitOnEvent(c)
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("b saw %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run went on after the loop body exited its goroutine")
	}
}

// emitBeside compiles a graph of one parallel step: node a emits "x" while
// node b runs.
func emitBeside(t *testing.T, b graph.NodeFunc[logState]) *graph.Compiled[logState] {
	t.Helper()
	g := graph.New[logState]()
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, graph.Emit(ctx, "x")
	})
	g.AddNode("b", b)
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", graph.END).AddEdge("b", graph.END)
	return mustCompile(t, g)
}

// goexitOnEvent streams a run of c on a goroutine of its own, whose loop
// body exits the goroutine (runtime.Goexit, as t.FailNow does) at the
// first event, and returns once the goroutine has exited.
func goexitOnEvent(c *graph.Compiled[logState]) {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
			runtime.Goexit()
		}
	}()
	<-exited
}

// In a parallel step the first task's events reach the consumer while it
// runs, whichever task is first: here task 0 waits until the consumer has
// seen task 1's update.
func TestStreamParallelFirstTaskWaitsForSecond(t *testing.T) {
	seen := make(chan struct{})
	g := graph.New[logState]()
	g.AddNode("slow", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		select {
		case <-seen:
			return lsLog.Set([]string{"slow"}), nil
		case <-ctx.Done():
			return graph.Update[logState]{}, ctx.Err()
		case <-time.After(30 * time.Second):
			return graph.Update[logState]{}, errors.New("the update of fast was not streamed while slow ran")
		}
	})
	g.AddNode("fast", logs("fast"))
	g.AddEdge(graph.START, "slow").AddEdge(graph.START, "fast").AddEdge("slow", graph.END).AddEdge("fast", graph.END)
	var nodes []string
	for ev, err := range mustCompile(t, g).Stream(context.Background(), logState{}, graph.WithModes(graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, ev.Node)
		if ev.Node == "fast" {
			if ev.Task.Index != 1 {
				t.Fatalf("fast is task %d, want 1", ev.Task.Index)
			}
			close(seen)
		}
	}
	if !slices.Equal(nodes, []string{"fast", "slow"}) {
		t.Fatalf("updates of %q", nodes)
	}
}

// Put builds the update that Updates builds from the same writes, combining
// a field written twice through its reducer.
func TestPutMatchesUpdates(t *testing.T) {
	var u graph.Update[logState]
	lsLog.Put(&u, []string{"a"})
	lsSum.Put(&u, 2)
	lsOwner.Put(&u, "x")
	lsLog.Put(&u, []string{"b"})
	lsSum.Put(&u, 3)
	lsOwner.Put(&u, "y")
	want := graph.Updates(lsLog.Set([]string{"a"}), lsSum.Set(2), lsOwner.Set("x"),
		lsLog.Set([]string{"b"}), lsSum.Set(3), lsOwner.Set("y"))
	if u.String() != want.String() || !slices.Equal(u.Fields(), want.Fields()) {
		t.Fatalf("Put built %v, Updates %v", u, want)
	}
	s := logState{Log: []string{"start"}, Sum: 1}
	u.ApplyTo(&s)
	if !slices.Equal(s.Log, []string{"start", "a", "b"}) || s.Sum != 6 || s.Owner != "y" {
		t.Fatalf("state %+v", s)
	}
}

// emitLater is a node that starts a goroutine emitting "late" once start
// is closed, with the node's context or one detached from its
// cancellation (which still carries the node's stream), and reports
// Emit's result on res.
func emitLater(detached bool, start <-chan struct{}, res chan<- error) nodeFn {
	return func(ctx context.Context, s logState) (graph.Update[logState], error) {
		ectx := ctx
		if detached {
			ectx = context.WithoutCancel(ctx)
		}
		go func() {
			<-start
			res <- graph.Emit(ectx, "late")
		}()
		return graph.Update[logState]{}, nil
	}
}

// A goroutine that a node started and left running emits after the node's
// step ended, while a later step runs: the event reaches the consumer, or
// Emit returns an error (a parallel task's context ends with its step);
// it is never lost nor blocks.
func TestStreamTaskGoroutineEmitsAfterItsStep(t *testing.T) {
	for _, steps := range [][2]bool{{false, false}, {true, false}, {true, true}, {false, true}} {
		// parallel: a's step has several tasks; next: so has c's.
		parallel, next := steps[0], steps[1]
		for _, detached := range []bool{false, true} {
			start, res, seen := make(chan struct{}), make(chan error, 1), make(chan struct{})
			var emitErr error
			emitted := false
			g := graph.New[logState]()
			g.AddNode("a", emitLater(detached, start, res))
			// c runs in the next step and waits for the late event.
			g.AddNode("c", func(ctx context.Context, s logState) (graph.Update[logState], error) {
				close(start)
				select {
				case <-seen:
				case emitErr = <-res:
					emitted = true
				case <-ctx.Done():
					return graph.Update[logState]{}, ctx.Err()
				case <-time.After(30 * time.Second):
					return graph.Update[logState]{}, errors.New("the late event neither reached the consumer nor failed")
				}
				return graph.Update[logState]{}, nil
			})
			g.AddEdge(graph.START, "a").AddEdge("a", "c").AddEdge("c", graph.END)
			if parallel {
				g.AddNode("b", logs("b")).AddEdge(graph.START, "b").AddEdge("b", graph.END)
			}
			if next {
				g.AddNode("d", logs("d")).AddEdge("a", "d").AddEdge("d", graph.END)
			}
			late := 0
			for ev, err := range mustCompile(t, g).Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
				if err != nil {
					t.Fatalf("parallel %v, next %v, detached %v: %v", parallel, next, detached, err)
				}
				if ev.Payload == "late" {
					if late++; late == 1 {
						close(seen)
					}
				}
			}
			if !emitted {
				emitErr = <-res
			}
			switch {
			case late > 1:
				t.Errorf("parallel %v, next %v, detached %v: the late event came %d times", parallel, next, detached, late)
			case late == 1 && emitErr != nil:
				t.Errorf("parallel %v, next %v, detached %v: the late event came but Emit returned %v", parallel, next, detached, emitErr)
			case late == 0 && emitErr == nil:
				t.Errorf("parallel %v, next %v, detached %v: Emit returned nil but the late event was lost", parallel, next, detached)
			case late == 0 && (!parallel || detached):
				// Only a parallel task's own context ends with its step.
				t.Errorf("parallel %v, next %v, detached %v: Emit returned %v, want the event delivered", parallel, next, detached, emitErr)
			case late == 0 && !errors.Is(emitErr, context.Canceled):
				t.Errorf("parallel %v, next %v, detached %v: Emit returned %v, want context.Canceled", parallel, next, detached, emitErr)
			}
		}
	}
}

// A goroutine that a node left running emits after the run ended: Emit
// returns context.Canceled, and the event is not yielded.
func TestStreamEmitAfterRunEnded(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		for _, detached := range []bool{false, true} {
			start, res := make(chan struct{}), make(chan error, 1)
			g := graph.New[logState]()
			g.AddNode("a", emitLater(detached, start, res))
			g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
			if parallel {
				g.AddNode("b", logs("b")).AddEdge(graph.START, "b").AddEdge("b", graph.END)
			}
			for ev, err := range mustCompile(t, g).Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
				if err != nil || ev.Payload == "late" {
					t.Fatalf("parallel %v, detached %v: yielded %+v, %v", parallel, detached, ev, err)
				}
			}
			close(start)
			select {
			case err := <-res:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("parallel %v, detached %v: Emit after the run returned %v, want context.Canceled", parallel, detached, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("parallel %v, detached %v: Emit after the run blocked", parallel, detached)
			}
		}
	}
}

// A loop body that exits its goroutine in a parallel step leaves no task
// running: the loop's goroutine waits for them on its way out, and a task
// sending an event meanwhile is not blocked.
func TestStreamBodyGoexitWaitsForTasks(t *testing.T) {
	returned := make(chan error, 2)
	c := emitBeside(t, func(ctx context.Context, s logState) (graph.Update[logState], error) {
		<-ctx.Done()
		// Detached from the cancellation, the event can only be refused.
		returned <- graph.Emit(context.WithoutCancel(ctx), "after")
		return graph.Update[logState]{}, ctx.Err()
	})
	goexitOnEvent(c)
	select {
	case err := <-returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("b's Emit after the stop returned %v, want context.Canceled", err)
		}
	default:
		t.Fatal("b was still running after the loop's goroutine exited")
	}
}

// When a task of a parallel step fails, the debug events of its siblings,
// which see the step cancelled, still reach the consumer: a TaskEnd for
// every TaskStart.
func TestStreamParallelSiblingEventsAfterFailure(t *testing.T) {
	boom := errors.New("boom")
	g := graph.New[logState]()
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, boom
	})
	g.AddNode("b", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		<-ctx.Done() // a's failure cancels the step
		return graph.Update[logState]{}, ctx.Err()
	})
	g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", graph.END).AddEdge("b", graph.END)
	c := mustCompile(t, g)
	// Each run has the same events; a lost one would show in some run.
	for run := range 20 {
		ends := map[string]int{}
		var runErr error
		for ev, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamDebug)) {
			if err != nil {
				runErr = err
				continue
			}
			if ev.Debug.Kind == graph.TaskEnd {
				ends[ev.Node]++
			}
		}
		if !errors.Is(runErr, boom) {
			t.Fatalf("run %d: error %v, want a's", run, runErr)
		}
		if ends["a"] != 1 || ends["b"] != 1 {
			t.Fatalf("run %d: TaskEnd events per node %v, want one of a and b", run, ends)
		}
	}
}

// An iterator Stream returned, once its loop has ended, does not keep the
// loop body reachable (nor what the body uses): a caller that keeps the
// iterator, to run it again later, does not keep each run's data alive.
func TestStreamIteratorReleasesLoopBody(t *testing.T) {
	g := graph.New[logState]()
	g.AddNode("a", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, graph.Emit(ctx, "x")
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	seq := mustCompile(t, g).Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom))
	for run := range 2 { // the first run's sink is allocated with the iterator, a later run's apart
		body := loopOnce(t, seq)
		runtime.GC()
		if body.Value() != nil {
			t.Fatalf("run %d: after the loop ended, the iterator still holds what the loop body used", run+1)
		}
	}
	runtime.KeepAlive(seq)
}

// loopOnce ranges over seq with a body that uses a value of its own, and
// returns a weak pointer to that value.
func loopOnce(t *testing.T, seq func(func(graph.Event[logState], error) bool)) weak.Pointer[[1 << 16]byte] {
	big := new([1 << 16]byte)
	wp := weak.Make(big)
	n := 0
	for _, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		big[n%len(big)]++
		n++
	}
	if n == 0 {
		t.Fatal("the run yielded no event")
	}
	return wp
}

// A streamed run's parallel step costs its own context (context.WithCancel
// allocates the context and its cancel function) and, at the run's first
// parallel step, the channel its tasks' events come over: its context is
// not registered with the run's, which would cost the run's context a map
// of children and a done channel.
func TestStreamParallelStepAllocations(t *testing.T) {
	noop := func(context.Context, logState) (graph.Update[logState], error) {
		return graph.Update[logState]{}, nil
	}
	build := func(parallel bool) *graph.Compiled[logState] {
		g := graph.New[logState]()
		g.AddNode("a", noop)
		g.AddNode("b", noop)
		if parallel {
			g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", graph.END).AddEdge("b", graph.END)
		} else {
			g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", graph.END)
		}
		return mustCompile(t, g)
	}
	allocs := func(c *graph.Compiled[logState]) float64 {
		return graph.MinAllocs(20, func() {
			for _, err := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamValues)) {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	seq, par := allocs(build(false)), allocs(build(true))
	if par > seq+3 {
		t.Fatalf("a streamed run with a parallel step allocates %v times, one with the same tasks in two steps %v times: want at most 3 more", par, seq)
	}
}

// Breaking out of the loop while a parallel step is served cancels the
// step's tasks, whose context is not a child of the run's: a task waiting
// on its context has returned when the loop ends.
func TestStreamBreakCancelsServedStep(t *testing.T) {
	returned := make(chan error, 1)
	c := emitBeside(t, waitOnContext(returned, false))
	endsWithin(t, "the loop did not end: b was not cancelled", func() {
		for range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom)) {
			break
		}
	})
	select {
	case err := <-returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("b's context ended with %v, want context.Canceled", err)
		}
	default:
		t.Fatal("b was still running after the loop ended")
	}
}

// endsWithin calls f on a goroutine of its own and fails with what unless
// f returns within 10 s: a stream that does not stop what it should fails
// the test instead of hanging until go test's timeout. f must not call
// t.Fatal (it does not run on the test's goroutine).
func endsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		f()
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// ownContext is a cancellable context of a type of its own, which
// context.WithCancel cannot see through (its values are hidden), and which
// counts the calls of its Done. A child made with context.WithCancel is
// registered with it by its AfterFunc; a child of a context that wraps it
// is watched by a goroutine of its own.
type ownContext struct {
	context.Context
	asked atomic.Int32
}

func (c *ownContext) Done() <-chan struct{} {
	c.asked.Add(1)
	return c.Context.Done()
}

func (c *ownContext) Value(any) any { return nil }

func (c *ownContext) AfterFunc(f func()) func() bool {
	return context.AfterFunc(c.Context, f)
}

// waitOnContext is a node that emits "waiting" if emit is set, then waits
// for its context to end, sending what ended it to ended.
func waitOnContext(ended chan<- error, emit bool) graph.NodeFunc[logState] {
	return func(ctx context.Context, s logState) (graph.Update[logState], error) {
		if emit {
			if err := graph.Emit(ctx, "waiting"); err != nil {
				ended <- err
				return graph.Update[logState]{}, err
			}
		}
		<-ctx.Done()
		ended <- ctx.Err()
		return graph.Update[logState]{}, ctx.Err()
	}
}

// The caller's cancellation reaches a served parallel step, whatever the
// caller's context: both tasks, waiting on their context, see it, and the
// stream ends with it.
func TestStreamCallerCancelsServedStep(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("own type %v", own), func(t *testing.T) {
			base, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ctx context.Context = base
			if own {
				ctx = &ownContext{Context: base}
			}
			ended := make(chan error, 2)
			g := graph.New[logState]()
			g.AddNode("a", waitOnContext(ended, true))
			g.AddNode("b", waitOnContext(ended, true))
			g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", graph.END).AddEdge("b", graph.END)
			c := mustCompile(t, g)
			var last error
			endsWithin(t, "the stream did not end: its step was not cancelled", func() {
				for _, err := range c.Stream(ctx, logState{}, graph.WithModes(graph.StreamCustom)) {
					cancel()
					last = err
				}
			})
			if !errors.Is(last, context.Canceled) {
				t.Errorf("the stream ended with %v, want context.Canceled", last)
			}
			for range 2 {
				if err := <-ended; !errors.Is(err, context.Canceled) {
					t.Errorf("a task's context ended with %v, want context.Canceled", err)
				}
			}
		})
	}
}

// The parallel steps of a stream whose context can be cancelled do not
// use that context, which the run's context already watches: a context
// shared by many streams is not locked by each step, and one of a type of
// its own does not get a goroutine per step. The stream's context is asked
// for Done as often by a run of three parallel steps as by one of none.
func TestStreamParallelStepsLeaveCallerContext(t *testing.T) {
	asked := func(parallel bool) int32 {
		base, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx := &ownContext{Context: base}
		g := graph.New[logState]()
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			g.AddNode(n, logs(n))
		}
		if parallel {
			g.AddEdge(graph.START, "a").AddEdge(graph.START, "b").AddEdge("a", "c").AddEdge("b", "d").
				AddEdge("c", "e").AddEdge("d", "f").AddEdge("e", graph.END).AddEdge("f", graph.END)
		} else {
			g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", "d").
				AddEdge("d", "e").AddEdge("e", "f").AddEdge("f", graph.END)
		}
		for _, err := range mustCompile(t, g).Stream(ctx, logState{}, graph.WithModes(graph.StreamValues)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		return ctx.asked.Load()
	}
	if seq, par := asked(false), asked(true); par != seq {
		t.Fatalf("a stream's context was asked for Done %d times by a run of three parallel steps, %d times by one of six single steps: want as many", par, seq)
	}
}

// A stop made before a parallel step is served, here by a loop body
// breaking on an event a node's goroutine sent after its step, cancels the
// step as soon as it is served: its context is not the run's child.
func TestStreamStopBeforeServedStep(t *testing.T) {
	late, broke := make(chan struct{}), make(chan error, 1)
	ended := make(chan error, 2)
	g := graph.New[logState]()
	g.AddNode("first", func(ctx context.Context, s logState) (graph.Update[logState], error) {
		go func() {
			<-late
			broke <- graph.Emit(ctx, "late")
		}()
		return graph.Update[logState]{}, nil
	})
	g.AddNode("a", waitOnContext(ended, false))
	g.AddNode("b", waitOnContext(ended, false))
	g.AddEdge(graph.START, "first").AddEdge("first", "a").AddEdge("first", "b").AddEdge("a", graph.END).AddEdge("b", graph.END)
	hooks := graph.Hooks{StepStart: func(ctx context.Context, s graph.StepInfo) context.Context {
		if s.Step == 2 {
			// The run is between its steps: the loop body breaks on
			// the late event, on the goroutine that sent it.
			close(late)
			<-broke
		}
		return ctx
	}}
	c := mustCompile(t, g)
	var got []any
	endsWithin(t, "the stream did not end: the step served after the stop was not cancelled", func() {
		for ev := range c.Stream(context.Background(), logState{}, graph.WithModes(graph.StreamCustom), graph.WithHooks(hooks)) {
			got = append(got, ev.Payload)
			break
		}
	})
	if !slices.Equal(got, []any{"late"}) {
		t.Fatalf("the loop saw %v, want [late]", got)
	}
	for range 2 {
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("a task's context ended with %v, want context.Canceled", err)
		}
	}
}
