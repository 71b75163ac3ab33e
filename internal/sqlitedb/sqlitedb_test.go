package sqlitedb_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
	"github.com/agentgraph/agentgraph/internal/sqlitedb/sqlitedbtest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDSN pins the data source names the stores used before they shared
// this package, so that their pragmas stay what they were.
func TestDSN(t *testing.T) {
	for _, c := range []struct {
		name, path string
		o          sqlitedb.Options
		want       string
	}{
		{"memory store, file", "/d/m.db", sqlitedb.Options{ForeignKeys: true, Synchronous: "NORMAL"},
			"file:/d/m.db?_pragma=busy_timeout%2810000%29&_pragma=foreign_keys%281%29&_pragma=journal_mode%28WAL%29&_pragma=synchronous%28NORMAL%29&_txlock=immediate"},
		{"memory store, SyncFull", "/d/m.db", sqlitedb.Options{BusyTimeout: 2 * time.Second, ForeignKeys: true, Synchronous: "FULL"},
			"file:/d/m.db?_pragma=busy_timeout%282000%29&_pragma=foreign_keys%281%29&_pragma=journal_mode%28WAL%29&_pragma=synchronous%28FULL%29&_txlock=immediate"},
		{"document store", "/d/m.db", sqlitedb.Options{ForeignKeys: true},
			"file:/d/m.db?_pragma=busy_timeout%2810000%29&_pragma=foreign_keys%281%29&_pragma=journal_mode%28WAL%29&_txlock=immediate"},
		{"cognition store", "/d/m.db", sqlitedb.Options{},
			"file:/d/m.db?_pragma=busy_timeout%2810000%29&_pragma=journal_mode%28WAL%29&_txlock=immediate"},
		{"in memory", ":memory:", sqlitedb.Options{ForeignKeys: true, Synchronous: "NORMAL"},
			"file::memory:?_pragma=busy_timeout%2810000%29&_pragma=foreign_keys%281%29&_txlock=immediate"},
	} {
		if got := sqlitedb.DSN(c.path, c.o); got != c.want {
			t.Errorf("%s: DSN = %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestPragmas opens files with each set of options and reads the pragmas
// back from SQLite.
func TestPragmas(t *testing.T) {
	for _, c := range []struct {
		o              sqlitedb.Options
		fk, sync, busy int
		journal        string
	}{
		{sqlitedb.Options{ForeignKeys: true, Synchronous: "NORMAL"}, 1, 1, 10000, "wal"},
		{sqlitedb.Options{ForeignKeys: true, Synchronous: "FULL", BusyTimeout: time.Second}, 1, 2, 1000, "wal"},
		{sqlitedb.Options{}, 0, 2, 10000, "wal"},
	} {
		db, owned, err := sqlitedb.Open(nil, filepath.Join(t.TempDir(), "p.db"), c.o)
		if err != nil {
			t.Fatal(err)
		}
		if !owned {
			t.Error("Open of a path: owned = false, want true")
		}
		var fk, sync, busy int
		var journal string
		ctx := t.Context()
		for _, p := range []struct {
			q   string
			dst any
		}{{"PRAGMA foreign_keys", &fk}, {"PRAGMA synchronous", &sync}, {"PRAGMA busy_timeout", &busy}, {"PRAGMA journal_mode", &journal}} {
			if err := db.QueryRowContext(ctx, p.q).Scan(p.dst); err != nil {
				t.Fatalf("%s: %v", p.q, err)
			}
		}
		db.Close()
		if fk != c.fk || sync != c.sync || busy != c.busy || journal != c.journal {
			t.Errorf("%+v: foreign_keys %d, synchronous %d, busy_timeout %d, journal_mode %s; want %d, %d, %d, %s",
				c.o, fk, sync, busy, journal, c.fk, c.sync, c.busy, c.journal)
		}
	}
}

func TestOpen(t *testing.T) {
	if _, _, err := sqlitedb.Open(nil, "", sqlitedb.Options{}); err == nil || !strings.Contains(err.Error(), "set Path") {
		t.Errorf("Open with neither db nor path: %v, want an error that says to set Path", err)
	}
	mem, owned, err := sqlitedb.Open(nil, ":memory:", sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if !owned {
		t.Error("Open(:memory:): owned = false, want true")
	}
	// One connection: a table created through one statement is seen by
	// the next, whichever connection the pool would otherwise pick.
	if _, err := mem.ExecContext(t.Context(), `CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	if got := mem.Stats().MaxOpenConnections; got != 1 {
		t.Errorf(":memory: MaxOpenConnections = %d, want 1", got)
	}
	same, owned, err := sqlitedb.Open(mem, "ignored", sqlitedb.Options{})
	if err != nil || same != mem || owned {
		t.Errorf("Open with a db = %p, %v, %v; want the same db, not owned", same, owned, err)
	}
}

func open(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, _, err := sqlitedb.Open(nil, path, sqlitedb.Options{ForeignKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func versions(t *testing.T, db *sql.DB, table string) []int {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT version FROM `+table+` ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var steps = []string{
	`CREATE TABLE a (id INTEGER PRIMARY KEY)`,
	`CREATE TABLE b (id INTEGER PRIMARY KEY); INSERT INTO b (id) VALUES (1)`,
}

func TestMigrateIdempotent(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	core, logs := observer.New(zap.InfoLevel)
	m := sqlitedb.Migrations{Table: "x_migrations", Steps: steps[:1], Logger: zap.New(core), Message: "applied x migration"}
	for range 2 {
		if err := sqlitedb.Migrate(t.Context(), db, m); err != nil {
			t.Fatal(err)
		}
	}
	m.Steps = steps
	for range 2 {
		if err := sqlitedb.Migrate(t.Context(), db, m); err != nil {
			t.Fatal(err)
		}
	}
	if got := versions(t, db, "x_migrations"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("recorded versions %v, want [1 2]", got)
	}
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM b`).Scan(&n); err != nil || n != 1 {
		t.Errorf("rows in b = %d, %v; want 1 (step 2 applied once)", n, err)
	}
	if logs.Len() != 2 {
		t.Errorf("%d log lines, want one per applied step (2)", logs.Len())
	}
	for i, e := range logs.All() {
		if e.Message != "applied x migration" || e.ContextMap()["version"] != int64(i+1) {
			t.Errorf("log line %d = %q %v, want %q with version %d", i, e.Message, e.ContextMap(), "applied x migration", i+1)
		}
	}
}

func TestMigrateNewerSchema(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	if err := sqlitedb.Migrate(t.Context(), db, sqlitedb.Migrations{Table: "x_migrations", Steps: steps}); err != nil {
		t.Fatal(err)
	}
	err := sqlitedb.Migrate(t.Context(), db, sqlitedb.Migrations{Table: "x_migrations", Steps: steps[:1]})
	if err == nil || !strings.Contains(err.Error(), "newer than this build knows (1)") || !strings.HasPrefix(err.Error(), "sqlite: migrate: ") {
		t.Errorf("Migrate of a newer schema: %v, want the newer-schema error", err)
	}
}

// TestMigrateFailureRollsBack checks that a failing step leaves neither its
// nor the earlier steps' changes behind.
func TestMigrateFailureRollsBack(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "m.db"))
	bad := append(append([]string{}, steps...), `CREATE TABLE a (id INTEGER)`) // a exists
	err := sqlitedb.Migrate(t.Context(), db, sqlitedb.Migrations{Table: "x_migrations", Steps: bad})
	if err == nil || !strings.Contains(err.Error(), "migration 3") {
		t.Fatalf("Migrate with a failing step 3: %v, want an error naming migration 3", err)
	}
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM sqlite_master WHERE name IN ('a', 'b', 'x_migrations')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d of the tables a, b, x_migrations left after a failed Migrate (%v), want 0", n, err)
	}
}

// TestMigrateConcurrent migrates one file from several databases at once,
// as processes starting together would, and checks each step ran once.
func TestMigrateConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		db := open(t, path)
		wg.Go(func() {
			errs[i] = sqlitedb.Migrate(t.Context(), db, sqlitedb.Migrations{Table: "x_migrations", Steps: steps})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	if got := versions(t, open(t, path), "x_migrations"); len(got) != 2 {
		t.Errorf("recorded versions %v, want [1 2]", got)
	}
}

func TestTx(t *testing.T) {
	db := open(t, ":memory:")
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	err := sqlitedb.Tx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
			return err
		}
		return context.Canceled // any error
	})
	if err != context.Canceled {
		t.Errorf("Tx = %v, want fn's error", err)
	}
	if err := sqlitedb.Tx(ctx, db, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (2)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(x), 0) FROM t`).Scan(&sum); err != nil || sum != 2 {
		t.Errorf("sum = %d, %v; want 2 (the failed transaction rolled back, the other committed)", sum, err)
	}
}

// TestSetup opens and migrates as a store's New does: with migrate false
// it leaves the database alone; a failed migration returns its error and
// closes a database Setup opened (goleak in TestMain sees one left open)
// but not the caller's.
func TestSetup(t *testing.T) {
	m := sqlitedb.Migrations{Table: "x_migrations", Steps: steps}
	path := filepath.Join(t.TempDir(), "s.db")
	db, owned, err := sqlitedb.Setup(t.Context(), nil, path, sqlitedb.Options{}, m, false)
	if err != nil || !owned {
		t.Fatalf("Setup without migrating = %v, %v; want an owned database", owned, err)
	}
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM sqlite_master WHERE name = 'x_migrations'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("Setup without migrating: %d migration tables (%v), want 0", n, err)
	}
	db.Close()

	db, _, err = sqlitedb.Setup(t.Context(), nil, path, sqlitedb.Options{}, m, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := versions(t, db, "x_migrations"); len(got) != 2 {
		t.Errorf("Setup recorded versions %v, want [1 2]", got)
	}
	db.Close()

	bad := sqlitedb.Migrations{Table: "x_migrations", Steps: append(append([]string{}, steps...), `CREATE TABLE a (id INTEGER)`)}
	if db, _, err := sqlitedb.Setup(t.Context(), nil, path, sqlitedb.Options{}, bad, true); err == nil || db != nil || !strings.Contains(err.Error(), "migration 3") {
		t.Errorf("Setup with a failing step 3 = %v, %v; want no database and an error naming migration 3", db, err)
	}
	mine := open(t, path)
	if got, owned, err := sqlitedb.Setup(t.Context(), mine, "ignored", sqlitedb.Options{}, bad, true); err == nil || got != nil || owned {
		t.Errorf("Setup of the caller's database with a failing step = %v, %v, %v; want an error", got, owned, err)
	}
	if err := mine.PingContext(t.Context()); err != nil {
		t.Errorf("the caller's database after a failed Setup: %v, want it open", err)
	}
}

// TestSetupWaitsForFirstWriter opens and migrates a new file whose write
// lock another connection holds: the switch to WAL fails with SQLITE_BUSY
// at once, and Setup tries again until the lock is released.
func TestSetupWaitsForFirstWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh.db")
	release := sqlitedbtest.HoldWriteLock(t, path)
	type result struct {
		db  *sql.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, _, err := sqlitedb.Setup(t.Context(), nil, path, sqlitedb.Options{BusyTimeout: time.Minute},
			sqlitedb.Migrations{Table: "x_migrations", Steps: steps}, true)
		done <- result{db, err}
	}()
	var r result
	select {
	case r = <-done: // a Setup that fails does so at once
	case <-time.After(300 * time.Millisecond):
	}
	release()
	if r.db == nil && r.err == nil {
		r = <-done
	}
	if r.err != nil {
		t.Fatalf("Setup while another connection held the new file's write lock: %v; want it to wait", r.err)
	}
	defer r.db.Close()
	if got := versions(t, r.db, "x_migrations"); len(got) != 2 {
		t.Errorf("recorded versions %v, want [1 2]", got)
	}
}

// TestMigrateWaitEndsWithContext cancels the context of a Migrate that
// waits for a held write lock: it returns the context's error.
func TestMigrateWaitEndsWithContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh.db")
	release := sqlitedbtest.HoldWriteLock(t, path)
	defer release()
	db := open(t, path)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sqlitedb.Migrate(ctx, db, sqlitedb.Migrations{Table: "x_migrations", Steps: steps}) }()
	select {
	case err := <-done:
		t.Fatalf("Migrate while the write lock was held returned %v before its context ended; want it to wait", err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Migrate after its context was cancelled: %v; want context.Canceled", err)
	}
}

func TestRetryBusy(t *testing.T) {
	if err := sqlitedb.RetryBusy(t.Context(), 0, func() error { return nil }); err != nil {
		t.Errorf("RetryBusy of a success: %v", err)
	}
	calls := 0
	plain := errors.New("not busy")
	if err := sqlitedb.RetryBusy(t.Context(), 0, func() error { calls++; return plain }); err != plain || calls != 1 {
		t.Errorf("RetryBusy of another error: %v after %d calls; want it once, returned", err, calls)
	}
}
