package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
)

// sharedBuffers runs the statement sql with the literal arguments args
// under the plan a prepared statement settles on after its first
// executions (plan_cache_mode = force_generic_plan) and returns the
// buffers its second execution read (shared hits and reads, as EXPLAIN (ANALYZE, BUFFERS)
// counts them).
func sharedBuffers(t *testing.T, pool *pgxpool.Pool, sql string, args ...string) int {
	t.Helper()
	ctx := context.Background()
	pc, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The connection's session settings stay with it: it leaves the
	// pool, and is closed.
	conn := pc.Hijack()
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE measured AS `+sql); err != nil {
		t.Fatal(err)
	}
	lits := ""
	for i, a := range args {
		if i > 0 {
			lits += ", "
		}
		lits += "'" + a + "'"
	}
	// The second execution is measured: the first also reads what the
	// connection then caches (the indexes' metapages and roots).
	var out []byte
	for range 2 {
		if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE measured(`+lits+`)`, pgx.QueryExecModeSimpleProtocol).Scan(&out); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s", out)
	var plans []struct {
		Plan struct {
			Hit  int `json:"Shared Hit Blocks"`
			Read int `json:"Shared Read Blocks"`
		}
	}
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output %s: %v", out, err)
	}
	return plans[0].Plan.Hit + plans[0].Plan.Read
}

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
	short := sharedBuffers(t, pool, postgres.GetLatestSQL(s), "short", "")
	long := sharedBuffers(t, pool, postgres.GetLatestSQL(s), "long", "")
	if long > short+3 {
		t.Errorf("a Get of the latest checkpoint read %d buffers on a thread of 300 checkpoints, %d on one of 2; want about as many", long, short)
	}
	t.Logf("buffers read by a Get: %d on a thread of 2 checkpoints, %d on one of 300", short, long)
}
