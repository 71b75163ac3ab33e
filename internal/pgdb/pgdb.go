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
// in one transaction that first takes a transaction-scoped advisory lock,
// so it is idempotent and several processes may run it at once: each step
// runs once. The transaction is read committed whatever the sessions'
// default_transaction_isolation, so that one that waited for the lock
// reads the versions the holder recorded, not a snapshot taken before it
// waited. Migrations of other tables in the same schema (other stores
// starting at once) wait for each other's CREATE SCHEMA, on a lock of the
// schema's, instead of failing on it. It fails, changing nothing, when the
// database records a version newer than len(m.Steps). Its errors start
// with "postgres: migrate: ".
func Migrate(ctx context.Context, pool *pgxpool.Pool, m Migrations) error {
	table := Table(m.Schema, m.Table)
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, m.Lock+":"+table); err != nil {
			return err
		}
		if m.Schema != "" {
			// Taken after the table's lock by every Migrate: no two
			// wait for each other's.
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "agentgraph/internal/pgdb schema:"+m.Schema); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{m.Schema}.Sanitize()); err != nil {
				return err
			}
		}
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
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}
