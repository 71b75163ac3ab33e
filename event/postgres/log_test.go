package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// writeCounter counts the Log's write statements a pool sends.
type writeCounter struct{ writes atomic.Int64 }

func (c *writeCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(data.SQL, "WITH c AS (SELECT * FROM unnest(") {
		c.writes.Add(1)
	}
	return ctx
}

func (c *writeCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// onePool opens a pool of one connection on the test server's schema,
// traced by tr.
func onePool(t *testing.T, tr pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func newLog(t *testing.T, cfg postgres.LogConfig) *postgres.Log {
	t.Helper()
	l, err := postgres.NewLog(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// TestLogWritesWhatWaitsInOneStatement appends 200 records to 20 keys
// while the pool's only connection is held, so that they all wait for
// the write in flight: they are then written by at most two statements
// (the first write may have taken the first record before it waited for
// the connection), each key's records numbered from 0 in append order.
func TestLogWritesWhatWaitsInOneStatement(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	var tr writeCounter
	pool := onePool(t, &tr)
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema})
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for k := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if err := l.Enqueue(t.Context(), fmt.Sprintf("k%d", k), 0, postgres.Record{Name: "n", Seq: int64(i), Data: fmt.Appendf(nil, "%d/%d", k, i)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	conn.Release()
	for k := range 20 {
		if err := l.Flush(t.Context(), fmt.Sprintf("k%d", k)); err != nil {
			t.Fatal(err)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := tr.writes.Load(); n > 2 {
		t.Errorf("200 waiting records took %d write statements; want at most 2", n)
	}
	for k := range 20 {
		recs, first, found, err := l.Read(t.Context(), fmt.Sprintf("k%d", k), -1, 0)
		if err != nil || !found || first != 0 || len(recs) != 10 {
			t.Fatalf("k%d: %d records from %d, found %v, %v; want 10 from 0", k, len(recs), first, found, err)
		}
		for i, r := range recs {
			if r.Pos != int64(i) || r.Seq != int64(i) || r.Name != "n" || string(r.Data) != fmt.Sprintf("%d/%d", k, i) {
				t.Fatalf("k%d record %d: %+v", k, i, r)
			}
		}
	}
}

// TestLogKeepsTheLastMax appends records one at a time and ten in one
// write (past the bound within the write itself): a key keeps its last
// max, and Read reports where the log starts and pages with a limit.
func TestLogKeepsTheLastMax(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	pool := onePool(t, nil)
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema})
	for i := range 5 {
		pos, err := l.Append(t.Context(), "one", 3, postgres.Record{Data: []byte{byte(i)}})
		if err != nil || pos != int64(i) {
			t.Fatalf("append %d: position %d, %v", i, pos, err)
		}
	}
	recs, first, _, err := l.Read(t.Context(), "one", -1, 0)
	if err != nil || first != 2 || len(recs) != 3 || recs[0].Pos != 2 || recs[2].Pos != 4 {
		t.Fatalf("one: %+v from %d, %v; want 2..4", recs, first, err)
	}
	if recs, _, _, _ := l.Read(t.Context(), "one", 2, 1); len(recs) != 1 || recs[0].Pos != 3 {
		t.Fatalf("one after 2, limit 1: %+v; want 3", recs)
	}
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := l.Enqueue(t.Context(), "many", 3, postgres.Record{Data: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	conn.Release()
	if err := l.Flush(t.Context(), "many"); err != nil {
		t.Fatal(err)
	}
	recs, first, _, err = l.Read(t.Context(), "many", -1, 0)
	if err != nil || first != 7 || len(recs) != 3 || recs[0].Pos != 7 || recs[2].Data[0] != 9 {
		t.Fatalf("many: %+v from %d, %v; want 7..9", recs, first, err)
	}
}

// TestLogParentAndDelete checks that a log with a Parent table writes
// only the keys it lists (the others fail with event.ErrUnknownKey, also
// through Flush for Enqueue), and that Delete drops a key's log.
func TestLogParentAndDelete(t *testing.T) {
	base, schema := postgrestest.Schema(t, "log_")
	if _, err := base.Exec(t.Context(), `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	parent := pgx.Identifier{schema, "parents"}.Sanitize()
	if _, err := base.Exec(t.Context(), `CREATE TABLE `+parent+` (id text PRIMARY KEY); INSERT INTO `+parent+` VALUES ('yes')`); err != nil {
		t.Fatal(err)
	}
	l := newLog(t, postgres.LogConfig{Pool: base, Schema: schema, Parent: parent})
	if _, err := l.Append(t.Context(), "yes", 0, postgres.Record{Data: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(t.Context(), "no", 0, postgres.Record{Data: []byte("a")}); !errors.Is(err, event.ErrUnknownKey) {
		t.Fatalf("append to a key its parent does not list: %v; want event.ErrUnknownKey", err)
	}
	if err := l.Enqueue(t.Context(), "no", 0, postgres.Record{Data: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(t.Context(), "no"); !errors.Is(err, event.ErrUnknownKey) {
		t.Fatalf("flush of a key its parent does not list: %v; want event.ErrUnknownKey", err)
	}
	if err := l.Flush(t.Context(), "no"); err != nil {
		t.Fatalf("second flush: %v; want the failure reported once", err)
	}
	if _, _, found, _ := l.Read(t.Context(), "no", -1, 0); found {
		t.Fatal("a refused key has a log")
	}
	if err := l.Delete(t.Context(), "yes"); err != nil {
		t.Fatal(err)
	}
	if recs, _, found, err := l.Read(t.Context(), "yes", -1, 0); err != nil || found || len(recs) != 0 {
		t.Fatalf("deleted key: %+v, found %v, %v", recs, found, err)
	}
}
