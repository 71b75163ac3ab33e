package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAskPostgres runs ask with -postgres: the conversation is stored in
// the named schema, and a second ask continues it.
func TestAskPostgres(t *testing.T) {
	dsn := os.Getenv("AGENTGRAPH_TEST_POSTGRES")
	if dsn == "" {
		dsn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Skipf("PostgreSQL does not answer at %s (%v); start it or set AGENTGRAPH_TEST_POSTGRES to a server's DSN to run this test", dsn, err)
	}
	defer conn.Close(context.Background())
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "chatbotcmd_" + hex.EncodeToString(b)
	defer conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE") //nolint:errcheck

	t.Setenv("CHATBOT_POSTGRES_SCHEMA", schema) // the environment names it as well as the flag
	for _, q := range []string{"What is 15% of 240?", "How much does the Team plan cost?"} {
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"ask", "-offline", "-postgres", dsn, "-conversation", "pg-1", q}, strings.NewReader(""), &stdout, &stderr)
		if err != nil {
			t.Fatalf("ask: %v\n%s", err, stderr.String())
		}
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "memory_messages"}.Sanitize()+" WHERE conversation_id = 'pg-1'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("%d messages stored in %s, want 4 (two turns)", n, schema)
	}
}
