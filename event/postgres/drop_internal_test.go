package postgres

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestWriteDropsOnlyPastTheCap: a write whose keys hold no more than their
// cap reads no more of the events table than its own records, whatever
// the plan of its drop: on a connection that plans no TID, index or
// bitmap scan (as a plan made while the table was nearly empty scans it
// for the records to drop), each of the three write statements reads a
// few buffers beside 3,000 records of another key, and still drops the
// records past a key's cap.
func TestWriteDropsOnlyPastTheCap(t *testing.T) {
	ctx := t.Context()
	pool, schema := postgrestest.Schema(t, "log_drop_")
	l, err := NewLog(ctx, LogConfig{Pool: pool, Schema: schema, Name: "drop"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := pool.Exec(ctx, `INSERT INTO `+l.q.keys+` (key, writer, next, ended, updated) VALUES ('other', '', 3000, false, now());
		INSERT INTO `+l.q.events+` (key, pos, seq, name, data) SELECT 'other', i, 0, 'x', convert_to(repeat('d', 200), 'UTF8') FROM generate_series(0, 2999) i`); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := pool.QueryRow(ctx, `SELECT pg_relation_size($1) / current_setting('block_size')::int`, l.q.events).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	scans := postgrestest.TracedPool(t, nil, func(cfg *pgxpool.Config) {
		for _, s := range []string{"enable_tidscan", "enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"} {
			cfg.ConnConfig.RuntimeParams[s] = "off"
		}
	})
	for _, tc := range []struct {
		name, sql string
		args      func(key, cap string) []string
		keys      int
	}{
		{"one record", l.q.writeOne, func(k, m string) []string { return []string{k, "w", m, "0", "x", `\x00`, "", "", "0"} }, 1},
		{"one key", l.q.write1, func(k, m string) []string {
			if m == "1" { // the write sends only the records its key keeps
				return []string{k, "w", "2", m, "{1}", "{0}", "{x}", `{"\\x00"}`, "", "", "0"}
			}
			return []string{k, "w", "2", m, "{0,1}", "{0,0}", "{x,x}", `{"\\x00","\\x00"}`, "", "", "0"}
		}, 1},
		{"two keys", l.q.write, func(k, m string) []string {
			return []string{fmt.Sprintf("{%s1,%s2}", k, k), "{1,1}", fmt.Sprintf("{%s,%s}", m, m), "w", fmt.Sprintf("{%s1,%s2}", k, k),
				"{0,0}", "{0,0}", "{x,x}", `{"\\x00","\\x00"}`, "{p,p}", "", "{0,0}"}
		}, 2},
	} {
		// Buffers runs the statement twice: the second run finds the
		// first one's records.
		key := strings.ReplaceAll(tc.name, " ", "_")
		n := postgrestest.Buffers(t, scans, tc.sql, tc.args(key, "100")...)
		if n*2 > pages {
			t.Errorf("%s: a write within the cap read %d buffers beside an events table of %d pages; want a few", tc.name, n, pages)
		}
		t.Logf("%s: a write within the cap read %d buffers beside an events table of %d pages", tc.name, n, pages)
		// Past the cap: a cap of 1 keeps each key's last record.
		postgrestest.Buffers(t, scans, tc.sql, tc.args(key+"_cap", "1")...)
		var kept int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+l.q.events+` WHERE key LIKE $1`, key+`\_cap%`).Scan(&kept); err != nil {
			t.Fatal(err)
		}
		if kept != tc.keys {
			t.Errorf("%s: %d records kept of %d keys capped at 1; want %d", tc.name, kept, tc.keys, tc.keys)
		}
	}
}
