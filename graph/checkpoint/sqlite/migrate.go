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
	// Usage reads a thread's running totals from its agentgraph_threads
	// row instead of counting its rows, which read the thread's whole
	// history. Triggers keep the totals on every insert and delete of a
	// checkpoint, blob or write, whichever statement makes it (each
	// operation writes the thread's row before its other rows, and
	// deletes it after them). Existing threads are backfilled.
	`ALTER TABLE agentgraph_threads ADD COLUMN checkpoints INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE agentgraph_threads ADD COLUMN blobs INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE agentgraph_threads ADD COLUMN blob_bytes INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE agentgraph_threads ADD COLUMN writes INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE agentgraph_threads ADD COLUMN write_bytes INTEGER NOT NULL DEFAULT 0;
	UPDATE agentgraph_threads SET
		checkpoints = (SELECT count(*) FROM agentgraph_checkpoints AS c WHERE c.thread_id = agentgraph_threads.thread_id),
		blobs       = (SELECT count(*) FROM agentgraph_blobs AS b WHERE b.thread_id = agentgraph_threads.thread_id),
		blob_bytes  = (SELECT coalesce(sum(length(data)), 0) FROM agentgraph_blobs AS b WHERE b.thread_id = agentgraph_threads.thread_id),
		writes      = (SELECT count(*) FROM agentgraph_writes AS w WHERE w.thread_id = agentgraph_threads.thread_id),
		write_bytes = (SELECT coalesce(sum(length(value)), 0) FROM agentgraph_writes AS w WHERE w.thread_id = agentgraph_threads.thread_id);
	CREATE TRIGGER agentgraph_checkpoints_added AFTER INSERT ON agentgraph_checkpoints BEGIN
		UPDATE agentgraph_threads SET checkpoints = checkpoints + 1 WHERE thread_id = NEW.thread_id;
	END;
	CREATE TRIGGER agentgraph_checkpoints_removed AFTER DELETE ON agentgraph_checkpoints BEGIN
		UPDATE agentgraph_threads SET checkpoints = checkpoints - 1 WHERE thread_id = OLD.thread_id;
	END;
	CREATE TRIGGER agentgraph_blobs_added AFTER INSERT ON agentgraph_blobs BEGIN
		UPDATE agentgraph_threads SET blobs = blobs + 1, blob_bytes = blob_bytes + length(NEW.data) WHERE thread_id = NEW.thread_id;
	END;
	CREATE TRIGGER agentgraph_blobs_removed AFTER DELETE ON agentgraph_blobs BEGIN
		UPDATE agentgraph_threads SET blobs = blobs - 1, blob_bytes = blob_bytes - length(OLD.data) WHERE thread_id = OLD.thread_id;
	END;
	CREATE TRIGGER agentgraph_writes_added AFTER INSERT ON agentgraph_writes BEGIN
		UPDATE agentgraph_threads SET writes = writes + 1, write_bytes = write_bytes + length(NEW.value) WHERE thread_id = NEW.thread_id;
	END;
	CREATE TRIGGER agentgraph_writes_removed AFTER DELETE ON agentgraph_writes BEGIN
		UPDATE agentgraph_threads SET writes = writes - 1, write_bytes = write_bytes - length(OLD.value) WHERE thread_id = OLD.thread_id;
	END;`,
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
