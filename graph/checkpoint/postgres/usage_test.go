package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// recount is the statement Usage ran before schema version 3: it counts
// the thread's rows, reading its whole history.
const recount = `SELECT
	(SELECT count(*) FROM {s}.agentgraph_checkpoints WHERE thread_id = $1),
	(SELECT count(*) FROM {s}.agentgraph_blobs WHERE thread_id = $1),
	(SELECT coalesce(sum(length(data)), 0) FROM {s}.agentgraph_blobs WHERE thread_id = $1),
	(SELECT count(*) FROM {s}.agentgraph_writes WHERE thread_id = $1),
	(SELECT coalesce(sum(length(value)), 0) FROM {s}.agentgraph_writes WHERE thread_id = $1)`

// TestUsageReadsNoHistory: Usage reads the thread's running totals, so
// its cost does not grow with the thread's history: on a thread of 300
// runs it reads under half the buffers a count of the thread's rows
// reads. The totals equal a count of the thread's rows.
func TestUsageReadsNoHistory(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill := func(thread string, n int) {
		prev := ""
		for step := range n {
			cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: prev, Step: step,
				Versions: map[string]uint64{"a": uint64(step + 1), "b": uint64(step + 1)}}
			v := []byte(fmt.Sprintf(`"%0100d"`, step))
			blobs := []checkpoint.Blob{{Channel: "a", Kind: checkpoint.Full, Data: v}, {Channel: "b", Kind: checkpoint.Delta, Data: v}}
			writes := []checkpoint.Write{{TaskID: "x", Node: "n", Channel: "a", Value: v}}
			if err := s.Put(ctx, prev, cp, blobs, writes); err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, thread, cp.ID, []checkpoint.Write{{TaskID: "y", Node: "n", Channel: "b", Value: v}}); err != nil {
				t.Fatal(err)
			}
			prev = cp.ID
		}
	}
	fill("short", 1)
	fill("long", 300)
	old := strings.ReplaceAll(recount, "{s}", pgx.Identifier{schema}.Sanitize())
	for _, thread := range []string{"short", "long"} {
		u, err := s.Usage(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		var c checkpoint.Usage
		if err := pool.QueryRow(ctx, old, thread).Scan(&c.Checkpoints, &c.Blobs, &c.BlobBytes, &c.Writes, &c.WriteBytes); err != nil {
			t.Fatal(err)
		}
		if u != c {
			t.Errorf("Usage(%q) = %+v; the thread's rows count %+v", thread, u, c)
		}
	}
	// The long thread's row was updated 600 times: vacuum its dead
	// versions first. VACUUM cannot remove the versions an older snapshot
	// of another session (a test of another package on the same server)
	// may still see, so the long thread's read may cost a few pages more
	// than the short one's (16 against 2 was seen): compare it with a read
	// of the history instead (before the totals: 83 buffers against 15),
	// which grows with the runs and stays far above.
	if _, err := pool.Exec(ctx, "VACUUM "+pgx.Identifier{schema, "agentgraph_threads"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	short := postgrestest.Buffers(t, pool, postgres.UsageSQL(s), "short")
	long := postgrestest.Buffers(t, pool, postgres.UsageSQL(s), "long")
	oldShort := postgrestest.Buffers(t, pool, old, "short")
	oldLong := postgrestest.Buffers(t, pool, old, "long")
	if 2*long > oldLong {
		t.Errorf("a Usage read %d buffers on a thread of 300 runs (%d on one of 1); a count of its rows reads %d: want under half of it", long, short, oldLong)
	}
	t.Logf("buffers read by a Usage: %d on a thread of 1 run, %d on one of 300 (a count of the rows: %d and %d)", short, long, oldShort, oldLong)
}

// TestUsageBackfill: the migration that adds the running totals fills
// them in for the threads a schema of version 2 holds.
func TestUsageBackfill(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	sch := pgx.Identifier{schema}.Sanitize()
	stmts := []string{`CREATE SCHEMA ` + sch,
		`CREATE TABLE ` + sch + `.agentgraph_checkpoint_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`}
	for _, m := range postgres.Migrations()[:2] {
		stmts = append(stmts, strings.ReplaceAll(m, "{schema}", sch))
	}
	stmts = append(stmts, `INSERT INTO `+sch+`.agentgraph_checkpoint_migrations (version) VALUES (1), (2)`,
		`INSERT INTO `+sch+`.agentgraph_threads (thread_id, latest_id, seq, touched) VALUES ('t', 'c2', 2, now()), ('e', 'c1', 1, now())`,
		`INSERT INTO `+sch+`.agentgraph_checkpoints (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
			VALUES ('t', 1, 'c1', '', 0, '{}', '', '{}', now()), ('t', 2, 'c2', 'c1', 1, '{}', '', '{}', now()), ('e', 1, 'c1', '', 0, '{}', '', '{}', now())`,
		`INSERT INTO `+sch+`.agentgraph_blobs (thread_id, channel, writer, kind, base, data) VALUES ('t', 'a', 1, 1, 0, '\x010203'), ('t', 'a', 2, 1, 0, '\x01')`,
		`INSERT INTO `+sch+`.agentgraph_writes (thread_id, checkpoint_seq, task_id, node, channel, value) VALUES ('t', 2, 'x', 'n', 'a', '\x0102')`)
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
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
