package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/cognitiontest"
	"github.com/agentgraph/agentgraph/cognition/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"go.uber.org/goleak"
)

// openDSN opens a store on the database and schema named by dsn, "DSN|schema".
func openDSN(ctx context.Context, dsn string) (cognitiontest.DurableStore, func(), error) {
	url, schema, _ := strings.Cut(dsn, "|")
	s, err := postgres.New(ctx, postgres.Config{DSN: url, Schema: schema})
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

func TestMain(m *testing.M) {
	cognitiontest.CrashChild(openDSN)
	goleak.VerifyTestMain(m)
}

// TestLearningSurvivesKill kills a process with queued and claimed
// learning tasks on PostgreSQL and learns them in this one.
func TestLearningSurvivesKill(t *testing.T) {
	_, schema := postgrestest.Schema(t, "cogkill_")
	cognitiontest.RunCrash(t, postgrestest.DSN()+"|"+schema, openDSN)
}

// newStore opens a store on a new schema named with prefix.
func newStore(t *testing.T, prefix string) *postgres.Store {
	t.Helper()
	pool, schema := postgrestest.Schema(t, prefix)
	s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	cognitiontest.Run(t, func(t *testing.T) cognition.Store { return newStore(t, "cogtest_") })
}

// TestConformanceIsolation: the store's locked updates (a read, then a
// write, under an advisory lock) hold whatever the database's
// default_transaction_isolation: under repeatable read or serializable a
// transaction's snapshot would be taken by the lock's statement, before
// the lock is granted, and concurrent updates would fail or be lost.
func TestConformanceIsolation(t *testing.T) {
	for _, iso := range []string{"repeatable read", "serializable"} {
		t.Run(strings.ReplaceAll(iso, " ", "_"), func(t *testing.T) {
			cognitiontest.Run(t, func(t *testing.T) cognition.Store {
				pool, schema := postgrestest.Schema(t, "cogiso_")
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

func TestMigrateIsIdempotent(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "cogtest_")
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

func TestTaskQueueConformance(t *testing.T) {
	cognitiontest.RunTaskQueue(t, func(t *testing.T) cognition.TaskQueue { return newStore(t, "cogq_") })
}
