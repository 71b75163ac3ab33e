package postgres_test

import (
	"context"
	"fmt"
	"testing"

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
