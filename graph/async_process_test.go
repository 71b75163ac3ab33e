package graph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// longSteps is how many times "step" runs in a long run.
const longSteps = 120

// longGraph is a long run in which "step" runs longSteps times and, after
// every seventh, "a" and "b" run in parallel before it goes on, so that
// the run has both single-task steps and parallel ones (whose tasks save
// pending writes). killAt > 0 makes "step" kill the process when N
// reaches it.
func longGraph(t testing.TB, saver checkpoint.Saver, killAt int, opts ...graph.CompileOption) *graph.Compiled[job] {
	t.Helper()
	g := graph.New[job]()
	g.AddNode("step", func(_ context.Context, s job) (graph.Update[job], error) {
		if killAt > 0 && s.N == killAt {
			killSelf()
		}
		return graph.Updates(jobLog.Set([]string{"s" + strconv.Itoa(s.N)}), jobN.Set(1)), nil
	})
	side := func(name string) graph.NodeFunc[job] {
		return func(_ context.Context, s job) (graph.Update[job], error) {
			return jobLog.Set([]string{name + strconv.Itoa(s.N)}), nil
		}
	}
	g.AddNode("a", side("a")).AddNode("b", side("b"))
	g.AddEdge(graph.START, "step").AddEdge("a", "step").AddEdge("b", "step")
	g.AddConditionalEdges("step", func(_ context.Context, s job) (graph.Route, error) {
		switch {
		case s.N >= longSteps:
			return graph.To(graph.END), nil
		case s.N%7 == 0:
			return graph.To("a", "b"), nil
		}
		return graph.To("step"), nil
	}, "step", "a", "b", graph.END)
	c, err := g.Compile(append([]graph.CompileOption{graph.WithCheckpointer(saver), graph.WithStepLimit(1000)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAsyncKillAndResume runs a long run in DurabilityAsync in a child
// process that kills itself with SIGKILL at a random step, while saves of
// the steps before may be in flight, then resumes the thread in this
// process: every time, the thread is readable, holds at most the state the
// killing step started from (whose save may have completed while that
// step ran), and the resumed run ends in exactly the state of a run that
// was never killed. It runs on SQLite and on PostgreSQL.
func TestAsyncKillAndResume(t *testing.T) {
	if mode, ok := strings.CutPrefix(os.Getenv(childMode), "async-kill:"); ok {
		backend, at, _ := strings.Cut(mode, ":")
		killAt, _ := strconv.Atoi(at)
		saver := openBackend(t, backend, os.Getenv(childDB))
		c := longGraph(t, saver, killAt, graph.WithDurability(graph.DurabilityAsync))
		_, err := c.Thread(os.Getenv(childSide)).Invoke(context.Background(), job{})
		t.Fatalf("child was not killed: run ended with %v", err)
	}
	want, err := longGraph(t, checkpoint.NewMemory(), 0).Thread("reference").Invoke(context.Background(), job{})
	if err != nil {
		t.Fatal(err)
	}
	if want.N != longSteps {
		t.Fatalf("reference run: N = %d", want.N)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "cp.db")
			if backend == "postgres" {
				db = pgTestSchema
			}
			saver := openBackend(t, backend, db) // skips without a server
			for k := range 4 {
				killAt := 1 + rng.IntN(longSteps-1)
				thread := fmt.Sprintf("async-kill-%d-%d-%d", os.Getpid(), seed, k)
				t.Run(fmt.Sprintf("kill at %d", killAt), func(t *testing.T) {
					err := runChild(t, "TestAsyncKillAndResume", fmt.Sprintf("async-kill:%s:%d", backend, killAt), db, thread).Run()
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Fatalf("child: %v, want killed by SIGKILL", err)
					}
					ctx := context.Background()
					c := longGraph(t, saver, 0, graph.WithDurability(graph.DurabilityAsync))
					th := c.Thread(thread)
					st, err := th.State(ctx)
					switch {
					case errors.Is(err, checkpoint.ErrNotFound):
						t.Logf("killed before the first save completed")
					case err != nil:
						t.Fatalf("the killed thread cannot be read: %v", err)
					case st.Values.N > killAt || len(st.Next) == 0:
						t.Fatalf("saved state N=%d next %v; the child was killed at N=%d", st.Values.N, st.Next, killAt)
					default:
						t.Logf("saved up to N=%d of %d", st.Values.N, killAt)
					}
					got, err := th.Invoke(ctx, job{})
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Fatalf("resumed run's final state (-want +got):\n%s", d)
					}
					if st, err := th.State(ctx); err != nil || cmp.Diff(want, st.Values) != "" || len(st.Next) != 0 {
						t.Fatalf("saved final state %+v, %v; want the run's", st.Values, err)
					}
				})
			}
		})
	}
}

// openBackend opens the SQLite file or the PostgreSQL schema db.
func openBackend(t testing.TB, backend, db string) checkpoint.Saver {
	t.Helper()
	if backend == "postgres" {
		return pgSaver(t, db)
	}
	s, err := sqlite.New(context.Background(), sqlite.Config{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
