package postgres_test

import (
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/documenttest"
	"github.com/agentgraph/agentgraph/document/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	documenttest.Run(t, func(t *testing.T) document.Store {
		pool, schema := postgrestest.Schema(t, "doctest_")
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "doctest_")
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
			t.Errorf("New %d: %v", i, err)
		}
	}
	var versions int
	if err := pool.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+pgx.Identifier{schema, "document_migrations"}.Sanitize()).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != 2 {
		t.Errorf("%d migration rows after 4 concurrent News; want 2, one per migration", versions)
	}
}
