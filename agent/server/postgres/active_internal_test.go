package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestActiveRunsReadNoHistory: the statements that look for a thread's
// active runs (the claim, the active-run listing, the thread's refresh)
// read the active runs, not every run of the thread, so their cost does
// not grow with the thread's finished runs: on a thread of 300 finished
// runs and one pending they read about as many buffers as on a thread of
// one pending run.
func TestActiveRunsReadNoHistory(t *testing.T) {
	st, pool := schemaStore(t, "agentserver_active_")
	q := st.q
	now := time.Now().UTC()
	// Thread "long": 300 finished runs, with metadata and arguments of
	// the size a run has, then a pending one; thread "short": the pending
	// one alone.
	for _, sql := range []string{
		`INSERT INTO ` + q.threads + ` (id, owner, status, created, updated, graph_id, head, rolled) VALUES ('long', '', 'busy', $1, $1, 'g', '', false), ('short', '', 'busy', $1, $1, 'g', '', false)`,
		`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, metadata, kwargs, multitask, owner, worker, attempt, started, start, cancel, error)
			SELECT 'old' || i, 'long', 'a', $1, $1, 'success', '{"k":"v"}', convert_to(repeat('x', 300), 'UTF8'), 'reject', '', '', 1, true, '', '', '' FROM generate_series(1, 300) i`,
		`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
			VALUES ('p-long', 'long', 'a', $1, $1, 'pending', 'reject', '', '', 0, false, '', '', ''), ('p-short', 'short', 'a', $1, $1, 'pending', 'reject', '', '', 0, false, '', '', '')`,
	} {
		if _, err := pool.Exec(t.Context(), sql, now); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, s := range []struct {
		name, sql string
		args      []string
	}{
		{"activeRuns", q.activeRuns, nil},
		// The claim's search: no run is due once the first of the two
		// executions claimed the pending one.
		{"claim", q.claim, []string{"w", "10000000"}},
		{"refreshThread", q.refreshThread, []string{"{}", "false", "", "null", "false", "false", "false", now.Format(time.RFC3339Nano), "-1", "-1"}},
	} {
		short := postgrestest.Buffers(t, pool, s.sql, append([]string{"short"}, s.args...)...)
		long := postgrestest.Buffers(t, pool, s.sql, append([]string{"long"}, s.args...)...)
		if long > short+3 {
			t.Errorf("%s read %d buffers on a thread of 300 finished runs and a pending one, %d on one of a pending run; want about as many", s.name, long, short)
		}
		t.Logf("%s: %d buffers on a thread of a pending run, %d with 300 finished runs too", s.name, short, long)
	}
}

// schemaStore makes a Store in a fresh schema (its name begins with
// prefix) on the test server, closed when the test ends, and returns it
// with the schema's pool.
func schemaStore(t *testing.T, prefix string) (*Store, *pgxpool.Pool) {
	t.Helper()
	pool, schema := postgrestest.Schema(t, prefix)
	st, err := New(t.Context(), Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, pool
}
