package dbserver

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	agmcp "github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// fixture is a sample database, a writable connection to check it with,
// and a Server on it. The database also has secretsTable, which the
// Server may not read: a query that got past the guard would read it.
type fixture struct {
	name string
	rw   *sql.DB
	srv  *Server
	// listTables lists every table of the database (not only the allowed).
	listTables string
}

// secretsTable creates the table secrets, with an index.
const secretsTable = "CREATE TABLE secrets (x TEXT); CREATE INDEX secrets_x ON secrets (x); INSERT INTO secrets VALUES ('s')"

func sqliteFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	rw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })
	if err := CreateSample(t.Context(), rw, "sqlite"); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.ExecContext(t.Context(), secretsTable); err != nil {
		t.Fatal(err)
	}
	if cfg.Tables == nil {
		cfg.Tables = SampleTables
	}
	cfg.Driver, cfg.DSN = "sqlite", path
	srv, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &fixture{name: "sqlite", rw: rw, srv: srv, listTables: `SELECT name FROM sqlite_master ORDER BY name`}
}

// PostgresDSN returns a DSN for schema on the test server.
func postgresDSN(schema string) string {
	dsn := postgrestest.DSN()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

func postgresFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "bosai_db_")
	if _, err := pool.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	dsn := postgresDSN(schema)
	rw, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rw.Close() })
	if err := CreateSample(t.Context(), rw, "postgres"); err != nil {
		t.Fatal(err)
	}
	// Not granted to the reader role.
	if _, err := rw.ExecContext(t.Context(), secretsTable); err != nil {
		t.Fatal(err)
	}
	cfg.Driver, cfg.DSN = "postgres", readerDSN(t, pool, schema, schema, SampleTables)
	srv, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &fixture{name: "postgres", rw: rw, srv: srv,
		listTables: `SELECT table_name || ':' || string_agg(column_name || ' ' || data_type, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = current_schema() GROUP BY table_name ORDER BY table_name`}
}

// readerDSN creates role with ReaderRoleStatements reading tables, dropped
// when the test ends, and returns a DSN for schema that logs in as it (the
// test server trusts local logins).
func readerDSN(t *testing.T, pool *pgxpool.Pool, schema, role string, tables []string) string {
	t.Helper()
	for _, st := range ReaderRoleStatements(role, schema, tables) {
		if _, err := pool.Exec(t.Context(), st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	t.Cleanup(func() {
		for _, st := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := pool.Exec(context.Background(), st); err != nil {
				t.Errorf("%s: %v", st, err)
			}
		}
	})
	u, err := url.Parse(postgresDSN(schema))
	if err != nil {
		t.Skipf("the test DSN is not a URL (%v); cannot log in as another role", err)
	}
	u.User = url.User(role)
	return u.String()
}

func fixtures(t *testing.T, cfg Config) []*fixture {
	return []*fixture{sqliteFixture(t, cfg), postgresFixture(t, cfg)}
}

// checksum hashes the list of tables and every row of the sample tables,
// read through the writable connection.
func (f *fixture) checksum(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	dump := func(q string) {
		rows, err := f.rw.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(h, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	dump(f.listTables)
	for _, tb := range SampleTables {
		dump("SELECT * FROM " + tb + " ORDER BY id")
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestSampleIsDeterministic(t *testing.T) {
	a, _ := SampleStatements("sqlite")
	b, _ := SampleStatements("sqlite")
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatal("two calls gave different samples")
	}
	if _, err := SampleStatements("mysql"); err == nil || !strings.Contains(err.Error(), "want sqlite or postgres") {
		t.Fatalf("unknown dialect: %v", err)
	}
}

func TestSchemaAndQuery(t *testing.T) {
	for _, f := range fixtures(t, Config{}) {
		t.Run(f.name, func(t *testing.T) {
			if got := strings.Join(f.srv.Tables(), ","); got != "customers,order_items,orders,products" {
				t.Fatalf("tables = %s", got)
			}
			text := FormatSchema(f.srv.Schema())
			for _, want := range []string{"customer_id INTEGER -> customers.id", "category TEXT values: Electronics|Furniture|Kitchen|Office|Sports", "orders(", "300 rows"} {
				if !strings.Contains(text, want) {
					t.Errorf("schema lacks %q:\n%s", want, text)
				}
			}
			res, err := f.srv.Query(t.Context(), `SELECT category, count(*) AS n, round(sum(price), 2) AS total FROM products GROUP BY category ORDER BY category`)
			if err != nil || !res.Success {
				t.Fatalf("query: %v %+v", err, res)
			}
			if res.RowCount != 5 || fmt.Sprint(res.Data[0]) != "[Electronics 5 1921.98]" {
				t.Fatalf("rows = %v", res.Data)
			}
			res, _ = f.srv.Query(t.Context(), `SELECT order_date FROM orders WHERE id = 1`)
			if !res.Success {
				t.Fatal(res.Error)
			}
			if d, _ := res.Data[0][0].(string); len(d) != 10 || !strings.HasPrefix(d, "2024-") {
				t.Fatalf("date = %#v", res.Data[0][0])
			}
		})
	}
}

// TestGuard runs every attack through mcp_db_query's path (Check, then the
// database) on SQLite and PostgreSQL: each is refused with a message, and
// the database is unchanged.
func TestGuard(t *testing.T) {
	copyTarget := filepath.Join(os.TempDir(), fmt.Sprintf("bosai-copy-%d", time.Now().UnixNano()))
	cases := []struct{ name, sql, want string }{
		{"delete", "DELETE FROM orders", "only SELECT"},
		{"update", "UPDATE products SET price = 0", "only SELECT"},
		{"insert", "INSERT INTO customers (id, name, email, country, city, signup_date) VALUES (999, 'x', 'x', 'x', 'x', '2024-01-01')", "only SELECT"},
		{"drop", "DROP TABLE customers", "only SELECT"},
		{"create", "CREATE TABLE evil (x int)", "only SELECT"},
		{"alter", "ALTER TABLE customers ADD COLUMN x int", "only SELECT"},
		{"truncate", "TRUNCATE orders", "only SELECT"},
		{"select into", "SELECT * INTO evil FROM customers", "INTO"},
		{"dml in cte", "WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d", "DELETE"},
		{"update in cte", "WITH u AS (UPDATE products SET price = 0 RETURNING id) SELECT * FROM u", "UPDATE"},
		{"stacked", "SELECT 1; DELETE FROM orders", "one statement"},
		{"stacked after comment", "SELECT * FROM customers /* harmless */; DROP TABLE customers", "one statement"},
		{"line comment hides nothing", "SELECT 1 --\n; DELETE FROM orders", "one statement"},
		{"comment splits keyword", "DEL/**/ETE FROM orders", "only SELECT"},
		{"comment before dml", "/* SELECT */ DELETE FROM orders", "only SELECT"},
		{"keyword in nested comment", "SELECT 1 /* a /* b */ ; */ ; DROP TABLE customers", "one statement"},
		{"unterminated comment", "SELECT 1 /* DROP TABLE customers", "unterminated"},
		{"pragma", "PRAGMA writable_schema = 1", "only SELECT"},
		{"pragma function", "SELECT * FROM pragma_table_info('customers')", "table functions"},
		{"attach", "ATTACH DATABASE '" + copyTarget + "' AS x", "only SELECT"},
		{"copy to", "COPY (SELECT * FROM customers) TO '" + copyTarget + "'", "only SELECT"},
		{"pg_sleep", "SELECT pg_sleep(60)", "pg_sleep"},
		{"lo_export", "SELECT lo_export(1234, '" + copyTarget + "')", "lo_export"},
		{"set_config", "SELECT set_config('default_transaction_read_only', 'off', false)", "set_config"},
		{"call", "CALL do_something()", "only SELECT"},
		{"set", "SET statement_timeout = 0", "only SELECT"},
		{"query_to_xml", "SELECT query_to_xml('DELETE FROM orders', true, true, '')", "query_to_xml"},
		{"catalog", "SELECT * FROM sqlite_master", "not allowed"},
		{"qualified", "SELECT * FROM information_schema.tables", "schema-qualified"},
		{"unlisted table in join", "SELECT * FROM orders JOIN secrets ON true", "table secrets is not allowed"},
		// Only common functions may be called.
		{"unlisted function", "SELECT version()", "function version is not allowed"},
		{"SQL as text", "SELECT ts_stat('SELECT 1')", "function ts_stat is not allowed"},
		{"sequence", "SELECT nextval('customers_id_seq')", "function nextval is not allowed"},
		{"quoted call", `SELECT "version"()`, "function version is not allowed"},
		// Every FROM item is checked.
		{"schema after a subquery", "SELECT table_name FROM (SELECT 1) x, information_schema.tables", "schema-qualified"},
		{"table after a subquery", "SELECT * FROM (SELECT 1) AS x (a), secrets", "table secrets is not allowed"},
		{"table after a join", "SELECT * FROM customers JOIN orders ON true, secrets", "table secrets is not allowed"},
		{"table after a cross join", "SELECT * FROM customers CROSS JOIN orders, secrets", "table secrets is not allowed"},
		{"parenthesised join", "SELECT * FROM (secrets CROSS JOIN customers)", "table secrets is not allowed"},
		{"table in a subquery", "SELECT * FROM customers WHERE id IN (SELECT id FROM (SELECT 1) x, secrets)", "table secrets is not allowed"},
		{"CTE out of its scope", "SELECT * FROM (WITH secrets AS (SELECT 1) SELECT 1) a, secrets", "table secrets is not allowed"},
		{"CTE reads the table it hides", "WITH secrets AS (SELECT * FROM secrets) SELECT * FROM secrets", "table secrets is not allowed"},
		{"CTE before its sibling", "WITH a AS (SELECT * FROM secrets), secrets AS (SELECT 1) SELECT * FROM a", "table secrets is not allowed"},
		{"TABLE command", "SELECT id FROM customers UNION TABLE secrets", "TABLE"},
		// The lexer reads comments and strings as the databases do.
		{"CR ends a -- comment in PostgreSQL", "SELECT 1 AS a --\r, version() AS v\n", "carriage return"},
		{"E-string continuation", "SELECT E''\n'\\' ' , version(), 1 --'", "E'"},
		{"E-string backslash", "SELECT e'\\' , version() --'", "E'"},
		{"qualified call", "SELECT anyschema.count(*) FROM customers", "schema-qualified"},
		{"keyword-named call", "SELECT cube(1)", "function cube is not allowed"},
		{"match call", "SELECT match(1)", "function match is not allowed"},
		{"cube outside GROUP BY", "SELECT 1 AS a, cube(1) FROM orders GROUP BY a", "function cube is not allowed"},
		{"ilike call", "SELECT ilike('a', 'b')", "function ilike is not allowed"},
		{"materialized call", "SELECT materialized(1)", "function materialized is not allowed"},
	}
	// Cases for one dialect: what the other reads differently.
	only := map[string][]struct{ name, sql, want string }{
		"sqlite": {
			{"unnested comment", "SELECT 1 /* /* */ , (SELECT x FROM secrets) /* */", "table secrets is not allowed"},
			{"bracket identifier", "SELECT [x'] FROM secrets --']", "table secrets is not allowed"},
			{"Tcl parameter", "SELECT @count(')FROM/**/secrets--')", "parameters"},
			{"fetch as an alias", "SELECT * FROM orders fetch, secrets", "table secrets is not allowed"},
			{"window as an alias", "SELECT * FROM orders window, secrets", "table secrets is not allowed"},
			{"IN table", "SELECT 1 WHERE 'guess' IN secrets", "table secrets is not allowed"},
			{"ROLLUP is a function", "SELECT count(*) FROM orders GROUP BY rollup(status)", "function rollup is not allowed"},
		},
		"postgres": {
			// U& names are decoded before they are checked.
			{"dollar quoted", "SELECT $$x$$; DROP TABLE customers", "one statement"},
			{"U& read file", `SELECT U&"\0070g_read_file"('/etc/passwd') AS f`, "pg_read_file is not allowed"},
			{"U& signal", `SELECT U&"\0070g_terminate_backend"(1) AS k`, "pg_terminate_backend is not allowed"},
			{"U& advisory lock", `SELECT U&"\0070g_advisory_lock"(424242) AS l`, "pg_advisory_lock is not allowed"},
			{"U& six digits", `SELECT U&"\+000070g_sleep"(1)`, "pg_sleep is not allowed"},
			{"U& UESCAPE", `SELECT U&"!0070g_sleep" UESCAPE '!' (1)`, "pg_sleep is not allowed"},
			{"UESCAPE after a comment", `SELECT U&"!0070g_sleep" /**/ UESCAPE '!' (1)`, "UESCAPE"},
			{"U& bad escape", `SELECT U&"\00zz" FROM customers`, "invalid Unicode escape"},
			{"U& surrogate", `SELECT U&"\D800" FROM customers`, "invalid Unicode escape"},
			{"U& hex UESCAPE", `SELECT U&"a0070g_sleep" UESCAPE 'a' (1)`, "invalid UESCAPE"},
			{"U& catalog table", `SELECT usename, passwd FROM customers, U&"\0070g_shadow"`, "pg_shadow is not allowed"},
			{"call in an array", "SELECT ARRAY[lower('x'), pg_read_file('/etc/passwd')]", "pg_read_file is not allowed"},
			{"quoted CTE name", `WITH "SECRETS" AS (SELECT 1) SELECT * FROM secrets`, "table secrets is not allowed"},
			{"quoted name in other case", `SELECT * FROM "Orders"`, "table Orders is not allowed"},
			{"quoted call in other case", `SELECT "COUNT"(*) FROM orders`, "function COUNT is not allowed"},
			// SQLite's functions are not PostgreSQL's: a function of the
			// search_path would answer to their names.
			{"SQLite function", "SELECT ifnull(status, '') FROM orders", "function ifnull is not allowed"},
			{"SQLite date function", "SELECT strftime('%Y', order_date) FROM orders", "function strftime is not allowed"},
			{"OPERATOR syntax", "SELECT (1) OPERATOR(public.+) 2", "OPERATOR(…) is not allowed"},
		},
	}
	for _, f := range fixtures(t, Config{}) {
		t.Run(f.name, func(t *testing.T) {
			before := f.checksum(t)
			for _, c := range append(slices.Clone(cases), only[f.name]...) {
				res, err := f.srv.Query(t.Context(), c.sql)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if res.Success || !strings.Contains(res.Error, "query refused") || !strings.Contains(res.Error, c.want) {
					t.Errorf("%s: %q: got success=%v error %q, want a refusal saying %q", c.name, c.sql, res.Success, res.Error, c.want)
				}
			}
			if after := f.checksum(t); after != before {
				t.Fatal("the database changed")
			}
			if _, err := os.Stat(copyTarget); err == nil {
				os.Remove(copyTarget)
				t.Fatalf("%s was written", copyTarget)
			}
		})
	}
}

// TestDatabaseEnforcesReadOnly runs writes past Check, straight on the
// read-only connection: the database itself refuses them.
func TestDatabaseEnforcesReadOnly(t *testing.T) {
	writes := []string{
		"DELETE FROM orders",
		"UPDATE products SET price = 0",
		"DROP TABLE order_items",
		"CREATE TABLE evil (x int)",
		"INSERT INTO products (id, name, category, price) VALUES (99, 'x', 'x', 1)",
	}
	for _, f := range fixtures(t, Config{}) {
		t.Run(f.name, func(t *testing.T) {
			before := f.checksum(t)
			cte := "WITH d AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM d"
			for _, w := range append(writes, cte) {
				if f.name == "sqlite" && w == cte {
					continue // SQLite has no DML in WITH
				}
				// PostgreSQL runs queries through a cursor, which takes
				// only a SELECT: a write fails before the transaction sees it.
				if _, err := f.srv.run(t.Context(), w); err == nil {
					t.Errorf("%s: the database accepted it", w)
				} else if !strings.Contains(err.Error(), "read-only") && !strings.Contains(err.Error(), "readonly") &&
					!(f.name == "postgres" && (strings.Contains(err.Error(), "syntax error") || strings.Contains(err.Error(), "DECLARE CURSOR must not contain"))) {
					t.Errorf("%s: %v, want a read-only refusal", w, err)
				}
			}
			if f.name == "postgres" {
				res, err := f.srv.run(t.Context(), "SELECT current_setting('transaction_read_only') AS ro")
				if err != nil || fmt.Sprint(res.Data) != "[[on]]" {
					t.Fatalf("transaction_read_only: %v %v", err, res)
				}
				// A function that writes is refused by Check (it is not
				// one of the common functions); past Check, the READ ONLY
				// transaction refuses it.
				if _, err := f.rw.ExecContext(t.Context(), "CREATE FUNCTION purge() RETURNS bigint LANGUAGE sql AS 'DELETE FROM order_items RETURNING 1'"); err != nil {
					t.Fatal(err)
				}
				before = f.checksum(t)
				if qr, err := f.srv.Query(t.Context(), "SELECT purge()"); err != nil || qr.Success || !strings.Contains(qr.Error, "function purge is not allowed") {
					t.Fatalf("SELECT purge(): %v %+v, want refused by Check", err, qr)
				}
				if _, err := f.srv.run(t.Context(), "SELECT purge()"); err == nil || !strings.Contains(err.Error(), "read-only transaction") {
					t.Fatalf("SELECT purge() past Check: %v, want refused by the read-only transaction", err)
				}
			}
			if after := f.checksum(t); after != before {
				t.Fatal("the database changed")
			}
		})
	}
}

func TestRowCapAndTimeout(t *testing.T) {
	for _, f := range fixtures(t, Config{MaxRows: 100, Timeout: 300 * time.Millisecond}) {
		t.Run(f.name, func(t *testing.T) {
			res, err := f.srv.Query(t.Context(), "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10000000) SELECT x FROM n")
			if err != nil || !res.Success {
				t.Fatalf("10 million rows: %v %+v", err, res.Error)
			}
			if res.RowCount != 100 || !res.Truncated {
				t.Fatalf("10 million rows: %d rows, truncated %v; want 100, truncated", res.RowCount, res.Truncated)
			}
			// Days of work: four-way cross join of the order items.
			res, err = f.srv.Query(t.Context(), "SELECT count(*) FROM order_items a, order_items b, order_items c, order_items d")
			if err != nil {
				t.Fatal(err)
			}
			if res.Success || !strings.Contains(res.Error, "limit and was stopped") {
				t.Fatalf("slow query: success=%v error %q, want stopped by the time limit", res.Success, res.Error)
			}
			// The next query works. On a loaded machine even this one may
			// pass the 300 ms limit: that is the limit working, so try
			// again; any other error means the server broke.
			for try := 1; ; try++ {
				res, _ = f.srv.Query(t.Context(), "SELECT count(*) FROM customers")
				if res.Success {
					break
				}
				if !strings.Contains(res.Error, "limit and was stopped") || try == 20 {
					t.Fatalf("the server is unusable after a timeout (try %d): %s", try, res.Error)
				}
			}
		})
	}
}

func TestMCPTools(t *testing.T) {
	f := sqliteFixture(t, Config{})
	m, err := agmcp.NewManager(agmcp.ManagerConfig{ClientName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(agmcp.Server{Name: "db", InProcess: f.srv.MCP()}); err != nil {
		t.Fatal(err)
	}
	sess := m.NewSession(agmcp.Callbacks{})
	defer sess.Close()
	call := func(name string, args map[string]any) *toolresult.Result {
		res, err := sess.CallTool(t.Context(), agmcp.ToolCall{Server: "db", Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if r := call("mcp_db_list_tables", nil); r.Text() != "customers, order_items, orders, products" {
		t.Fatalf("list tables: %q", r.Text())
	}
	if r := call("mcp_db_schema", map[string]any{"table": "orders"}); !strings.Contains(r.Text(), "customer_id INTEGER -> customers.id") {
		t.Fatalf("schema: %q", r.Text())
	}
	if r := call("mcp_db_schema", map[string]any{"table": "nope"}); !r.IsError || !strings.Contains(r.Text(), "the tables are customers") {
		t.Fatalf("schema of a missing table: %v %q", r.IsError, r.Text())
	}
	r := call("mcp_db_query", map[string]any{"sql": "SELECT count(*) AS n FROM customers"})
	if r.IsError {
		t.Fatalf("query: %v %s", r.IsError, r.Error)
	}
	s, _ := r.Structured.(map[string]any)
	if fmt.Sprint(s["data"]) != "[[40]]" || s["success"] != true {
		t.Fatalf("query result: %v", s)
	}
	r = call("mcp_db_query", map[string]any{"sql": "DROP TABLE customers"})
	if !r.IsError || !strings.Contains(r.Text(), "only SELECT") {
		t.Fatalf("drop: %v %q", r.IsError, r.Text())
	}
}

// TestGuardAccepts runs queries Check must let through (subqueries, CTEs,
// casts, window functions, U& names of allowed tables) on the database
// they are written for: each succeeds.
func TestGuardAccepts(t *testing.T) {
	both := []string{
		"SELECT x.n, c.name FROM (SELECT 1 AS n) x, customers c WHERE c.id = x.n",
		"SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id, products p WHERE p.id = 1 AND o.id = 1",
		"WITH big AS (SELECT * FROM orders WHERE id > 10), top AS (SELECT customer_id, count(*) AS n FROM big GROUP BY customer_id) SELECT * FROM top ORDER BY n DESC LIMIT 3",
		"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT sum(x) FROM n",
		"SELECT * FROM (SELECT category, avg(price) AS a FROM products GROUP BY category) t WHERE t.a > 10",
		"SELECT * FROM (customers c JOIN orders o ON o.customer_id = c.id) LIMIT 1",
		"SELECT name, rank() OVER (PARTITION BY category ORDER BY price DESC) FROM products",
		"SELECT id FROM customers WHERE id IN (SELECT customer_id FROM orders) AND EXISTS (SELECT 1 FROM products)",
		"SELECT coalesce(nullif(city, ''), 'none'), upper(substr(name, 1, 3)), round(abs(-1.5)) FROM customers",
		"SELECT count(*) FROM orders o WHERE o.status IS NOT DISTINCT FROM 'pending'",
		"SELECT CAST(price AS varchar(20)) FROM products",
		"SELECT count(*) FROM customers; -- the count",
	}
	pg := []string{
		"SELECT a, b FROM (VALUES (1, 2)) AS v(a, b)",
		`SELECT U&"\0063ount"(*) FROM U&"!0063ustomers" UESCAPE '!'`,
		"SELECT EXTRACT(YEAR FROM order_date), date_trunc('month', order_date), to_char(order_date, 'YYYY-MM') FROM orders",
		"SELECT substring(name FROM 1 FOR 3), trim(BOTH ' ' FROM name), position('a' IN name) FROM customers",
		"SELECT round(sum(quantity * unit_price)::numeric(12, 2), 1) FROM order_items",
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY price), count(*) FILTER (WHERE price > 100) FROM products",
		"SELECT (ARRAY[1, 2, 3])[2], string_agg(name, ', ' ORDER BY name) FROM products",
		"SELECT c.name FROM customers c JOIN LATERAL (SELECT count(*) AS n FROM orders o WHERE o.customer_id = c.id) x ON x.n > 0 LIMIT 1",
		"SELECT x FROM (SELECT 1 AS x) a(x) JOIN (SELECT 1 AS y) b ON a.x = b.y WHERE a.x = ANY (ARRAY[1, 2])",
		"SELECT status, count(*) FROM orders GROUP BY ROLLUP (status) ORDER BY 1",
		"SELECT count(*) FROM orders o WHERE o.status IS NOT DISTINCT FROM 'pending' GROUP BY GROUPING SETS ((o.status), ())",
		"SELECT count(*) FROM orders WHERE id IN (SELECT generate_series(1, 10))",
		"SELECT lpad(id::text, 6, '0'), format('%s: %s', name, category) FROM products",
		"SELECT status, count(*) FROM orders GROUP BY status, ROLLUP (customer_id) ORDER BY 1 LIMIT 3",
		"SELECT status, count(*) FROM orders GROUP BY GROUPING SETS ((status), CUBE (customer_id)) LIMIT 3",
		"SELECT status, count(*) FROM orders GROUP BY DISTINCT ROLLUP (status)",
		"WITH x AS NOT MATERIALIZED (SELECT * FROM customers) SELECT count(*) FROM x",
		"WITH x AS MATERIALIZED (SELECT * FROM customers) SELECT count(*) FROM x",
		"SELECT count(*) FROM customers WHERE name ILIKE ('%a') OR name NOT ILIKE ('b%')",
	}
	lite := []string{
		"SELECT strftime('%Y-%m', order_date), julianday(order_date), ifnull(status, '') FROM orders LIMIT 1",
		"SELECT `name`, group_concat(category) FROM `products` GROUP BY `name`",
		"SELECT [name], count(*) FILTER (WHERE price > 100) FROM [Products] p WHERE p.price > 1 GROUP BY [name] ORDER BY 1 LIMIT 2 OFFSET 1",
		`SELECT json_extract('{"a":1}', '$.a'), '{"a":1}' ->> '$.a' AS a`,
		"SELECT count(*) FROM orders WHERE order_date > date(CURRENT_DATE, '-30 days')",
	}
	for _, f := range fixtures(t, Config{}) {
		t.Run(f.name, func(t *testing.T) {
			queries := append(slices.Clone(both), lite...)
			if f.name == "postgres" {
				queries = append(slices.Clone(both), pg...)
			}
			for _, q := range queries {
				if res, err := f.srv.Query(t.Context(), q); err != nil || !res.Success {
					t.Errorf("%s: %v %+v", q, err, res)
				}
			}
		})
	}
}

// TestOpenRefusesPrivilegedRoles opens the server as the test server's
// superuser, as members of pg_signal_backend, pg_read_all_data and of a
// role that may create roles, and as roles that may read tables outside
// Config.Tables: each is refused unless AllowPrivilegedRole is set; a role
// made with ReaderRoleStatements is accepted.
func TestOpenRefusesPrivilegedRoles(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "bosai_role_")
	if _, err := pool.Exec(t.Context(), "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".t (x int)"); err != nil {
		t.Fatal(err)
	}
	var super bool
	if err := pool.QueryRow(t.Context(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil || !super {
		t.Skipf("the test DSN is not a superuser's (%v); this test needs one", err)
	}
	tables := []string{"t"}
	signal := readerDSN(t, pool, schema, schema+"_signal", tables)
	all := readerDSN(t, pool, schema, schema+"_all", tables)
	if _, err := pool.Exec(t.Context(), "GRANT pg_signal_backend TO "+schema+"_signal; GRANT pg_read_all_data TO "+schema+"_all"); err != nil {
		t.Fatal(err)
	}
	// A member of a role that may create roles; a role that may read a
	// table of another schema, and one of its own schema not in Tables.
	admin := readerDSN(t, pool, schema, schema+"_admin", tables)
	other := readerDSN(t, pool, schema, schema+"_other", tables)
	extra := readerDSN(t, pool, schema, schema+"_extra", tables)
	if _, err := pool.Exec(t.Context(), "CREATE ROLE "+schema+"_creator NOLOGIN CREATEROLE; GRANT "+schema+"_creator TO "+schema+"_admin; "+
		"CREATE SCHEMA "+schema+"_o; CREATE TABLE "+schema+"_o.hidden (x int); GRANT USAGE ON SCHEMA "+schema+"_o TO "+schema+"_other; "+
		"GRANT SELECT ON "+schema+"_o.hidden TO "+schema+"_other; CREATE TABLE "+schema+".u (x int); GRANT SELECT ON "+schema+".u TO "+schema+"_extra"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+"_o CASCADE; DROP ROLE "+schema+"_creator"); err != nil {
			t.Error(err)
		}
	})
	reader := readerDSN(t, pool, schema, schema, tables)
	for _, c := range []struct{ name, dsn, want string }{
		{"member of a role creator", admin, "is a member of " + schema + "_creator"},
		{"reads another schema", other, "may read " + schema + "_o.hidden"},
		{"reads a table not in Tables", extra, "may read " + schema + ".u"},
		{"superuser", postgresDSN(schema), "is a superuser"},
		{"pg_signal_backend", signal, "is a member of pg_signal_backend"},
		{"pg_read_all_data", all, "is a member of pg_read_all_data"},
		// Logged in as the superuser, acting as the reader: a query could
		// set the role back (set_config('role', 'none', false)).
		{"session user", postgresDSN(schema) + "&options=" + strings.ReplaceAll(url.QueryEscape("-c role="+schema), "+", "%20"), "is a superuser"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := Open(t.Context(), Config{Driver: "postgres", DSN: c.dsn, Tables: tables})
			if err == nil {
				srv.Close()
				t.Fatal("Open accepted the role")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ReaderRoleStatements") || !strings.Contains(err.Error(), "AllowPrivilegedRole") {
				t.Fatalf("Open: %v; want it to say the role %s and how to fix it", err, c.want)
			}
			srv, err = Open(t.Context(), Config{Driver: "postgres", DSN: c.dsn, Tables: tables, AllowPrivilegedRole: true})
			if err != nil {
				t.Fatalf("Open with AllowPrivilegedRole: %v", err)
			}
			srv.Close()
		})
	}
	srv, err := Open(t.Context(), Config{Driver: "postgres", DSN: reader, Tables: tables})
	if err != nil {
		t.Fatalf("Open as a reader: %v", err)
	}
	srv.Close()
}

// TestReaderRoleReadsOnlyItsTables reads, past Check, a table of the
// schema the reader role was not granted: PostgreSQL refuses it. A
// database with no table to read is refused by Open, and a Server with no
// tables refuses every query rather than allowing every table.
func TestReaderRoleReadsOnlyItsTables(t *testing.T) {
	f := postgresFixture(t, Config{})
	if _, err := f.srv.run(t.Context(), "SELECT * FROM secrets"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("reading an ungranted table past Check: %v, want permission denied", err)
	}
	path := filepath.Join(t.TempDir(), "empty.db")
	rw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.ExecContext(t.Context(), "CREATE TABLE notes (x)"); err != nil {
		t.Fatal(err)
	}
	srv, err := Open(t.Context(), Config{Driver: "sqlite", DSN: path, Tables: []string{}})
	if err == nil {
		srv.Close()
		t.Fatal("Open accepted a database with no table to read")
	}
	if !strings.Contains(err.Error(), "no tables a query may read") {
		t.Fatalf("Open: %v, want it to say there is no table to read", err)
	}
	empty := &Server{cfg: Config{Driver: "sqlite", MaxRows: 1, MaxBytes: 1 << 20, Timeout: time.Minute}, db: rw, log: zap.NewNop()}
	for _, q := range []string{"SELECT 1 AS x", "SELECT * FROM notes"} {
		if res, err := empty.Query(t.Context(), q); err != nil || res.Success || !strings.Contains(res.Error, "no table may be read") {
			t.Fatalf("%s on a Server with no tables: %v %+v, want refused", q, err, res)
		}
	}
	if err := Check("SELECT * FROM notes", "sqlite", []string{}); err == nil || !strings.Contains(err.Error(), "no table may be read") {
		t.Fatalf("Check with an empty allowed list: %v, want the table refused", err)
	}
}

// TestSQLiteLengthLimit builds, in process, a string far longer than
// MaxBytes whose result is a single number: SQLite stops it at MaxBytes.
func TestSQLiteLengthLimit(t *testing.T) {
	// A minute: the limit tested is bytes; the machine may be slow.
	f := sqliteFixture(t, Config{MaxBytes: 1 << 20, Timeout: time.Minute})
	for _, q := range []string{
		"SELECT length(printf('%.*c', 50000000, 'x')) AS n",
		"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100000) SELECT length(group_concat(x || 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')) AS n FROM n",
	} {
		res, err := f.srv.Query(t.Context(), q)
		if err != nil || res.Success || !strings.Contains(res.Error, "longer than the 1048576-byte limit") {
			t.Fatalf("%s: %v %+v, want a failure naming the limit", q, err, res)
		}
	}
	if res, err := f.srv.Query(t.Context(), "SELECT length(printf('%.*c', 1000, 'x')) AS n"); err != nil || !res.Success || fmt.Sprint(res.Data) != "[[1000]]" {
		t.Fatalf("a short string: %v %+v", err, res)
	}
	// A stored value longer than the limit fails the query that reads it,
	// and the error says a value read may be the cause.
	if _, err := f.rw.ExecContext(t.Context(), "UPDATE products SET name = printf('%.*c', 2000000, 'x') WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if res, err := f.srv.Query(t.Context(), "SELECT name FROM products WHERE id = 1"); err != nil || res.Success || !strings.Contains(res.Error, "built or read") {
		t.Fatalf("reading a stored value over the limit: %v %+v, want a failure saying a value read is too long", err, res)
	}
}

// TestByteCap reads rows of about 1 MB: the result stops before it passes
// MaxBytes, and says it was truncated; a row longer than MaxBytes fails
// the query, and the server goes on working.
func TestByteCap(t *testing.T) {
	// A minute: the limits tested are bytes; the machine may be slow.
	f := postgresFixture(t, Config{Timeout: time.Minute})
	res, err := f.srv.run(t.Context(), "SELECT id, rpad(md5(id::text), 1000000, 'x') AS big FROM orders WHERE id <= 20 ORDER BY id")
	if err != nil || !res.Success {
		t.Fatalf("%v %+v", err, res.Error)
	}
	size := 0
	for _, r := range res.Data {
		size += 8 + len(r[1].(string))
	}
	if res.RowCount != 4 || !res.Truncated || size > DefaultMaxBytes {
		t.Fatalf("%d rows, %d bytes, truncated %v; want 4 rows, at most %d bytes, truncated", res.RowCount, size, res.Truncated, DefaultMaxBytes)
	}
	if text := f.srv.truncation(res); !strings.Contains(text, fmt.Sprintf("%d-byte limit", DefaultMaxBytes)) {
		t.Fatalf("the result says %q, want the byte limit named", text)
	}
	f = postgresFixture(t, Config{MaxBytes: 1 << 20, Timeout: time.Minute})
	res, err = f.srv.run(t.Context(), "SELECT rpad('x', 3000000, 'x') AS big")
	if err == nil || !strings.Contains(err.Error(), "longer than the 1048576-byte limit") {
		t.Fatalf("a 3 MB row with a 1 MiB limit: %v %+v, want a failure naming the limit", err, res)
	}
	if res, err = f.srv.Query(t.Context(), "SELECT count(*) FROM customers"); err != nil || !res.Success {
		t.Fatalf("after a row over the limit: %v %+v", err, res)
	}
}

// TestSessionLocksReleased takes a session advisory lock past Check (Check
// refuses the call): the lock is gone once the query returns.
func TestSessionLocksReleased(t *testing.T) {
	f := postgresFixture(t, Config{})
	res, err := f.srv.run(t.Context(), "SELECT pg_advisory_lock(424242) AS l, pg_backend_pid() AS pid")
	if err != nil || !res.Success {
		t.Fatalf("%v %+v", err, res)
	}
	var n int
	if err := f.rw.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242 AND pid = $1", res.Data[0][1]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d advisory locks still held by the query's connection", n)
	}
}

// TestStandardStrings connects with standard_conforming_strings off, where
// PostgreSQL would read a backslash before a quote as an escape and run
// what Check read as a string: queries run with it on, as Check lexes them (and as pgx needs
// to fetch the rows).
func TestStandardStrings(t *testing.T) {
	f := postgresFixture(t, Config{})
	srv, err := Open(t.Context(), Config{Driver: "postgres", DSN: f.srv.cfg.DSN + "&standard_conforming_strings=off"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if res, err := srv.Query(t.Context(), `SELECT 'a\b' AS s`); err != nil || !res.Success || res.Data[0][0] != `a\b` {
		t.Fatalf("a query with a backslash: %v %+v, want a\\b", err, res)
	}
	q := `SELECT '\'' , version() , '\''`
	if err := Check(q, "postgres", nil); err != nil {
		t.Fatalf("Check refused %s: %v; the test needs a query it accepts", q, err)
	}
	if res, err := srv.Query(t.Context(), q); err != nil || res.Success || !strings.Contains(res.Error, "syntax error") {
		t.Fatalf("%s: %v %+v, want a syntax error", q, err, res)
	}
}

// TestSQLitePlan runs queries past Check through the second layer: SQLite
// compiles each and its program shows what it would read and call, which
// checkPlan refuses outside the allowed tables and functions.
func TestSQLitePlan(t *testing.T) {
	f := sqliteFixture(t, Config{})
	tables := f.srv.Tables()
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM secrets", "table or index that is not allowed"},
		{"SELECT count(*) FROM secrets WHERE x = 's'", "table or index that is not allowed"},
		{"SELECT 1 WHERE 's' IN secrets", "table or index that is not allowed"},
		{"SELECT name FROM sqlite_master", "table or index that is not allowed"},
		{"SELECT * FROM pragma_table_info('customers')", "virtual table"},
		{"SELECT sqlite_version()", `function "sqlite_version"`},
		{"SELECT 1; SELECT * FROM secrets", "one SELECT"},
		{"SELECT 1 AS a --\n) , (SELECT x FROM secrets", "table or index that is not allowed"},
	} {
		if err := f.srv.checkPlan(t.Context(), c.sql, tables); err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.sql, err, c.want)
		}
	}
	for _, q := range []string{
		"SELECT c.name, count(*) FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status LIKE 'p%' GROUP BY c.name",
		"SELECT name FROM products WHERE id = 3 ORDER BY name LIMIT 1",
		`SELECT '{"a":1}' -> '$.a'`,
		"SELECT 1 AS a; -- done",
		"SELECT ';' AS a; /* ; */ ;",
	} {
		if err := f.srv.checkPlan(t.Context(), q, tables); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// The query's own errors are SQLite's, not a refusal.
	if err := f.srv.checkPlan(t.Context(), "SELECT nme FROM customers", tables); err == nil || errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no such column: nme") {
		t.Errorf("a misspelt column: %v, want SQLite's error", err)
	}
}

// TestOneStatementPastCheck runs several statements past Check: PostgreSQL
// parses the query as one statement and refuses the rest unrun.
func TestOneStatementPastCheck(t *testing.T) {
	f := postgresFixture(t, Config{})
	for _, q := range []string{
		"SELECT 1; SELECT 2",
		"SELECT 1; COMMIT; SET default_transaction_read_only = off; DELETE FROM orders",
	} {
		if res, err := f.srv.run(t.Context(), q); err == nil || !strings.Contains(err.Error(), "multiple commands") {
			t.Fatalf("%s past Check: %v %+v, want PostgreSQL to refuse more than one statement", q, err, res)
		}
	}
}

// TestOpenRefusesShadowingFunctions creates, as the tables' owner,
// functions of the reader's search_path named as functions Check allows
// (lower) or SQLite's (ifnull): Open refuses the session, since a query
// calling lower could run the shop's, and Check refuses ifnull.
func TestOpenRefusesShadowingFunctions(t *testing.T) {
	f := postgresFixture(t, Config{})
	for _, fn := range []string{
		"CREATE FUNCTION ifnull(a text, b text) RETURNS text LANGUAGE sql AS 'SELECT coalesce(a, b)'",
		"CREATE FUNCTION lower(a integer) RETURNS integer LANGUAGE sql AS 'SELECT a'",
	} {
		if _, err := f.rw.ExecContext(t.Context(), fn); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := Open(t.Context(), Config{Driver: "postgres", DSN: f.srv.cfg.DSN})
	if err == nil {
		srv.Close()
		t.Fatal("Open accepted a search_path with functions named as allowed ones")
	}
	if !strings.Contains(err.Error(), ".lower") || !strings.Contains(err.Error(), "REVOKE EXECUTE") {
		t.Fatalf("Open: %v; want it to name the function and how to fix it", err)
	}
	// ifnull is SQLite's, not one Check allows on PostgreSQL, where it
	// would be the shop's function.
	if res, err := f.srv.Query(t.Context(), "SELECT ifnull(status, '') FROM orders"); err != nil || res.Success || !strings.Contains(res.Error, "function ifnull is not allowed") {
		t.Fatalf("ifnull on PostgreSQL: %v %+v, want refused", err, res)
	}
}

// TestSQLiteLengthLimitWhileCompiling compiles, on a fresh Server, a
// query whose plan SQLite estimates by evaluating a constant (STAT4, on an
// analyzed index): the constant is capped at MaxBytes while checkPlan
// compiles it, not only while the query runs.
func TestSQLiteLengthLimitWhileCompiling(t *testing.T) {
	f := sqliteFixture(t, Config{})
	if _, err := f.rw.ExecContext(t.Context(), "CREATE INDEX customers_email ON customers (email); ANALYZE"); err != nil {
		t.Fatal(err)
	}
	srv, err := Open(t.Context(), Config{Driver: "sqlite", DSN: f.srv.cfg.DSN, Tables: SampleTables, MaxBytes: 1 << 20, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	q := "SELECT id FROM customers WHERE email = printf('%.*c', 20000000, 'x')"
	if err := srv.checkPlan(t.Context(), q, srv.Tables()); err == nil || !strings.Contains(err.Error(), "1048576-byte limit") {
		t.Fatalf("checkPlan(%s): %v, want a failure naming the limit", q, err)
	}
}

// TestSQLitePlanAndQueryShareASnapshot swaps, between checkPlan and the
// query it checked, the table secrets in for customers: the query runs in
// the read transaction checkPlan read the tables' pages in, so it reads
// customers (the swap cannot commit before it ends, or, in WAL mode, is
// not in its snapshot).
func TestSQLitePlanAndQueryShareASnapshot(t *testing.T) {
	f := sqliteFixture(t, Config{})
	rw, err := f.rw.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	var swapErr error
	f.srv.planned = func() {
		if _, swapErr = rw.ExecContext(t.Context(), "BEGIN; ALTER TABLE customers RENAME TO old; ALTER TABLE secrets RENAME TO customers; COMMIT"); swapErr != nil {
			rw.ExecContext(t.Context(), "ROLLBACK")
		}
	}
	res, err := f.srv.Query(t.Context(), "SELECT * FROM customers")
	if err != nil || !res.Success {
		t.Fatalf("%v %+v", err, res)
	}
	if slices.Contains(res.Columns, "x") || res.RowCount != 40 {
		t.Fatalf("the query read %v, %d rows (swap: %v); want the customers checkPlan allowed", res.Columns, res.RowCount, swapErr)
	}
}
