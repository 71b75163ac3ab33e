package postgres

import (
	"encoding/json"
	"testing"
	"time"

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
