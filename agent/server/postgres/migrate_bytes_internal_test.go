package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	evpg "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// TestMigrationBytesLockTimeout: the migration that adds the threads'
// byte counts (Config.MaxThreadBytes) takes the threads table's
// exclusive lock; behind a transaction that holds the table it gives up
// with lock_timeout (SQLSTATE 55P03), as migrations 5 and 6 do, rather
// than queueing every request on the table behind its wait.
func TestMigrationBytesLockTimeout(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_migrate_")
	q := newQueries(schema)
	lg, err := evpg.NewLog(t.Context(), evpg.LogConfig{Pool: pool, Schema: schema, Name: logName, Parent: q.runs})
	if err != nil {
		t.Fatal(err)
	}
	lg.Close()
	steps := func(n int) pgdb.Migrations {
		return pgdb.Migrations{Schema: schema, Table: "agentserver_migrations", Lock: "agentgraph/agent/server/postgres", Steps: migrations[:n], Replacer: q.tables}
	}
	// The bytes migration, found by what it does: later ones follow it.
	bytesAt := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "ADD COLUMN bytes") })
	if bytesAt < 0 {
		t.Fatal("no migration adds the threads' bytes column")
	}
	if err := pgdb.Migrate(t.Context(), pool, steps(bytesAt)); err != nil {
		t.Fatal(err)
	}
	// A long transaction that read the threads table holds its lock.
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM `+q.threads+` LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	// The deadline only stops a test that fails: a migration without
	// lock_timeout waits for the transaction.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err = pgdb.Migrate(ctx, pool, steps(bytesAt+1))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55P03" {
		t.Fatalf("the bytes migration behind a transaction holding the threads table: %v; want lock_timeout's error (55P03)", err)
	}
}
