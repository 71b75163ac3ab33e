// Package pgdb holds the plumbing that the PostgreSQL stores of this module
// (memory/postgres, document/postgres, cognition/postgres and others)
// share: using a caller's pool or opening one from a DSN, schema-qualified
// table names, versioned migrations, recorded in a table of their own,
// that several processes may run at once, and reading a column of text.
package pgdb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Connect returns pool, not owned by the caller, when it is not nil;
// otherwise it opens a pool from dsn and returns it, owned by the caller,
// who closes it. Its errors leave the DSN's password out and are worded
// for a store whose Config has the fields Pool and DSN.
func Connect(ctx context.Context, pool *pgxpool.Pool, dsn string) (_ *pgxpool.Pool, owned bool, err error) {
	if pool != nil {
		return pool, false, nil
	}
	if dsn == "" {
		return nil, false, errors.New("postgres: Config has neither Pool nor DSN; set one of them")
	}
	pool, err = pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, false, fmt.Errorf("postgres: open %s: %w", Redact(dsn), err)
	}
	return pool, true, nil
}

// Setup is what a store's New does with its database: [Connect], then,
// when migrate is true, [Migrate] with m. When the migration fails, it
// closes the pool it opened and returns the migration's error.
func Setup(ctx context.Context, pool *pgxpool.Pool, dsn string, m Migrations, migrate bool) (_ *pgxpool.Pool, owned bool, err error) {
	if pool, owned, err = Connect(ctx, pool, dsn); err != nil {
		return nil, false, err
	}
	if migrate {
		if err := Migrate(ctx, pool, m); err != nil {
			if owned {
				pool.Close()
			}
			return nil, false, err
		}
	}
	return pool, owned, nil
}

// Redact returns dsn without its password (or any other setting) as
// postgres://user@host:port/database, or "the DSN" if it does not parse.
func Redact(dsn string) string {
	if cfg, err := pgx.ParseConfig(dsn); err == nil {
		return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	}
	return "the DSN"
}

// Table returns the quoted name of table in schema, or unqualified (found
// through the search_path) when schema is empty.
func Table(schema, table string) string {
	if schema == "" {
		return pgx.Identifier{table}.Sanitize()
	}
	return pgx.Identifier{schema, table}.Sanitize()
}

// Querier is what a pool, a connection and a transaction share: running a
// query.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Strings returns the values of the one text column that query selects,
// run through q with args, in the order of its rows.
func Strings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Migrations are a store's versioned schema changes.
type Migrations struct {
	// Schema, when not empty, is created if missing before anything else.
	Schema string
	// Table records the applied versions, one row each (version,
	// applied_at); it is created if missing. It is quoted and qualified
	// with Schema by [Table].
	Table string
	// Lock names the store; the advisory lock Migrate takes is keyed by
	// Lock, ":" and the qualified Table.
	Lock string
	// Steps are applied in order, once each; version i+1 is Steps[i].
	// Never edit a released step; append a new one.
	Steps []string
	// Replacer, if not nil, rewrites each step before it runs, e.g. to
	// put in the schema-qualified table names.
	Replacer *strings.Replacer
	// Logger receives Message, with the version, per applied step. Nil
	// means no logging.
	Logger *zap.Logger
	// Message is the log line of an applied step.
	Message string
}

// Migrate applies the steps of m that the database has not recorded yet,
// in one transaction of [MigrateFunc] (locked by m.Lock, ":" and the
// qualified Table, creating m.Schema), so it is idempotent and several
// processes may run it at once: each step runs once. It fails, changing
// nothing, when the database records a version newer than len(m.Steps).
// Its errors start with "postgres: migrate: ".
func Migrate(ctx context.Context, pool *pgxpool.Pool, m Migrations) error {
	table := Table(m.Schema, m.Table)
	return MigrateFunc(ctx, pool, m.Lock+":"+table, m.Schema, func(tx pgx.Tx) error {
		if err := migrateSteps(ctx, tx, table, m); err != nil {
			return fmt.Errorf("postgres: migrate: %w", err)
		}
		return nil
	})
}

// MigrateFunc runs fn in a migration's transaction on pool, and commits
// it if fn returns nil. The transaction is read committed whatever the
// sessions' default_transaction_isolation, so that a migration that
// waited for the lock reads what the holder recorded, not a snapshot
// taken before it waited. It first takes the transaction-scoped advisory
// lock of lock (migrations with the same lock run one at a time), then,
// when schema is not empty, the lock of the schema's that every
// migration of this module takes last, and creates schema if it is
// missing: the migrations of several stores sharing a new schema (the
// agent server's store and the checkpoint saver, say) wait for each
// other's CREATE SCHEMA instead of failing on it with a duplicate key on
// pg_namespace. fn's error is returned as is; MigrateFunc's own start
// with "postgres: migrate: ".
func MigrateFunc(ctx context.Context, pool *pgxpool.Pool, lock, schema string, fn func(tx pgx.Tx) error) error {
	inner := false // the error is the transaction's own (wrapped) or fn's
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		inner = true
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, lock); err != nil {
			return fmt.Errorf("postgres: migrate: lock %q: %w", lock, err)
		}
		if schema != "" {
			// Taken after the migration's lock by every migration: none
			// waits for another's while it holds this one.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "agentgraph/internal/pgdb schema:"+schema); err != nil {
				return fmt.Errorf("postgres: migrate: lock schema %s: %w", schema, err)
			}
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
				return fmt.Errorf("postgres: migrate: create schema %s: %w", schema, err)
			}
		}
		if err := fn(tx); err != nil {
			return err
		}
		inner = false // an error now is the commit's
		return nil
	})
	if err != nil && !inner {
		return fmt.Errorf("postgres: migrate: %w", err) // beginning or committing
	}
	return err
}

// migrateSteps is Migrate's work in its transaction tx.
func migrateSteps(ctx context.Context, tx pgx.Tx, table string, m Migrations) error {
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
			version    INT PRIMARY KEY,
			applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+table).Scan(&current); err != nil {
		return err
	}
	if current > len(m.Steps) {
		return fmt.Errorf("the schema is at version %d, newer than this build knows (%d); upgrade agentgraph", current, len(m.Steps))
	}
	for v := current + 1; v <= len(m.Steps); v++ {
		step := m.Steps[v-1]
		if m.Replacer != nil {
			step = m.Replacer.Replace(step)
		}
		if _, err := tx.Exec(ctx, step); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (version) VALUES ($1)`, v); err != nil {
			return err
		}
		if m.Logger != nil {
			m.Logger.Info(m.Message, zap.Int("version", v))
		}
	}
	return nil
}
