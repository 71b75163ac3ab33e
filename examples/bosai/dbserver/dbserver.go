// Package dbserver is Bos-AI's MCP database server: three tools over a SQL
// database, read-only.
//
//   - mcp_db_list_tables lists the tables a query may read;
//   - mcp_db_schema describes them: columns, types, foreign keys, row
//     counts and the values of small text columns;
//   - mcp_db_query runs one SELECT and returns the seed's query result
//     {"success", "columns", "data", "row_count", "truncated", "error"}.
//
// The database is SQLite (a file) or PostgreSQL (a DSN). mcp_db_query
// refuses a query in up to three layers: Check reads it (lexed as that
// database lexes it) and refuses anything but one SELECT over the allowed
// tables calling common functions, with a message saying why, which is
// what a model reads and fixes its query from; for SQLite, SQLite then
// compiles it and its EXPLAIN program must open only the allowed tables
// and their indexes, no virtual table, and call only those functions (in
// the read transaction the query then runs in); last, the database runs
// it under its own limits.
//
// What the database itself enforces:
//
//   - SQLite: read-only (the file is opened with mode=ro and
//     query_only(1)); no string or blob longer than MaxBytes (SQLite's
//     length limit, set on the connection before a query is compiled;
//     it also fails a query that reads a stored value, or sorts a row,
//     longer than MaxBytes); which
//     tables and functions a query uses (the EXPLAIN layer above);
//     the Timeout (the query's context).
//   - PostgreSQL: read-only (a READ ONLY transaction, and a cursor,
//     declared over the extended protocol, which takes one SELECT only);
//     statement_timeout; a result message longer
//     than MaxBytes fails the query; session advisory locks are released
//     after each query. Connected as a role made with
//     ReaderRoleStatements, PostgreSQL also refuses every table but
//     Config's (it is granted SELECT on those only), and Open refuses a
//     role that could read other tables or the server's files, run
//     programs or signal sessions.
//
// What only Check enforces, for PostgreSQL: which functions a query calls
// (PostgreSQL lets every role call most built-in functions, such as
// version() or current_setting()).
//
// Memory: nothing here bounds the memory one query makes the PostgreSQL
// server use (a nested replace, lpad or a recursive CTE can build values
// of up to 1 GB each): only the server's work_mem (for sorts and hashes),
// its 1 GB limit on one value and the OS limits of its processes do, while
// statement_timeout bounds the time. SQLite runs in this process and is
// bounded by MaxBytes per value, not per sort or per recursive query. Run
// the server, and the PostgreSQL server, under an OS memory limit (a
// cgroup's memory.max, systemd's MemoryMax=).
//
// Connect to PostgreSQL as a dedicated role that can read the shop's
// tables and nothing else: Open refuses a session whose login role
// (session_user) or current role (current_user, which options=-c role=…
// sets) is a superuser, bypasses row-level security, may create roles, is
// a member of a role that does any of these or of a predefined pg_* role
// other than pg_database_owner (pg_read_all_data, pg_read_server_files,
// pg_signal_backend, …), or may SELECT a table, view or foreign table
// outside Config.Tables (in any schema but pg_catalog, information_schema
// and pg_*), unless Config.AllowPrivilegedRole is set, since a query that got past Check
// could then read other tables or the server's files, run programs or
// stop other sessions. ReaderRoleStatements gives the SQL that creates
// such a role; for the tables customers and orders of the schema shop:
//
//	CREATE ROLE bosai_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
//	ALTER ROLE bosai_reader SET default_transaction_read_only = on;
//	GRANT USAGE ON SCHEMA shop TO bosai_reader;
//	GRANT SELECT ON "shop"."customers", "shop"."orders" TO bosai_reader;
//
// then give it a password (ALTER ROLE bosai_reader PASSWORD '…') or
// another way to log in, and connect with
// "postgres://bosai_reader@host/db?search_path=shop".
//
// SampleStatements and CreateSample build the sample shop database the
// example ships with.
package dbserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Defaults of Config.
const (
	DefaultMaxRows = 500
	// DefaultMaxBytes is 4 MiB.
	DefaultMaxBytes = 4 << 20
	DefaultTimeout  = 10 * time.Second
	// Name is the server name when Config.Name is empty.
	Name = "database"
)

// Config configures a Server.
type Config struct {
	// Driver is "sqlite" or "postgres".
	Driver string
	// DSN is, for SQLite, the path of the database file (opened read-only;
	// it must exist) and, for PostgreSQL, a connection string such as
	// "postgres://user@host/db?search_path=shop". The tables are those of
	// the connection's current schema.
	DSN string
	// Tables lists the tables a query may read. Nil means every table of
	// the database (the current schema, for PostgreSQL, that the role may
	// read) when it is opened. Open fails when there is none: a Server
	// never falls back to allowing every table.
	Tables []string
	// MaxRows caps the rows a query returns; the result says when it was
	// truncated. Zero means DefaultMaxRows.
	MaxRows int
	// MaxBytes caps the bytes of a query's result: the lengths of its text
	// values, and 8 for every other value, summed over the rows as they
	// are read; the rows past the cap are dropped and the result says it
	// was truncated. For PostgreSQL a single row longer than MaxBytes
	// fails the query. For SQLite it is also SQLite's length limit: a
	// query fails that builds a string or blob longer than MaxBytes, and
	// also one that reads a stored value or sorts a row longer than that,
	// so set it above the largest value stored in the tables. Zero means
	// DefaultMaxBytes.
	MaxBytes int
	// AllowPrivilegedRole lets Open connect to PostgreSQL when the login
	// role or the current role is a superuser, bypasses row-level
	// security, may create roles, is a member of a role that does or of a
	// predefined pg_* role other than pg_database_owner, or may read a
	// table outside Tables, which Open refuses otherwise: such a role
	// reads other tables or the server's files, runs programs or stops
	// other sessions. Set it only for a throwaway database nobody
	// else uses; otherwise connect as a role made with
	// ReaderRoleStatements.
	AllowPrivilegedRole bool
	// Timeout bounds one query (PostgreSQL's statement_timeout, and the
	// context of a SQLite query). Zero means DefaultTimeout.
	Timeout time.Duration
	// Name is the MCP server name. Empty means Name.
	Name string
	// Logger receives a debug line per query. Nil means no logging.
	Logger *zap.Logger
}

// Column describes a column of a table.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// References is "table.column" for a foreign key.
	References string `json:"references,omitempty"`
	// Values lists the distinct values of a text column that has at most
	// eight of them.
	Values []string `json:"values,omitempty"`
}

// Table describes a table.
type Table struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	Rows    int      `json:"rows"`
}

// Schema is the structured content of mcp_db_schema.
type Schema struct {
	// Dialect is "sqlite" or "postgres".
	Dialect string  `json:"dialect"`
	Tables  []Table `json:"tables"`
}

// QueryResult is the structured content of mcp_db_query (the seed's MCP
// query result).
type QueryResult struct {
	Success bool     `json:"success"`
	Columns []string `json:"columns"`
	// Data holds the rows, each a value per column: numbers, strings
	// (dates as YYYY-MM-DD), booleans or null.
	Data     [][]any `json:"data"`
	RowCount int     `json:"row_count"`
	// Truncated is set when the query had more than MaxRows rows, or
	// more than MaxBytes bytes.
	Truncated bool   `json:"truncated,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Server is the database and its MCP server.
type Server struct {
	cfg    Config
	db     *sql.DB
	log    *zap.Logger
	schema Schema
	mcp    *server.MCPServer
	// planned, when set (by tests), runs between checkPlan and the
	// SQLite query it checked.
	planned func()
}

// Open connects to the database, reads its schema and builds the MCP
// server. Close the Server when done.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.MaxRows < 0 || cfg.MaxBytes < 0 || cfg.Timeout < 0 {
		return nil, errors.New("dbserver: Config.MaxRows, Config.MaxBytes and Config.Timeout must not be negative (zero selects the default)")
	}
	if cfg.MaxRows == 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	var err error
	switch cfg.Driver {
	case "sqlite":
		if cfg.DSN == "" {
			return nil, errors.New("dbserver: Config.DSN is empty; give the SQLite database file")
		}
		s.db, err = sql.Open("sqlite", "file:"+cfg.DSN+"?mode=ro&_pragma=query_only(1)")
	case "postgres":
		if cfg.DSN == "" {
			return nil, errors.New("dbserver: Config.DSN is empty; give a PostgreSQL connection string")
		}
		var pc *pgx.ConnConfig
		if pc, err = pgx.ParseConfig(cfg.DSN); err != nil {
			return nil, fmt.Errorf("dbserver: Config.DSN: %w", err)
		}
		// No message longer than a result may be: a longer row fails the
		// query instead of filling memory.
		limit := cfg.MaxBytes + 64<<10
		pc.AfterConnect = func(_ context.Context, c *pgconn.PgConn) error {
			c.Frontend().SetMaxBodyLen(limit)
			return nil
		}
		s.db = stdlib.OpenDB(*pc)
	default:
		return nil, fmt.Errorf("dbserver: Config.Driver %q: want sqlite or postgres", cfg.Driver)
	}
	if err != nil {
		return nil, fmt.Errorf("dbserver: open: %w", err)
	}
	s.db.SetMaxOpenConns(4)
	if cfg.Driver == "postgres" && !cfg.AllowPrivilegedRole {
		if err := s.checkRole(ctx); err != nil {
			s.db.Close()
			return nil, err
		}
	}
	if cfg.Driver == "postgres" {
		if err := s.checkFuncs(ctx); err != nil {
			s.db.Close()
			return nil, err
		}
	}
	if err := s.readSchema(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("dbserver: reading the schema: %w", err)
	}
	s.mcp = s.newMCP()
	return s, nil
}

// roleCheck reads, for the session's login role (session_user) and its
// current role (current_user, which the DSN's options=-c role=… sets), the
// privileges a read-only reader must not have: one row per role, with
// what is wrong with it, empty when nothing is. It refuses a role that is
// a superuser, bypasses row-level security or may create roles, or is a
// member (directly or not, inheriting or not: it can SET ROLE to it) of a
// role that is one of those or of a predefined pg_* role other than
// pg_database_owner (which every owner is), and a role that may SELECT a
// table, view or foreign table of a schema other than pg_catalog,
// information_schema and pg_* outside the tables of $1 (Config.Tables, in
// the current schema; NULL: every table of the current schema). Up to five
// such tables are named.
const roleCheck = `SELECT r.rolname, concat_ws(', ',
	CASE WHEN r.rolsuper THEN 'is a superuser' END,
	CASE WHEN r.rolbypassrls THEN 'bypasses row-level security' END,
	CASE WHEN r.rolcreaterole THEN 'may create roles' END,
	(SELECT 'is a member of ' || string_agg(p.rolname, ', ' ORDER BY p.rolname) FROM pg_roles p
		WHERE p.oid <> r.oid AND pg_has_role(r.oid, p.oid, 'MEMBER')
		AND (p.rolname LIKE 'pg\_%' AND p.rolname <> 'pg_database_owner' OR p.rolsuper OR p.rolbypassrls OR p.rolcreaterole)),
	(SELECT 'may read ' || string_agg(t.name, ', ') || ', not in Config.Tables' FROM (
		SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
		AND has_table_privilege(r.oid, c.oid, 'SELECT')
		AND NOT (n.nspname = current_schema() AND ($1::text[] IS NULL OR c.relname = ANY ($1::text[])))
		ORDER BY 1 LIMIT 5) t))
	FROM pg_roles r WHERE r.rolname IN (session_user, current_user) ORDER BY r.rolname`

// checkRole refuses a PostgreSQL session whose login role or current role
// has a privilege roleCheck reads.
func (s *Server) checkRole(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, roleCheck, s.cfg.Tables)
	if err != nil {
		return fmt.Errorf("dbserver: reading the role's privileges: %w", err)
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var role, what string
		if err := rows.Scan(&role, &what); err != nil {
			return fmt.Errorf("dbserver: reading the role's privileges: %w", err)
		}
		if what != "" {
			bad = append(bad, "the PostgreSQL role "+role+" "+what)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dbserver: reading the role's privileges: %w", err)
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("dbserver: %s, so a query could read other tables or the server's files, run programs or stop other sessions; "+
		"log in as a dedicated role that can only read the tables (ReaderRoleStatements and the package doc give the SQL to create one), "+
		"or set Config.AllowPrivilegedRole for a throwaway database nobody else uses", strings.Join(bad, "; "))
}

// checkFuncs refuses a PostgreSQL session whose search_path has, outside
// pg_catalog, a function the role may execute named as one Check allows:
// a query calling that name could run it instead of the built-in one.
func (s *Server) checkFuncs(ctx context.Context) error {
	names := slices.Sorted(maps.Keys(allowedFuncs["postgres"]))
	var found string
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(string_agg(DISTINCT quote_ident(n.nspname) || '.' || quote_ident(p.proname), ', '), '')
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = ANY ($1::text[]) AND n.nspname <> 'pg_catalog' AND n.nspname = ANY (current_schemas(false))
		AND has_function_privilege(p.oid, 'EXECUTE')`, names).Scan(&found)
	if err != nil {
		return fmt.Errorf("dbserver: reading the functions of the search_path: %w", err)
	}
	if found == "" {
		return nil
	}
	return fmt.Errorf("dbserver: the search_path has the functions %s, named as built-in functions a query may call, "+
		"so a query could run them instead; drop or rename them, REVOKE EXECUTE on them from the role (and from PUBLIC), "+
		"or take their schema off the DSN's search_path", found)
}

// ReaderRoleStatements returns the PostgreSQL statements that create role,
// a login role that can read tables (of schema, named as they are stored)
// and nothing else, and whose transactions are read-only by default: with
// it PostgreSQL itself refuses every other table, whatever got past Check.
// With no tables the role reads none. Run them as a role that may create
// roles, then give role a password or another way to log in, and connect
// as it with search_path=schema.
func ReaderRoleStatements(role, schema string, tables []string) []string {
	r, sc := quoteIdent(role), quoteIdent(schema)
	out := []string{
		"CREATE ROLE " + r + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS",
		"ALTER ROLE " + r + " SET default_transaction_read_only = on",
		"GRANT USAGE ON SCHEMA " + sc + " TO " + r,
	}
	if len(tables) > 0 {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = sc + "." + quoteIdent(t)
		}
		out = append(out, "GRANT SELECT ON "+strings.Join(names, ", ")+" TO "+r)
	}
	return out
}

// MCP returns the MCP server, to serve in process (mcp.Server.InProcess)
// or over stdio or HTTP.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Schema returns the schema read when the Server was opened.
func (s *Server) Schema() Schema { return s.schema }

// Tables returns the tables a query may read.
func (s *Server) Tables() []string {
	out := make([]string, len(s.schema.Tables))
	for i, t := range s.schema.Tables {
		out[i] = t.Name
	}
	return out
}

// Close closes the database.
func (s *Server) Close() error { return s.db.Close() }

func (s *Server) readSchema(ctx context.Context) error {
	s.schema.Dialect = s.cfg.Driver
	var names []string
	var q string
	if s.cfg.Driver == "sqlite" {
		q = `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	} else {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		if s.cfg.Tables == nil || slices.Contains(s.cfg.Tables, n) {
			names = append(names, n)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, want := range s.cfg.Tables {
		if !slices.Contains(names, want) {
			return fmt.Errorf("Config.Tables names %q, which the database does not have", want)
		}
	}
	if len(names) == 0 {
		return errors.New("the database has no tables a query may read (for PostgreSQL: in the connection's current schema, with SELECT granted to the role); check Config.DSN's search_path and the role's grants")
	}
	for _, n := range names {
		t, err := s.describe(ctx, n)
		if err != nil {
			return fmt.Errorf("table %s: %w", n, err)
		}
		s.schema.Tables = append(s.schema.Tables, t)
	}
	return nil
}

func (s *Server) describe(ctx context.Context, name string) (Table, error) {
	t := Table{Name: name}
	var q string
	if s.cfg.Driver == "sqlite" {
		q = `SELECT c.name, c.type, coalesce(f."table" || '.' || f."to", '') FROM pragma_table_info(?1) c LEFT JOIN pragma_foreign_key_list(?1) f ON f."from" = c.name ORDER BY c.cid`
	} else {
		// Foreign keys from pg_constraint: information_schema shows
		// constraints to the tables' owners only, not to a reader role.
		q = `SELECT c.column_name, upper(c.data_type), coalesce((
			SELECT rt.relname || '.' || ra.attname FROM pg_constraint k
			JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey)
			JOIN pg_class rt ON rt.oid = k.confrelid
			JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = k.confkey[array_position(k.conkey, a.attnum)]
			WHERE k.contype = 'f' AND k.conrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass AND a.attname = c.column_name
			ORDER BY k.conname LIMIT 1), '')
			FROM information_schema.columns c WHERE c.table_schema = current_schema() AND c.table_name = $1 ORDER BY c.ordinal_position`
	}
	rows, err := s.db.QueryContext(ctx, q, name)
	if err != nil {
		return t, err
	}
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.Type, &c.References); err != nil {
			rows.Close()
			return t, err
		}
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, err
	}
	qt := quoteIdent(name)
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM "+qt).Scan(&t.Rows); err != nil {
		return t, err
	}
	for i, c := range t.Columns {
		if !strings.Contains(c.Type, "TEXT") && !strings.Contains(c.Type, "CHAR") || c.References != "" {
			continue
		}
		qc := quoteIdent(c.Name)
		rows, err := s.db.QueryContext(ctx, "SELECT DISTINCT "+qc+" FROM "+qt+" ORDER BY 1 LIMIT 9")
		if err != nil {
			return t, err
		}
		var vals []string
		for rows.Next() {
			var v sql.NullString
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return t, err
			}
			vals = append(vals, v.String)
		}
		rows.Close()
		if len(vals) <= 8 && len(vals) < t.Rows {
			t.Columns[i].Values = vals
		}
	}
	return t, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Query checks query (Check, in the Server's dialect, against the
// allowed tables; for SQLite also checkPlan) and runs it read-only,
// returning at most MaxRows rows. A Server without tables refuses every
// query. A refused or failed query is a
// result with Success false and Error saying why; the error return is for
// a cancelled ctx only.
func (s *Server) Query(ctx context.Context, query string) (*QueryResult, error) {
	tables := s.Tables()
	if len(tables) == 0 {
		// Open refuses a database without tables; never fall back to
		// Check's nil meaning every table.
		return &QueryResult{Error: ErrRefused.Error() + ": no table may be read"}, nil
	}
	if err := Check(query, s.cfg.Driver, tables); err != nil {
		return &QueryResult{Error: err.Error()}, nil
	}
	res, err := s.runChecked(ctx, query, tables)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return &QueryResult{Error: err.Error()}, nil
	}
	return res, nil
}

// run executes query read-only, without Check or checkPlan. Tests call it
// to show that the database refuses what Check would.
func (s *Server) run(ctx context.Context, query string) (*QueryResult, error) {
	return s.runChecked(ctx, query, nil)
}

// runChecked executes query read-only. For SQLite with tables, it first
// checks the query's plan (checkPlan) in the read transaction the query
// then runs in, so the schema cannot change between them.
func (s *Server) runChecked(ctx context.Context, query string, tables []string) (*QueryResult, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	query = strings.TrimRight(strings.TrimSpace(query), "; \n\t")
	var rows *sql.Rows
	var err error
	if s.cfg.Driver == "postgres" {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer s.release(ctx, conn)
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		defer tx.Rollback()
		// Check lexes strings the standard way; so must the server.
		if _, err := tx.ExecContext(ctx, "SELECT set_config('statement_timeout', $1, true), set_config('standard_conforming_strings', 'on', true)",
			strconv.FormatInt(max(1, s.cfg.Timeout.Milliseconds()), 10)); err != nil {
			return nil, err
		}
		// The extended protocol: PostgreSQL parses the text as one
		// statement and refuses more (a call without arguments would go
		// over the simple protocol, which runs every statement of the text).
		err = conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("dbserver: unexpected PostgreSQL driver connection %T", dc)
			}
			return c.Conn().PgConn().ExecParams(ctx, "DECLARE bosai_query NO SCROLL CURSOR FOR "+query, nil, nil, nil, nil).Read().Err
		})
		if err != nil {
			return nil, s.queryError(err)
		}
		// The same FETCH returns different columns each time: no cached
		// statement description (the simple protocol).
		rows, err = tx.QueryContext(ctx, "FETCH FORWARD "+strconv.Itoa(s.cfg.MaxRows+1)+" FROM bosai_query", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return nil, s.queryError(err)
		}
		defer rows.Close()
		return s.collect(ctx, rows, start)
	}
	conn, err := s.sqliteConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if tables != nil {
		// One read transaction (SQLite takes its snapshot at the first
		// read: the tables' pages checkPlan reads).
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return nil, err
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		if err := s.checkPlanOn(ctx, conn, query, tables); err != nil {
			return nil, err
		}
		if s.planned != nil {
			s.planned()
		}
	}
	rows, err = conn.QueryContext(ctx, query)
	if err != nil {
		return nil, s.queryError(err)
	}
	defer rows.Close()
	return s.collect(ctx, rows, start)
}

// sqliteConn takes a connection from the pool with SQLite's length limit
// set to MaxBytes: SQLite runs in this process, so every string or blob it
// builds (printf('%.*c', 1e9, 'x')), also while it compiles a query (STAT4
// evaluates constants to estimate an index's selectivity), is capped
// before it is allocated. Every connection that compiles or runs a
// query's text is taken here. (The driver's connection hook gets no
// handle that sets a limit.)
func (s *Server) sqliteConn(ctx context.Context) (*sql.Conn, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_LENGTH, s.cfg.MaxBytes); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// release frees what a query may have left in its connection's session
// (session advisory locks outlive the transaction), then returns the
// connection to the pool; a connection it cannot clean is closed.
func (s *Server) release(ctx context.Context, conn *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
		s.log.Debug("closing a connection that could not be cleaned", zap.Error(err))
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	conn.Close()
}

// queryError rewords the errors of the limits for the model.
func (s *Server) queryError(err error) error {
	if e := (*pgproto3.ExceededMaxBodyLenErr)(nil); errors.As(err, &e) {
		return fmt.Errorf("a row of the result is longer than the %d-byte limit; select fewer or shorter values (substr, aggregates)", s.cfg.MaxBytes)
	}
	if strings.Contains(err.Error(), "string or blob too big") {
		return fmt.Errorf("a value the query built or read (a string, a blob, or a row it sorted) is longer than the %d-byte limit; select fewer or shorter values (substr, length)", s.cfg.MaxBytes)
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "statement timeout") || strings.Contains(err.Error(), "interrupted") {
		return fmt.Errorf("the query ran longer than the %s limit and was stopped; make it cheaper (filter, aggregate, LIMIT)", s.cfg.Timeout)
	}
	return err
}

func (s *Server) collect(ctx context.Context, rows *sql.Rows, start time.Time) (*QueryResult, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	types, _ := rows.ColumnTypes()
	res := &QueryResult{Success: true, Columns: cols, Data: [][]any{}}
	size := 0
	for rows.Next() {
		if len(res.Data) == s.cfg.MaxRows {
			res.Truncated = true
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			vals[i] = jsonValue(v, types[i].DatabaseTypeName())
			if str, ok := vals[i].(string); ok {
				size += len(str)
			} else {
				size += 8
			}
		}
		if size > s.cfg.MaxBytes {
			res.Truncated = true
			break
		}
		res.Data = append(res.Data, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(err)
	}
	if err := ctx.Err(); err != nil {
		return nil, s.queryError(err)
	}
	res.RowCount = len(res.Data)
	s.log.Debug("query", zap.Int("rows", res.RowCount), zap.Bool("truncated", res.Truncated), zap.Duration("elapsed", time.Since(start)))
	return res, nil
}

// truncation says, for a truncated result, which limit cut it.
func (s *Server) truncation(res *QueryResult) string {
	if res.RowCount == s.cfg.MaxRows {
		return fmt.Sprintf(", truncated to the first %d; aggregate, filter or add a LIMIT", s.cfg.MaxRows)
	}
	return fmt.Sprintf(", truncated: the next row would pass the %d-byte limit; select fewer or shorter values", s.cfg.MaxBytes)
}

// jsonValue turns a scanned value into a JSON-friendly one.
func jsonValue(v any, dbType string) any {
	switch x := v.(type) {
	case []byte:
		v = string(x)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.UTC().Format(time.RFC3339)
	}
	if s, ok := v.(string); ok && dbType == "NUMERIC" {
		if f, ok := new(big.Float).SetString(s); ok {
			n, _ := f.Float64()
			return n
		}
	}
	return v
}

func (s *Server) newMCP() *server.MCPServer {
	srv := server.NewMCPServer(cmpOr(s.cfg.Name, Name), "1.0.0", server.WithToolCapabilities(false), server.WithRecovery(),
		server.WithInstructions("Read the shop database: mcp_db_list_tables, then mcp_db_schema, then one SELECT with mcp_db_query. Writes are refused."))
	srv.AddTool(mcp.NewTool("mcp_db_list_tables",
		mcp.WithDescription("List the tables a query may read."),
		mcp.WithReadOnlyHintAnnotation(true),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tables := s.Tables()
		return mcp.NewToolResultStructured(map[string]any{"tables": tables}, strings.Join(tables, ", ")), nil
	})
	srv.AddTool(mcp.NewTool("mcp_db_schema",
		mcp.WithDescription("Describe tables: columns with types, foreign keys (-> table.column), row counts and the values of small text columns."),
		mcp.WithString("table", mcp.Description("One table to describe; omit for all.")),
		mcp.WithOutputSchema[Schema](),
		mcp.WithReadOnlyHintAnnotation(true),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sc := s.schema
		if name := req.GetString("table", ""); name != "" {
			i := slices.IndexFunc(sc.Tables, func(t Table) bool { return t.Name == name })
			if i < 0 {
				return mcp.NewToolResultErrorf("argument table: no table %q; the tables are %s", name, strings.Join(s.Tables(), ", ")), nil
			}
			sc.Tables = sc.Tables[i : i+1]
		}
		return mcp.NewToolResultStructured(sc, FormatSchema(sc)), nil
	})
	srv.AddTool(mcp.NewTool("mcp_db_query",
		mcp.WithDescription(fmt.Sprintf("Run one read-only SELECT and return its rows (at most %d). Only the listed tables may be read; writes, several statements and session changes are refused.", s.cfg.MaxRows)),
		mcp.WithString("sql", mcp.Required(), mcp.Description("One SELECT statement.")),
		mcp.WithOutputSchema[QueryResult](),
		mcp.WithReadOnlyHintAnnotation(true),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		q, err := req.RequireString("sql")
		if err != nil || strings.TrimSpace(q) == "" {
			return mcp.NewToolResultError("argument sql is required: give one SELECT statement"), nil
		}
		res, err := s.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("%d rows", res.RowCount)
		if res.Truncated {
			text += s.truncation(res)
		}
		if !res.Success {
			text = "error: " + res.Error
		}
		out := mcp.NewToolResultStructured(res, text)
		out.IsError = !res.Success
		return out, nil
	})
	return srv
}

// FormatSchema renders a schema as text, one line per table:
//
//	orders(id INTEGER, customer_id INTEGER -> customers.id, …) 300 rows
func FormatSchema(sc Schema) string {
	var b strings.Builder
	fmt.Fprintf(&b, "dialect: %s\n", sc.Dialect)
	for _, t := range sc.Tables {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = c.Name + " " + c.Type
			if c.References != "" {
				cols[i] += " -> " + c.References
			}
			if len(c.Values) > 0 {
				cols[i] += " values: " + strings.Join(c.Values, "|")
			}
		}
		fmt.Fprintf(&b, "- %s(%s) %d rows\n", t.Name, strings.Join(cols, ", "), t.Rows)
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
