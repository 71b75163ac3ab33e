package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestCreateRunLockedTransaction pins what a run's creation under the
// thread's lock (CreateRunLocked) sends, on a pool that prepares its
// statements (pgx's default: one implicit transaction in pipeline mode,
// in 2 socket writes: the lock's take, the read and the insert, with no
// BEGIN or COMMIT) and on one that does not (an explicit transaction,
// BEGIN and COMMIT included). It checks on each what the creation does when its plan
// creates the run, fails, creates nothing, or creates a run whose id is
// taken, and when another Store holds the lock; and that the connection
// is left idle and the lock free after each (the pool has one
// connection, which every call reuses).
func TestCreateRunLockedTransaction(t *testing.T) {
	for _, tc := range []struct {
		name               string
		mode               pgx.QueryExecMode
		statements, writes int
	}{
		{"prepared", pgx.QueryExecModeCacheStatement, 3, 2},
		// pgx describes the statements of each batch first, in a
		// round trip of its own.
		{"unprepared", pgx.QueryExecModeDescribeExec, 5, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, schema := postgrestest.Schema(t, "agentserver_create_")
			count := &postgrestest.Counter{}
			pool := postgrestest.CountedPool(t, count, func(c *pgxpool.Config) {
				c.MaxConns = 1
				c.ConnConfig.DefaultQueryExecMode = tc.mode
			})
			st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			other := open2(t, schema)
			ctx := t.Context()
			at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
			if err := st.CreateThread(ctx, &server.Thread{ID: "t1", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadIdle, GraphID: "g"}); err != nil {
				t.Fatal(err)
			}
			run := func(id string) *server.Run {
				return &server.Run{ID: id, ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"}
			}
			// planned returns a plan that records what it was given and
			// returns r and err.
			var seen []string
			planned := func(r *server.Run, md map[string]any, err error) func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
				return func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
					if th == nil || th.ID != "t1" {
						t.Errorf("the plan got thread %+v; want t1", th)
					}
					for _, a := range active {
						seen = append(seen, a.ID)
					}
					return r, "g", md, err
				}
			}
			// idle checks that the connection is idle and the thread's
			// lock free: another Store takes it at once.
			idle := func(what string) {
				t.Helper()
				var status string
				if err := pool.QueryRow(ctx, "SELECT current_setting('transaction_isolation')").Scan(&status); err != nil {
					t.Fatalf("after %s, the connection: %v", what, err)
				}
				tctx, cancel := context.WithTimeout(ctx, 30*time.Second) // failure guard only
				defer cancel()
				unlock, err := other.LockThread(tctx, "t1")
				if err != nil {
					t.Fatalf("after %s, another Store's lock: %v; want it free", what, err)
				}
				unlock()
			}

			if created, err := st.CreateRunLocked(ctx, "t1", planned(run("r1"), map[string]any{"k": "1"}, nil)); !created || err != nil {
				t.Fatalf("CreateRunLocked (warming the connection up): %v, %v; want created", created, err)
			}
			before := count.Snapshot()
			created, err := st.CreateRunLocked(ctx, "t1", planned(run("r2"), map[string]any{"k": "2"}, nil))
			after := count.Snapshot()
			if !created || err != nil {
				t.Fatalf("CreateRunLocked: %v, %v; want created", created, err)
			}
			if s, w, x := after.Statements-before.Statements, after.Writes-before.Writes, after.Txs-before.Txs; s != tc.statements || w != tc.writes || x != 1 {
				t.Errorf("CreateRunLocked sent %d statements in %d writes, %d transactions; want %d, %d, 1\n%s", s, w, x, tc.statements, tc.writes, after)
			}
			if len(seen) != 1 || seen[0] != "r1" {
				t.Errorf("the plan saw the active runs %v; want [r1]", seen)
			}
			if r, err := st.Run(ctx, "r2"); err != nil || r.Status != server.RunPending {
				t.Fatalf("r2 as stored: %+v, %v; want pending", r, err)
			}
			if th, err := st.Thread(ctx, "t1"); err != nil || th.Status != server.ThreadBusy || th.Metadata["k"] != "2" {
				t.Fatalf("t1 as stored: %+v, %v; want busy, with metadata k = 2", th, err)
			}
			idle("a creation")

			errPlan := errors.New("plan refused")
			if created, err := st.CreateRunLocked(ctx, "t1", planned(run("r3"), nil, errPlan)); created || err != errPlan {
				t.Fatalf("CreateRunLocked whose plan fails: %v, %v; want the plan's error as is", created, err)
			}
			idle("a failed plan")
			if created, err := st.CreateRunLocked(ctx, "t1", planned(nil, nil, nil)); created || err != nil {
				t.Fatalf("CreateRunLocked whose plan creates nothing: %v, %v; want nothing, no error", created, err)
			}
			idle("a plan that creates nothing")
			if created, err := st.CreateRunLocked(ctx, "t1", planned(run("r1"), map[string]any{"k": "dup"}, nil)); created || !errors.Is(err, server.ErrExists) {
				t.Fatalf("CreateRunLocked of a taken run id: %v, %v; want ErrExists", created, err)
			}
			if th, err := st.Thread(ctx, "t1"); err != nil || th.Metadata["k"] != "2" {
				t.Fatalf("t1 after a refused insert: %+v, %v; want its metadata unchanged (k = 2)", th, err)
			}
			idle("a refused insert")

			unlock, err := other.LockThread(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			called := false
			created, err = st.CreateRunLocked(ctx, "t1", func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
				called = true
				return run("r4"), "g", nil, nil
			})
			unlock()
			if created || !errors.Is(err, server.ErrThreadLocked) || called {
				t.Fatalf("CreateRunLocked under another Store's lock: %v, %v, plan called %v; want ErrThreadLocked, no plan", created, err, called)
			}
			idle("a lock held elsewhere")

			if created, err := st.CreateRunLocked(ctx, "t1", planned(run("r5"), nil, nil)); !created || err != nil {
				t.Fatalf("CreateRunLocked after the refusals: %v, %v; want created", created, err)
			}
			for id, want := range map[string]bool{"r3": false, "r4": false, "r5": true} {
				if _, err := st.Run(ctx, id); (err == nil) != want {
					t.Errorf("run %s: %v; want stored %v", id, err, want)
				}
			}
		})
	}
}
