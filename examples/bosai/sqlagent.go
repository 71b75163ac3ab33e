package bosai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/bosai/dbserver"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// MaxSQLAttempts is how many queries the SQL agent writes for one question
// (the seed's four attempts): each failed one, refused by the safety check
// or by the database, is shown to the model with its error before the next.
const MaxSQLAttempts = 4

// SQLTools names the MCP tools the SQL agent calls. The zero value of a
// field selects the bundled database server's tool (dbserver).
type SQLTools struct {
	// Server is the MCP server's name in the manager. Empty means
	// "database".
	Server string
	// Query runs one SQL statement; its argument is QueryArgument. Empty
	// means "mcp_db_query".
	Query string
	// QueryArgument is the name of Query's SQL argument. Empty means "sql".
	QueryArgument string
	// Schema describes the tables (the bundled server's mcp_db_schema).
	// Empty, with Query set to a server of another kind, means the agent
	// reads PostgreSQL's information_schema through Query. The bundled
	// server's default is "mcp_db_schema".
	Schema string
	// ListTables lists the tables. Empty means the tables of the schema.
	ListTables string
	// Dialect is the SQL dialect when Schema is empty: "postgres" (the
	// default) or "sqlite". safety_check (dbserver.Check) lexes queries as
	// that database does and refuses them in any other dialect.
	Dialect string
}

func (t SQLTools) withDefaults() SQLTools {
	if t.Server == "" && t.Query == "" {
		t.Schema = cmp.Or(t.Schema, "mcp_db_schema")
		t.ListTables = cmp.Or(t.ListTables, "mcp_db_list_tables")
	}
	t.Server = cmp.Or(t.Server, "database")
	t.Query = cmp.Or(t.Query, "mcp_db_query")
	t.QueryArgument = cmp.Or(t.QueryArgument, "sql")
	t.Dialect = cmp.Or(t.Dialect, "postgres")
	return t
}

// SQLAttempt is one query the SQL agent tried.
type SQLAttempt struct {
	// Attempt counts from 1.
	Attempt int `json:"attempt"`
	// Query is the SQL.
	Query string `json:"query"`
	// Error says why it failed; empty on success.
	Error string `json:"error,omitempty"`
}

// sqlState is the SQL agent's graph state (the seed's SQLAgentState).
type sqlState struct {
	Question string
	Context  map[string]string
	Dialect  string
	Tables   []string
	Schema   string
	// Query is the query of the current attempt.
	Query string
	// Attempts are the queries tried so far, failed ones with their error.
	Attempts []SQLAttempt
	// Failed is the current attempt's error; empty while it has not failed.
	Failed string
	// Declined is the model's reason when it wrote no query.
	Declined string
	Table    *TabularResult
	Answer   string
}

var (
	sDialect  = graph.Replace(func(s *sqlState) *string { return &s.Dialect })
	sTables   = graph.Replace(func(s *sqlState) *[]string { return &s.Tables })
	sSchema   = graph.Replace(func(s *sqlState) *string { return &s.Schema })
	sQuery    = graph.Replace(func(s *sqlState) *string { return &s.Query })
	sAttempts = graph.Append(func(s *sqlState) *[]SQLAttempt { return &s.Attempts })
	sFailed   = graph.Replace(func(s *sqlState) *string { return &s.Failed })
	sDeclined = graph.Replace(func(s *sqlState) *string { return &s.Declined })
	sTable    = graph.Replace(func(s *sqlState) **TabularResult { return &s.Table })
	sAnswer   = graph.Replace(func(s *sqlState) *string { return &s.Answer })
)

// sqlRun is what the SQL graph's nodes need of the agent run that invoked
// it: the session, the trace recorder and the run's context for emitting
// trace events.
type sqlRun struct {
	sess  *mcp.Session
	rec   *recorder
	outer context.Context

	mu    sync.Mutex
	tools map[string]*mcptool.Tool // the SQL server's tools this run called, by name
}

// tool returns the SQL server's tool name, bound to the run's session.
func (r *sqlRun) tool(ctx context.Context, b *Bot, name string) (*mcptool.Tool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.tools[name]; ok {
		return t, nil
	}
	t, err := mcptool.New(ctx, b.reg, r.sess, name, mcptool.WithServer(b.sqlTools.Server))
	if err != nil {
		return nil, err
	}
	if r.tools == nil {
		r.tools = map[string]*mcptool.Tool{}
	}
	r.tools[name] = t
	return t, nil
}

type sqlRunKey struct{}

func runOf(ctx context.Context) *sqlRun {
	r, _ := ctx.Value(sqlRunKey{}).(*sqlRun)
	return r
}

// buildSQLGraph assembles the SQL agent:
//
//	START → list_tables → schema → generate → safety_check → llm_check → execute → parse → END
//
// safety_check and execute go back to generate after a failure while
// attempts remain, and end the run after the last.
func (b *Bot) buildSQLGraph(opts ...graph.CompileOption) (*graph.Compiled[sqlState], error) {
	g := graph.New[sqlState]()
	g.AddNode("list_tables", b.sqlListTables)
	g.AddNode("schema", b.sqlSchema)
	g.AddNode("generate", b.sqlGenerate)
	g.AddNode("safety_check", b.sqlSafety)
	g.AddNode("llm_check", b.sqlCheck)
	g.AddNode("execute", b.sqlExecute)
	g.AddNode("parse", b.sqlParse)
	g.AddEdge(graph.START, "list_tables")
	g.AddEdge("list_tables", "schema")
	g.AddEdge("schema", "generate")
	g.AddConditionalEdges("generate", func(ctx context.Context, s sqlState) (graph.Route, error) {
		if s.Declined != "" {
			return graph.To(graph.END), nil
		}
		return graph.To("safety_check"), nil
	}, "safety_check", graph.END)
	retry := func(next string) graph.RouterFunc[sqlState] {
		return func(ctx context.Context, s sqlState) (graph.Route, error) {
			if s.Failed != "" {
				if len(s.Attempts) < MaxSQLAttempts {
					return graph.To("generate"), nil
				}
				return graph.To(graph.END), nil
			}
			return graph.To(next), nil
		}
	}
	g.AddConditionalEdges("safety_check", retry("llm_check"), "llm_check", "generate", graph.END)
	g.Label("safety_check", "generate", "refused: retry with the reason")
	g.AddConditionalEdges("llm_check", retry("execute"), "execute", "generate", graph.END)
	g.AddConditionalEdges("execute", retry("parse"), "parse", "generate", graph.END)
	g.Label("execute", "generate", "failed: retry with the error")
	g.AddEdge("parse", graph.END)
	return g.Compile(opts...)
}

// callTool calls a tool of the SQL server and records it in the trace.
func (b *Bot) callTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
	r := runOf(ctx)
	res, err := callWith(ctx, args, func() (*mcptool.Tool, error) { return r.tool(ctx, b, name) })
	data := map[string]any{"tool": b.sqlTools.Server + "/" + name}
	if q, ok := args[b.sqlTools.QueryArgument]; ok && name == b.sqlTools.Query {
		data["query"] = q
	}
	if err != nil {
		data["error"] = err.Error()
	} else {
		data["status"] = callStatus(res)
		data["elapsed_ms"] = res.Duration.Milliseconds()
	}
	r.rec.add(r.outer, TraceTool, "called "+b.sqlTools.Server+"/"+name, data)
	return res, err
}

// callWith calls the tool get returns with args as its JSON arguments.
func callWith(ctx context.Context, args map[string]any, get func() (*mcptool.Tool, error)) (*toolresult.Result, error) {
	t, err := get()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %w", t.Definition().Name, err)
	}
	return t.CallResult(ctx, raw)
}

// queryRows runs sql through the Query tool and returns its table, or the
// database's error as a failed query.
func (b *Bot) queryRows(ctx context.Context, sql string) (*TabularResult, error) {
	res, err := b.callTool(ctx, b.sqlTools.Query, map[string]any{b.sqlTools.QueryArgument: sql})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, errors.New(strings.TrimPrefix(cmp.Or(res.Text(), res.Error), "error: "))
	}
	t, err := Tabulate(res)
	if errors.Is(err, ErrNotTabular) {
		// Servers such as the reference PostgreSQL server answer with the
		// rows as JSON text.
		t, err = TabulateJSON([]byte(res.Text()))
	}
	return t, err
}

// catalogQuery reads tables, columns and foreign keys of PostgreSQL's
// current schema, for servers with only a query tool.
const catalogQuery = `SELECT c.table_name, c.column_name, upper(c.data_type) AS data_type, coalesce((
	SELECT ccu.table_name || '.' || ccu.column_name FROM information_schema.key_column_usage kcu
	JOIN information_schema.table_constraints tc ON tc.constraint_name = kcu.constraint_name AND tc.constraint_schema = kcu.constraint_schema AND tc.constraint_type = 'FOREIGN KEY'
	JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = kcu.constraint_name AND ccu.constraint_schema = kcu.constraint_schema
	WHERE kcu.table_schema = c.table_schema AND kcu.table_name = c.table_name AND kcu.column_name = c.column_name LIMIT 1), '') AS ref
FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
WHERE c.table_schema = current_schema() ORDER BY c.table_name, c.ordinal_position`

func (b *Bot) sqlListTables(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	if b.sqlTools.ListTables == "" {
		return graph.Update[sqlState]{}, nil // the schema node lists them
	}
	res, err := b.callTool(ctx, b.sqlTools.ListTables, map[string]any{})
	if err != nil {
		return graph.Update[sqlState]{}, err
	}
	if res.IsError {
		return graph.Update[sqlState]{}, fmt.Errorf("listing tables: %s", cmp.Or(res.Error, res.Text()))
	}
	var tables []string
	for _, t := range strings.Split(res.Text(), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tables = append(tables, t)
		}
	}
	return graph.Updates(sTables.Set(tables)), nil
}

func (b *Bot) sqlSchema(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	if b.sqlTools.Schema != "" {
		res, err := b.callTool(ctx, b.sqlTools.Schema, map[string]any{})
		if err != nil {
			return graph.Update[sqlState]{}, err
		}
		if res.IsError {
			return graph.Update[sqlState]{}, fmt.Errorf("reading the schema: %s", cmp.Or(res.Error, res.Text()))
		}
		var sc dbserver.Schema
		raw, _ := json.Marshal(res.Structured)
		if err := json.Unmarshal(raw, &sc); err != nil || sc.Dialect == "" {
			return graph.Update[sqlState]{}, fmt.Errorf("reading the schema: %s returned no schema (structured content with dialect and tables)", b.sqlTools.Schema)
		}
		u := graph.Updates(sSchema.Set(dbserver.FormatSchema(sc)), sDialect.Set(sc.Dialect))
		if len(s.Tables) == 0 {
			names := make([]string, len(sc.Tables))
			for i, t := range sc.Tables {
				names[i] = t.Name
			}
			u = graph.Updates(sSchema.Set(dbserver.FormatSchema(sc)), sDialect.Set(sc.Dialect), sTables.Set(names))
		}
		return u, nil
	}
	t, err := b.queryRows(ctx, catalogQuery)
	if err != nil {
		return graph.Update[sqlState]{}, fmt.Errorf("reading the schema through %s: %w", b.sqlTools.Query, err)
	}
	sc := dbserver.Schema{Dialect: b.sqlTools.Dialect}
	for _, row := range t.Rows {
		tn, _ := row["table_name"].(string)
		if len(sc.Tables) == 0 || sc.Tables[len(sc.Tables)-1].Name != tn {
			sc.Tables = append(sc.Tables, dbserver.Table{Name: tn})
		}
		cn, _ := row["column_name"].(string)
		ty, _ := row["data_type"].(string)
		ref, _ := row["ref"].(string)
		last := &sc.Tables[len(sc.Tables)-1]
		last.Columns = append(last.Columns, dbserver.Column{Name: cn, Type: ty, References: ref})
	}
	names := make([]string, len(sc.Tables))
	for i, tb := range sc.Tables {
		names[i] = tb.Name
	}
	return graph.Updates(sSchema.Set(dbserver.FormatSchema(sc)), sDialect.Set(sc.Dialect), sTables.Set(names)), nil
}

// sqlQuery is what the SQL agent's model writes.
type sqlQuery struct {
	// Query is one SELECT statement; empty when the question cannot be
	// answered from the database.
	Query string `json:"query"`
	// Explanation says what the query computes, or why there is none.
	Explanation string `json:"explanation"`
}

func sqlPrompt(s sqlState) string {
	var b strings.Builder
	b.WriteString(MarkerSQL + "\n\nWrite one read-only SQL SELECT statement, in the dialect below, that answers the question from the database. Read only the listed tables. Give columns readable aliases. If the database cannot answer it, leave query empty and say why in explanation.\n\n")
	b.WriteString("## Question\n" + s.Question + "\n\n## Dialect\n" + s.Dialect + "\n\n## Tables\n" + strings.Join(s.Tables, ", ") + "\n\n## Schema\n" + s.Schema + "\n")
	if len(s.Attempts) > 0 {
		b.WriteString("## Previous attempts\nThese queries failed; write a corrected one.\n")
		for _, a := range s.Attempts {
			fmt.Fprintf(&b, "- attempt %d: %s\n  error: %s\n", a.Attempt, a.Query, a.Error)
		}
		b.WriteString("\n")
	}
	writeContext(&b, s.Context)
	return b.String()
}

func (b *Bot) sqlGenerate(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	r := runOf(ctx)
	q, err := agent.Call[sqlQuery](ctx, b.model, sqlPrompt(s))
	if err != nil {
		return graph.Update[sqlState]{}, modelFailure(err)
	}
	query := strings.TrimSpace(q.Value.Query)
	if query == "" {
		return graph.Updates(sDeclined.Set(cmp.Or(q.Value.Explanation, "the model wrote no query"))), nil
	}
	r.rec.add(r.outer, TraceDecision, fmt.Sprintf("generated a query (attempt %d)", len(s.Attempts)+1),
		map[string]any{"attempt": len(s.Attempts) + 1, "query": query, "explanation": q.Value.Explanation})
	return graph.Updates(sQuery.Set(query), sFailed.Set("")), nil
}

// failAttempt records a failed attempt and, in the trace, what the model
// will be told.
func failAttempt(ctx context.Context, s sqlState, query, why string) graph.Update[sqlState] {
	r := runOf(ctx)
	n := len(s.Attempts) + 1
	msg := fmt.Sprintf("attempt %d failed", n)
	if n < MaxSQLAttempts {
		msg += "; retrying with the error in the prompt"
	}
	r.rec.add(r.outer, TraceMessage, msg, map[string]any{"attempt": n, "query": query, "error": why})
	return graph.Updates(sAttempts.Set([]SQLAttempt{{Attempt: n, Query: query, Error: why}}), sQuery.Set(query), sFailed.Set(why))
}

func (b *Bot) sqlSafety(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	if err := dbserver.Check(s.Query, s.Dialect, s.Tables); err != nil {
		return failAttempt(ctx, s, s.Query, err.Error()), nil
	}
	return graph.Update[sqlState]{}, nil
}

// sqlReview is what the reviewing model answers.
type sqlReview struct {
	// OK is true when the query answers the question as written.
	OK bool `json:"ok"`
	// Query is the corrected query when OK is false.
	Query string `json:"query,omitempty"`
	// Issues says what was wrong.
	Issues string `json:"issues,omitempty"`
}

func (b *Bot) sqlCheck(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	r := runOf(ctx)
	prompt := MarkerSQLCheck + "\n\nReview the SQL query for the question: wrong tables or columns, wrong joins, missing filters, dialect mistakes. If it is right, answer ok true. If not, answer ok false with the corrected query.\n\n## Question\n" +
		s.Question + "\n\n## Dialect\n" + s.Dialect + "\n\n## Schema\n" + s.Schema + "\n## Query\n" + s.Query + "\n"
	rv, err := agent.Call[sqlReview](ctx, b.model, prompt)
	if err != nil {
		return graph.Update[sqlState]{}, modelFailure(err)
	}
	if rv.Value.OK || strings.TrimSpace(rv.Value.Query) == "" {
		r.rec.add(r.outer, TraceDecision, "the review accepted the query", map[string]any{"query": s.Query})
		return graph.Update[sqlState]{}, nil
	}
	fixed := strings.TrimSpace(rv.Value.Query)
	r.rec.add(r.outer, TraceDecision, "the review corrected the query", map[string]any{"query": fixed, "issues": rv.Value.Issues})
	if err := dbserver.Check(fixed, s.Dialect, s.Tables); err != nil {
		return failAttempt(ctx, s, fixed, err.Error()), nil
	}
	return graph.Updates(sQuery.Set(fixed)), nil
}

func (b *Bot) sqlExecute(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	t, err := b.queryRows(ctx, s.Query)
	if ctx.Err() != nil {
		return graph.Update[sqlState]{}, ctx.Err()
	}
	if err != nil {
		return failAttempt(ctx, s, s.Query, err.Error()), nil
	}
	n := len(s.Attempts) + 1
	return graph.Updates(sTable.Set(t), sAttempts.Set([]SQLAttempt{{Attempt: n, Query: s.Query}})), nil
}

func (b *Bot) sqlParse(ctx context.Context, s sqlState) (graph.Update[sqlState], error) {
	return graph.Updates(sAnswer.Set(describeTable(s.Table))), nil
}

// describeTable says what a query returned in a line: the row count and
// the first rows.
func describeTable(t *TabularResult) string {
	if t == nil || t.RowCount == 0 {
		return "The query returned no rows."
	}
	var rows []string
	for i, row := range t.Rows {
		if i == 5 {
			rows = append(rows, fmt.Sprintf("… (%d more)", t.RowCount-5))
			break
		}
		rows = append(rows, rowLine(t.Columns, row))
	}
	noun := "rows"
	if t.RowCount == 1 {
		noun = "row"
	}
	return fmt.Sprintf("%d %s: %s", t.RowCount, noun, strings.Join(rows, "; "))
}

// sqlAgent runs the SQL graph for the request and turns its final state
// into the agent's result.
func (b *Bot) sqlAgent(ctx context.Context, rec *recorder, req Request) AgentResult {
	sess := b.manager.NewSession(mcp.Callbacks{})
	defer sess.Close()
	run := &sqlRun{sess: sess, rec: rec, outer: ctx}
	final, err := b.sqlGraph.Invoke(context.WithValue(ctx, sqlRunKey{}, run), sqlState{Question: req.Question, Context: req.Context})
	if err != nil {
		return rec.fail(ctx, KindTool, err)
	}
	switch {
	case final.Declined != "":
		return rec.fail(ctx, KindPlanningDeclined, errors.New(final.Declined))
	case final.Table == nil:
		last := final.Attempts[len(final.Attempts)-1]
		res := rec.fail(ctx, KindQuery, fmt.Errorf("no query succeeded in %d attempts; the last, %s, failed: %s", len(final.Attempts), last.Query, last.Error))
		res.Attempts = final.Attempts
		return res
	}
	res := rec.succeed(ctx, final.Answer, final.Table)
	res.Attempts = final.Attempts
	return res
}

// SQLMermaid returns the SQL agent's graph as a Mermaid flowchart.
func (b *Bot) SQLMermaid() string { return b.sqlGraph.Mermaid() }

// callStatus is a tool result's status in the trace: "success", or "error"
// when the tool reported a failure.
func callStatus(r *toolresult.Result) string {
	if r.IsError {
		return "error"
	}
	return "success"
}
