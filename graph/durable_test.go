package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

type chat struct {
	Messages []string
	Turns    int
	Draft    string
}

var (
	chatMessages = graph.Append(func(s *chat) *[]string { return &s.Messages })
	chatTurns    = graph.Sum(func(s *chat) *int { return &s.Turns })
	chatDraft    = graph.Replace(func(s *chat) *string { return &s.Draft })
)

func onThread(id string) context.Context {
	return graph.WithConfig(context.Background(), graph.RunConfig{ThreadID: id})
}

// echoGraph answers each user message with "echo: <message>".
func echoGraph(t testing.TB, saver checkpoint.Saver, opts ...graph.CompileOption) *graph.Compiled[chat] {
	t.Helper()
	g := graph.New[chat]()
	g.AddNode("reply", func(_ context.Context, s chat) (graph.Update[chat], error) {
		last := s.Messages[len(s.Messages)-1]
		return graph.Updates(chatMessages.Set([]string{"echo: " + last}), chatTurns.Set(1)), nil
	})
	g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END)
	c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(saver)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestThreadContinuesThroughReducers(t *testing.T) {
	// The step limit counts each run's steps, not the thread's.
	c := echoGraph(t, checkpoint.NewMemory(), graph.WithStepLimit(1))
	ctx := onThread("t1")
	if _, err := c.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Invoke(ctx, chat{Messages: []string{"again"}})
	if err != nil {
		t.Fatal(err)
	}
	want := chat{Messages: []string{"hi", "echo: hi", "again", "echo: again"}, Turns: 2}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("state (-want +got):\n%s", d)
	}
	// Another thread is independent.
	other, err := c.Invoke(onThread("t2"), chat{Messages: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(chat{Messages: []string{"x", "echo: x"}, Turns: 1}, other); d != "" {
		t.Fatalf("other thread (-want +got):\n%s", d)
	}
	st, err := c.Thread("t1").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, st.Values); d != "" || len(st.Next) != 0 || st.Metadata[graph.MetaSource] != "loop" {
		t.Fatalf("State = %+v (values diff %s)", st, d)
	}
}

func TestCompileRejectsStateThatDoesNotSerialise(t *testing.T) {
	type bad struct {
		Log  []string
		Hook func()
	}
	g := graph.New[bad]()
	g.AddNode("a", func(context.Context, bad) (graph.Update[bad], error) { return graph.Update[bad]{}, nil })
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	if _, err := g.Compile(); err != nil {
		t.Fatalf("without a checkpointer the state need not serialise: %v", err)
	}
	_, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if !errors.Is(err, graph.ErrInvalidGraph) || !strings.Contains(err.Error(), "Hook") {
		t.Fatalf("Compile error = %v, want one naming field Hook", err)
	}
}

func TestStorageGrowsWithWhatChanged(t *testing.T) {
	const steps = 1000
	saver := checkpoint.NewMemory()
	var msgBytes atomic.Int64
	c := untilGraph(t, saver, steps, "say", func(_ context.Context, s chat) (graph.Update[chat], error) {
		m := fmt.Sprintf("message number %d with some text in it", s.Turns)
		msgBytes.Add(int64(len(m)))
		return graph.Updates(chatMessages.Set([]string{m}), chatTurns.Set(1)), nil
	}, func(s chat) bool { return s.Turns >= steps })
	got, err := c.Invoke(onThread("long"), chat{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != steps {
		t.Fatalf("%d messages, want %d", len(got.Messages), steps)
	}
	u, err := saver.Usage(context.Background(), "long")
	if err != nil {
		t.Fatal(err)
	}
	// Each message is stored about once as a delta, plus full values whose
	// sizes grow geometrically (at most about twice the final list), plus
	// a few bytes of Turns per step. Storing the whole list every step
	// would take about steps/2 times the message bytes.
	bound := 4*msgBytes.Load() + 16*steps
	if u.Checkpoints != steps+1 || u.BlobBytes > bound {
		t.Fatalf("usage %+v: want %d checkpoints and at most %d blob bytes for %d message bytes", u, steps+1, bound, msgBytes.Load())
	}
	st, err := c.Thread("long").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, st.Values); d != "" {
		t.Fatalf("reloaded state differs (-run +loaded):\n%s", d)
	}
}

// approval is a graph that drafts, asks a human, then publishes or not.
type approval struct {
	Draft     string
	Approved  bool
	Published []string
	Log       []string
}

var (
	apDraft     = graph.Replace(func(s *approval) *string { return &s.Draft })
	apApproved  = graph.Replace(func(s *approval) *bool { return &s.Approved })
	apPublished = graph.Append(func(s *approval) *[]string { return &s.Published })
	apLog       = graph.Append(func(s *approval) *[]string { return &s.Log })
)

func approvalGraph(t testing.TB, saver checkpoint.Saver, reviewRuns *atomic.Int32) *graph.Compiled[approval] {
	t.Helper()
	g := graph.New[approval]()
	g.AddNode("draft", func(context.Context, approval) (graph.Update[approval], error) {
		return apDraft.Set("hello world"), nil
	})
	g.AddNode("review", func(ctx context.Context, s approval) (graph.Update[approval], error) {
		reviewRuns.Add(1)
		ok, err := graph.Interrupt[bool](ctx, "publish "+s.Draft+"?")
		if err != nil {
			return graph.Update[approval]{}, err
		}
		return apApproved.Set(ok), nil
	})
	g.AddNode("publish", func(_ context.Context, s approval) (graph.Update[approval], error) {
		if !s.Approved {
			return apLog.Set([]string{"rejected"}), nil
		}
		return apPublished.Set([]string{s.Draft}), nil
	})
	g.AddEdge(graph.START, "draft").AddEdge("draft", "review").AddEdge("review", "publish").AddEdge("publish", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInterruptAndResume(t *testing.T) {
	var reviewRuns atomic.Int32
	c := approvalGraph(t, checkpoint.NewMemory(), &reviewRuns)
	ctx := onThread("hitl")
	s, err := c.Invoke(ctx, approval{})
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("err = %v, want an *InterruptError", err)
	}
	if len(ie.Interrupts) != 1 || ie.Interrupts[0].Node != "review" || ie.Interrupts[0].ID != "2:review:0#0" || ie.Interrupts[0].Kind != graph.InterruptRaised {
		t.Fatalf("interrupts = %+v", ie.Interrupts)
	}
	var q string
	if err := ie.Interrupts[0].Decode(&q); err != nil || q != "publish hello world?" {
		t.Fatalf("payload %q, %v", q, err)
	}
	if s.Draft != "hello world" {
		t.Fatalf("state at the pause = %+v", s)
	}
	st, err := c.Thread("hitl").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"review"}, st.Next); d != "" || len(st.Interrupts) != 1 {
		t.Fatalf("State next %v interrupts %+v", st.Next, st.Interrupts)
	}
	// New input on a paused thread is refused.
	if _, err := c.Invoke(ctx, approval{Draft: "x"}); !errors.Is(err, graph.ErrThreadPaused) {
		t.Fatalf("new input on a paused thread: err = %v", err)
	}
	s, err = c.Invoke(ctx, approval{}, graph.Resume(true))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"hello world"}, s.Published); d != "" || !s.Approved {
		t.Fatalf("after resume: %+v", s)
	}
	if n := reviewRuns.Load(); n != 2 {
		t.Fatalf("review ran %d times, want 2 (once to pause, once to resume)", n)
	}
	if _, err := c.Invoke(ctx, approval{}, graph.Resume(true)); !errors.Is(err, graph.ErrNothingToResume) {
		t.Fatalf("resuming a finished thread: err = %v", err)
	}
}

func TestInterruptWithoutCheckpointer(t *testing.T) {
	g := graph.New[approval]()
	g.AddNode("ask", func(ctx context.Context, s approval) (graph.Update[approval], error) {
		_, err := graph.Interrupt[bool](ctx, "?")
		return graph.Update[approval]{}, err
	})
	g.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(context.Background(), approval{}); !errors.Is(err, graph.ErrNoCheckpointer) {
		t.Fatalf("err = %v, want ErrNoCheckpointer", err)
	}
}

// parallelAsk fans out to three branches that each ask a question.
func parallelAsk(t testing.TB, saver checkpoint.Saver, runs map[string]*atomic.Int32) *graph.Compiled[approval] {
	t.Helper()
	g := graph.New[approval]()
	g.AddNode("fan", func(context.Context, approval) (graph.Update[approval], error) { return graph.Update[approval]{}, nil })
	g.AddEdge(graph.START, "fan")
	for _, name := range []string{"a", "b", "c"} {
		runs[name] = &atomic.Int32{}
		g.AddNode(name, func(ctx context.Context, s approval) (graph.Update[approval], error) {
			runs[name].Add(1)
			if name == "c" { // c does not ask
				return apLog.Set([]string{"c"}), nil
			}
			v, err := graph.Interrupt[string](ctx, name+"?")
			if err != nil {
				return graph.Update[approval]{}, err
			}
			return apLog.Set([]string{name + "=" + v}), nil
		})
		g.AddEdge("fan", name).AddEdge(name, graph.END)
	}
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParallelInterrupts(t *testing.T) {
	t.Run("one call", func(t *testing.T) {
		runs := map[string]*atomic.Int32{}
		c := parallelAsk(t, checkpoint.NewMemory(), runs)
		ctx := onThread("p1")
		_, err := c.Invoke(ctx, approval{})
		var ie *graph.InterruptError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v", err)
		}
		var ids []string
		for _, x := range ie.Interrupts {
			ids = append(ids, x.ID)
		}
		if d := cmp.Diff([]string{"2:a:0#0", "2:b:1#0"}, ids); d != "" {
			t.Fatalf("ids (-want +got):\n%s", d)
		}
		if _, err := c.Invoke(ctx, approval{}, graph.Resume("x")); !errors.Is(err, graph.ErrNothingToResume) {
			t.Fatalf("Resume with two pending: err = %v", err)
		}
		s, err := c.Invoke(ctx, approval{}, graph.ResumeByID(map[string]any{ids[0]: "yes", ids[1]: "no"}))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"a=yes", "b=no", "c"}, s.Log); d != "" {
			t.Fatalf("log (-want +got):\n%s", d)
		}
		if runs["c"].Load() != 1 {
			t.Fatalf("c, which finished in the paused step, ran %d times", runs["c"].Load())
		}
	})
	// KeepWrites refuses an update that writes a field (a kept write
	// would be applied over it on resume), naming the field, and saves
	// nothing; with AsNode it has no effect, and the update is saved.
	t.Run("keep writes with fields", func(t *testing.T) {
		c := parallelAsk(t, checkpoint.NewMemory(), map[string]*atomic.Int32{})
		ctx := onThread("p4")
		if _, err := c.Invoke(ctx, approval{}); !errors.Is(err, graph.ErrInterrupted) {
			t.Fatalf("err = %v", err)
		}
		th := c.Thread("p4")
		paused, err := th.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = th.Update(ctx, apLog.Set([]string{"x"}), graph.UpdateFrom(paused.CheckpointID), graph.KeepWrites())
		if err == nil || !strings.Contains(err.Error(), "KeepWrites writes fields [Log]") {
			t.Fatalf("Update with a field and KeepWrites: err = %v; want a refusal naming [Log]", err)
		}
		if st, err := th.State(ctx); err != nil || st.CheckpointID != paused.CheckpointID {
			t.Fatalf("latest after the refused update: %s, %v; want the paused %s", st.CheckpointID, err, paused.CheckpointID)
		}
		if _, err := th.Update(ctx, apLog.Set([]string{"x"}), graph.AsNode("c"), graph.KeepWrites()); err != nil {
			t.Fatalf("Update with a field, AsNode and KeepWrites: %v", err)
		}
	})
	// A copy of the paused checkpoint made with KeepWrites (an empty
	// update, as a new branch from it) resumes as the checkpoint itself
	// does: c, which finished in the paused step, does not run again, and
	// the interrupts keep their ids. Without KeepWrites, c runs again.
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprintf("copy keep writes %v", keep), func(t *testing.T) {
			runs := map[string]*atomic.Int32{}
			c := parallelAsk(t, checkpoint.NewMemory(), runs)
			ctx := onThread("p3")
			if _, err := c.Invoke(ctx, approval{}); !errors.Is(err, graph.ErrInterrupted) {
				t.Fatalf("err = %v", err)
			}
			th := c.Thread("p3")
			paused, err := th.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			opts := []graph.UpdateOption{graph.UpdateFrom(paused.CheckpointID)}
			if keep {
				opts = append(opts, graph.KeepWrites())
			}
			id, err := th.Update(ctx, graph.Update[approval]{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := th.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if cp.CheckpointID != id || cp.ParentID != paused.CheckpointID || len(cp.Interrupts) != 2 {
				t.Fatalf("copy: latest %s (parent %s, %d interrupts); want %s, parent %s, 2 interrupts", cp.CheckpointID, cp.ParentID, len(cp.Interrupts), id, paused.CheckpointID)
			}
			s, err := c.Invoke(ctx, approval{}, graph.ResumeByID(map[string]any{"2:a:0#0": "yes", "2:b:1#0": "no"}))
			if err != nil {
				t.Fatal(err)
			}
			wantC := int32(1)
			if !keep {
				wantC = 2 // its first write dropped with the paused step's
			}
			if d := cmp.Diff([]string{"a=yes", "b=no", "c"}, s.Log); d != "" {
				t.Fatalf("log (-want +got):\n%s", d)
			}
			if n := runs["c"].Load(); n != wantC {
				t.Fatalf("c, which finished in the paused step, ran %d times; want %d", n, wantC)
			}
		})
	}
	t.Run("several calls", func(t *testing.T) {
		runs := map[string]*atomic.Int32{}
		c := parallelAsk(t, checkpoint.NewMemory(), runs)
		ctx := onThread("p2")
		if _, err := c.Invoke(ctx, approval{}); !errors.Is(err, graph.ErrInterrupted) {
			t.Fatalf("err = %v", err)
		}
		_, err := c.Invoke(ctx, approval{}, graph.ResumeByID(map[string]any{"2:b:1#0": "B"}))
		var ie *graph.InterruptError
		if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].ID != "2:a:0#0" {
			t.Fatalf("after resuming b: err = %v", err)
		}
		s, err := c.Invoke(ctx, approval{}, graph.Resume("A"))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"a=A", "b=B", "c"}, s.Log); d != "" {
			t.Fatalf("log (-want +got):\n%s", d)
		}
		if a, b, cc := runs["a"].Load(), runs["b"].Load(), runs["c"].Load(); a != 3 || b != 2 || cc != 1 {
			t.Fatalf("runs a=%d b=%d c=%d, want 3 2 1", a, b, cc)
		}
	})
}

func TestBreakpoints(t *testing.T) {
	for _, tc := range []struct {
		name    string
		compile []graph.CompileOption
		run     []graph.RunOption
	}{
		{"compile", []graph.CompileOption{graph.InterruptBefore("review"), graph.InterruptAfter("publish")}, nil},
		{"run", nil, []graph.RunOption{graph.InterruptBefore("review"), graph.InterruptAfter("publish")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New[approval]()
			for _, n := range []string{"draft", "review", "publish", "done"} {
				g.AddNode(n, func(context.Context, approval) (graph.Update[approval], error) {
					return apLog.Set([]string{n}), nil
				})
			}
			g.AddEdge(graph.START, "draft").AddEdge("draft", "review").AddEdge("review", "publish").AddEdge("publish", "done").AddEdge("done", graph.END)
			c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(checkpoint.NewMemory())}, tc.compile...)...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := onThread("bp")
			s, err := c.Invoke(ctx, approval{}, tc.run...)
			var ie *graph.InterruptError
			if !errors.As(err, &ie) || ie.Interrupts[0].ID != "2:review:0#before" || ie.Interrupts[0].Kind != graph.BreakpointBefore {
				t.Fatalf("first stop: %v", err)
			}
			if d := cmp.Diff([]string{"draft"}, s.Log); d != "" {
				t.Fatalf("log at the first stop: %s", d)
			}
			s, err = c.Invoke(ctx, approval{}, tc.run...)
			if !errors.As(err, &ie) || ie.Interrupts[0].ID != "3:publish:0#after" || ie.Interrupts[0].Kind != graph.BreakpointAfter {
				t.Fatalf("second stop: %v", err)
			}
			if d := cmp.Diff([]string{"draft", "review", "publish"}, s.Log); d != "" {
				t.Fatalf("log at the second stop: %s", d)
			}
			s, err = c.Invoke(ctx, approval{}, tc.run...)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]string{"draft", "review", "publish", "done"}, s.Log); d != "" {
				t.Fatalf("final log: %s", d)
			}
		})
	}
}

func TestHistoryUpdateStateAndFork(t *testing.T) {
	saver := checkpoint.NewMemory()
	c := echoGraph(t, saver)
	ctx := onThread("tt")
	for _, m := range []string{"one", "two"} {
		if _, err := c.Invoke(ctx, chat{Messages: []string{m}}); err != nil {
			t.Fatal(err)
		}
	}
	var steps []int
	var sources []string
	var snaps []graph.StateSnapshot[chat]
	for s, err := range c.Thread("tt").History(context.Background(), checkpoint.ListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s.Step)
		sources = append(sources, s.Metadata[graph.MetaSource])
		snaps = append(snaps, s)
	}
	if d := cmp.Diff([]int{2, 1, 1, 0}, steps); d != "" {
		t.Fatalf("history steps (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"loop", "input", "loop", "input"}, sources); d != "" {
		t.Fatalf("history sources (-want +got):\n%s", d)
	}
	// Time travel: run again from the checkpoint after the first answer,
	// with a different second message. The old branch stays.
	first := snaps[2]
	if d := cmp.Diff([]string{"one", "echo: one"}, first.Values.Messages); d != "" {
		t.Fatalf("first answer checkpoint: %s", d)
	}
	got, err := c.Invoke(ctx, chat{Messages: []string{"deux"}}, graph.FromCheckpoint(first.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"one", "echo: one", "deux", "echo: deux"}, got.Messages); d != "" {
		t.Fatalf("forked run: %s", d)
	}
	old, err := c.Thread("tt").StateAt(context.Background(), snaps[0].CheckpointID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"one", "echo: one", "two", "echo: two"}, old.Values.Messages); d != "" {
		t.Fatalf("old branch changed: %s", d)
	}
	// UpdateState as the reply node: reducers apply, nothing runs next.
	id, err := c.Thread("tt").Update(context.Background(), graph.Updates(chatMessages.Set([]string{"edited"}), chatTurns.Set(10)), graph.AsNode("reply"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Thread("tt").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.CheckpointID != id || st.Metadata[graph.MetaSource] != "update" || len(st.Next) != 0 || st.Values.Turns != 12 ||
		!slices.Equal(st.Values.Messages, []string{"one", "echo: one", "deux", "echo: deux", "edited"}) {
		t.Fatalf("after Update: %+v", st)
	}
	// UpdateState as START's successor schedules the node.
	if _, err := c.Thread("tt").Update(context.Background(), chatMessages.Set([]string{"more"}), graph.AsNode("reply")); err != nil {
		t.Fatal(err)
	}
}

func TestPendingWritesAreNotRerun(t *testing.T) {
	saver := checkpoint.NewMemory()
	var fastRuns, slowRuns atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	g := graph.New[approval]()
	g.AddNode("fast", func(context.Context, approval) (graph.Update[approval], error) {
		fastRuns.Add(1)
		return apLog.Set([]string{"fast"}), nil
	})
	g.AddNode("flaky", func(context.Context, approval) (graph.Update[approval], error) {
		slowRuns.Add(1)
		if fail.Load() {
			return graph.Update[approval]{}, errors.New("flaky service down")
		}
		return apLog.Set([]string{"flaky"}), nil
	})
	g.AddEdge(graph.START, "fast").AddEdge(graph.START, "flaky").AddEdge("fast", graph.END).AddEdge("flaky", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("pw")
	if _, err := c.Invoke(ctx, approval{}); err == nil || !strings.Contains(err.Error(), "flaky service down") {
		t.Fatalf("err = %v", err)
	}
	fail.Store(false)
	s, err := c.Invoke(ctx, approval{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"fast", "flaky"}, s.Log); d != "" {
		t.Fatalf("log: %s", d)
	}
	if fastRuns.Load() != 1 || slowRuns.Load() != 2 {
		t.Fatalf("fast ran %d, flaky %d; want 1 and 2", fastRuns.Load(), slowRuns.Load())
	}
}

func TestTwoWritersConflict(t *testing.T) {
	saver := checkpoint.NewMemory()
	gate := make(chan struct{})
	entered := make(chan struct{}, 2)
	g := graph.New[chat]()
	g.AddNode("reply", func(_ context.Context, s chat) (graph.Update[chat], error) {
		entered <- struct{}{}
		<-gate
		return chatTurns.Set(1), nil
	})
	g.AddEdge(graph.START, "reply").AddEdge("reply", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("race")
	// Pause the thread before reply, so that both writers resume the same
	// checkpoint and both run the node.
	if _, err := c.Invoke(ctx, chat{Draft: "go"}, graph.InterruptBefore("reply")); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("seeding: %v", err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { _, errs[i] = c.Invoke(ctx, chat{}) })
	}
	<-entered
	<-entered
	close(gate)
	wg.Wait()
	var conflicts int
	for _, err := range errs {
		var ce *checkpoint.ConflictError
		if errors.As(err, &ce) && errors.Is(err, checkpoint.ErrConflict) {
			conflicts++
		} else if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if conflicts != 1 {
		t.Fatalf("errors %v: want exactly one conflict", errs)
	}
	st, err := c.Thread("race").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Values.Turns != 1 || len(st.Next) != 0 {
		t.Fatalf("state = %+v, want one writer's step only", st)
	}
	u, err := saver.Usage(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	if u.Checkpoints != 3 { // input, breakpoint, one step: no fork
		t.Fatalf("%d checkpoints, want 3", u.Checkpoints)
	}
}

func TestStreamYieldsInterrupt(t *testing.T) {
	var reviewRuns atomic.Int32
	c := approvalGraph(t, checkpoint.NewMemory(), &reviewRuns)
	ctx := onThread("stream")
	var modes []graph.StreamMode
	var last graph.Event[approval]
	for ev, err := range c.Stream(ctx, approval{}, graph.WithModes(graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		modes = append(modes, ev.Mode)
		last = ev
	}
	if d := cmp.Diff([]graph.StreamMode{graph.StreamUpdates, graph.StreamInterrupt}, modes); d != "" {
		t.Fatalf("modes (-want +got):\n%s", d)
	}
	if len(last.Interrupts) != 1 || last.Interrupts[0].ID != "2:review:0#0" {
		t.Fatalf("interrupt event %+v", last)
	}
	var final approval
	for ev, err := range c.Stream(ctx, approval{}, graph.Resume(false), graph.WithModes(graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		final = ev.State
	}
	if d := cmp.Diff([]string{"rejected"}, final.Log); d != "" || final.Approved {
		t.Fatalf("final state %+v", final)
	}
}

func TestDurableRunNeedsThread(t *testing.T) {
	c := echoGraph(t, checkpoint.NewMemory())
	if _, err := c.Invoke(context.Background(), chat{Messages: []string{"hi"}}); !errors.Is(err, graph.ErrNoThread) {
		t.Fatalf("err = %v, want ErrNoThread", err)
	}
	plain := graph.New[chat]()
	plain.AddNode("n", func(context.Context, chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
	plain.AddEdge(graph.START, "n").AddEdge("n", graph.END)
	p, err := plain.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Invoke(onThread("x"), chat{}, graph.Resume(1)); !errors.Is(err, graph.ErrNoCheckpointer) {
		t.Fatalf("Resume without a checkpointer: err = %v", err)
	}
	if _, err := p.Thread("x").State(context.Background()); !errors.Is(err, graph.ErrNoCheckpointer) {
		t.Fatalf("State without a checkpointer: err = %v", err)
	}
	if _, err := plain.Compile(graph.InterruptBefore("n")); !errors.Is(err, graph.ErrInvalidGraph) {
		t.Fatalf("breakpoints without a checkpointer: err = %v", err)
	}
	if _, err := c.Invoke(onThread("y"), chat{Messages: []string{"x"}}, graph.InterruptBefore("nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("breakpoint on an unknown node: err = %v", err)
	}
}

func TestResumeSendTasksAndSQLite(t *testing.T) {
	// A paused step whose tasks came from Send resumes with their inputs.
	saver, err := sqlite.New(context.Background(), sqlite.Config{Path: t.TempDir() + "/cp.db"})
	if err != nil {
		t.Fatal(err)
	}
	defer saver.Close()
	g := graph.New[approval]()
	var work *graph.TaskNode[approval, string]
	g.AddNode("plan", func(context.Context, approval) (graph.Update[approval], error) { return graph.Update[approval]{}, nil })
	work = graph.AddTask(g, "work", func(ctx context.Context, item string) (graph.Update[approval], error) {
		if item == "risky" {
			ok, err := graph.Interrupt[bool](ctx, "run "+item+"?")
			if err != nil {
				return graph.Update[approval]{}, err
			}
			if !ok {
				return apLog.Set([]string{item + " skipped"}), nil
			}
		}
		return apLog.Set([]string{item + " done"}), nil
	})
	g.AddEdge(graph.START, "plan").AddEdge("work", graph.END)
	g.AddConditionalEdges("plan", func(context.Context, approval) (graph.Route, error) {
		return graph.Dispatch(work.Send("safe"), work.Send("risky"), work.Send("other")), nil
	}, "work")
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("sends")
	_, err = c.Invoke(ctx, approval{})
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].ID != "2:work:1#0" {
		t.Fatalf("err = %v", err)
	}
	s, err := c.Invoke(ctx, approval{}, graph.Resume(false))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"safe done", "risky skipped", "other done"}, s.Log); d != "" {
		t.Fatalf("log (-want +got):\n%s", d)
	}
}

func TestUpdateStateWhilePausedThenResume(t *testing.T) {
	var reviewRuns atomic.Int32
	c := approvalGraph(t, checkpoint.NewMemory(), &reviewRuns)
	ctx := onThread("edit")
	if _, err := c.Invoke(ctx, approval{}); !errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	// A human edits the draft while the review waits; the pause stays.
	if _, err := c.Thread("edit").Update(context.Background(), apDraft.Set("edited text")); err != nil {
		t.Fatal(err)
	}
	st, err := c.Thread("edit").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Interrupts) != 1 || !slices.Equal(st.Next, []string{"review"}) || st.Values.Draft != "edited text" {
		t.Fatalf("after Update: %+v", st)
	}
	s, err := c.Invoke(ctx, approval{}, graph.Resume(true))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"edited text"}, s.Published); d != "" {
		t.Fatalf("published (-want +got):\n%s", d)
	}
}

func TestInterruptInsideSubgraph(t *testing.T) {
	child := graph.New[approval]()
	child.AddNode("ask", func(ctx context.Context, s approval) (graph.Update[approval], error) {
		v, err := graph.Interrupt[string](ctx, "name?")
		if err != nil {
			return graph.Update[approval]{}, err
		}
		return apLog.Set([]string{"hello " + v}), nil
	})
	child.AddEdge(graph.START, "ask").AddEdge("ask", graph.END)
	cc, err := child.Compile()
	if err != nil {
		t.Fatal(err)
	}
	parent := graph.New[approval]()
	graph.AddSubgraph(parent, "greet", cc, func(s approval) approval { return approval{} },
		func(s approval) graph.Update[approval] { return apLog.Set(s.Log) })
	parent.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	pc, err := parent.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("sub")
	_, err = pc.Invoke(ctx, approval{})
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 || ie.Interrupts[0].Node != "greet" {
		t.Fatalf("err = %v", err)
	}
	s, err := pc.Invoke(ctx, approval{}, graph.Resume("Ada"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"hello Ada"}, s.Log); d != "" {
		t.Fatalf("log (-want +got):\n%s", d)
	}
}

func TestFailureOutranksInterrupt(t *testing.T) {
	g := graph.New[approval]()
	g.AddNode("ask", func(ctx context.Context, s approval) (graph.Update[approval], error) {
		_, err := graph.Interrupt[bool](ctx, "?")
		return graph.Update[approval]{}, err
	})
	g.AddNode("boom", func(context.Context, approval) (graph.Update[approval], error) {
		return graph.Update[approval]{}, errors.New("boom")
	})
	g.AddEdge(graph.START, "ask").AddEdge(graph.START, "boom").AddEdge("ask", graph.END).AddEdge("boom", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(onThread("fail"), approval{})
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != "boom" || errors.Is(err, graph.ErrInterrupted) {
		t.Fatalf("err = %v, want boom's failure", err)
	}
}

// countingJSON is a Serializer of its own (no TypeChecker), counting calls.
type countingJSON struct{ marshals, unmarshals *atomic.Int32 }

func (c countingJSON) Marshal(v any) ([]byte, error) {
	c.marshals.Add(1)
	return checkpoint.JSON.Marshal(v)
}

func (c countingJSON) Unmarshal(data []byte, v any) error {
	c.unmarshals.Add(1)
	return checkpoint.JSON.Unmarshal(data, v)
}

func TestCustomSerializer(t *testing.T) {
	ser := countingJSON{&atomic.Int32{}, &atomic.Int32{}}
	c := echoGraph(t, checkpoint.NewMemory(), graph.WithSerializer(ser))
	ctx := onThread("ser")
	for _, m := range []string{"a", "b"} {
		if _, err := c.Invoke(ctx, chat{Messages: []string{m}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Thread("ser").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "echo: a", "b", "echo: b"}, st.Values.Messages); d != "" {
		t.Fatalf("messages: %s", d)
	}
	if ser.marshals.Load() == 0 || ser.unmarshals.Load() == 0 {
		t.Fatalf("the custom serializer was not used: %d marshals, %d unmarshals", ser.marshals.Load(), ser.unmarshals.Load())
	}
}

// crashAfterPause is a Saver that stops working, as if the process died,
// right after it saved a checkpoint with interrupts: every later call fails.
type crashAfterPause struct {
	checkpoint.Saver
	crashed bool
}

var errCrashed = errors.New("process died")

func (s *crashAfterPause) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if s.crashed {
		return errCrashed
	}
	err := s.Saver.Put(ctx, expect, cp, blobs, writes)
	s.crashed = err == nil && len(cp.Interrupts) > 0
	return err
}

func (s *crashAfterPause) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	if s.crashed {
		return errCrashed
	}
	return s.Saver.PutWrites(ctx, thread, id, writes)
}

// TestPauseIsAtomic kills the saver right after the checkpoint of a paused
// step is written: the writes of the sibling that finished in that step
// must have been saved with it, so resuming does not run the sibling again.
func TestPauseIsAtomic(t *testing.T) {
	mem := checkpoint.NewMemory()
	runs := map[string]*atomic.Int32{}
	crashing := &crashAfterPause{Saver: mem}
	c := parallelAsk(t, crashing, runs)
	ctx := onThread("crash")
	_, err := c.Invoke(ctx, approval{})
	if !crashing.crashed {
		t.Fatalf("the run did not save a paused step (err = %v)", err)
	}
	// A new process resumes the thread from what was stored.
	after := map[string]*atomic.Int32{}
	c2 := parallelAsk(t, mem, after)
	st, err := c2.Thread("crash").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Interrupts) != 2 {
		t.Fatalf("stored state has %d interrupts; want 2", len(st.Interrupts))
	}
	s, err := c2.Invoke(ctx, approval{}, graph.ResumeByID(map[string]any{"2:a:0#0": "yes", "2:b:1#0": "no"}))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a=yes", "b=no", "c"}, s.Log); d != "" {
		t.Fatalf("log (-want +got):\n%s", d)
	}
	if n := after["c"].Load(); n != 0 {
		t.Errorf("c, which finished in the paused step before the crash, ran %d more times", n)
	}
}

// A task that finishes after a sibling's failure has cancelled the step
// still has its writes saved, so resuming does not run it again.
func TestWritesSavedAfterSiblingFails(t *testing.T) {
	saver := checkpoint.NewMemory()
	var fastRuns atomic.Int32
	var fail atomic.Bool
	fail.Store(true)
	g := graph.New[approval]()
	g.AddNode("slow", func(ctx context.Context, _ approval) (graph.Update[approval], error) {
		if fastRuns.Add(1) == 1 {
			<-ctx.Done() // finishes only after the sibling failed
		}
		return apLog.Set([]string{"slow"}), nil
	})
	g.AddNode("flaky", func(context.Context, approval) (graph.Update[approval], error) {
		if fail.Load() {
			return graph.Update[approval]{}, errors.New("flaky service down")
		}
		return apLog.Set([]string{"flaky"}), nil
	})
	g.AddEdge(graph.START, "slow").AddEdge(graph.START, "flaky").AddEdge("slow", graph.END).AddEdge("flaky", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	conv := c.Thread("sibling")
	if _, err := conv.Invoke(context.Background(), approval{}); err == nil || !strings.Contains(err.Error(), "flaky service down") {
		t.Fatalf("err = %v", err)
	}
	fail.Store(false)
	s, err := conv.Invoke(context.Background(), approval{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"slow", "flaky"}, s.Log); d != "" {
		t.Fatalf("log: %s", d)
	}
	if n := fastRuns.Load(); n != 1 {
		t.Fatalf("slow ran %d times, want 1: its finished writes were not saved", n)
	}
}
