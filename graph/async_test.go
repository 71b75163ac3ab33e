package graph_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// historyOf lists a thread's checkpoints, oldest first, without their ids
// and times.
func historyOf(t *testing.T, th graph.Thread[job]) []graph.StateSnapshot[job] {
	t.Helper()
	var out []graph.StateSnapshot[job]
	for s, err := range th.History(context.Background(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		s.CheckpointID, s.ParentID, s.CreatedAt = "", "", time.Time{}
		out = append(out, s)
	}
	slices.Reverse(out)
	return out
}

// TestAsyncSavesWhatStepSaves: a run in DurabilityAsync leaves the same
// checkpoints, in the same order and each deriving from the one before, as
// a run in DurabilityStep, parallel steps and a resumed second run
// included; and when Invoke returns, every save is done.
func TestAsyncSavesWhatStepSaves(t *testing.T) {
	ctx := context.Background()
	hist := map[graph.Durability][]graph.StateSnapshot[job]{}
	for _, d := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync} {
		saver := checkpoint.NewMemory()
		th := longGraph(t, saver, 0, graph.WithDurability(d)).Thread("t")
		if _, err := th.Invoke(ctx, job{}); err != nil {
			t.Fatal(err)
		}
		// The run has returned: its last checkpoint is saved.
		st, err := th.State(ctx)
		if err != nil || st.Values.N != longSteps || len(st.Next) != 0 {
			t.Fatalf("%s: state after Invoke N=%d next %v, %v", d, st.Values.N, st.Next, err)
		}
		var parent string
		for s, err := range th.History(ctx, checkpoint.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			if parent != "" && s.CheckpointID != parent {
				t.Fatalf("%s: checkpoint %s is not the parent of the one after it (%s)", d, s.CheckpointID, parent)
			}
			parent = s.ParentID
		}
		hist[d] = historyOf(t, th)
	}
	if len(hist[graph.DurabilityStep]) < longSteps {
		t.Fatalf("step history has %d checkpoints", len(hist[graph.DurabilityStep]))
	}
	if d := cmp.Diff(hist[graph.DurabilityStep], hist[graph.DurabilityAsync], cmp.AllowUnexported(graph.InterruptInfo{}), cmpopts.IgnoreUnexported(graph.StateSnapshot[job]{})); d != "" {
		t.Fatalf("history (-step +async):\n%s", d)
	}
}

// TestAsyncPauses: in DurabilityAsync an Interrupt and a breakpoint pause
// the run with every save done, and the thread resumes as in step mode.
func TestAsyncPauses(t *testing.T) {
	ctx := context.Background()
	g := graph.New[job]()
	g.AddNode("work", func(_ context.Context, s job) (graph.Update[job], error) {
		return graph.Updates(jobLog.Set([]string{"work"}), jobN.Set(1)), nil
	})
	g.AddNode("ask", func(ctx context.Context, s job) (graph.Update[job], error) {
		ok, err := graph.Interrupt[string](ctx, "go on?")
		if err != nil {
			return graph.Update[job]{}, err
		}
		return jobLog.Set([]string{"answer " + ok}), nil
	})
	g.AddEdge(graph.START, "work")
	g.AddConditionalEdges("work", func(_ context.Context, s job) (graph.Route, error) {
		if s.N < 5 {
			return graph.To("work"), nil
		}
		return graph.To("ask"), nil
	}, "work", "ask")
	g.AddEdge("ask", graph.END)
	c, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()), graph.WithDurability(graph.DurabilityAsync),
		graph.InterruptAfter("work"))
	if err != nil {
		t.Fatal(err)
	}
	th := c.Thread("p")
	var ie *graph.InterruptError
	for i := 1; i <= 5; i++ {
		_, err := th.Invoke(ctx, job{})
		if !errors.As(err, &ie) || ie.Interrupts[0].Kind != graph.BreakpointAfter {
			t.Fatalf("run %d: %v, want a breakpoint after work", i, err)
		}
		if st, err := th.State(ctx); err != nil || st.CheckpointID != ie.CheckpointID || st.Values.N != i {
			t.Fatalf("run %d: latest checkpoint %s N=%d (%v), want the pause %s with N=%d", i, st.CheckpointID, st.Values.N, err, ie.CheckpointID, i)
		}
	}
	_, err = th.Invoke(ctx, job{})
	if !errors.As(err, &ie) || ie.Interrupts[0].Kind != graph.InterruptRaised {
		t.Fatalf("%v, want the interrupt of ask", err)
	}
	out, err := th.Invoke(ctx, job{}, graph.Resume("yes"))
	if err != nil || out.Log[len(out.Log)-1] != "answer yes" || out.N != 5 {
		t.Fatalf("resumed: %+v, %v", out, err)
	}
}

// failingSaver fails every Put from the failAt-th on.
type failingSaver struct {
	checkpoint.Saver
	puts   atomic.Int32
	failAt int32
}

var errDiskFull = errors.New("disk full")

func (s *failingSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	if s.puts.Add(1) >= s.failAt {
		return errDiskFull
	}
	return s.Saver.Put(ctx, expect, cp, blobs, writes)
}

// TestAsyncSaveFails: a save that fails in DurabilityAsync fails the run
// with its error, nothing after it is saved, and the thread resumes from
// the last save that succeeded to the same final state.
func TestAsyncSaveFails(t *testing.T) {
	ctx := context.Background()
	mem := checkpoint.NewMemory()
	saver := &failingSaver{Saver: mem, failAt: 10}
	_, err := longGraph(t, saver, 0, graph.WithDurability(graph.DurabilityAsync)).Thread("f").Invoke(ctx, job{})
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("run: %v, want the save's error", err)
	}
	c := longGraph(t, mem, 0, graph.WithDurability(graph.DurabilityAsync))
	n := 0
	for _, err := range c.Thread("f").History(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 9 {
		t.Fatalf("%d checkpoints saved, want the 9 before the failure", n)
	}
	want, err := longGraph(t, checkpoint.NewMemory(), 0).Thread("ref").Invoke(ctx, job{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Thread("f").Invoke(ctx, job{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("resumed (-want +got):\n%s", d)
	}
}
