package postgres_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// cancelAfter cancels a context once a statement whose text holds match
// has returned: a client that went away right after it.
type cancelAfter struct {
	match  atomic.Pointer[string]
	cancel atomic.Pointer[context.CancelFunc]
}

type matchedKey struct{}

func (c *cancelAfter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if m := c.match.Load(); m != nil && strings.Contains(d.SQL, *m) {
		return context.WithValue(ctx, matchedKey{}, true)
	}
	return ctx
}

func (c *cancelAfter) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(matchedKey{}) != nil {
		if f := c.cancel.Load(); f != nil {
			(*f)()
		}
	}
}

// openTraced returns a Store on a fresh schema whose pool reports to tr,
// and a pool on the same database for the test's own reads.
func openTraced(t *testing.T, tr pgx.QueryTracer) (*postgres.Store, *pgxpool.Pool, string) {
	t.Helper()
	plain, schema := postgrestest.Schema(t, "agentserver_test_")
	pool := postgrestest.TracedPool(t, tr, nil)
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, plain, schema
}

// runWithLog creates thread tid with an ended run rid (updated at) whose
// log holds two events.
func runWithLog(t *testing.T, st server.Store, tid, rid string, at time.Time) {
	t.Helper()
	ctx := t.Context()
	if _, err := st.Thread(ctx, tid); err != nil {
		if err := st.CreateThread(ctx, &server.Thread{ID: tid, CreatedAt: at, UpdatedAt: at, Status: server.ThreadIdle, Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CreateRun(ctx, &server.Run{ID: rid, ThreadID: tid, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunSuccess,
		Metadata: map[string]any{}, Kwargs: json.RawMessage(`{}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"metadata", "end"} {
		if _, err := st.AppendEvent(ctx, rid, name, json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// logRows counts the rows of run rid's event log (its key and its events).
func logRows(t *testing.T, pool *pgxpool.Pool, schema, rid string) int {
	t.Helper()
	var n int
	err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM `+pgx.Identifier{schema, "agentserver_log_keys"}.Sanitize()+` WHERE key = $1)
		+ (SELECT count(*) FROM `+pgx.Identifier{schema, "agentserver_log_events"}.Sanitize()+` WHERE key = $1)`, rid).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// crashLog empties the event log tables of schema, as a crash of the
// database empties UNLOGGED tables.
func crashLog(t *testing.T, plain *pgxpool.Pool, schema string) {
	t.Helper()
	if _, err := plain.Exec(t.Context(), `TRUNCATE `+pgx.Identifier{schema, "agentserver_log_keys"}.Sanitize()+`, `+
		pgx.Identifier{schema, "agentserver_log_events"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
}

// runOnOther returns two stores of cfg, the test's and the other
// instance's, and creates through the other thread tid, busy, with run
// rid running on it (attempt 1, started or not). The test closes the
// test's store (serveStore); the other is closed when the test ends.
func runOnOther(t *testing.T, plain *pgxpool.Pool, cfg postgres.Config, tid, rid string, started bool) (st, other *postgres.Store) {
	t.Helper()
	ctx := t.Context()
	st, err := postgres.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	other, err = postgres.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	at := time.Now()
	if err := other.CreateThread(ctx, &server.Thread{ID: tid, CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateRun(ctx, &server.Run{ID: rid, ThreadID: tid, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunRunning,
		Worker: "other", LeaseUntil: at.Add(time.Hour), Attempt: 1, Started: started, Metadata: map[string]any{}, Kwargs: json.RawMessage(`{}`),
		MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	return st, other
}

// serveStore serves a server of st (no sweeps, hour-long leases) until
// the test ends, then closes the server and st.
func serveStore(t *testing.T, st *postgres.Store) *httptest.Server {
	t.Helper()
	srv, err := server.New(server.Config{Store: st, SweepInterval: time.Hour, Heartbeat: time.Hour, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close(context.Background()); st.Close() })
	return hs
}

// stream returns the body of the run stream at url, resumed after the
// event lastID, read to its end.
func stream(ctx context.Context, url, lastID string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestDeleteLeavesNoLogOnCancel: a client that goes away right after a
// deletion's change to the runs table leaves no event log behind: the
// run and its log go in one statement (DeleteRun, DeleteThread, Prune).
func TestDeleteLeavesNoLogOnCancel(t *testing.T) {
	tr := &cancelAfter{}
	st, pool, schema := openTraced(t, tr)
	old := time.Now().Add(-time.Hour)
	runWithLog(t, st, "t1", "r1", old)
	runWithLog(t, st, "t2", "r2", old)
	runWithLog(t, st, "t3", "r3", old)
	cases := []struct {
		name, match, run string
		call             func(ctx context.Context) error
	}{
		{"DeleteRun", "DELETE FROM", "r1", func(ctx context.Context) error { return st.DeleteRun(ctx, "r1") }},
		{"DeleteThread", "DELETE FROM", "r2", func(ctx context.Context) error { return st.DeleteThread(ctx, "t2") }},
		{"Prune", "pruned = true", "r3", func(ctx context.Context) error { _, err := st.Prune(ctx, time.Now(), 0); return err }},
	}
	for _, c := range cases {
		if n := logRows(t, pool, schema, c.run); n != 3 {
			t.Fatalf("%s: run %s's log has %d rows before; want 3", c.name, c.run, n)
		}
		ctx, cancel := context.WithCancel(t.Context())
		tr.match.Store(&c.match)
		tr.cancel.Store(&cancel)
		err := c.call(ctx)
		tr.match.Store(nil)
		cancel()
		t.Logf("%s with ctx cancelled after its first statement: %v", c.name, err)
		if n := logRows(t, pool, schema, c.run); n != 0 {
			t.Errorf("%s: run %s's log keeps %d rows after the run went; want 0", c.name, c.run, n)
		}
	}
}

// TestPruneSweepsOrphanLogs: an event log whose run is gone (what an
// append that checked its run just before a concurrent DeleteRun committed
// leaves) is deleted by the next Prune; the logs of live runs stay.
func TestPruneSweepsOrphanLogs(t *testing.T) {
	plain, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: plain, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	runWithLog(t, st, "t1", "live", time.Now())
	// The race's outcome: a log written for run "gone" after its deletion.
	if _, err := plain.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "agentserver_log_keys"}.Sanitize()+` (key, writer, next, ended, updated)
		VALUES ('gone', 'w', 1, false, now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "agentserver_log_events"}.Sanitize()+` (key, pos, seq, name, data)
		VALUES ('gone', 0, 0, 'values', '{}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Prune(ctx, time.Now().Add(-time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if n := logRows(t, plain, schema, "gone"); n != 0 {
		t.Errorf("the log of deleted run gone keeps %d rows after Prune; want 0", n)
	}
	if n := logRows(t, plain, schema, "live"); n != 3 {
		t.Errorf("the log of live run live has %d rows after Prune; want 3", n)
	}
}

// TestEventsAfterLogRestart: a database crash empties the UNLOGGED log
// tables; the run's next attempt numbers its events from 0 again. A
// reader at an id past the restarted log's end gets the log from its
// start (ids ≤ its position, which the server reports as dropped events)
// instead of waiting, unaware, for ids the new attempt reaches later.
func TestEventsAfterLogRestart(t *testing.T) {
	plain, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: plain, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	runWithLog(t, st, "t1", "r1", time.Now()) // events 0 and 1
	for range 4 {
		if _, err := st.AppendEvent(ctx, "r1", "values", json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	// The crash: the log tables are emptied.
	crashLog(t, plain, schema)
	for _, name := range []string{"metadata", "values"} {
		if _, err := st.AppendEvent(ctx, "r1", name, json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	evs, first, err := st.Events(ctx, "r1", 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if first != 0 || len(evs) != 2 || evs[0].ID != 0 || evs[0].Name != "metadata" || evs[1].ID != 1 {
		t.Fatalf("Events after 4 of a log restarted at 0 with 2 events: %+v from %d; want ids 0 and 1 from 0", evs, first)
	}
	// A reader at the log's end still reads nothing.
	if evs, _, err := st.Events(ctx, "r1", 1, 0); err != nil || len(evs) != 0 {
		t.Fatalf("Events after 1 of a log ending at 1: %+v, %v; want none", evs, err)
	}
}

// TestStreamAfterLogRestart: a client resuming a run's stream at event 4
// while a database crash emptied the run's log, and the run's next
// attempt (on another instance) writes its events from 0 again, is told
// that events were dropped and gets the new attempt's log from its start,
// through its end.
func TestStreamAfterLogRestart(t *testing.T) {
	plain, schema := postgrestest.Schema(t, "agentserver_test_")
	ctx := t.Context()
	tid, rid := "6f1c9d52-3a1e-4b8e-9a57-0d6a2c4e8b11", "0b9e7f3a-51c2-4d6e-8f14-7a3b2c1d0e99"
	st, other := runOnOther(t, plain, postgres.Config{Pool: plain, Schema: schema}, tid, rid, true)
	for range 5 {
		if _, err := other.AppendEvent(ctx, rid, "values", json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	hs := serveStore(t, st)
	rctx, leave := context.WithCancel(ctx)
	defer leave() // before hs.Close, which waits for the stream

	body := make(chan string, 1)
	go func() {
		got, err := stream(rctx, hs.URL+"/threads/"+tid+"/runs/"+rid+"/stream", "4")
		if err != nil {
			got = err.Error()
		}
		body <- got
	}()
	// The crash, and the next attempt's events from 0.
	crashLog(t, plain, schema)
	for _, name := range []string{"metadata", "values", "end"} {
		if _, err := other.AppendEvent(ctx, rid, name, json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	var got string
	select {
	case got = <-body:
	case <-time.After(60 * time.Second):
		t.Fatal("the stream did not end: it waits for ids past 4 that the restarted log has not reached")
	}
	for _, want := range []string{`"EventsDropped"`, "event: metadata\ndata: {}\nid: 0\n", "event: end\ndata: {}\nid: 2\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("stream lacks %q:\n%s", want, got)
		}
	}
}

// TestResumeAfterLostStart: with Config.SharedCheckpoints a run's start
// commits without waiting for its WAL flush, so a client can see its
// metadata event (id 0) and a crash then lose the start with the event
// log. The run's next attempt starts it again; a client resuming with
// Last-Event-ID 0 must get that attempt's every event, its metadata
// event first. The new attempt's log numbered its events from 0 again,
// so Events after 0, and the stream, skipped its metadata event.
func TestResumeAfterLostStart(t *testing.T) {
	plain, schema := postgrestest.Schema(t, "agentserver_test_")
	ctx := t.Context()
	tid, rid := "6f1c9d52-3a1e-4b8e-9a57-0d6a2c4e8b12", "0b9e7f3a-51c2-4d6e-8f14-7a3b2c1d0e9a"
	st, other := runOnOther(t, plain, postgres.Config{Pool: plain, Schema: schema, SharedCheckpoints: true}, tid, rid, false)
	if _, ev, err := other.StartRunEvent(ctx, rid, "", "metadata", json.RawMessage(`{"attempt":1}`), 0); err != nil || ev.ID != 0 {
		t.Fatalf("attempt 1's start: %+v, %v; want event 0", ev, err)
	}
	// The crash loses the start (the run is not started, as before it)
	// and empties the log; the next attempt claims the run.
	crashLog(t, plain, schema)
	if _, err := other.UpdateRun(ctx, rid, func(r *server.Run) error {
		r.Started, r.Start, r.Attempt = false, "", 2
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.StartRunEvent(ctx, rid, "", "metadata", json.RawMessage(`{"attempt":2}`), 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"values", "end"} {
		if _, err := other.AppendEvent(ctx, rid, name, json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	evs, _, err := st.Events(ctx, rid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Name)
	}
	if len(evs) != 3 || evs[0].Name != "metadata" || string(evs[0].Data) != `{"attempt":2}` || evs[0].ID <= 0 {
		t.Fatalf("Events after 0 (attempt 1's lost metadata event): %v %+v; want attempt 2's metadata, values and end, ids past 0", names, evs)
	}

	hs := serveStore(t, st)
	rctx, leave := context.WithTimeout(ctx, time.Minute) // a failure bound only
	defer leave()
	got, err := stream(rctx, hs.URL+"/threads/"+tid+"/runs/"+rid+"/stream", "0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"event: metadata\ndata: {\"attempt\":2}\n", "event: end\n", `"error":"EventsDropped"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stream resumed after event 0 lacks %q:\n%s", want, got)
		}
	}
}

// TestFreshStreamAfterUnstartedAttempt: a run's first attempt claimed it
// and died before it started (no event log); the next attempt's log is
// numbered from 2^40 times the attempt. A client streaming the whole log
// (Last-Event-ID -1) lost nothing and gets no EventsDropped warning
// (issue #21 B1); an attempt past 2^23 (whose product by 2^40 overflowed
// a bigint) still starts, with ids below 2^53 (B2).
func TestFreshStreamAfterUnstartedAttempt(t *testing.T) {
	plain, schema := postgrestest.Schema(t, "agentserver_test_")
	ctx := t.Context()
	st, err := postgres.New(ctx, postgres.Config{Pool: plain, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	tid := "7a2d0e63-4b2f-4c9f-8b68-1e3b3d5f9c23"
	at := time.Now()
	if err := st.CreateThread(ctx, &server.Thread{ID: tid, CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rid     string
		attempt int
	}{{"1c0a8e4b-62d3-4f5e-9a25-8b4c3d2e1f0a", 2}, {"2d1b9f5c-73e4-4a6f-8b36-9c5d4e3f2a1b", 1 << 23}} {
		if err := st.CreateRun(ctx, &server.Run{ID: c.rid, ThreadID: tid, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunRunning,
			Worker: "other", LeaseUntil: at.Add(time.Hour), Attempt: c.attempt, Metadata: map[string]any{}, Kwargs: json.RawMessage(`{}`),
			MultitaskStrategy: "enqueue"}); err != nil {
			t.Fatal(err)
		}
		_, ev, err := st.StartRunEvent(ctx, c.rid, "", "metadata", json.RawMessage(`{"attempt":2}`), 0)
		if err != nil {
			t.Fatalf("attempt %d's start: %v", c.attempt, err)
		}
		if ev.ID < 1<<40 || ev.ID >= 1<<53 {
			t.Errorf("attempt %d's first event id %d; want in [2^40, 2^53)", c.attempt, ev.ID)
		}
		if _, err := st.AppendEvent(ctx, c.rid, "end", json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	hs := serveStore(t, st)
	rctx, leave := context.WithTimeout(ctx, time.Minute) // a failure bound only
	defer leave()
	got, err := stream(rctx, hs.URL+"/threads/"+tid+"/runs/1c0a8e4b-62d3-4f5e-9a25-8b4c3d2e1f0a/stream", "-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "event: metadata\n") || !strings.Contains(got, "event: end\n") {
		t.Errorf("stream of the whole log lacks the metadata or end event:\n%s", got)
	}
	if strings.Contains(got, "EventsDropped") {
		t.Errorf("stream of the whole log of an attempt that created it warns of dropped events:\n%s", got)
	}
}
