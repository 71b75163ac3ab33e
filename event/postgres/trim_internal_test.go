package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/internal/pgdb"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestWriteOneTrimsByFunction: the one-record write trims its key's log
// by the function TrimOneFunction names, called only when the log is
// full, not by a DELETE of its own, whose nodes PostgreSQL initialised
// at every write (its plan holds no DELETE); and the log is trimmed
// still: writes past the cap leave the cap's newest records.
func TestWriteOneTrimsByFunction(t *testing.T) {
	ctx := t.Context()
	pool, schema := postgrestest.Schema(t, "journal_trim_")
	l, err := NewLog(ctx, LogConfig{Pool: pool, Schema: schema, Name: "trim"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var plan string
	if err := pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+l.q.writeOne, pgx.QueryExecModeSimpleProtocol,
		"k", "w", 2, 0, "x", []byte{0}, "", "", 0).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, `"Operation": "Delete"`) {
		t.Errorf("the one-record write's plan holds a DELETE:\n%s", plan)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		if _, err := l.Append(ctx, "k", 2, Record{Name: name, Data: []byte(name)}); err != nil {
			t.Fatal(err)
		}
	}
	recs, _, _, err := l.Read(ctx, "k", -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Name)
	}
	if strings.Join(got, " ") != "c d" {
		t.Errorf("after 4 writes capped at 2 the log holds %v; want [c d]", got)
	}
}

// countTrims replaces the trim function of the log name in schema by one
// that also counts its calls, and returns the count so far.
func countTrims(t *testing.T, pool *pgxpool.Pool, schema, name string) func() int {
	t.Helper()
	calls := pgdb.Table(schema, name+"_trim_calls")
	if _, err := pool.Exec(t.Context(), `CREATE TABLE `+calls+` (k text, p bigint)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `CREATE OR REPLACE FUNCTION `+TrimOneFunction(schema, name)+`(k text, p bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $f$
	BEGIN
		INSERT INTO `+calls+` VALUES (k, p);
		DELETE FROM `+pgdb.Table(schema, name+"_events")+` WHERE key = k AND pos = p;
		RETURN true;
	END
	$f$`); err != nil {
		t.Fatal(err)
	}
	return func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM `+calls).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// TestEpochLogTrimsOnlyWhenFull: a log started at an epoch above 0
// (AppendEpoch) calls the trim function only once it holds more than its
// cap, as a log of epoch 0 does, not at every write (its next position
// is above the cap from its first record); and it is trimmed still.
func TestEpochLogTrimsOnlyWhenFull(t *testing.T) {
	ctx := t.Context()
	pool, schema := postgrestest.Schema(t, "journal_epoch_trim_")
	l, err := NewLog(ctx, LogConfig{Pool: pool, Schema: schema, Name: "trim"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	trims := countTrims(t, pool, schema, "trim")
	for _, epoch := range []int64{0, 3} {
		key := fmt.Sprintf("k%d", epoch)
		before := trims()
		for i, name := range []string{"a", "b", "c", "d", "e"} {
			if _, err := l.AppendEpoch(ctx, key, 3, epoch, Record{Name: name, Data: []byte(name)}); err != nil {
				t.Fatal(err)
			}
			if got, want := trims()-before, max(0, i+1-3); got != want {
				t.Errorf("log of epoch %d capped at 3, after %d records: the trim function was called %d times; want %d (once per record past the cap)", epoch, i+1, got, want)
			}
		}
		recs, _, _, err := l.Read(ctx, key, -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Name)
		}
		if strings.Join(got, " ") != "c d e" {
			t.Errorf("log of epoch %d after 5 writes capped at 3 holds %v; want [c d e]", epoch, got)
		}
	}
}
