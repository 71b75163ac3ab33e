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
	"github.com/jackc/pgx/v5/pgxpool"

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
					cmd := runChild(t, "TestAsyncKillAndResume", fmt.Sprintf("async-kill:%s:%d", backend, killAt), db, thread)
					// The child's connections carry the thread as their
					// application name, so that the server's sessions of
					// the killed child can be found.
					cmd.Env = append(cmd.Env, "PGAPPNAME="+thread)
					err := cmd.Run()
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Fatalf("child: %v, want killed by SIGKILL", err)
					}
					if backend == "postgres" {
						// A save the child had sent before it died may still
						// commit: the server ends the child's session only
						// once it reads the closed socket. Resuming before
						// then can meet that save as another writer's.
						waitSessionsGone(t, thread)
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

// waitSessionsGone waits until PostgreSQL has no session whose
// application name is app: a killed client's sessions have ended, and
// whatever they had sent has committed or rolled back.
func waitSessionsGone(t *testing.T, app string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, pgDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err != nil {
			t.Fatalf("waiting for the killed child's sessions to end: %v", err)
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the killed child's %d PostgreSQL sessions have not ended: %v", n, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
