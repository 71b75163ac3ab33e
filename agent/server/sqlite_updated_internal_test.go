package server

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
)

// TestSQLiteUpdatedColumnMigrated: a SQLite file of the version before
// the column of the threads' UpdatedAt (migrations 1 to 3), whose
// threads' times are written with fractions of every length and with an
// offset, is brought up to date by OpenSQLite: each thread's column
// holds its UpdatedAt in Unix nanoseconds, exactly, so that a search
// sorted by updated_at, ordered by the column, orders them as instants.
func TestSQLiteUpdatedColumnMigrated(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	db, _, err := sqlitedb.Open(nil, path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitedb.Migrate(ctx, db, sqlitedb.Migrations{Table: "agentserver_migrations", Steps: sqliteMigrations[:3]}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	plus2 := time.FixedZone("", 2*3600)
	minus5 := time.FixedZone("", -5*3600)
	times := map[string]time.Time{ // by thread id; ids run against the order
		"t9": base,
		"t8": base.Add(120 * time.Millisecond),
		"t7": base.Add(300 * time.Millisecond).In(plus2), // 05:04:05.3+02:00
		"t6": base.Add(450 * time.Millisecond),
		"t5": base.Add(500 * time.Millisecond).In(minus5),
		"t4": base.Add(500*time.Millisecond + 1),
		"t3": base.Add(time.Second + 123456789),
		"t2": base.Add(time.Hour).In(plus2),
		// Fractions of .9995 s or more, which unixepoch would round up
		// to the next second, in UTC and with offsets.
		"s1": base.Add(2*time.Hour + 999999900),              // .9999999Z
		"s2": base.Add(3*time.Hour + 999500000).In(plus2),    // .9995+02:00
		"s3": base.Add(4*time.Hour + 999999999).In(minus5),   // .999999999-05:00
		"s4": base.Add(5*time.Hour + 999600000).In(time.UTC), // .9996Z
	}
	for id, at := range times {
		doc, err := encodeThread(&Thread{ID: id, Owner: "alice", Status: ThreadIdle, CreatedAt: base, UpdatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO agentserver_threads (id, owner, status, created, doc) VALUES (?, 'alice', 'idle', 0, ?)`, id, doc); err != nil {
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
	for id, at := range times {
		var updated int64
		if err := st.db.QueryRowContext(ctx, `SELECT updated FROM agentserver_threads WHERE id = ?`, id).Scan(&updated); err != nil || updated != at.UnixNano() {
			t.Errorf("thread %s (updated_at %s): column updated %d, %v; want %d", id, at.Format(time.RFC3339Nano), updated, err, at.UnixNano())
		}
	}
	want := []string{"t9", "t8", "t7", "t6", "t5", "t4", "t3", "t2", "s1", "s2", "s3", "s4"}
	got, _, err := st.SearchThreads(ctx, ThreadQuery{Owner: "alice", SortBy: "updated_at", Limit: 20})
	if ids := threadIDs(got); err != nil || !slices.Equal(ids, want) {
		t.Errorf("sorted by updated_at: %v, %v; want %v", ids, err, want)
	}
	// An update writes the column.
	if _, err := st.UpdateThread(ctx, "t9", func(th *Thread) error { th.UpdatedAt = base.Add(6 * time.Hour); return nil }); err != nil {
		t.Fatal(err)
	}
	got, _, err = st.SearchThreads(ctx, ThreadQuery{Owner: "alice", SortBy: "updated_at", SortDesc: true, Limit: 1})
	if ids := threadIDs(got); err != nil || !slices.Equal(ids, []string{"t9"}) {
		t.Errorf("sorted by updated_at, descending, after t9's update: %v, %v; want [t9]", ids, err)
	}
}

func threadIDs(ts []*Thread) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}
