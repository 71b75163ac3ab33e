package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// TestAppendUpdatesKeyInPlace: a write's update of its key's row is HOT
// (it adds no index entry), as no index has the columns a write sets.
// Appends to two keys, one at a time (the one-record statement) and in
// batches (the one-key and the many-key statements), must leave at least
// 9 in 10 of the keys' row updates HOT. With the index on updated that
// the first migration made, none was.
func TestAppendUpdatesKeyInPlace(t *testing.T) {
	ctx := context.Background()
	base, schema := postgrestest.Schema(t, "log_hot_")
	// One connection, closed at the end: a backend that exits reports
	// its statistics.
	pool := postgrestest.TracedPool(t, nil, func(cfg *pgxpool.Config) { cfg.MaxConns = 1 })
	defer pool.Close()
	l, err := NewLog(ctx, LogConfig{Pool: pool, Schema: schema, Name: "hot", MaxEvents: 20})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 100
	for i := range rounds {
		// Alone: the one-record statement.
		if _, err := l.Append(ctx, "a", 0, Record{Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		// Together: the one-key statement, then the many-key one.
		var recs []pending
		for range 3 {
			recs = append(recs, pending{key: "a", rec: Record{Data: []byte("y")}})
		}
		if i%2 == 1 {
			recs = append(recs, pending{key: "b", rec: Record{Data: []byte("z")}})
		}
		l.write(ctx, recs)
		for _, p := range recs {
			if p.err != nil {
				t.Fatal(p.err)
			}
		}
	}
	l.Close()
	pool.Close()
	// Key a: 2 inserts (its first write), 2*rounds-1 updates; key b: one
	// insert, rounds/2-1 updates.
	const want = 2*rounds - 1 + rounds/2 - 1
	var upd, hot int64
	for range 400 {
		if err := base.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'hot_keys'`,
			schema).Scan(&upd, &hot); err != nil {
			t.Fatal(err)
		}
		if upd >= want {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if upd < want {
		t.Fatalf("the statistics count %d updates of hot_keys; want %d", upd, want)
	}
	if hot*10 < upd*9 {
		t.Errorf("%d of the %d updates of the keys' rows were HOT; want at least 9 in 10", hot, upd)
	}
	t.Logf("%d of the %d updates of the keys' rows were HOT", hot, upd)
}

// TestMigrationDropsUpdatedIndex: tables made by the migrations before
// the index on updated was dropped lose it when a Log opens them, and
// keep their keys.
func TestMigrationDropsUpdatedIndex(t *testing.T) {
	ctx := t.Context()
	pool, schema := postgrestest.Schema(t, "log_migrate_")
	q := newJournalQueries(schema, "old")
	if err := pgdb.Migrate(ctx, pool, pgdb.Migrations{
		Schema: schema, Table: "old_migrations", Lock: "agentgraph/event/postgres", Steps: journalMigrations[:2],
		Replacer: strings.NewReplacer("{keys}", q.keys, "{events}", q.events, "{writers}", q.writers),
	}); err != nil {
		t.Fatal(err)
	}
	indexes := func() []string {
		rows, err := pool.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'old_keys' ORDER BY indexname`, schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := indexes(); len(got) != 2 || !strings.Contains(got[1], "(updated)") {
		t.Fatalf("indexes of the old tables: %q; want the primary key and one on updated", got)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO `+q.keys+` (key, writer, next, ended, updated) VALUES ('k', '', 0, false, now())`); err != nil {
		t.Fatal(err)
	}
	l, err := NewLog(ctx, LogConfig{Pool: pool, Schema: schema, Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := indexes(); len(got) != 1 || !strings.Contains(got[0], "(key)") {
		t.Fatalf("indexes of the migrated tables: %q; want the primary key alone", got)
	}
	if pos, err := l.Append(ctx, "k", 0, Record{Data: []byte("x")}); err != nil || pos != 0 {
		t.Fatalf("append to the migrated key: %d, %v; want 0", pos, err)
	}
}
