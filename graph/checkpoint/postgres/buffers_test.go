package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestGetReadsNoHistory: a Get of a thread's latest checkpoint reads the
// blobs the checkpoint refers to, not every blob of the thread, so its
// cost does not grow with the thread's history: on a thread of 300
// checkpoints it reads about as many buffers as on a thread of 2.
func TestGetReadsNoHistory(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: freshSchema(t, pool)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill := func(thread string, n int) {
		prev := ""
		for step := range n {
			cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: prev, Step: step,
				Versions: map[string]uint64{"a": uint64(step + 1), "b": uint64(step + 1)}}
			// 400 bytes: about 18 blobs a page.
			v := []byte(fmt.Sprintf(`"%0400d"`, step))
			blobs := []checkpoint.Blob{{Channel: "a", Kind: checkpoint.Full, Data: v}, {Channel: "b", Kind: checkpoint.Full, Data: v}}
			if err := s.Put(ctx, prev, cp, blobs, nil); err != nil {
				t.Fatal(err)
			}
			prev = cp.ID
		}
	}
	fill("short", 2)
	fill("long", 300)
	short := postgrestest.Buffers(t, pool, postgres.GetLatestSQL(s), "short", "")
	long := postgrestest.Buffers(t, pool, postgres.GetLatestSQL(s), "long", "")
	if long > short+3 {
		t.Errorf("a Get of the latest checkpoint read %d buffers on a thread of 300 checkpoints, %d on one of 2; want about as many", long, short)
	}
	t.Logf("buffers read by a Get: %d on a thread of 2 checkpoints, %d on one of 300", short, long)
}

// TestPutUpdatesThreadInPlace: the update of a thread's row by each Put
// is a heap-only (HOT) update, which adds no index entries: PostgreSQL's
// statistics count at least 9 in 10 of 200 Puts' updates as HOT (a
// pruned page takes the next version; a full one moves the row once).
func TestPutUpdatesThreadInPlace(t *testing.T) {
	ctx := context.Background()
	base := testPool(t)
	schema := freshSchema(t, base)
	// One connection, closed at the end: a backend that exits reports
	// its statistics.
	pool := postgrestest.TracedPool(t, nil, func(cfg *pgxpool.Config) { cfg.MaxConns = 1 })
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	const puts = 200
	prev := ""
	for step := range puts {
		cp := &checkpoint.Checkpoint{ThreadID: "t", ParentID: prev, Step: step, Versions: map[string]uint64{"a": uint64(step + 1)}}
		if err := s.Put(ctx, prev, cp, []checkpoint.Blob{{Channel: "a", Kind: checkpoint.Full, Data: []byte(`1`)}}, nil); err != nil {
			t.Fatal(err)
		}
		prev = cp.ID
	}
	s.Close()
	pool.Close()
	var upd, hot int64
	for range 400 {
		if err := base.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'agentgraph_threads'`,
			schema).Scan(&upd, &hot); err != nil {
			t.Fatal(err)
		}
		if upd >= puts-1 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if upd < puts-1 {
		t.Fatalf("the statistics count %d updates of agentgraph_threads after %d Puts; want %d", upd, puts, puts-1)
	}
	if hot*10 < upd*9 {
		t.Errorf("%d of the %d updates of a thread's row were HOT; want at least 9 in 10", hot, upd)
	}
	t.Logf("%d of the %d updates of a thread's row were HOT", hot, upd)
}
