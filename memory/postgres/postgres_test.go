package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/memorytest"
	"github.com/agentgraph/agentgraph/memory/postgres"
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
	schema := "memtest_" + hex.EncodeToString(b)
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
	memorytest.Run(t, func(t *testing.T) memory.Store {
		pool, schema := testPool(t)
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	pool, schema := testPool(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent New %d: %v", i, err)
		}
	}
	s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, SkipMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	var versions, applied int
	err = pool.QueryRow(t.Context(), "SELECT COUNT(*), COUNT(DISTINCT version) FROM "+pgx.Identifier{schema, "memory_migrations"}.Sanitize()).Scan(&applied, &versions)
	if err != nil {
		t.Fatal(err)
	}
	if applied != 1 || versions != 1 {
		t.Errorf("memory_migrations holds %d rows (%d versions) after 6 migrations, want 1 row", applied, versions)
	}
	if _, err := s.Append(t.Context(), "c", memory.Message{Role: memory.RoleUser, Content: "hi"}); err != nil {
		t.Errorf("Append after migrations: %v", err)
	}
}

func TestNewFromDSN(t *testing.T) {
	_, schema := testPool(t)
	s, err := postgres.New(t.Context(), postgres.Config{DSN: dsn(), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if last, err := s.Append(t.Context(), "c", memory.Message{Role: memory.RoleUser, Content: "hi"}); err != nil || last != 1 {
		t.Errorf("Append = %d, %v; want 1, nil", last, err)
	}
}

func TestNewNeedsPoolOrDSN(t *testing.T) {
	if _, err := postgres.New(t.Context(), postgres.Config{}); err == nil {
		t.Error("New with neither Pool nor DSN succeeded")
	}
}

func TestNewUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err := postgres.New(ctx, postgres.Config{DSN: "postgres://nobody:secret@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"})
	if err == nil {
		t.Fatal("New against a closed port succeeded")
	}
	if got := err.Error(); strings.Contains(got, "secret") {
		t.Errorf("error leaks the password: %s", got)
	}
}
