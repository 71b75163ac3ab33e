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
	// Usage reads a thread's running totals from its agentgraph_threads
	// row instead of counting its rows (a thread of 10,000 runs had
	// Usage read some 20,000 rows). The statements that insert rows (Put,
	// PutWrites, CopyThread) add to the totals in the update of the thread
	// row they make anyway; statement triggers with transition tables take
	// off what every delete of a checkpoint, blob or write removes,
	// whichever statement makes it (DeleteThread, Prune, PutWrites
	// replacing a task's writes). Existing threads are backfilled. The
	// step can run again over its own result (a version row lost or
	// removed): it then recounts the totals and replaces the triggers.
	`ALTER TABLE {schema}.agentgraph_threads
		ADD COLUMN IF NOT EXISTS checkpoints bigint NOT NULL DEFAULT 0,
		ADD COLUMN IF NOT EXISTS blobs       bigint NOT NULL DEFAULT 0,
		ADD COLUMN IF NOT EXISTS blob_bytes  bigint NOT NULL DEFAULT 0,
		ADD COLUMN IF NOT EXISTS writes      bigint NOT NULL DEFAULT 0,
		ADD COLUMN IF NOT EXISTS write_bytes bigint NOT NULL DEFAULT 0;
	UPDATE {schema}.agentgraph_threads AS t SET
		checkpoints = (SELECT count(*) FROM {schema}.agentgraph_checkpoints WHERE thread_id = t.thread_id),
		blobs       = (SELECT count(*) FROM {schema}.agentgraph_blobs WHERE thread_id = t.thread_id),
		blob_bytes  = (SELECT coalesce(sum(length(data)), 0) FROM {schema}.agentgraph_blobs WHERE thread_id = t.thread_id),
		writes      = (SELECT count(*) FROM {schema}.agentgraph_writes WHERE thread_id = t.thread_id),
		write_bytes = (SELECT coalesce(sum(length(value)), 0) FROM {schema}.agentgraph_writes WHERE thread_id = t.thread_id);
	CREATE OR REPLACE FUNCTION {schema}.agentgraph_checkpoints_usage() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE {schema}.agentgraph_threads AS t SET checkpoints = t.checkpoints - n.c
		FROM (SELECT thread_id, count(*) AS c FROM changed GROUP BY thread_id) AS n
		WHERE t.thread_id = n.thread_id;
		RETURN NULL;
	END $$;
	CREATE OR REPLACE FUNCTION {schema}.agentgraph_blobs_usage() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE {schema}.agentgraph_threads AS t SET blobs = t.blobs - n.c, blob_bytes = t.blob_bytes - n.b
		FROM (SELECT thread_id, count(*) AS c, sum(length(data)) AS b FROM changed GROUP BY thread_id) AS n
		WHERE t.thread_id = n.thread_id;
		RETURN NULL;
	END $$;
	CREATE OR REPLACE FUNCTION {schema}.agentgraph_writes_usage() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE {schema}.agentgraph_threads AS t SET writes = t.writes - n.c, write_bytes = t.write_bytes - n.b
		FROM (SELECT thread_id, count(*) AS c, sum(length(value)) AS b FROM changed GROUP BY thread_id) AS n
		WHERE t.thread_id = n.thread_id;
		RETURN NULL;
	END $$;
	DROP TRIGGER IF EXISTS agentgraph_checkpoints_removed ON {schema}.agentgraph_checkpoints;
	CREATE TRIGGER agentgraph_checkpoints_removed AFTER DELETE ON {schema}.agentgraph_checkpoints
		REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {schema}.agentgraph_checkpoints_usage();
	DROP TRIGGER IF EXISTS agentgraph_blobs_removed ON {schema}.agentgraph_blobs;
	CREATE TRIGGER agentgraph_blobs_removed AFTER DELETE ON {schema}.agentgraph_blobs
		REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {schema}.agentgraph_blobs_usage();
	DROP TRIGGER IF EXISTS agentgraph_writes_removed ON {schema}.agentgraph_writes;
	CREATE TRIGGER agentgraph_writes_removed AFTER DELETE ON {schema}.agentgraph_writes
		REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION {schema}.agentgraph_writes_usage();`,
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
