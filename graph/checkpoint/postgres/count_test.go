package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestRoundTrips pins what each call sends PostgreSQL, in round trips and
// statements: a Put that starts a thread, or that extends the latest
// checkpoint the Saver saved or loaded, is one statement; a Get is one
// statement; a Put the Saver cannot make from memory is a transaction of
// two round trips.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	base := testPool(t)
	schema := freshSchema(t, base)
	var tr postgrestest.Counter
	pool := postgrestest.CountedPool(t, &tr, func(cfg *pgxpool.Config) {
		// One connection, whose prepared statements every call reuses,
		// never pinged (a ping, after a second idle, would be a write to
		// count).
		cfg.MaxConns = 1
		cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	})
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	// A second Saver on the same tables, remembering nothing.
	cold, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, RecentThreads: -1})
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	step := 0
	put := func(s *postgres.Saver, noSync bool) {
		t.Helper()
		step++
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: step, Versions: map[string]uint64{"n": uint64(step)}}
		blobs := []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Delta, Data: []byte(`[1]`)}}
		writes := []checkpoint.Write{{TaskID: "a", Node: "n", Channel: "n", Value: []byte(`1`)}}
		var err error
		if noSync {
			err = s.PutNoSync(ctx, prev, cp, blobs, writes)
		} else {
			err = s.Put(ctx, prev, cp, blobs, writes)
		}
		if err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
	}
	var mine string // the checkpoint of s's last PutNoSync
	stale := func(s *postgres.Saver, noSync bool) {
		t.Helper()
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: mine, Step: step + 1, Versions: map[string]uint64{"n": uint64(step + 1)}}
		blobs := []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Delta, Data: []byte(`[1]`)}}
		var err error
		if noSync {
			err = s.PutNoSync(ctx, mine, cp, blobs, nil)
		} else {
			err = s.Put(ctx, mine, cp, blobs, nil)
		}
		if ce := (*checkpoint.ConflictError)(nil); !errors.As(err, &ce) || ce.Actual != prev {
			t.Fatalf("Put on checkpoint %s, which %s extends: %v; want a conflict", mine, prev, err)
		}
	}
	get := func(s *postgres.Saver) {
		t.Helper()
		snap, err := s.Get(ctx, "t", "")
		if err != nil {
			t.Fatal(err)
		}
		if snap.ID != prev || len(snap.Channels["n"].Deltas) != step || len(snap.Writes) != 1 {
			t.Fatalf("Get = %s with %d deltas and %d writes; want %s with %d deltas and 1 write", snap.ID, len(snap.Channels["n"].Deltas), len(snap.Writes), prev, step)
		}
	}
	tr.Take()
	tests := []struct {
		name              string
		do                func()
		trips, statements int
		// writes, the writes to the socket, counts the round trips the
		// tracer does not see too: the first use of a statement on the
		// connection prepares it, and a DEALLOCATE of statements pgx
		// dropped from its cache.
		writes int
	}{
		{"Put of a thread's first checkpoint", func() { put(s, false) }, 1, 1, 2},
		{"Put extending the Saver's own last Put", func() { put(s, false) }, 1, 1, 2},
		{"Get of the latest checkpoint", func() { get(s) }, 1, 1, 2},
		// A PutNoSync is one statement too, whose own transaction
		// commits without the flush wait.
		{"PutNoSync extending the Saver's own last Put", func() { put(s, true); mine = prev }, 1, 1, 2},
		{"Put by a Saver remembering nothing", func() { put(cold, false) }, 2, 8, 4},
		// s remembers the checkpoint of its PutNoSync, which cold's Put
		// extended: its one statement saves nothing, and the Put goes
		// through putTx, which reads the latest checkpoint, reports the
		// conflict and rolls back. Six writes to the socket: the
		// statement, the preparation of SET LOCAL (new to the
		// connection, as no PutNoSync before sent it), putTx's first
		// batch, the preparation and the execution of the read of the
		// latest checkpoint, and the ROLLBACK. A statement that saves
		// nothing is no error, and pgx keeps its prepared statements.
		{"PutNoSync extending a stale memory", func() { stale(s, true) }, 4, 8, 6},
		{"Put extending a checkpoint another Saver saved", func() { put(s, false) }, 2, 8, 2},
		{"PutNoSync extending the Saver's own last Put, again", func() { put(s, true) }, 1, 1, 1},
		{"Get by a Saver remembering nothing", func() { get(cold) }, 1, 1, 1},
		{"Put extending the latest checkpoint the Saver loaded", func() { get(s); tr.Take(); put(s, false) }, 1, 1, 1},
		{"PutWrites", func() {
			if err := s.PutWrites(ctx, "t", prev, []checkpoint.Write{{TaskID: "b", Node: "n", Channel: "n", Value: []byte(`2`)}}); err != nil {
				t.Fatal(err)
			}
		}, 1, 3, 2},
	}
	for _, tc := range tests {
		tc.do()
		got := tr.Take()
		if got.Trips != tc.trips || got.Statements != tc.statements {
			t.Errorf("%s: %d round trips, %d statements; want %d and %d. %s", tc.name, got.Trips, got.Statements, tc.trips, tc.statements, got)
		}
		if got.Writes != tc.writes {
			t.Errorf("%s: %d writes to the socket; want %d", tc.name, got.Writes, tc.writes)
		}
	}
}

// TestStaleMemory: a Saver remembers the latest checkpoint of a thread that
// another Saver then deletes and writes again, with the same checkpoint IDs
// and sequence numbers but other channel references. Its next Put must
// not build on what it remembers: the checkpoint it saves holds the
// values of the thread as it now is.
func TestStaleMemory(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	a, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	write := func(s *postgres.Saver, expect, id string, versions map[string]uint64, blobs ...checkpoint.Blob) {
		t.Helper()
		cp := &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: expect, Versions: versions}
		if err := s.Put(ctx, expect, cp, blobs, nil); err != nil {
			t.Fatal(err)
		}
	}
	full := func(ch, v string) checkpoint.Blob {
		return checkpoint.Blob{Channel: ch, Kind: checkpoint.Full, Data: []byte(v)}
	}
	write(a, "", "x", map[string]uint64{"n": 1, "m": 1}, full("n", "a1"), full("m", "a1"))
	write(a, "x", "y", map[string]uint64{"n": 2, "m": 1}, full("n", "a2"))
	if err := b.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	write(b, "", "x", map[string]uint64{"n": 2, "m": 1}, full("n", "b1"), full("m", "b1"))
	write(b, "x", "y", map[string]uint64{"n": 2, "m": 1, "k": 1}, full("k", "b2"))
	// a remembers y as n@2 written by checkpoint 2 and m@1 by checkpoint
	// 1; it is now n@2 and m@1 by checkpoint 1, and k@1 by checkpoint 2.
	write(a, "y", "z", map[string]uint64{"n": 2, "m": 3}, full("m", "a3"))
	snap, err := b.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if snap.ID != "z" || string(snap.Channels["n"].Base) != "b1" || string(snap.Channels["m"].Base) != "a3" {
		t.Fatalf("latest = %s with n %q, m %q; want z with n \"b1\", m \"a3\"", snap.ID, snap.Channels["n"].Base, snap.Channels["m"].Base)
	}
}

// TestPutWritesAfterLock: a PutWrites that waits for its thread's lock
// replaces what the holder of the lock stored for the same task, as it
// replaces what an earlier PutWrites stored: it reads the writes to
// replace once it holds the lock.
func TestPutWritesAfterLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newCorruptible(t)
	cp := &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"n": 1}}
	if err := c.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+c.schema+`.agentgraph_threads WHERE thread_id = 't' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- c.PutWrites(ctx, "t", cp.ID, []checkpoint.Write{{TaskID: "a", Node: "n", Channel: "n", Value: []byte("new")}})
	}()
	for waiting := 0; waiting == 0; {
		err := c.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
			c.schema+".agentgraph_threads").Scan(&waiting)
		if err != nil {
			t.Fatalf("waiting for PutWrites to wait for the thread's lock: %v", err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+c.schema+`.agentgraph_writes (thread_id, checkpoint_seq, task_id, node, channel, value)
		VALUES ('t', 1, 'a', 'n', 'n', 'old')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	snap, err := c.Get(ctx, "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Writes) != 1 || string(snap.Writes[0].Value) != "new" {
		t.Fatalf("writes = %+v; want the one PutWrites stored", snap.Writes)
	}
}

// TestOneStatementErrors: a one-statement Put that PostgreSQL refuses
// with a unique violation (a taken checkpoint ID) goes through the
// transaction that reports it; any other error, here a lock timeout, is
// returned at once, without the transaction's round trips.
func TestOneStatementErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := testPool(t)
	schema := freshSchema(t, base)
	var tr postgrestest.Counter
	pool := postgrestest.TracedPool(t, &tr, func(cfg *pgxpool.Config) {
		// The Put waits on a lock held until it fails: the timeout ends
		// the wait, however short it is.
		cfg.ConnConfig.RuntimeParams["lock_timeout"] = "10ms"
	})
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	blobs := []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte(`1`)}}
	first := &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"n": 1}}
	if err := s.Put(ctx, "", first, blobs, nil); err != nil {
		t.Fatal(err)
	}
	second := &checkpoint.Checkpoint{ThreadID: "t", ParentID: first.ID, Versions: map[string]uint64{"n": 2}}
	if err := s.Put(ctx, first.ID, second, blobs, nil); err != nil {
		t.Fatal(err)
	}
	tr.Take()
	taken := &checkpoint.Checkpoint{ThreadID: "t", ID: first.ID, ParentID: second.ID, Versions: map[string]uint64{"n": 3}}
	err = s.Put(ctx, second.ID, taken, blobs, nil)
	if !errors.Is(err, checkpoint.ErrInvalid) || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("Put with a taken ID: %v; want ErrInvalid naming %s", err, first.ID)
	}
	if got := tr.Take(); got.Trips < 2 {
		t.Fatalf("Put with a taken ID: %d round trips; want the one statement and putTx. %s", got.Trips, got)
	}

	tx, err := base.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+pgx.Identifier{schema}.Sanitize()+`.agentgraph_threads WHERE thread_id = 't' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	next := &checkpoint.Checkpoint{ThreadID: "t", ParentID: second.ID, Versions: map[string]uint64{"n": 3}}
	err = s.Put(ctx, second.ID, next, blobs, nil)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "55P03" {
		t.Fatalf("Put on a locked thread: %v; want the lock timeout (SQLSTATE 55P03)", err)
	}
	if got := tr.Take(); got.Trips != 1 || got.Statements != 1 {
		t.Fatalf("Put on a locked thread: %d round trips, %d statements; want the one statement. %s", got.Trips, got.Statements, got)
	}
}

// TestPutWritesStatementsLock: the statements of a PutWrites that store
// and replace writes take the thread's lock themselves (they are the
// ones that find a checkpoint committed after the touch read the
// database, and the touch then took no lock). Each waits for a
// DeleteThread holding the lock, and stores nothing once it has deleted
// the thread: no writes are left for a later checkpoint of a thread
// with the same ID and sequence number to take as its own.
func TestPutWritesStatementsLock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	deleteTaskWrites, addWrites := postgres.PutWritesSQL(s)
	quoted := pgx.Identifier{schema}.Sanitize()
	for _, tc := range []struct {
		name, sql string
		args      func(thread, id string) []any
	}{
		// A task with no writes to delete: the lock is taken all the same.
		{"deleteTaskWrites", deleteTaskWrites, func(thread, id string) []any { return []any{thread, id, []string{"b"}} }},
		{"addWrites", addWrites, func(thread, id string) []any {
			return []any{thread, id, []string{"a"}, []string{"n"}, []string{"n"}, [][]byte{[]byte("1")}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thread := tc.name // each case its own thread, whatever the other left
			cp := &checkpoint.Checkpoint{ThreadID: thread, Versions: map[string]uint64{"n": 1}}
			if err := s.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}},
				[]checkpoint.Write{{TaskID: "a", Node: "n", Channel: "n", Value: []byte("0")}}); err != nil {
				t.Fatal(err)
			}
			// The lock DeleteThread takes, and what it then deletes.
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			if _, err := tx.Exec(ctx, `DELETE FROM `+quoted+`.agentgraph_threads WHERE thread_id = $1`, thread); err != nil {
				t.Fatal(err)
			}
			type result struct {
				rows int64
				err  error
			}
			done := make(chan result, 1)
			go func() {
				ct, err := pool.Exec(ctx, tc.sql, tc.args(thread, cp.ID)...)
				done <- result{ct.RowsAffected(), err}
			}()
			for waiting := 0; waiting == 0; {
				select {
				case r := <-done:
					t.Fatalf("%s ran (%d rows, %v) while DeleteThread held the thread's lock; want it to wait", tc.name, r.rows, r.err)
				default:
				}
				err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
					quoted+".agentgraph_threads").Scan(&waiting)
				if err != nil {
					t.Fatalf("waiting for %s to wait for the thread's lock: %v", tc.name, err)
				}
			}
			for _, table := range []string{"agentgraph_writes", "agentgraph_blobs", "agentgraph_checkpoints"} {
				if _, err := tx.Exec(ctx, `DELETE FROM `+quoted+`.`+table+` WHERE thread_id = $1`, thread); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.rows != 0 {
				t.Fatalf("%s after DeleteThread: %d rows, %v; want none", tc.name, r.rows, r.err)
			}
			var left int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+quoted+`.agentgraph_writes WHERE thread_id = $1`, thread).Scan(&left); err != nil {
				t.Fatal(err)
			}
			if left != 0 {
				t.Fatalf("%d writes left after DeleteThread; want none", left)
			}
		})
	}
}
