package server_test

import (
	"path/filepath"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/servertest"
)

// TestStores checks the Store contract (package servertest) on the
// in-process backends; the PostgreSQL store runs it in its own package.
func TestStores(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		servertest.Run(t, func(t *testing.T) server.Store { return server.NewMemoryStore() })
	})
	t.Run("sqlite", func(t *testing.T) {
		servertest.Run(t, func(t *testing.T) server.Store {
			st, err := server.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		})
	})
}
