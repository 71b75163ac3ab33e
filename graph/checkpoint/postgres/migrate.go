package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// migrations are the schema changes, in order; migration i brings the schema
// to version i+1. Released migrations are never edited, only appended to.
// "{schema}" stands for the quoted schema name.
var migrations = []string{
	`CREATE TABLE {schema}.agentgraph_threads (
		thread_id text PRIMARY KEY,
		latest_id text NOT NULL,
		seq       bigint NOT NULL,
		touched   timestamptz NOT NULL
	);
	CREATE INDEX agentgraph_threads_touched ON {schema}.agentgraph_threads (touched);
	CREATE TABLE {schema}.agentgraph_checkpoints (
		thread_id     text NOT NULL,
		seq           bigint NOT NULL,
		checkpoint_id text NOT NULL,
		parent_id     text NOT NULL,
		step          bigint NOT NULL,
		refs          jsonb NOT NULL,
		body          bytea NOT NULL,
		metadata      jsonb NOT NULL,
		created_at    timestamptz NOT NULL,
		PRIMARY KEY (thread_id, seq),
		UNIQUE (thread_id, checkpoint_id)
	);
	CREATE TABLE {schema}.agentgraph_blobs (
		thread_id text NOT NULL,
		channel   text NOT NULL,
		writer    bigint NOT NULL,
		kind      smallint NOT NULL,
		base      bigint NOT NULL,
		data      bytea NOT NULL,
		PRIMARY KEY (thread_id, channel, writer)
	);
	CREATE TABLE {schema}.agentgraph_writes (
		id             bigserial PRIMARY KEY,
		thread_id      text NOT NULL,
		checkpoint_seq bigint NOT NULL,
		task_id        text NOT NULL,
		node           text NOT NULL,
		channel        text NOT NULL,
		value          bytea NOT NULL
	);
	CREATE INDEX agentgraph_writes_checkpoint ON {schema}.agentgraph_writes (thread_id, checkpoint_seq, task_id);`,
	// Every Put and PutWrites sets its thread's touched: with touched
	// indexed, no such update could be HOT (each added an entry to both
	// of the table's indexes, and the primary key of a busy thread filled
	// with dead entries until a vacuum). Only Prune's MaxIdle reads by
	// touched, and it now reads the table whole, as its KeepLatest pass
	// already reads the checkpoints.
	`DROP INDEX IF EXISTS {schema}.agentgraph_threads_touched;`,
}

// migrate brings the schema up to date in one transaction of
// pgdb.MigrateFunc, which holds an advisory lock so that processes
// starting together apply each migration once, reads what a holder it
// waited for recorded (read committed), and creates the schema as the
// other stores' migrations do (the agent server's store may share it).
func (s *Saver) migrate(ctx context.Context) error {
	schema := pgx.Identifier{s.schema}.Sanitize()
	return pgdb.MigrateFunc(ctx, s.pool, "agentgraph checkpoint schema "+s.schema, s.schema, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+schema+`.agentgraph_checkpoint_migrations (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("postgres: create migrations table: %w", err)
		}
		var version int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+schema+`.agentgraph_checkpoint_migrations`).Scan(&version); err != nil {
			return fmt.Errorf("postgres: read schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("postgres: the checkpoint schema in %s is version %d, newer than this agentgraph knows (%d); upgrade agentgraph", schema, version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, strings.ReplaceAll(migrations[v], "{schema}", schema)); err != nil {
				return fmt.Errorf("postgres: migrate %s to schema version %d: %w", schema, v+1, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+schema+`.agentgraph_checkpoint_migrations (version) VALUES ($1)`, v+1); err != nil {
				return fmt.Errorf("postgres: record schema version %d: %w", v+1, err)
			}
			s.log.Info("migrated checkpoint schema", zap.String("schema", s.schema), zap.Int("version", v+1))
		}
		return nil
	})
}
