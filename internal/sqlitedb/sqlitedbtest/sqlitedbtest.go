// Package sqlitedbtest helps test the SQLite stores of this module
// (memory/sqlite, document/sqlite, cognition/sqlite, graph/checkpoint/sqlite)
// and internal/sqlitedb: it closes the stores a test opens, runs a test on
// each way a store is given its database, and holds a new file's write
// lock as another process would.
package sqlitedbtest

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Closed returns s, a store a test opened, and closes it when the test
// ends (a failing Close fails t); it fails t now when err, the error of
// opening s, is not nil.
func Closed[S interface{ Close() error }](t testing.TB, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Database is where a store keeps its data: the database file Path or,
// when DB is not nil, DB.
type Database struct {
	Path string
	DB   *sql.DB
}

// Each runs run as three subtests, one per way a store gets its database:
// "File", a new database file; "InMemory", ":memory:"; and "SharedDB", a
// *sql.DB on a new file that the test opened with dsn, as code that shares
// the database with the store would. run makes its stores in a database
// from db, one per call, which the subtest t that it gets releases.
func Each(t *testing.T, dsn func(path string) string, run func(t *testing.T, db func(t *testing.T) Database)) {
	t.Helper()
	t.Run("File", func(t *testing.T) {
		run(t, func(t *testing.T) Database { return Database{Path: filepath.Join(t.TempDir(), "store.db")} })
	})
	t.Run("InMemory", func(t *testing.T) {
		run(t, func(t *testing.T) Database { return Database{Path: ":memory:"} })
	})
	t.Run("SharedDB", func(t *testing.T) {
		run(t, func(t *testing.T) Database {
			db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "shared.db")))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return Database{DB: db}
		})
	})
}

// Conformance runs suite, a store kind's conformance checks, in each way
// of [Each]: the stores it checks are those open makes in the database it
// is given, one per call.
func Conformance[S any](t *testing.T, dsn func(path string) string, suite func(*testing.T, func(*testing.T) S), open func(*testing.T, Database) S) {
	t.Helper()
	Each(t, dsn, func(t *testing.T, db func(*testing.T) Database) {
		suite(t, func(t *testing.T) S { return open(t, db(t)) })
	})
}

// HoldWriteLock opens path, a file nobody has opened yet, in SQLite's
// rollback journal mode, as another process's first connection switching
// it to WAL or migrating it would find it, and takes its write lock (a
// reserved lock) with a table not committed yet. release commits, which
// waits up to its busy timeout for the readers of the file to leave; a
// test that never calls it leaves the commit undone and the database is
// closed when the test ends.
func HoldWriteLock(t testing.TB, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(t.Context(), `CREATE TABLE other_store (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Commit(); err != nil {
			t.Errorf("the holder's commit: %v", err)
		}
	}
}
