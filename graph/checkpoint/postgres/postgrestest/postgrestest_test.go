package postgrestest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDSN(t *testing.T) {
	t.Setenv("AGENTGRAPH_TEST_POSTGRES", "")
	if got := postgrestest.DSN(); got != postgrestest.DefaultDSN {
		t.Errorf("DSN with the variable empty = %s, want %s", got, postgrestest.DefaultDSN)
	}
	t.Setenv("AGENTGRAPH_TEST_POSTGRES", "postgres://elsewhere/db")
	if got := postgrestest.DSN(); got != "postgres://elsewhere/db" {
		t.Errorf("DSN = %s, want the variable's value", got)
	}
}

// TestSchemaDroppedAfterTest creates the schema in a subtest and checks,
// after the subtest, that it is gone.
func TestSchemaDroppedAfterTest(t *testing.T) {
	var schema string
	t.Run("use", func(t *testing.T) {
		pool, s := postgrestest.Schema(t, "pgtesttest_")
		schema = s
		if _, err := pool.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{s}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		_, other := postgrestest.Schema(t, "pgtesttest_")
		if other == s {
			t.Errorf("two calls gave the same schema %s", s)
		}
	})
	if schema == "" {
		t.Skip("no server")
	}
	pool, _ := postgrestest.Schema(t, "pgtesttest_")
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = $1`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("schema %s still exists after its test ended", schema)
	}
}

// skipRecorder stands in for a test to see whether Schema skips it,
// without a skipped test in the output of a run that has its services.
type skipRecorder struct {
	testing.TB
	skipped string
}

func (r *skipRecorder) Helper() {}

func (r *skipRecorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestSkipsWithoutServer(t *testing.T) {
	t.Setenv("AGENTGRAPH_TEST_POSTGRES", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	rec := &skipRecorder{TB: t}
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		postgrestest.Schema(rec, "x_")
		returned = true
	}()
	<-done
	if returned {
		t.Fatal("Schema returned without a server; want the test skipped")
	}
	if !strings.Contains(rec.skipped, "AGENTGRAPH_TEST_POSTGRES") {
		t.Errorf("skip message %q does not say how to enable the test", rec.skipped)
	}
}

// TestBuffersCountsUnreadWithQueries: Buffers counts the buffers of a
// data-modifying WITH query the rest of the statement does not read
// (PostgreSQL runs it last, and EXPLAIN counts it apart from the plan's
// top node): a DELETE that scans a table of many pages reads at least
// those pages.
func TestBuffersCountsUnreadWithQueries(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgtesttest_")
	table := pgx.Identifier{schema, "t"}.Sanitize()
	if _, err := pool.Exec(t.Context(), `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()+`;
		CREATE TABLE `+table+` (v text);
		INSERT INTO `+table+` SELECT repeat('v', 200) || i FROM generate_series(1, 2000) i`); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := pool.QueryRow(t.Context(), `SELECT pg_relation_size($1) / current_setting('block_size')::int`, table).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// No row matches: the scan reads every page and deletes nothing.
	n := postgrestest.Buffers(t, pool, `WITH d AS (DELETE FROM `+table+` WHERE v = $1) SELECT 1`, "none")
	if n < pages {
		t.Errorf("Buffers of a DELETE scanning a table of %d pages, in a WITH query nothing reads: %d; want at least %d", pages, n, pages)
	}
	// Read by the statement, the WITH query runs within the top node.
	m := postgrestest.Buffers(t, pool, `WITH d AS (DELETE FROM `+table+` WHERE v = $1 RETURNING 1) SELECT count(*) FROM d`, "none")
	if m < pages || m > n+2 {
		t.Errorf("Buffers of the same DELETE read by the statement: %d; want %d to %d", m, pages, n+2)
	}
}
