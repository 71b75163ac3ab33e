// Package postgrestest gives tests a PostgreSQL database to work in: a pool on
// the test server and a fresh schema that is dropped when the test ends.
// Tests skip, saying how to provide a server, when there is none.
package postgrestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
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
