package postgres_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/cognition/cognitiontest"
	"github.com/agentgraph/agentgraph/cognition/postgres"
	"github.com/agentgraph/agentgraph/internal/pgtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestConformance(t *testing.T) {
	cognitiontest.Run(t, func(t *testing.T) cognition.Store {
		pool, schema := pgtest.Schema(t, "cogtest_")
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestMigrateIsIdempotent(t *testing.T) {
	pool, schema := pgtest.Schema(t, "cogtest_")
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
	cognitiontest.RunTaskQueue(t, func(t *testing.T) cognition.TaskQueue {
		pool, schema := pgtest.Schema(t, "cogq_")
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
