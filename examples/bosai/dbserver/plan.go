package dbserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// opflagP2IsReg is SQLite's OPFLAG_P2ISREG: an OpenRead whose P5 has it
// takes its root page from a register, not from P2.
const opflagP2IsReg = 0x10

// planFuncs are the functions SQLite's own operators call (x -> '$.a'
// calls "->"), allowed in a plan though no query names them.
var planFuncs = setOf("->", "->>")

// checkPlan is the second layer for SQLite: SQLite compiles the query and
// reports, in its EXPLAIN program, what the query would read and call, so
// a query the lexer misread is still caught. It refuses a query that
// opens a b-tree other than those of the allowed tables and their
// indexes, opens one of another database or a virtual table (pragma_…,
// json_each), or calls a function outside SQLite's allowedFuncs. The query is
// compiled inside SELECT * FROM (…), so that text SQLite would read as
// more than one statement fails to compile instead of being explained in
// part.
func (s *Server) checkPlan(ctx context.Context, query string, tables []string) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	conn, err := s.sqliteConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return s.checkPlanOn(ctx, conn, query, tables)
}

// checkPlanOn is checkPlan on conn, which Query has in a read transaction
// that the query then runs in: the tables' pages it reads are those the
// query reads.
func (s *Server) checkPlanOn(ctx context.Context, conn *sql.Conn, query string, tables []string) error {
	names, err := json.Marshal(tables)
	if err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, `SELECT rootpage FROM sqlite_schema WHERE type IN ('table', 'index') AND rootpage > 0 AND tbl_name IN (SELECT value FROM json_each(?))`, string(names))
	if err != nil {
		return fmt.Errorf("reading the tables' pages: %w", err)
	}
	var roots []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return fmt.Errorf("reading the tables' pages: %w", err)
		}
		roots = append(roots, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the tables' pages: %w", err)
	}
	rows, err = conn.QueryContext(ctx, "EXPLAIN SELECT * FROM (\n"+trimTail(query)+"\n)")
	if err != nil {
		// The query's own error (a misspelt column) as SQLite reports it:
		// preparing compiles the first statement and runs nothing.
		if st, perr := conn.PrepareContext(ctx, query); perr != nil {
			return s.queryError(perr)
		} else {
			st.Close()
		}
		return fmt.Errorf("%w: SQLite does not read the query as one SELECT: %w", ErrRefused, s.queryError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var addr, p1, p2, p3, p5 int64
		var op string
		var p4, comment any
		if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			return fmt.Errorf("reading the query plan: %w", err)
		}
		switch op {
		case "OpenWrite":
			return fmt.Errorf("%w: SQLite would write a table; only read", ErrRefused)
		case "OpenRead", "ReopenIdx":
			if p3 != 0 || p5&opflagP2IsReg != 0 || !slices.Contains(roots, p2) {
				return fmt.Errorf("%w: SQLite would read a table or index that is not allowed; the tables are %s", ErrRefused, strings.Join(tables, ", "))
			}
		case "VOpen", "VCreate", "VDestroy", "VUpdate":
			return fmt.Errorf("%w: SQLite would open a virtual table (such as pragma_… or json_each); read the tables", ErrRefused)
		case "Function", "PureFunc", "AggStep", "AggStep1", "AggFinal", "AggValue", "AggInverse":
			name, _ := p4.(string)
			if i := strings.LastIndexByte(name, '('); i > 0 {
				name = name[:i]
			}
			if name = foldASCII(name); !allowedFuncs["sqlite"][name] && !planFuncs[name] {
				return fmt.Errorf("%w: SQLite would call the function %q, which is not allowed; use aggregates, window functions and common date, string and math functions", ErrRefused, name)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the query plan: %w", s.queryError(err))
	}
	return nil
}

// trimTail returns query without the ';' that end it and what follows
// them, as SQLite lexes it: cut at the first ';' before which the query
// has all its tokens but those ';'. It tries the last 64 ';' at most (each
// try lexes the query); past that the query is left as it is.
func trimTail(query string) string {
	toks, err := lex(query, "sqlite")
	if err != nil {
		return query
	}
	toks = trimSemicolons(toks)
	cut := len(query)
	for i, tries := len(query)-1, 0; i >= 0 && tries < 64; i-- {
		if query[i] != ';' {
			continue
		}
		tries++
		head, err := lex(query[:i], "sqlite")
		if err != nil {
			continue // inside a comment or string
		}
		if head = trimSemicolons(head); !slices.Equal(head, toks) {
			if len(head) < len(toks) {
				break
			}
			continue
		}
		cut = i
	}
	return query[:cut]
}

// trimSemicolons drops the ';' that end toks.
func trimSemicolons(toks []token) []token {
	for len(toks) > 0 && isPunct(toks[len(toks)-1], ";") {
		toks = toks[:len(toks)-1]
	}
	return toks
}
