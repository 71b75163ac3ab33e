package postgres_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestConformanceIsolation runs the conformance checks on a database whose
// default_transaction_isolation is repeatable read, then serializable:
// the store's transactions do not depend on the database's default.
func TestConformanceIsolation(t *testing.T) {
	for _, iso := range []string{"repeatable read", "serializable"} {
		t.Run(strings.ReplaceAll(iso, " ", "_"), func(t *testing.T) {
			documenttest.Run(t, func(t *testing.T) document.Store {
				pool, schema := postgrestest.Schema(t, "doctest_")
				p := postgrestest.Settings(t, pool, map[string]string{"default_transaction_isolation": iso})
				s, err := postgres.New(t.Context(), postgres.Config{Pool: p, Schema: schema})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
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

// TestOwnerQuotaAcrossInstances: two stores on one database, as two
// service instances would have, race uploads of one owner; the owner never
// holds more than Quota.Owner allows, in number or in bytes, whatever the
// database's default transaction isolation.
func TestOwnerQuotaAcrossInstances(t *testing.T) {
	for _, iso := range []string{"", "repeatable read", "serializable"} {
		t.Run(cmp.Or(iso, "default"), func(t *testing.T) {
			testOwnerQuotaAcrossInstances(t, iso)
		})
	}
}

func testOwnerQuotaAcrossInstances(t *testing.T, isolation string) {
	pool, schema := postgrestest.Schema(t, "doctest_")
	var stores [2]*postgres.Store
	for i := range stores {
		settings := map[string]string{}
		if isolation != "" {
			settings["default_transaction_isolation"] = isolation
		}
		p := postgrestest.Settings(t, pool, settings)
		var err error
		if stores[i], err = postgres.New(t.Context(), postgres.Config{Pool: p, Schema: schema}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for round, q := range []document.Quota{{Owner: document.Usage{Documents: 3}}, {Owner: document.Usage{Bytes: 30}}} {
		owner := fmt.Sprint("owner-", round)
		const n = 16
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				doc := document.Document{ID: fmt.Sprintf("r%d-d%d", round, i), ConversationID: fmt.Sprint("conv-", i), Owner: owner,
					Name: "n.md", ContentType: "text/markdown", Size: 10, Status: document.StatusPending, Created: at, Updated: at}
				errs[i] = stores[i%2].Create(context.Background(), doc, []byte("0123456789"), q)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil && !errors.Is(err, document.ErrQuota) {
				t.Errorf("%+v: Create %d: %v; want success or ErrQuota", q, i, err)
			}
		}
		u, err := stores[0].Usage(t.Context(), owner)
		if err != nil {
			t.Fatal(err)
		}
		if want := (document.Usage{Documents: 3, Bytes: 30}); u != want {
			t.Errorf("%+v: %d racing uploads through two instances left the owner with %+v; want %+v", q, n, u, want)
		}
	}
}
