package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// countingSaver counts the calls that write to the Saver it wraps.
type countingSaver struct {
	checkpoint.Saver
	puts, putWrites atomic.Int32
}

func (s *countingSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	s.puts.Add(1)
	return s.Saver.Put(ctx, expect, cp, blobs, writes)
}

func (s *countingSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	s.putWrites.Add(1)
	return s.Saver.PutWrites(ctx, thread, id, writes)
}

// loopGraph says a message per step until it has said n in this run.
func loopGraph(t testing.TB, saver checkpoint.Saver, n int, opts ...graph.CompileOption) *graph.Compiled[chat] {
	t.Helper()
	g := graph.New[chat]()
	g.AddNode("say", func(_ context.Context, s chat) (graph.Update[chat], error) {
		return graph.Updates(chatMessages.Set([]string{fmt.Sprint("m", s.Turns)}), chatTurns.Set(1)), nil
	})
	g.AddEdge(graph.START, "say")
	g.AddConditionalEdges("say", func(_ context.Context, s chat) (graph.Route, error) {
		if s.Turns%n == 0 {
			return graph.To(graph.END), nil
		}
		return graph.To("say"), nil
	}, "say", graph.END)
	c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(saver)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDurabilityExitSavesOncePerRun(t *testing.T) {
	const steps = 6
	ctx := onThread("loop")
	run := func(saver *countingSaver, opts []graph.CompileOption, runOpts ...graph.RunOption) (chat, graph.StateSnapshot[chat]) {
		t.Helper()
		c := loopGraph(t, saver, steps, opts...)
		var s chat
		for _, msg := range []string{"first", "second"} {
			var err error
			if s, err = c.Invoke(ctx, chat{Messages: []string{msg}}, runOpts...); err != nil {
				t.Fatal(err)
			}
		}
		st, err := c.Thread("loop").State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	stepSaver := &countingSaver{Saver: checkpoint.NewMemory()}
	wantState, wantSnap := run(stepSaver, nil)
	if n := stepSaver.puts.Load(); n != 2*(steps+1) {
		t.Fatalf("step durability: %d Puts for two runs of %d steps, want %d", n, steps, 2*(steps+1))
	}
	for name, c := range map[string]struct {
		compile []graph.CompileOption
		run     []graph.RunOption
	}{
		"compile option": {compile: []graph.CompileOption{graph.WithDurability(graph.DurabilityExit)}},
		"run option":     {run: []graph.RunOption{graph.WithDurability(graph.DurabilityExit)}},
	} {
		t.Run(name, func(t *testing.T) {
			saver := &countingSaver{Saver: checkpoint.NewMemory()}
			s, st := run(saver, c.compile, c.run...)
			if n := saver.puts.Load(); n != 2 {
				t.Errorf("exit durability: %d Puts for two runs, want 2", n)
			}
			if d := cmp.Diff(wantState, s); d != "" {
				t.Errorf("final state (-step +exit):\n%s", d)
			}
			if d := cmp.Diff(wantSnap.Values, st.Values); d != "" || len(st.Next) != 0 || st.Step != wantSnap.Step ||
				!slices.Equal(st.Ran, wantSnap.Ran) || st.Metadata[graph.MetaSource] != "loop" {
				t.Errorf("saved state %+v, want %+v (values diff %s)", st, wantSnap, d)
			}
		})
	}
	// A run option can also turn step durability back on.
	saver := &countingSaver{Saver: checkpoint.NewMemory()}
	run(saver, []graph.CompileOption{graph.WithDurability(graph.DurabilityExit)}, graph.WithDurability(graph.DurabilityStep))
	if n := saver.puts.Load(); n != 2*(steps+1) {
		t.Fatalf("step durability as a run option: %d Puts, want %d", n, 2*(steps+1))
	}
}

func TestDurabilityExitRunEndingAtOnceIsSaved(t *testing.T) {
	g := graph.New[chat]()
	g.AddNode("say", func(context.Context, chat) (graph.Update[chat], error) { return chatTurns.Set(1), nil })
	g.AddConditionalEdges(graph.START, func(context.Context, chat) (graph.Route, error) { return graph.To(graph.END), nil }, "say", graph.END)
	g.AddEdge("say", graph.END)
	saver := &countingSaver{Saver: checkpoint.NewMemory()}
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithDurability(graph.DurabilityExit))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(onThread("nop"), chat{Draft: "kept"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Thread("nop").State(context.Background())
	if err != nil || st.Values.Draft != "kept" || st.Metadata[graph.MetaSource] != "input" || saver.puts.Load() != 1 {
		t.Fatalf("State = %+v, %v after %d Puts; want the input saved once", st, err, saver.puts.Load())
	}
}

func TestDurabilityExitInterruptAndResume(t *testing.T) {
	var reviewRuns atomic.Int32
	saver := &countingSaver{Saver: checkpoint.NewMemory()}
	c := approvalGraph(t, saver, &reviewRuns)
	ctx := onThread("hitl-exit")
	exit := graph.WithDurability(graph.DurabilityExit)
	_, err := c.Invoke(ctx, approval{}, exit)
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].ID != "2:review:0#0" {
		t.Fatalf("err = %v, want a pause on 2:review:0#0", err)
	}
	if n := saver.puts.Load(); n != 1 {
		t.Fatalf("%d Puts up to the pause, want 1", n)
	}
	st, err := c.Thread("hitl-exit").State(context.Background())
	if err != nil || st.Values.Draft != "hello world" || !slices.Equal(st.Next, []string{"review"}) || len(st.Interrupts) != 1 {
		t.Fatalf("paused state = %+v, %v", st, err)
	}
	s, err := c.Invoke(ctx, approval{}, exit, graph.Resume(true))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Published, []string{"hello world"}) || reviewRuns.Load() != 2 || saver.puts.Load() != 2 {
		t.Fatalf("after resume: %+v, review ran %d times, %d Puts; want published, 2, 2", s, reviewRuns.Load(), saver.puts.Load())
	}
	st, err = c.Thread("hitl-exit").State(context.Background())
	if err != nil || len(st.Next) != 0 || len(st.Interrupts) != 0 || !st.Values.Approved {
		t.Fatalf("final state = %+v, %v", st, err)
	}
}

func TestDurabilityExitBreakpoint(t *testing.T) {
	saver := &countingSaver{Saver: checkpoint.NewMemory()}
	c := loopGraph(t, saver, 4, graph.WithDurability(graph.DurabilityExit))
	ctx := onThread("bp")
	_, err := c.Invoke(ctx, chat{Messages: []string{"go"}}, graph.InterruptAfter("say"))
	if !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("err = %v, want a pause after say", err)
	}
	st, err := c.Thread("bp").State(context.Background())
	if err != nil || st.Values.Turns != 1 || !slices.Equal(st.Next, []string{"say"}) || saver.puts.Load() != 1 {
		t.Fatalf("state at the breakpoint = %+v, %v after %d Puts", st, err, saver.puts.Load())
	}
	s, err := c.Invoke(ctx, chat{})
	if err != nil || s.Turns != 4 || saver.puts.Load() != 2 {
		t.Fatalf("after going on: %+v, %v after %d Puts", s, err, saver.puts.Load())
	}
}

// failing is a graph scenario that fails once, then runs to the end.
type failing struct {
	name    string
	build   func(t *testing.T, saver checkpoint.Saver, opt graph.Option, fail *atomic.Bool, runs *sync.Map) *graph.Compiled[approval]
	cancels bool // the run is cancelled rather than failed
	// exitNext, when set, is where exit durability leaves the thread
	// instead of where step durability does: a step that completed while
	// the context was being cancelled cannot be saved step by step (the
	// Saver refuses a cancelled context) but is saved at the exit.
	exitNext []string
}

func count(runs *sync.Map, node string) {
	n, _ := runs.LoadOrStore(node, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

func counts(runs *sync.Map) map[string]int32 {
	out := map[string]int32{}
	runs.Range(func(k, v any) bool { out[k.(string)] = v.(*atomic.Int32).Load(); return true })
	return out
}

type cancelKey struct{}

// chain builds a -> b -> c where step runs f, with a log write per node.
func chain(t *testing.T, saver checkpoint.Saver, opt graph.Option, runs *sync.Map, b graph.NodeFunc[approval], router graph.RouterFunc[approval]) *graph.Compiled[approval] {
	t.Helper()
	g := graph.New[approval]()
	node := func(name string) graph.NodeFunc[approval] {
		return func(context.Context, approval) (graph.Update[approval], error) {
			count(runs, name)
			return apLog.Set([]string{name}), nil
		}
	}
	g.AddNode("a", node("a"))
	g.AddNode("b", b)
	g.AddNode("c", node("c"))
	g.AddEdge(graph.START, "a").AddEdge("a", "b")
	if router != nil {
		g.AddConditionalEdges("b", router, "c")
	} else {
		g.AddEdge("b", "c")
	}
	g.AddEdge("c", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver), opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDurabilityExitFailureIsResumable fails or cancels runs in several
// places and checks that exit durability leaves the thread where step
// durability does: the same state and next tasks, and a resume that runs
// the same nodes again to the same end.
func TestDurabilityExitFailureIsResumable(t *testing.T) {
	down := errors.New("service down")
	scenarios := []failing{
		{name: "node fails", build: func(t *testing.T, saver checkpoint.Saver, opt graph.Option, fail *atomic.Bool, runs *sync.Map) *graph.Compiled[approval] {
			return chain(t, saver, opt, runs, func(context.Context, approval) (graph.Update[approval], error) {
				count(runs, "b")
				if fail.Load() {
					return graph.Update[approval]{}, down
				}
				return apLog.Set([]string{"b"}), nil
			}, nil)
		}},
		{name: "router fails", build: func(t *testing.T, saver checkpoint.Saver, opt graph.Option, fail *atomic.Bool, runs *sync.Map) *graph.Compiled[approval] {
			return chain(t, saver, opt, runs, func(context.Context, approval) (graph.Update[approval], error) {
				count(runs, "b")
				return apLog.Set([]string{"b"}), nil
			}, func(context.Context, approval) (graph.Route, error) {
				if fail.Load() {
					return graph.Route{}, down
				}
				return graph.To("c"), nil
			})
		}},
		{name: "cancelled in a node", cancels: true, build: func(t *testing.T, saver checkpoint.Saver, opt graph.Option, fail *atomic.Bool, runs *sync.Map) *graph.Compiled[approval] {
			return chain(t, saver, opt, runs, func(ctx context.Context, _ approval) (graph.Update[approval], error) {
				count(runs, "b")
				if fail.Load() {
					ctx.Value(cancelKey{}).(context.CancelFunc)()
					return graph.Update[approval]{}, ctx.Err()
				}
				return apLog.Set([]string{"b"}), nil
			}, nil)
		}},
		{name: "cancelled between steps", cancels: true, exitNext: []string{"c"}, build: func(t *testing.T, saver checkpoint.Saver, opt graph.Option, fail *atomic.Bool, runs *sync.Map) *graph.Compiled[approval] {
			return chain(t, saver, opt, runs, func(ctx context.Context, _ approval) (graph.Update[approval], error) {
				count(runs, "b")
				if fail.Load() {
					ctx.Value(cancelKey{}).(context.CancelFunc)()
				}
				return apLog.Set([]string{"b"}), nil
			}, nil)
		}},
		{name: "parallel sibling fails", build: func(t *testing.T, saver checkpoint.Saver, opt graph.Option, fail *atomic.Bool, runs *sync.Map) *graph.Compiled[approval] {
			g := graph.New[approval]()
			for _, name := range []string{"first", "fast", "flaky", "last"} {
				g.AddNode(name, func(context.Context, approval) (graph.Update[approval], error) {
					count(runs, name)
					if name == "flaky" && fail.Load() {
						return graph.Update[approval]{}, down
					}
					return apLog.Set([]string{name}), nil
				})
			}
			g.AddEdge(graph.START, "first").AddEdge("first", "fast").AddEdge("first", "flaky").
				AddEdge("fast", "last").AddEdge("flaky", "last").AddEdge("last", graph.END)
			c, err := g.Compile(graph.WithCheckpointer(saver), opt)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}},
	}
	type outcome struct {
		Values  approval
		Next    []string
		Step    int
		Ran     []string
		Runs    map[string]int32
		Final   approval
		Resumed map[string]int32
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var got [2]outcome
			var puts [2]int32
			for i, d := range []graph.Durability{graph.DurabilityStep, graph.DurabilityExit} {
				saver := &countingSaver{Saver: checkpoint.NewMemory()}
				var fail atomic.Bool
				fail.Store(true)
				var runs sync.Map
				c := sc.build(t, saver, graph.WithDurability(d), &fail, &runs)
				ctx, cancel := context.WithCancel(context.WithValue(onThread("fail"), cancelKey{}, context.CancelFunc(nil)))
				ctx = context.WithValue(ctx, cancelKey{}, cancel)
				_, err := c.Invoke(ctx, approval{Draft: "d"})
				cancel()
				if err == nil {
					t.Fatalf("%v: the first run did not fail", d)
				}
				if sc.cancels != errors.Is(err, context.Canceled) {
					t.Fatalf("%v: err = %v", d, err)
				}
				puts[i] = saver.puts.Load()
				st, err := c.Thread("fail").State(context.Background())
				if err != nil {
					t.Fatalf("%v: nothing saved: %v", d, err)
				}
				got[i] = outcome{Values: st.Values, Next: st.Next, Step: st.Step, Ran: st.Ran, Runs: counts(&runs)}
				fail.Store(false)
				runs.Clear()
				got[i].Final, err = c.Invoke(onThread("fail"), approval{})
				if err != nil {
					t.Fatalf("%v: resuming: %v", d, err)
				}
				got[i].Resumed = counts(&runs)
				if st, err := c.Thread("fail").State(context.Background()); err != nil || len(st.Next) != 0 {
					t.Fatalf("%v: after the resume: %+v, %v", d, st, err)
				}
			}
			if sc.exitNext != nil {
				if !slices.Equal(got[1].Next, sc.exitNext) || !cmp.Equal(got[0].Final, got[1].Final) {
					t.Errorf("exit durability left next %v and ended with %+v, want next %v and %+v", got[1].Next, got[1].Final, sc.exitNext, got[0].Final)
				}
			} else if d := cmp.Diff(got[0], got[1]); d != "" {
				t.Errorf("the thread after a failure (-step +exit):\n%s", d)
			}
			if len(got[1].Next) == 0 {
				t.Errorf("the failed run saved no next task: %+v", got[1])
			}
			if puts[1] != 1 {
				t.Errorf("exit durability: %d Puts in the failed run, want 1", puts[1])
			}
		})
	}
}

func TestDurabilityExitParallelStepSavesNoWritesUntilExit(t *testing.T) {
	saver := &countingSaver{Saver: checkpoint.NewMemory()}
	g := graph.New[approval]()
	for _, name := range []string{"x", "y"} {
		g.AddNode(name, func(context.Context, approval) (graph.Update[approval], error) {
			return apLog.Set([]string{name}), nil
		})
		g.AddEdge(graph.START, name).AddEdge(name, graph.END)
	}
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithDurability(graph.DurabilityExit))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Invoke(onThread("par"), approval{})
	if err != nil || !slices.Equal(s.Log, []string{"x", "y"}) {
		t.Fatalf("Invoke = %+v, %v", s, err)
	}
	if saver.puts.Load() != 1 || saver.putWrites.Load() != 0 {
		t.Fatalf("%d Puts and %d PutWrites, want 1 and 0", saver.puts.Load(), saver.putWrites.Load())
	}
}

func TestUnknownDurability(t *testing.T) {
	g := graph.New[chat]()
	g.AddNode("a", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	if _, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithDurability(7)); !errors.Is(err, graph.ErrInvalidGraph) {
		t.Fatalf("Compile with durability 7: err = %v, want ErrInvalidGraph", err)
	}
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(onThread("u"), chat{}, graph.WithDurability(-1)); err == nil {
		t.Fatal("a run with durability -1 did not fail")
	}
	if _, err := g.Compile(graph.WithDurability(7)); err != nil {
		t.Fatalf("a graph without a checkpointer ignores durability: %v", err)
	}
	if s := graph.DurabilityExit.String(); s != "exit" {
		t.Fatalf("DurabilityExit.String() = %q", s)
	}
}

// TestDurabilityExitStreamStopped stops reading a stream in exit mode
// after the second step: the run saves where it stopped, and running the
// thread again with a zero input finishes it.
func TestDurabilityExitStreamStopped(t *testing.T) {
	saver := &countingSaver{Saver: checkpoint.NewMemory()}
	c := loopGraph(t, saver, 5, graph.WithDurability(graph.DurabilityExit))
	ctx := onThread("stream")
	steps := 0
	for ev, err := range c.Stream(ctx, chat{Messages: []string{"go"}}, graph.WithModes(graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		if steps = ev.Step; steps == 2 {
			break
		}
	}
	st, err := c.Thread("stream").State(context.Background())
	if err != nil || len(st.Next) == 0 || st.Values.Turns < 1 || st.Values.Turns > 2 || saver.puts.Load() != 1 {
		t.Fatalf("after stopping at step %d: %+v, %v, %d Puts; want a saved state with next tasks", steps, st, err, saver.puts.Load())
	}
	s, err := c.Invoke(ctx, chat{})
	if err != nil || s.Turns != 5 || len(s.Messages) != 6 {
		t.Fatalf("resumed: %+v, %v; want 5 turns", s, err)
	}
}
