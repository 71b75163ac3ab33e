package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestInternalErrorNotAnswered: a store's own error (here PostgreSQL's,
// its threads table gone) is answered 500 with a generic message and an
// error id, and logged with that id and the cause; the SQL text is not
// answered.
func TestInternalErrorNotAnswered(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_interr_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.ErrorLevel)
	ts := newTestServer(t, server.Config{Store: st, Logger: zap.New(core)})
	if _, err := pool.Exec(t.Context(), `DROP TABLE `+pgx.Identifier{schema, "agentserver_threads"}.Sanitize()+` CASCADE`); err != nil {
		t.Fatal(err)
	}
	code, body := raw(t, "POST", ts.URL+"/threads", `{}`, nil)
	var e struct {
		Detail string `json:"detail"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	if code != 500 || strings.Contains(body, "SQLSTATE") || !strings.HasPrefix(e.Detail, "internal error; ") {
		t.Fatalf("POST /threads on a store without its table: %d %s; want 500 with a generic message", code, body)
	}
	id := e.Detail[strings.LastIndex(e.Detail, " ")+1:]
	var found bool
	for _, l := range logs.All() {
		f := l.ContextMap()
		if f["error_id"] == id && f["path"] == "/threads" && strings.Contains(f["error"].(string), "SQLSTATE") {
			found = true
		}
	}
	if !found {
		t.Errorf("no log line with error_id %s, the path and the SQL error in %v", id, logs.All())
	}
}
