package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// migrations are the schema changes, in order; migration i brings the schema
// to version i+1. Released migrations are never edited, only appended to.
var migrations = []string{
	`CREATE TABLE agentgraph_threads (
		thread_id TEXT PRIMARY KEY,
		latest_id TEXT NOT NULL,
		seq       INTEGER NOT NULL,
		touched   INTEGER NOT NULL
	);
	CREATE INDEX agentgraph_threads_touched ON agentgraph_threads (touched);
	CREATE TABLE agentgraph_checkpoints (
		thread_id     TEXT NOT NULL,
		seq           INTEGER NOT NULL,
		checkpoint_id TEXT NOT NULL,
		parent_id     TEXT NOT NULL,
		step          INTEGER NOT NULL,
		refs          BLOB NOT NULL,
		body          BLOB NOT NULL,
		metadata      TEXT NOT NULL,
		created_at    INTEGER NOT NULL,
		PRIMARY KEY (thread_id, seq),
		UNIQUE (thread_id, checkpoint_id)
	) WITHOUT ROWID;
	CREATE TABLE agentgraph_blobs (
		thread_id TEXT NOT NULL,
		channel   TEXT NOT NULL,
		writer    INTEGER NOT NULL,
		kind      INTEGER NOT NULL,
		base      INTEGER NOT NULL,
		data      BLOB NOT NULL,
		PRIMARY KEY (thread_id, channel, writer)
	);
	CREATE TABLE agentgraph_writes (
		id             INTEGER PRIMARY KEY AUTOINCREMENT,
		thread_id      TEXT NOT NULL,
		checkpoint_seq INTEGER NOT NULL,
		task_id        TEXT NOT NULL,
		node           TEXT NOT NULL,
		channel        TEXT NOT NULL,
		value          BLOB NOT NULL
	);
	CREATE INDEX agentgraph_writes_checkpoint ON agentgraph_writes (thread_id, checkpoint_seq, task_id);`,
}

// migrate brings the schema up to date. It runs in one write transaction, so
// processes starting together apply each migration once.
func (s *Saver) migrate(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS agentgraph_checkpoint_migrations (
			version    INTEGER PRIMARY KEY,
			applied_at INTEGER NOT NULL
		)`); err != nil {
			return fmt.Errorf("sqlite: create migrations table: %w", err)
		}
		var version int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM agentgraph_checkpoint_migrations`).Scan(&version); err != nil {
			return fmt.Errorf("sqlite: read schema version: %w", err)
		}
		if version > len(migrations) {
			return fmt.Errorf("sqlite: the database's checkpoint schema is version %d, newer than this agentgraph knows (%d); upgrade agentgraph", version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("sqlite: migrate to schema version %d: %w", v+1, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO agentgraph_checkpoint_migrations (version, applied_at) VALUES (?, ?)`, v+1, time.Now().UnixNano()); err != nil {
				return fmt.Errorf("sqlite: record schema version %d: %w", v+1, err)
			}
			s.log.Info("migrated checkpoint schema", zap.Int("version", v+1))
		}
		return nil
	})
}
