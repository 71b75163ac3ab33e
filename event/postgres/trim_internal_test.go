package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

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
