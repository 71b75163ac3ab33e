// Package postgrestest gives tests a PostgreSQL database to work in: a pool on
// the test server and a fresh schema that is dropped when the test ends.
// Tests skip, saying how to provide a server, when there is none.
package postgrestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultDSN is the test server's DSN when AGENTGRAPH_TEST_POSTGRES is not
// set.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN returns the test server's DSN: AGENTGRAPH_TEST_POSTGRES, or
// [DefaultDSN].
func DSN() string {
	if v := os.Getenv("AGENTGRAPH_TEST_POSTGRES"); v != "" {
		return v
	}
	return DefaultDSN
}

// Schema connects to the test server, or skips the test if it cannot
// within 5 seconds, and returns a pool and a fresh schema name, prefix
// followed by random hex digits. When the test ends, the schema is dropped
// (with everything in it) and the pool closed. The schema itself is not
// created.
func Schema(t testing.TB, prefix string) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, DSN())
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		t.Skipf("no PostgreSQL at %s (%v); start one or set AGENTGRAPH_TEST_POSTGRES to a reachable DSN", DSN(), err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := prefix + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		if err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
		pool.Close()
	})
	return pool, schema
}

// Settings returns a new pool to the server of pool whose sessions run
// with the given settings (such as default_transaction_isolation), closed
// when the test ends; it fails the test if the server does not take them.
func Settings(t testing.TB, pool *pgxpool.Pool, settings map[string]string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(cfg.ConnConfig.RuntimeParams, settings)
	p, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for name, want := range settings {
		var got string
		if err := p.QueryRow(t.Context(), "SELECT current_setting($1)", name).Scan(&got); err != nil || got != want {
			t.Fatalf("%s = %q (%v); want %q", name, got, err, want)
		}
	}
	return p
}

// Buffers runs the statement sql, with args as its parameters' literal
// values, under the plan a prepared statement settles on after its first
// executions (plan_cache_mode = force_generic_plan), and returns the
// buffers its second execution read (shared hits and reads, as EXPLAIN
// (ANALYZE, BUFFERS) counts them): the first also reads what the
// connection then caches, such as the indexes' metapages. The count
// includes the data-modifying WITH queries that no part of the statement
// reads (PostgreSQL runs them after the rest, and EXPLAIN counts them
// apart from the plan's top node). The statement runs, twice, on a
// connection of pool taken out of it and closed after. A test of how a
// statement's cost grows with the data compares two figures of Buffers.
func Buffers(t testing.TB, pool *pgxpool.Pool, sql string, args ...string) int {
	t.Helper()
	ctx := t.Context()
	pc, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The session's settings and prepared statement leave with it.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE measured AS `+sql); err != nil {
		t.Fatalf("prepare %s: %v", sql, err)
	}
	lits := make([]string, len(args))
	for i, a := range args {
		lits[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
	}
	explain := `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE measured(` + strings.Join(lits, ", ") + `)`
	var out []byte
	for range 2 {
		if err := conn.QueryRow(ctx, explain, pgx.QueryExecModeSimpleProtocol).Scan(&out); err != nil {
			t.Fatalf("%s: %v", explain, err)
		}
	}
	n, err := ExplainBuffers(out)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ExplainBuffers returns the buffers (shared hits and reads) a statement
// read, from the output of EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of it:
// those of its plan's top node, which include every node run within it,
// and those of the data-modifying WITH queries that nothing in the
// statement reads, which PostgreSQL runs after the rest and EXPLAIN counts
// apart.
func ExplainBuffers(explain []byte) (int, error) {
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(explain, &plans); err != nil {
		return 0, fmt.Errorf("EXPLAIN output %s: %w", explain, err)
	}
	if len(plans) != 1 {
		return 0, fmt.Errorf("EXPLAIN output %s: %d plans; want the one of a statement", explain, len(plans))
	}
	return plans[0].Plan.statementBuffers(), nil
}

// planNode is a node of EXPLAIN's JSON output.
type planNode struct {
	Hit     int        `json:"Shared Hit Blocks"`
	Read    int        `json:"Shared Read Blocks"`
	Subplan string     `json:"Subplan Name"` // "CTE name" for a WITH query
	CTEName string     `json:"CTE Name"`     // the WITH query a CTE Scan reads
	Plans   []planNode `json:"Plans"`
}

// statementBuffers returns the buffers of the statement whose plan's top
// node is p: p's own (which include those of every node run within it)
// and those of the WITH queries no CTE Scan reads, which ran after p. A
// WITH query some node reads ran within that node.
func (p planNode) statementBuffers() int {
	read := map[string]bool{}
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.CTEName != "" {
			read[n.CTEName] = true
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(p)
	n := p.Hit + p.Read
	for _, c := range p.Plans {
		if name, ok := strings.CutPrefix(c.Subplan, "CTE "); ok && !read[name] {
			n += c.Hit + c.Read
		}
	}
	return n
}
