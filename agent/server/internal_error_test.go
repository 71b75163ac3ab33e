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

// TestStreamStoreErrorNotSent: a stream that ends because a read of its
// run's events failed says so in an error event with a generic message
// and an error id, under which the store's error is logged; the store's
// text is not sent. It runs on every store (a failing wrapper of the
// memory store).
func TestStreamStoreErrorNotSent(t *testing.T) {
	st := &flakyStore{Store: server.NewMemoryStore(), failed: make(chan struct{})}
	core, logs := observer.New(zapcore.ErrorLevel)
	ts := newTestServer(t, server.Config{Store: st, Logger: zap.New(core)})
	resp, rid := streamDelayedRun(t, ts.URL)
	st.arm(rid, true, 1)
	evs := readSSE(t, resp.Body)
	<-st.failed
	if len(evs) == 0 || evs[len(evs)-1].Name != "error" {
		t.Fatalf("stream: %v; want it to end with an error event", evs)
	}
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(evs[len(evs)-1].Data, &e)
	if strings.Contains(e.Message, errFlaky.Error()) || !strings.HasPrefix(e.Message, "internal error; ") {
		t.Fatalf("error event %s; want a generic message without the store's text", evs[len(evs)-1].Data)
	}
	id := e.Message[strings.LastIndex(e.Message, " ")+1:]
	var found bool
	for _, l := range logs.All() {
		f := l.ContextMap()
		if f["error_id"] == id && strings.Contains(f["error"].(string), errFlaky.Error()) {
			found = true
		}
	}
	if !found {
		t.Errorf("no log line with error_id %s and the store's error in %v", id, logs.All())
	}
}
