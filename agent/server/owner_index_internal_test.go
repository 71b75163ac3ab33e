package server

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
)

// TestSQLiteCountActiveRunsReadsOwnerIndex: a SQLite file of the version
// before the index of the active runs by owner (migrations 1 and 2), with
// active and ended runs of two principals, is brought up to date by
// OpenSQLite: the runs' owners are filled in from their threads, the
// count is right for each principal, runs created since count too, and
// the count's plan searches the index by owner (it scanned every
// principal's active runs and read their threads before).
func TestSQLiteCountActiveRunsReadsOwnerIndex(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	db, _, err := sqlitedb.Open(nil, path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.Migrate(ctx, db, sqlitedb.Migrations{Table: "agentserver_migrations", Steps: sqliteMigrations[:2]}); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for _, th := range []*Thread{{ID: "ta", Owner: "alice"}, {ID: "tb", Owner: "bob"}} {
		doc, err := encodeThread(th)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO agentserver_threads (id, owner, status, created, doc) VALUES (?, ?, 'busy', 0, ?)`, th.ID, th.Owner, doc); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct{ id, thread, owner, status string }{
		{"a1", "ta", "alice", RunPending}, {"a2", "ta", "alice", RunSuccess},
		{"b1", "tb", "bob", RunPending}, {"b2", "tb", "bob", RunRunning}, {"b3", "tb", "bob", RunError},
	} {
		seq++
		doc, err := encodeRun(&Run{ID: r.id, ThreadID: r.thread, Status: r.status, Owner: r.owner})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO agentserver_runs (id, thread_id, status, seq, doc) VALUES (?, ?, ?, ?, ?)`, r.id, r.thread, r.status, seq, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	count := func(owner string, want int) {
		t.Helper()
		if n, err := st.CountActiveRuns(ctx, owner); err != nil || n != want {
			t.Errorf("CountActiveRuns(%q) = %d, %v; want %d", owner, n, err, want)
		}
	}
	count("alice", 1)
	count("bob", 2)
	count("carol", 0)
	if err := st.CreateRun(ctx, &Run{ID: "a3", ThreadID: "ta", Status: RunPending, Owner: "alice", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	count("alice", 2)
	rows, err := st.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+sqliteCountActive, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("plan: %q", plan)
	if len(plan) != 1 || !strings.Contains(plan[0], "COVERING INDEX agentserver_runs_owner_active (owner=?") {
		t.Errorf("the count's plan is %q; want one search of agentserver_runs_owner_active by owner, which holds what the count reads", plan)
	}
}
