package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestUsageBackfill: the migration that adds the running totals fills
// them in for the threads a database of schema version 1 holds.
func TestUsageBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "checkpoints.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE agentgraph_checkpoint_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		migrations[0],
		`INSERT INTO agentgraph_checkpoint_migrations (version, applied_at) VALUES (1, 0)`,
		`INSERT INTO agentgraph_threads (thread_id, latest_id, seq, touched) VALUES ('t', 'c2', 2, 0), ('e', 'c1', 1, 0)`,
		`INSERT INTO agentgraph_checkpoints (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
			VALUES ('t', 1, 'c1', '', 0, x'', x'', '{}', 0), ('t', 2, 'c2', 'c1', 1, x'', x'', '{}', 0), ('e', 1, 'c1', '', 0, x'', x'', '{}', 0)`,
		`INSERT INTO agentgraph_blobs (thread_id, channel, writer, kind, base, data) VALUES ('t', 'a', 1, 1, 0, x'010203'), ('t', 'a', 2, 1, 0, x'01')`,
		`INSERT INTO agentgraph_writes (thread_id, checkpoint_seq, task_id, node, channel, value) VALUES ('t', 2, 'x', 'n', 'a', x'0102')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for thread, want := range map[string]checkpoint.Usage{
		"t": {Checkpoints: 2, Blobs: 2, BlobBytes: 4, Writes: 1, WriteBytes: 2},
		"e": {Checkpoints: 1},
	} {
		got, err := s.Usage(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Usage(%q) after the migration = %+v; want %+v", thread, got, want)
		}
	}
}
