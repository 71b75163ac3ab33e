package postgres_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// BenchmarkJournalAppend appends one event to a key, as a resumable
// turn does per event (one statement, stored when it returns).
func BenchmarkJournalAppend(b *testing.B) {
	base, schema := postgrestest.Schema(b, "journal_")
	pool := postgrestest.TracedPool(b, nil, nil)
	defer reportTables(b, base, pool, schema)
	j, err := postgres.NewJournal(b.Context(), postgres.JournalConfig{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	ev := event.Event{Type: "step", RequestID: "r1", Time: time.Unix(0, 0).UTC(), Payload: event.Raw{Type: "step", Fields: []byte(`{"n":1}`)}}
	b.ReportAllocs()
	for b.Loop() {
		ev.Seq++
		if err := j.Append(b.Context(), "k", ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJournalAppendParallel appends from concurrent goroutines
// (GOMAXPROCS×4 of them, each to a key of its own), as the turns of many
// conversations do: appends in flight together share a write.
func BenchmarkJournalAppendParallel(b *testing.B) {
	base, schema := postgrestest.Schema(b, "journal_")
	pool := postgrestest.TracedPool(b, nil, nil)
	defer reportTables(b, base, pool, schema)
	j, err := postgres.NewJournal(b.Context(), postgres.JournalConfig{Pool: pool, Schema: schema})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	var keys atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("k%d", keys.Add(1))
		ev := event.Event{Type: "step", RequestID: "r1", Time: time.Unix(0, 0).UTC(), Payload: event.Raw{Type: "step", Fields: []byte(`{"n":1}`)}}
		for pb.Next() {
			ev.Seq++
			if err := j.Append(b.Context(), key, ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// reportTables closes pool, whose connections' backends then report their
// statistics, and reports what the journal's tables in schema saw, per
// append: the buffers read from their heaps and indexes (shared hits and
// reads, "buffers/op") and the share of the keys' row updates that were
// HOT ("hot-%"). The statistics arrive shortly after the backends exit:
// it waits until two reads 100ms apart agree.
func reportTables(b *testing.B, base, pool *pgxpool.Pool, schema string) {
	pool.Close()
	var bufs, upd, hot, prev int64 = 0, 0, 0, -1
	for range 100 {
		if err := base.QueryRow(b.Context(), `SELECT
				(SELECT coalesce(sum(heap_blks_hit + heap_blks_read + coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0)), 0)::bigint
					FROM pg_statio_user_tables WHERE schemaname = $1),
				(SELECT coalesce(sum(n_tup_upd), 0)::bigint FROM pg_stat_user_tables WHERE schemaname = $1 AND relname LIKE '%\_keys'),
				(SELECT coalesce(sum(n_tup_hot_upd), 0)::bigint FROM pg_stat_user_tables WHERE schemaname = $1 AND relname LIKE '%\_keys')`,
			schema).Scan(&bufs, &upd, &hot); err != nil {
			b.Fatal(err)
		}
		if bufs == prev && bufs > 0 {
			break
		}
		prev = bufs
		time.Sleep(100 * time.Millisecond)
	}
	b.ReportMetric(float64(bufs)/float64(b.N), "buffers/op")
	if upd > 0 {
		b.ReportMetric(100*float64(hot)/float64(upd), "hot-%")
	}
}
