package postgres

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	evpg "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// TestMigrationMovesEventLogs builds the tables of the versions before
// the shared event log (migrations 1 and 2), with a run and its two
// events, then opens a Store: migration 3 copies the events to the Log,
// where they read back with their ids and the run's next event follows
// them, and keeps the old table and column for the old version.
func TestMigrationMovesEventLogs(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_migrate_")
	q := newQueries(schema)
	if err := pgdb.Migrate(t.Context(), pool, pgdb.Migrations{Schema: schema, Table: "agentserver_migrations", Lock: "agentgraph/agent/server/postgres",
		Steps: migrations[:2], Replacer: q.tables}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, x := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO ` + q.threads + ` (id, owner, status, created, updated, graph_id, head, rolled) VALUES ('t1', '', 'idle', $1, $1, 'g', '', false)`, []any{now}},
		{`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error, next_event)
			VALUES ('r1', 't1', 'a', $1, $1, 'success', 'reject', '', '', 1, true, '', '', '', 2)`, []any{now}},
		{`INSERT INTO ` + q.events + ` (run_id, id, name, data) VALUES ('r1', 0, 'metadata', '{"a":1}'), ('r1', 1, 'end', '{}')`, nil},
	} {
		if _, err := pool.Exec(t.Context(), x.sql, x.args...); err != nil {
			t.Fatalf("%s: %v", x.sql, err)
		}
	}
	st, err := New(t.Context(), Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, first, err := st.Events(t.Context(), "r1", -1, 0)
	if err != nil || first != 0 || len(evs) != 2 || evs[0].ID != 0 || evs[0].Name != "metadata" || string(evs[0].Data) != `{"a":1}` || evs[1].ID != 1 || evs[1].Name != "end" {
		t.Fatalf("moved events: %+v from %d, %v; want metadata 0 and end 1", evs, first, err)
	}
	ev, err := st.AppendEvent(t.Context(), "r1", "custom", json.RawMessage(`{}`), 0)
	if err != nil || ev.ID != 2 {
		t.Fatalf("append after the move: %+v, %v; want id 2", ev, err)
	}
	// The old version's table and column stay for its instances still
	// running during a rolling deploy: an append of theirs works.
	if _, err := pool.Exec(t.Context(), `WITH n AS (UPDATE `+q.runs+` SET next_event = next_event + 1 WHERE id = 'r1' RETURNING next_event - 1 AS id)
		INSERT INTO `+q.events+` (run_id, id, name, data) SELECT 'r1', id, 'values', '{}' FROM n`); err != nil {
		t.Fatalf("an append of the earlier version after the migration: %v; want the table and column kept", err)
	}
	if _, err := st.Run(t.Context(), "r1"); err != nil {
		t.Fatalf("the run after the migration: %v", err)
	}
}

// TestMigrationDropsCreatedIndex builds the tables of migrations 1 to 4,
// with the index of the active runs by creation time, then opens a
// Store: migration 5 drops that index, and the queue's search (lockDue)
// still reads the active runs alone through agentserver_runs_active: on
// 300 ended runs and one pending it reads about as many buffers as on
// the pending one alone.
func TestMigrationDropsCreatedIndex(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_migrate_")
	q := newQueries(schema)
	// The event log's tables first, as New makes them: migration 3
	// copies rows into them.
	lg, err := evpg.NewLog(t.Context(), evpg.LogConfig{Pool: pool, Schema: schema, Name: logName, Parent: q.runs})
	if err != nil {
		t.Fatal(err)
	}
	lg.Close()
	if err := pgdb.Migrate(t.Context(), pool, pgdb.Migrations{Schema: schema, Table: "agentserver_migrations", Lock: "agentgraph/agent/server/postgres",
		Steps: migrations[:4], Replacer: q.tables}); err != nil {
		t.Fatal(err)
	}
	indexes := func() []string {
		t.Helper()
		rows, err := pool.Query(t.Context(), `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'agentserver_runs' ORDER BY indexname`, schema)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := indexes(); !slices.Contains(got, "agentserver_runs_created_idx") {
		t.Fatalf("indexes after migration 4: %v; want agentserver_runs_created_idx among them", got)
	}
	st, err := New(t.Context(), Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := []string{"agentserver_runs_active", "agentserver_runs_owner_active", "agentserver_runs_pkey", "agentserver_runs_thread_id_seq_idx", "agentserver_runs_updated_idx"}
	if diff := cmp.Diff(want, indexes()); diff != "" {
		t.Errorf("indexes of agentserver_runs after New (-want +got):\n%s", diff)
	}
	now := time.Now().UTC()
	if _, err := pool.Exec(t.Context(), `INSERT INTO `+q.threads+` (id, owner, status, created, updated, graph_id, head, rolled) VALUES ('t1', '', 'busy', $1, $1, 'g', '', false)`, now); err != nil {
		t.Fatal(err)
	}
	pending := `INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
		VALUES ('p', 't1', 'a', $1, $1, 'pending', 'reject', '', '', 0, false, '', '', '')`
	if _, err := pool.Exec(t.Context(), pending, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	short := postgrestest.Buffers(t, pool, q.lockDue, "0")
	if _, err := pool.Exec(t.Context(), `INSERT INTO `+q.runs+` (id, thread_id, assistant_id, created, updated, status, metadata, kwargs, multitask, owner, worker, attempt, started, start, cancel, error)
		SELECT 'old' || i, 't1', 'a', $1, $1, 'success', '{"k":"v"}', convert_to(repeat('x', 300), 'UTF8'), 'reject', '', '', 1, true, '', '', '' FROM generate_series(1, 300) i`, now); err != nil {
		t.Fatal(err)
	}
	long := postgrestest.Buffers(t, pool, q.lockDue, "0")
	if long > short+3 {
		t.Errorf("lockDue read %d buffers with 300 ended runs and a pending one, %d with the pending one alone; want about as many", long, short)
	}
	t.Logf("lockDue: %d buffers on a pending run, %d with 300 ended runs too", short, long)
}
