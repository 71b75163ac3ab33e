package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/memorytest"
	"github.com/agentgraph/agentgraph/memory/postgres"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newStore opens a store on a new schema named with prefix.
func newStore(t testing.TB, prefix string) *postgres.Store {
	t.Helper()
	pool, schema := postgrestest.Schema(t, prefix)
	s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) memory.Store { return newStore(t, "memtest_") })
}

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "memtest_")
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
	if applied != postgres.Migrations || versions != postgres.Migrations {
		t.Errorf("memory_migrations holds %d rows (%d versions) after 6 migrations, want %d", applied, versions, postgres.Migrations)
	}
	if _, err := s.Append(t.Context(), "c", memory.Message{Role: memory.RoleUser, Content: "hi"}); err != nil {
		t.Errorf("Append after migrations: %v", err)
	}
}

func TestNewFromDSN(t *testing.T) {
	_, schema := postgrestest.Schema(t, "memtest_")
	s, err := postgres.New(t.Context(), postgres.Config{DSN: postgrestest.DSN(), Schema: schema})
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

func TestItemsConformance(t *testing.T) {
	memorytest.RunItems(t, func(t *testing.T, now func() time.Time) memory.Items {
		pool, schema := postgrestest.Schema(t, "memtest_")
		s, err := postgres.NewItems(t.Context(), postgres.Config{Pool: pool, Schema: schema, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestItemsDeleteExpiredAndReopen(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "memtest_")
	now := time.Unix(1000, 0)
	s, err := postgres.NewItems(t.Context(), postgres.Config{Pool: pool, Schema: schema, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.Put(ctx, memory.Record{Namespace: []string{"u"}, Key: "k", Value: json.RawMessage(`{"a":1}`), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, memory.Record{Namespace: []string{"u"}, Key: "keep", Value: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if n, err := s.DeleteExpired(ctx); err != nil || n != 1 {
		t.Errorf("DeleteExpired = %d, %v; want 1", n, err)
	}
	again, err := postgres.NewItems(ctx, postgres.Config{DSN: postgrestest.DSN(), Schema: schema}) // migrates again: a no-op
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Get(ctx, []string{"u"}, "keep", false); err != nil {
		t.Errorf("Get from a second store on the same schema: %v", err)
	}
}
