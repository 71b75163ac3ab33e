package checkpointtest_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type backend struct {
	name string
	// open returns a fresh Saver and, optionally, a function measuring the
	// bytes the backend takes on disk.
	open func(b *testing.B) (checkpoint.Saver, func() int64)
}

var backends = []backend{
	{"memory", func(b *testing.B) (checkpoint.Saver, func() int64) { return checkpoint.NewMemory(), nil }},
	{"sqlite", openSQLite},
	{"postgres", func(b *testing.B) (checkpoint.Saver, func() int64) { return openPostgres(b, false) }},
	{"postgres_async", func(b *testing.B) (checkpoint.Saver, func() int64) { return openPostgres(b, true) }},
}

func openSQLite(b *testing.B) (checkpoint.Saver, func() int64) {
	dir := b.TempDir()
	s, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(dir, "bench.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	// The pages in use, whether still in the write-ahead log or not.
	db, err := sql.Open("sqlite", filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	size := func() int64 {
		var n int64
		err := db.QueryRow(`SELECT (c.page_count - f.freelist_count) * s.page_size
			FROM pragma_page_count() AS c, pragma_freelist_count() AS f, pragma_page_size() AS s`).Scan(&n)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return s, size
}

func openPostgres(b *testing.B, async bool) (checkpoint.Saver, func() int64) {
	dsn := os.Getenv("AGENTGRAPH_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		b.Skipf("PostgreSQL does not answer at %s (%v); start it or set AGENTGRAPH_TEST_POSTGRES to run this benchmark", dsn, err)
	}
	r := make([]byte, 6)
	rand.Read(r)
	schema := "agentgraph_bench_" + hex.EncodeToString(r)
	b.Cleanup(func() {
		pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		pool.Close()
	})
	s, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, AsyncCommit: async})
	if err != nil {
		b.Fatal(err)
	}
	size := func() int64 {
		var n int64
		err := pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'agentgraph_checkpoint_migrations'`, schema).Scan(&n)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return s, size
}

// BenchmarkPut: one step of a chat-like thread (Put, then Get latest) on
// each backend.
func BenchmarkPut(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			s, _ := bk.open(b)
			checkpointtest.BenchmarkPut(b, s)
		})
	}
}

// BenchmarkBytes: stored bytes per checkpoint of a 1000-step chat on each
// backend; the durable ones also report their on-disk growth.
func BenchmarkBytes(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			s, size := bk.open(b)
			var before int64
			if size != nil {
				before = size()
			}
			checkpointtest.BenchmarkBytes(b, s, func(b *testing.B, n int) {
				if size != nil {
					b.ReportMetric(float64(size()-before)/float64(n), "diskB/ckpt")
				}
			})
		})
	}
}

// BenchmarkHistory: one page of 100 snapshots of a 100-step chat on each
// backend, through SnapshotLister and through one Get per checkpoint.
func BenchmarkHistory(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			s, _ := bk.open(b)
			checkpointtest.BenchmarkHistory(b, s)
		})
	}
}
