package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
)

// tripCounter is a pgx tracer counting round trips (a query, or a batch)
// and statements (each statement of a batch counts).
type tripCounter struct {
	mu                sync.Mutex
	trips, statements int
	sqls              []string
}

func (c *tripCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	c.statements++
	c.sqls = append(c.sqls, firstLine(d.SQL))
	return ctx
}

func (c *tripCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *tripCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips++
	return ctx
}

func (c *tripCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statements++
	c.sqls = append(c.sqls, firstLine(d.SQL))
}

func (c *tripCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func firstLine(sql string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(sql), "\n")
	return line
}

// take returns the counts since the last take, and the statements sent.
func (c *tripCounter) take() (trips, statements int, sqls []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	trips, statements, sqls = c.trips, c.statements, c.sqls
	c.trips, c.statements, c.sqls = 0, 0, nil
	return trips, statements, sqls
}

// TestRoundTrips pins what each call sends PostgreSQL, in round trips and
// statements: a Put that starts a thread, or that extends the latest
// checkpoint the Saver saved or loaded, is one statement; a Get is one
// statement; a Put the Saver cannot make from memory is a transaction of
// two round trips.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	base := testPool(t)
	schema := freshSchema(t, base)
	var tr tripCounter
	cfg, err := pgxpool.ParseConfig(dsn())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = &tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
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
	tr.take()
	tests := []struct {
		name              string
		do                func()
		trips, statements int
	}{
		{"Put of a thread's first checkpoint", func() { put(s, false) }, 1, 1},
		{"Put extending the Saver's own last Put", func() { put(s, false) }, 1, 1},
		{"Get of the latest checkpoint", func() { get(s) }, 1, 1},
		{"PutNoSync extending the Saver's own last Put", func() { put(s, true) }, 1, 4},
		{"Put by a Saver remembering nothing", func() { put(cold, false) }, 2, 8},
		{"Put extending a checkpoint another Saver saved", func() { put(s, false) }, 2, 8},
		{"Get by a Saver remembering nothing", func() { get(cold) }, 1, 1},
		{"Put extending the latest checkpoint the Saver loaded", func() { get(s); tr.take(); put(s, false) }, 1, 1},
		{"PutWrites", func() {
			if err := s.PutWrites(ctx, "t", prev, []checkpoint.Write{{TaskID: "b", Node: "n", Channel: "n", Value: []byte(`2`)}}); err != nil {
				t.Fatal(err)
			}
		}, 1, 3},
	}
	for _, tc := range tests {
		tc.do()
		trips, statements, sqls := tr.take()
		if trips != tc.trips || statements != tc.statements {
			t.Errorf("%s: %d round trips, %d statements; want %d and %d. Sent:\n\t%s", tc.name, trips, statements, tc.trips, tc.statements, strings.Join(sqls, "\n\t"))
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
