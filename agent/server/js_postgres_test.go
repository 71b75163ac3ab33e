package server_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestOfficialJSClientPostgres runs the official client's scripts on the
// PostgreSQL store and checkpointer, on a fresh schema each.
func TestOfficialJSClientPostgres(t *testing.T) {
	modules := nodeModules(t)
	for _, script := range []string{"smoke.mjs", "runs.mjs", "multitask.mjs", "resume.mjs", "threads.mjs", "branch.mjs", "checkpointmeta.mjs", "assistants.mjs"} {
		t.Run(script, func(t *testing.T) {
			pool, schema := postgrestest.Schema(t, "agentserver_js_")
			st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			ts := newTestServer(t, server.Config{Store: st, Checkpointer: saver, Authenticate: apiKeys(t, map[string]string{"test-key-0123456789": "tester"})})
			runScript(t, modules, script, ts.URL, "test-key-0123456789")
		})
	}
}
