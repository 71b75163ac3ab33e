package postgres_test

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/agent/server/servertest"
	"github.com/agentgraph/agentgraph/internal/pgtest"
)

func TestMain(m *testing.M) {
	if target := os.Getenv(instanceEnv); target != "" {
		runInstance(target)
		return
	}
	goleak.VerifyTestMain(m)
}

// open returns a Store on a fresh schema, or skips the test when no
// PostgreSQL answers.
func open(t *testing.T) *postgres.Store {
	t.Helper()
	pool, schema := pgtest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func TestStore(t *testing.T) {
	servertest.Run(t, func(t *testing.T) server.Store { return open(t) })
}

// TestNewTwice opens the schema again: the migrations are not applied
// twice.
func TestNewTwice(t *testing.T) {
	pool, schema := pgtest.Schema(t, "agentserver_test_")
	for range 2 {
		st, err := postgres.New(context.Background(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
}
