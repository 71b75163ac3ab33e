// Package sqlitedb holds the plumbing that the SQLite stores of this module
// (memory/sqlite, document/sqlite, cognition/sqlite) share: building the
// data source name with each store's pragmas, opening a database file or
// ":memory:", running a function in a transaction, and versioned
// migrations recorded in a table of their own.
//
// Databases are opened with the pure-Go modernc.org/sqlite driver, which
// this package registers.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"
	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DefaultBusyTimeout is how long a write waits for another writer's lock
// when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 10 * time.Second

// Options are the connection settings of a store's database.
type Options struct {
	// BusyTimeout is how long a write waits for the lock held by another
	// writer (PRAGMA busy_timeout). Zero means [DefaultBusyTimeout].
	BusyTimeout time.Duration
	// ForeignKeys turns on foreign key enforcement (PRAGMA foreign_keys).
	ForeignKeys bool
	// Synchronous, for a database file, sets PRAGMA synchronous, e.g.
	// "NORMAL" or "FULL". Empty leaves SQLite's default (FULL).
	Synchronous string
}

// DSN returns the data source name for path: the busy timeout, foreign keys
// if asked for and, for a file (not ":memory:"), the WAL journal and the
// synchronous mode, with immediate write transactions (BEGIN IMMEDIATE), so
// that a write takes the write lock when it starts instead of failing with
// SQLITE_BUSY when it first writes.
func DSN(path string, o Options) string {
	busy := o.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	v := url.Values{}
	v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	if o.ForeignKeys {
		v.Add("_pragma", "foreign_keys(1)")
	}
	if path != ":memory:" {
		v.Add("_pragma", "journal_mode(WAL)")
		if o.Synchronous != "" {
			v.Add("_pragma", "synchronous("+o.Synchronous+")")
		}
	}
	v.Set("_txlock", "immediate")
	return "file:" + path + "?" + v.Encode()
}

// Open returns db, not owned by the caller, when it is not nil; otherwise
// it opens path (see [DSN]) and returns the new database, owned by the
// caller, who closes it. Every connection to ":memory:" is a database of
// its own, so a ":memory:" database keeps a single connection for its
// whole life.
//
// Open's errors are worded for a store whose Config has the fields Path and
// DB.
func Open(db *sql.DB, path string, o Options) (_ *sql.DB, owned bool, err error) {
	if db != nil {
		return db, false, nil
	}
	if path == "" {
		return nil, false, errors.New("sqlite: Config has neither Path nor DB; set Path to a database file (or \":memory:\")")
	}
	db, err = sql.Open("sqlite", DSN(path, o))
	if err != nil {
		return nil, false, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	}
	return db, true, nil
}

// Setup is what a store's New does with its database: [Open], then, when
// doMigrate is true, [Migrate] with m, trying again on SQLITE_BUSY for up to
// o.BusyTimeout (see [RetryBusy]). When the migration fails, it closes
// the database it opened and returns the migration's error.
func Setup(ctx context.Context, db *sql.DB, path string, o Options, m Migrations, doMigrate bool) (_ *sql.DB, owned bool, err error) {
	if db, owned, err = Open(db, path, o); err != nil {
		return nil, false, err
	}
	if doMigrate {
		if err := RetryBusy(ctx, o.BusyTimeout, func() error { return migrate(ctx, db, m) }); err != nil {
			if owned {
				db.Close()
			}
			return nil, false, err
		}
	}
	return db, owned, nil
}

// Tx runs fn in a transaction of db, which it commits if fn returns nil
// and rolls back otherwise.
func Tx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Migrations are a store's versioned schema changes.
type Migrations struct {
	// Table records the applied versions, one row each (version,
	// applied_at in Unix nanoseconds); it is created if missing.
	Table string
	// Steps are applied in order, once each; version i+1 is Steps[i].
	// Never edit a released step; append a new one.
	Steps []string
	// Logger receives Message, with the version, per applied step. Nil
	// means no logging.
	Logger *zap.Logger
	// Message is the log line of an applied step.
	Message string
}

// Migrate applies the steps of m that db has not recorded yet, in one
// transaction (immediate, with a DSN from [DSN]), so it is idempotent and
// processes starting together apply each step once. It fails, changing
// nothing, when db records a version newer than len(m.Steps). When SQLite
// answers SQLITE_BUSY at once, it tries again (see [RetryBusy]) for up to
// [DefaultBusyTimeout] or until ctx is done. Its errors start with
// "sqlite: migrate: ".
func Migrate(ctx context.Context, db *sql.DB, m Migrations) error {
	return RetryBusy(ctx, DefaultBusyTimeout, func() error { return migrate(ctx, db, m) })
}

// RetryBusy runs fn, which must change nothing when it fails, and runs it
// again while it fails with SQLite's SQLITE_BUSY, for up to limit in all
// (zero means [DefaultBusyTimeout]) or until ctx is done; it returns fn's
// last error, or ctx's error joined to it when ctx ended the waiting.
//
// A connection's first statement (the _pragma list of [DSN]) switches a
// new file to WAL, which takes the write lock after a read lock: while
// another connection, of this process or another, holds the write lock
// (switching the file to WAL itself, or migrating), SQLite answers
// SQLITE_BUSY at once instead of waiting for the busy timeout, since
// waiting with a read lock held could deadlock. Whatever fn opened first,
// the pragma or its transaction, changed nothing then, and the next try
// finds the file in WAL, where the busy timeout applies.
func RetryBusy(ctx context.Context, limit time.Duration, fn func() error) error {
	if limit <= 0 {
		limit = DefaultBusyTimeout
	}
	deadline := time.Now().Add(limit)
	var t *time.Timer
	for attempt := 1; ; attempt++ {
		err := fn()
		if !Busy(err) || !time.Now().Before(deadline) {
			return err
		}
		pause := min(time.Duration(attempt)*10*time.Millisecond, 100*time.Millisecond)
		if t == nil {
			t = time.NewTimer(pause)
			defer t.Stop()
		} else {
			t.Reset(pause)
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// Busy tells whether err is SQLite's SQLITE_BUSY (of any extended code).
func Busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

func migrate(ctx context.Context, db *sql.DB, m Migrations) error {
	err := Tx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+m.Table+` (
			version    INTEGER PRIMARY KEY,
			applied_at INTEGER NOT NULL)`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+m.Table).Scan(&current); err != nil {
			return err
		}
		if current > len(m.Steps) {
			return fmt.Errorf("the schema is at version %d, newer than this build knows (%d); upgrade agentgraph", current, len(m.Steps))
		}
		for v := current + 1; v <= len(m.Steps); v++ {
			if _, err := tx.ExecContext(ctx, m.Steps[v-1]); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+m.Table+` (version, applied_at) VALUES (?, ?)`, v, time.Now().UnixNano()); err != nil {
				return err
			}
			if m.Logger != nil {
				m.Logger.Info(m.Message, zap.Int("version", v))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	return nil
}
