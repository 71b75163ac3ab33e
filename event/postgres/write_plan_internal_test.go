package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestWriteOfManyKeysReadsNoTable: the statement that writes the records
// of several keys reads the parent table by key, not whole, and does not
// scan the events table for records to drop when its keys hold no more
// than their caps, even under a plan made while the tables were nearly
// empty (as a prepared statement's generic plan is, on a connection
// opened at start): a write of two keys reads about the same buffers
// with 3,000 parent rows and 3,000 other records as it did on nearly
// empty tables. The buffers counted include the statement's WITH
// queries that nothing in it reads (its insert of the records and its
// drop), which EXPLAIN counts apart; the drop's scan read 125 buffers
// before the drop was gated on a key past its cap.
func TestWriteOfManyKeysReadsNoTable(t *testing.T) {
	ctx := t.Context()
	pool, schema := postgrestest.Schema(t, "journal_plan_")
	parent := pgx.Identifier{schema, "parent"}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()+`; CREATE TABLE `+parent+` (id text PRIMARY KEY, filler text)`); err != nil {
		t.Fatal(err)
	}
	l, err := NewLog(ctx, LogConfig{Pool: pool, Schema: schema, Name: "plan", Parent: parent})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := pool.Exec(ctx, `INSERT INTO `+parent+` (id) VALUES ('a'), ('b')`); err != nil {
		t.Fatal(err)
	}
	pc, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Hijack()
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE w AS `+l.q.write); err != nil {
		t.Fatal(err)
	}
	// Two keys, a record each, kept to their last 100 records.
	const exec = `EXECUTE w('{a,b}', '{1,1}', '{100,100}', 'writer', '{a,b}', '{0,0}', '{0,0}', '{x,x}', '{"\\x00","\\x00"}', '{p,p}', '', '{0,0}')`
	buffers := func() int {
		var out []byte
		if err := conn.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+exec, pgx.QueryExecModeSimpleProtocol).Scan(&out); err != nil {
			t.Fatal(err)
		}
		n, err := postgrestest.ExplainBuffers(out)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for range 3 {
		buffers()
	}
	small := buffers()
	if _, err := pool.Exec(ctx, `INSERT INTO `+parent+` (id, filler) SELECT 'r' || i, repeat('f', 200) FROM generate_series(1, 3000) i;
		INSERT INTO `+l.q.keys+` (key, writer, next, ended, updated) VALUES ('other', '', 3000, false, now());
		INSERT INTO `+l.q.events+` (key, pos, seq, name, data) SELECT 'other', i, 0, 'x', convert_to(repeat('d', 200), 'UTF8') FROM generate_series(0, 2999) i`); err != nil {
		t.Fatal(err)
	}
	large := buffers()
	if large > small+10 {
		t.Errorf("a write of two keys read %d buffers beside 3,000 parent rows and 3,000 other records, %d on nearly empty tables; want about as many", large, small)
	}
	t.Logf("a write of two keys: %d buffers on nearly empty tables, %d beside 3,000 parent rows and records", small, large)
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+l.q.events+` WHERE key IN ('a', 'b')`).Scan(&n); err != nil || n != 10 {
		t.Fatalf("records kept of keys a and b: %d, %v; want 5 each", n, err)
	}
}
