package graph_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// getCounter counts the Gets of the Saver it wraps.
type getCounter struct {
	checkpoint.Saver
	gets atomic.Int64
}

func (s *getCounter) Get(ctx context.Context, thread, id string) (*checkpoint.Snapshot, error) {
	s.gets.Add(1)
	return s.Saver.Get(ctx, thread, id)
}

// continueSavers are the Savers ContinueFrom is tested on: memory,
// SQLite and (when it answers) PostgreSQL.
func continueSavers(t *testing.T) map[string]func(t *testing.T) checkpoint.Saver {
	return map[string]func(t *testing.T) checkpoint.Saver{
		"memory": func(*testing.T) checkpoint.Saver { return checkpoint.NewMemory() },
		"sqlite": func(t *testing.T) checkpoint.Saver {
			s, err := sqlite.New(context.Background(), sqlite.Config{Path: t.TempDir() + "/cp.db"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) checkpoint.Saver { return pgSaver(t, pgTestSchema) },
	}
}

// chatHistory is what a thread's history says, checkpoint ids aside: each
// checkpoint's values, next nodes, step, nodes run and metadata, newest
// first.
func chatHistory(t *testing.T, th graph.Thread[chat]) []string {
	t.Helper()
	var out []string
	for s, err := range th.History(context.Background(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%+v next=%v step=%d ran=%v meta=%v parent=%t", s.Values, s.Next, s.Step, s.Ran, s.Metadata, s.ParentID != ""))
	}
	return out
}

// TestContinueFromRunsAsWithout runs two threads the same way, one of them
// given the state it was read in with ContinueFrom: new input on a
// finished thread, and a zero input past a breakpoint. Values and history
// are the same, and the continued runs do not read the checkpoint.
func TestContinueFromRunsAsWithout(t *testing.T) {
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			saver := &getCounter{Saver: open(t)}
			c := echoGraph(t, saver)
			id := fmt.Sprintf("cont-%d-%d", os.Getpid(), time.Now().UnixNano())
			plain, cont := c.Thread(id+"-plain"), c.Thread(id+"-cont")
			ctx := context.Background()
			var got [2][]chat
			for i, th := range []graph.Thread[chat]{plain, cont} {
				if _, err := th.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
					t.Fatal(err)
				}
				// New input on a finished thread.
				var opts []graph.RunOption
				if i == 1 {
					st, err := th.State(ctx)
					if err != nil {
						t.Fatal(err)
					}
					opts = append(opts, graph.ContinueFrom(st))
				}
				before := saver.gets.Load()
				s, err := th.Invoke(ctx, chat{Messages: []string{"there"}}, append(opts, graph.InterruptBefore("reply"))...)
				if !errors.Is(err, graph.ErrInterrupted) {
					t.Fatalf("second run: %v, want paused before reply", err)
				}
				if g := saver.gets.Load() - before; i == 1 && g != 0 {
					t.Errorf("a run given ContinueFrom read %d checkpoints, want none", g)
				}
				got[i] = append(got[i], s)
				// A zero input past the breakpoint (a paused step).
				opts = opts[:0]
				if i == 1 {
					st, err := th.State(ctx)
					if err != nil {
						t.Fatal(err)
					}
					opts = append(opts, graph.ContinueFrom(st))
				}
				before = saver.gets.Load()
				s, err = th.Invoke(ctx, chat{}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if g := saver.gets.Load() - before; i == 1 && g != 0 {
					t.Errorf("a resumed run given ContinueFrom read %d checkpoints, want none", g)
				}
				got[i] = append(got[i], s)
			}
			if d := cmp.Diff(got[0], got[1]); d != "" {
				t.Errorf("run results differ (-plain +continued):\n%s", d)
			}
			want := chatHistory(t, plain)
			if len(want) != 5 { // input, reply; input, breakpoint before reply; reply
				t.Fatalf("plain history: %q, want 5 checkpoints", want)
			}
			if d := cmp.Diff(want, chatHistory(t, cont)); d != "" {
				t.Errorf("histories differ (-plain +continued):\n%s", d)
			}
		})
	}
}

// TestContinueFromConflicts moves a thread on between the read of its
// state and the run given it: the run fails with the Saver's conflict
// error and the thread keeps the other writer's checkpoint, with no
// branch from the one read.
func TestContinueFromConflicts(t *testing.T) {
	for name, open := range continueSavers(t) {
		t.Run(name, func(t *testing.T) {
			saver := open(t)
			c := echoGraph(t, saver)
			ctx := context.Background()
			th := c.Thread(fmt.Sprintf("cont-conflict-%d-%d", os.Getpid(), time.Now().UnixNano()))
			if _, err := th.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
				t.Fatal(err)
			}
			st, err := th.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Another writer: a run, then an update.
			for _, write := range []func() error{
				func() error { _, err := th.Invoke(ctx, chat{Messages: []string{"other"}}); return err },
				func() error { _, err := th.Update(ctx, chatDraft.Set("edited")); return err },
			} {
				if err := write(); err != nil {
					t.Fatal(err)
				}
				want, err := th.State(ctx)
				if err != nil {
					t.Fatal(err)
				}
				hist := chatHistory(t, th)
				_, err = th.Invoke(ctx, chat{Messages: []string{"late"}}, graph.ContinueFrom(st))
				var ce *checkpoint.ConflictError
				if !errors.Is(err, checkpoint.ErrConflict) || !errors.As(err, &ce) {
					t.Fatalf("run on a stale snapshot: %v, want a checkpoint.ErrConflict", err)
				}
				if ce.Expected != st.CheckpointID || ce.Actual != want.CheckpointID {
					t.Errorf("conflict expected %q, actual %q; want %q, %q", ce.Expected, ce.Actual, st.CheckpointID, want.CheckpointID)
				}
				now, err := th.State(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if now.CheckpointID != want.CheckpointID || cmp.Diff(want.Values, now.Values) != "" {
					t.Errorf("latest after the conflict = %s %+v, want the other writer's %s %+v", now.CheckpointID, now.Values, want.CheckpointID, want.Values)
				}
				if d := cmp.Diff(hist, chatHistory(t, th)); d != "" {
					t.Errorf("the refused run changed the history:\n%s", d)
				}
			}
		})
	}
}

// TestContinueFromConflictsInEveryDurability: with asynchronous saves,
// and with the one save at the run's exit (after its nodes ran), a stale
// snapshot still fails the run with the conflict and leaves the thread as
// the other writer left it.
func TestContinueFromConflictsInEveryDurability(t *testing.T) {
	for _, d := range []graph.Durability{graph.DurabilityStep, graph.DurabilityAsync, graph.DurabilityExit} {
		t.Run(d.String(), func(t *testing.T) {
			saver := checkpoint.NewMemory()
			c := echoGraph(t, saver, graph.WithDurability(d))
			ctx := context.Background()
			th := c.Thread("durability")
			if _, err := th.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
				t.Fatal(err)
			}
			st, err := th.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := th.Invoke(ctx, chat{Messages: []string{"other"}}); err != nil {
				t.Fatal(err)
			}
			hist := chatHistory(t, th)
			if _, err := th.Invoke(ctx, chat{Messages: []string{"late"}}, graph.ContinueFrom(st)); !errors.Is(err, checkpoint.ErrConflict) {
				t.Fatalf("run on a stale snapshot: %v, want a checkpoint.ErrConflict", err)
			}
			if diff := cmp.Diff(hist, chatHistory(t, th)); diff != "" {
				t.Errorf("the refused run changed the history:\n%s", diff)
			}
		})
	}
}

// TestContinueFromRefuses gives ContinueFrom snapshots it cannot go on
// from: each run fails with ErrBadSnapshot before saving anything.
func TestContinueFromRefuses(t *testing.T) {
	saver := checkpoint.NewMemory()
	c := echoGraph(t, saver)
	other := echoGraph(t, saver)
	ctx := context.Background()
	th := c.Thread("refuse")
	if _, err := th.Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Thread("refuse-other").Invoke(ctx, chat{Messages: []string{"hi"}}); err != nil {
		t.Fatal(err)
	}
	latest, err := th.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at, err := th.StateAt(ctx, latest.CheckpointID)
	if err != nil {
		t.Fatal(err)
	}
	var fromHistory graph.StateSnapshot[chat]
	for s, err := range th.History(ctx, checkpoint.ListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		fromHistory = s
		break
	}
	otherThread, err := c.Thread("refuse-other").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	otherGraph, err := other.Thread("refuse").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts []graph.RunOption
		want string
	}{
		{"zero", []graph.RunOption{graph.ContinueFrom(graph.StateSnapshot[chat]{})}, "Thread.State did not return"},
		{"state at", []graph.RunOption{graph.ContinueFrom(at)}, "Thread.State did not return"},
		{"history", []graph.RunOption{graph.ContinueFrom(fromHistory)}, "Thread.State did not return"},
		{"other thread", []graph.RunOption{graph.ContinueFrom(otherThread)}, `of thread "refuse-other" to run thread "refuse"`},
		{"other graph", []graph.RunOption{graph.ContinueFrom(otherGraph)}, "another compiled graph"},
		{"with FromCheckpoint", []graph.RunOption{graph.ContinueFrom(latest), graph.FromCheckpoint(latest.CheckpointID)}, "give one of them"},
	}
	before := chatHistory(t, th)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Bool
			_, err := th.Invoke(ctx, chat{Messages: []string{"again"}}, append(tc.opts, graph.WithHooks(graph.Hooks{
				NodeStart: func(ctx context.Context, _ graph.TaskInfo) context.Context { ran.Store(true); return ctx },
			}))...)
			if !errors.Is(err, graph.ErrBadSnapshot) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want graph.ErrBadSnapshot saying %q", err, tc.want)
			}
			// The caller's mistake, not the checkpointer's failure.
			if ce := (*graph.CheckpointError)(nil); errors.As(err, &ce) {
				t.Errorf("err = %v is a *graph.CheckpointError (Op %q), want the caller's error alone", err, ce.Op)
			}
			if ran.Load() {
				t.Error("a node ran")
			}
			if d := cmp.Diff(before, chatHistory(t, th)); d != "" {
				t.Errorf("the refused run changed the history:\n%s", d)
			}
		})
	}
	// The snapshot that was refused with FromCheckpoint is good alone.
	if _, err := th.Invoke(ctx, chat{Messages: []string{"again"}}, graph.ContinueFrom(latest)); err != nil {
		t.Fatal(err)
	}
}
