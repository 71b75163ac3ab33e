package postgrestest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// countedPool opens a pool of one connection, never pinged, counted by
// c, and returns it after its connection is open and the counts taken.
func countedPool(t *testing.T, c *postgrestest.Counter) *pgxpool.Pool {
	t.Helper()
	postgrestest.Schema(t, "pgtestcount_") // skips without a server
	pool := postgrestest.CountedPool(t, c, func(cfg *pgxpool.Config) {
		cfg.MaxConns = 1
		cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	})
	if _, err := pool.Exec(t.Context(), `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	c.Take()
	return pool
}

func check(t *testing.T, what string, got postgrestest.Counts, trips, statements, txs int) {
	t.Helper()
	if got.Trips != trips || got.Statements != statements || got.Txs != txs {
		t.Errorf("%s: %s; want %d round trips, %d statements, %d transactions", what, got, trips, statements, txs)
	}
}

func TestCounterQuery(t *testing.T) {
	var c postgrestest.Counter
	pool := countedPool(t, &c)
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT 2`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("SELECT 2 = %d, %v", n, err)
	}
	got := c.Take()
	check(t, "a query", got, 1, 1, 1)
	// SELECT 1 was prepared when the pool opened; SELECT 2 is prepared
	// now, in a write of its own, then executed in another.
	if got.Writes != 2 {
		t.Errorf("a query on a statement new to the connection: %d socket writes; want 2 (its preparation and its execution)", got.Writes)
	}
	if got.SQL["SELECT 2"] != 1 || len(got.SQL) != 1 {
		t.Errorf("SQL = %v; want SELECT 2 once", got.SQL)
	}
	if _, err := pool.Exec(t.Context(), `SELECT 2`); err != nil {
		t.Fatal(err)
	}
	if got := c.Take(); got.Writes != 1 {
		t.Errorf("a query on a prepared statement: %d socket writes; want 1", got.Writes)
	}
}

func TestCounterBatchTransaction(t *testing.T) {
	var c postgrestest.Counter
	pool := countedPool(t, &c)
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SELECT 1`)
	b.Queue(`SELECT 2`)
	b.Queue(`COMMIT`)
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	check(t, "a batch of BEGIN, two statements and COMMIT", c.Take(), 1, 4, 1)

	// The same statements, one round trip each, by pgx's Begin (which
	// sends a lower-case begin) and Commit.
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`SELECT 1`, `SELECT 2`} {
		if _, err := tx.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	check(t, "pgx's Begin, two statements and Commit", c.Take(), 4, 4, 1)

	// Two statements of a batch outside a transaction are one: an
	// implicit transaction, which an error in the second rolls back,
	// first statement included.
	b = &pgx.Batch{}
	b.Queue(`SELECT 1`)
	b.Queue(`SELECT 2`)
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	check(t, "a batch of two statements", c.Take(), 1, 2, 1)
	_, schema := postgrestest.Schema(t, "pgtestcount_")
	table := pgx.Identifier{schema, "implicit_tx"}.Sanitize()
	if _, err := pool.Exec(t.Context(), `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()+`; CREATE TABLE `+table+` (n int)`); err != nil {
		t.Fatal(err)
	}
	b = &pgx.Batch{}
	b.Queue(`INSERT INTO ` + table + ` VALUES (1)`)
	b.Queue(`SELECT 1 / 0`)
	if err := pool.SendBatch(t.Context(), b).Close(); err == nil {
		t.Fatal("a batch that divides by zero succeeded")
	}
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after a batch whose second statement failed, its first statement's insert left %d rows (%v); want 0: the batch is one transaction", n, err)
	}
	c.Take()

	// A BEGIN after a statement of a batch makes the statement's
	// implicit transaction explicit: the statement is rolled back with
	// it. Statements after a COMMIT are a transaction of their own.
	b = &pgx.Batch{}
	for _, sql := range []string{`INSERT INTO ` + table + ` VALUES (1)`, `BEGIN`, `SELECT 1 / 0`, `COMMIT`} {
		b.Queue(sql)
	}
	if err := pool.SendBatch(t.Context(), b).Close(); err == nil {
		t.Fatal("a batch that divides by zero succeeded")
	}
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after a batch of an insert, BEGIN, a failed statement and COMMIT, %d rows (%v); want 0: the insert is in the transaction", n, err)
	}
	c.Take()
	b = &pgx.Batch{}
	for _, sql := range []string{`SELECT 1`, `BEGIN`, `SELECT 2`, `COMMIT`, `SELECT 3`, `SELECT 4`} {
		b.Queue(sql)
	}
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	check(t, "a statement, BEGIN, a statement, COMMIT and two statements in one batch", c.Take(), 1, 6, 2)
}

// TestCounterSavepoint: a rollback to a savepoint leaves the transaction
// open, and the statements after it inside it; a commit and chain begins
// a transaction.
func TestCounterSavepoint(t *testing.T) {
	var c postgrestest.Counter
	pool := countedPool(t, &c)
	b := &pgx.Batch{}
	for _, sql := range []string{`BEGIN`, `SAVEPOINT s`, `SELECT 1`, `ROLLBACK TO SAVEPOINT s`, `SELECT 2`, `COMMIT`} {
		b.Queue(sql)
	}
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	check(t, "a transaction with a rollback to a savepoint", c.Take(), 1, 6, 1)

	b = &pgx.Batch{}
	for _, sql := range []string{`BEGIN`, `SELECT 1`, `COMMIT AND CHAIN`, `SELECT 2`, `SELECT 3`, `COMMIT AND NO CHAIN`, `SELECT 4`} {
		b.Queue(sql)
	}
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	check(t, "a transaction chained to another, then a statement", c.Take(), 1, 7, 3)
}

func TestCounterTakeAndSnapshot(t *testing.T) {
	var c postgrestest.Counter
	pool := countedPool(t, &c)
	for range 3 {
		if _, err := pool.Exec(t.Context(), `SELECT 1`); err != nil {
			t.Fatal(err)
		}
	}
	s1 := c.Snapshot()
	check(t, "the first snapshot", s1, 3, 3, 3)
	if _, err := pool.Exec(t.Context(), `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	s2 := c.Snapshot()
	check(t, "the second snapshot", s2, 4, 4, 4)
	if s1.SQL["SELECT 1"] != 3 || s2.SQL["SELECT 1"] != 4 {
		t.Errorf("SELECT 1 counted %d, then %d times; want 3, then 4 (a snapshot's map its own)", s1.SQL["SELECT 1"], s2.SQL["SELECT 1"])
	}
	check(t, "Take after the snapshots", c.Take(), 4, 4, 4)
	got := c.Take()
	check(t, "a second Take", got, 0, 0, 0)
	if got.Writes != 0 || len(got.SQL) != 0 {
		t.Errorf("a second Take: %s; want nothing", got)
	}
}

// TestCounterApart: the statements Apart picks out are counted apart
// only.
func TestCounterApart(t *testing.T) {
	c := postgrestest.Counter{Apart: func(sql string) bool { return strings.HasPrefix(sql, "SELECT 'apart'") }}
	pool := countedPool(t, &c)
	if _, err := pool.Exec(t.Context(), `SELECT 'apart'`); err != nil {
		t.Fatal(err)
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT 'apart'`)
	b.Queue(`SELECT 1`)
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	got := c.Take()
	check(t, "a statement apart, then a batch of one apart and one not", got, 1, 1, 1)
	if got.Apart != 2 {
		t.Errorf("%d statements apart; want 2", got.Apart)
	}
	if len(got.SQL) != 1 || got.SQL["SELECT 1"] != 1 {
		t.Errorf("SQL = %v; want SELECT 1 alone", got.SQL)
	}
}

// TestCounterSQLBounded: the statements beyond MaxSQLKeys distinct ones
// are counted under OtherSQL.
func TestCounterSQLBounded(t *testing.T) {
	var c postgrestest.Counter
	pool := countedPool(t, &c)
	b := &pgx.Batch{}
	for i := range postgrestest.MaxSQLKeys + 10 {
		b.Queue(`SELECT ` + strings.Repeat("1+", i) + `1`)
	}
	if err := pool.SendBatch(t.Context(), b).Close(); err != nil {
		t.Fatal(err)
	}
	got := c.Take()
	if len(got.SQL) != postgrestest.MaxSQLKeys+1 || got.SQL[postgrestest.OtherSQL] != 10 {
		t.Errorf("%d distinct statements: %d keys, %d under %q; want %d keys, 10 under it",
			postgrestest.MaxSQLKeys+10, len(got.SQL), got.SQL[postgrestest.OtherSQL], postgrestest.OtherSQL, postgrestest.MaxSQLKeys+1)
	}
	if got.Statements != postgrestest.MaxSQLKeys+10 {
		t.Errorf("%d statements counted; want %d", got.Statements, postgrestest.MaxSQLKeys+10)
	}
}
