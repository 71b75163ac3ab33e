package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/cognitiontest"
	"github.com/agentgraph/agentgraph/cognition/postgres"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func dsn() string {
	if v := os.Getenv("AGENTGRAPH_TEST_POSTGRES"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// testPool connects to the test server, or skips the test, and returns a
// pool and a fresh schema name that is dropped when the test ends.
func testPool(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn())
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		t.Skipf("no PostgreSQL at %s (%v); start one or set AGENTGRAPH_TEST_POSTGRES to a reachable DSN", dsn(), err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "cogtest_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
		pool.Close()
	})
	return pool, schema
}

func TestConformance(t *testing.T) {
	cognitiontest.Run(t, func(t *testing.T) cognition.Store {
		pool, schema := testPool(t)
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMigrateIsIdempotent(t *testing.T) {
	pool, schema := testPool(t)
	for range 2 {
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}
