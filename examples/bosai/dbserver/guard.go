package dbserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrRefused wraps every refusal of Check: the query is not a single
// read-only SELECT over the allowed tables.
var ErrRefused = errors.New("query refused")

// forbiddenWords are keywords a read-only query never needs. Each one
// starts or hides a write, a schema change, a session change or a
// command (SELECT … INTO creates a table in PostgreSQL; FOR UPDATE locks).
var forbiddenWords = []string{
	"insert", "update", "delete", "merge", "upsert", "drop", "alter", "create", "truncate",
	"grant", "revoke", "attach", "detach", "pragma", "vacuum", "reindex", "analyze",
	"copy", "call", "do", "execute", "exec", "prepare", "deallocate", "lock", "set", "reset",
	"listen", "notify", "unlisten", "load", "begin", "commit", "rollback", "savepoint",
	"release", "into", "returning", "refresh", "cluster", "comment", "security", "import",
}

// forbiddenFuncs are functions that sleep, touch files, run SQL given as
// text, change settings or signal other sessions. Every name starting with
// pg_ or lo_ is refused too.
var forbiddenFuncs = []string{
	"set_config", "current_setting", "dblink", "dblink_exec", "query_to_xml",
	"query_to_xml_and_xmlschema", "query_to_xmlschema", "cursor_to_xml", "table_to_xml",
	"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "sleep",
}

type tokKind int

const (
	tokWord tokKind = iota
	tokQuoted
	tokString
	tokNumber
	tokPunct
)

type token struct {
	kind tokKind
	text string // words in lower case, punctuation as is
}

// lex splits sql into tokens, dropping comments and whitespace. It fails on
// an unterminated comment, string or quoted identifier.
func lex(sql string) ([]token, error) {
	var out []token
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				i = len(sql)
			} else {
				i += j + 1
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			// PostgreSQL nests block comments; count depth.
			depth, j := 1, i+2
			for j < len(sql) && depth > 0 {
				switch {
				case strings.HasPrefix(sql[j:], "/*"):
					depth++
					j += 2
				case strings.HasPrefix(sql[j:], "*/"):
					depth--
					j += 2
				default:
					j++
				}
			}
			if depth > 0 {
				return nil, fmt.Errorf("%w: unterminated /* comment", ErrRefused)
			}
			i = j
			out = append(out, token{tokPunct, " "}) // a comment separates tokens
		case c == '\'' || ((c == 'e' || c == 'E') && i+1 < len(sql) && sql[i+1] == '\''):
			esc := c != '\''
			if esc {
				i++
			}
			j := i + 1
			for {
				if j >= len(sql) {
					return nil, fmt.Errorf("%w: unterminated string literal", ErrRefused)
				}
				if esc && sql[j] == '\\' {
					j += 2
					continue
				}
				if sql[j] == '\'' {
					if j+1 < len(sql) && sql[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			out = append(out, token{tokString, sql[i : j+1]})
			i = j + 1
		case c == '"' || c == '`' || c == '[':
			end := byte('"')
			if c == '`' {
				end = '`'
			} else if c == '[' {
				end = ']'
			}
			j := strings.IndexByte(sql[i+1:], end)
			if j < 0 {
				return nil, fmt.Errorf("%w: unterminated quoted identifier", ErrRefused)
			}
			out = append(out, token{tokQuoted, strings.ToLower(sql[i+1 : i+1+j])})
			i += j + 2
		case c == '$' && i+1 < len(sql) && (sql[i+1] == '$' || isIdentStart(sql[i+1])):
			// PostgreSQL dollar quoting: $tag$ … $tag$.
			j := i + 1
			for j < len(sql) && sql[j] != '$' && isIdentPart(sql[j]) {
				j++
			}
			if j >= len(sql) || sql[j] != '$' {
				return nil, fmt.Errorf("%w: stray $ in the query", ErrRefused)
			}
			tag := sql[i : j+1]
			k := strings.Index(sql[j+1:], tag)
			if k < 0 {
				return nil, fmt.Errorf("%w: unterminated dollar-quoted string", ErrRefused)
			}
			out = append(out, token{tokString, sql[i : j+1+k+len(tag)]})
			i = j + 1 + k + len(tag)
		case isIdentStart(c):
			j := i
			for j < len(sql) && isIdentPart(sql[j]) {
				j++
			}
			out = append(out, token{tokWord, strings.ToLower(sql[i:j])})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i
			for j < len(sql) && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.' || sql[j] == 'e' || sql[j] == 'E') {
				j++
			}
			out = append(out, token{tokNumber, sql[i:j]})
			i = j
		default:
			out = append(out, token{tokPunct, string(c)})
			i++
		}
	}
	// Drop the separators left by comments.
	return slices.DeleteFunc(out, func(t token) bool { return t.kind == tokPunct && t.text == " " }), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// Check is the first line of defence of mcp_db_query: it accepts one
// read-only SELECT (or WITH … SELECT) that reads only the allowed tables,
// and refuses anything else with an error wrapping ErrRefused that says
// what to change. A nil or empty allowed list allows every table. The
// database enforces read-only as well (see Config); Check is what makes the
// refusal clear.
func Check(sql string, allowed []string) error {
	toks, err := lex(sql)
	if err != nil {
		return err
	}
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return fmt.Errorf("%w: the query is empty; write one SELECT statement", ErrRefused)
	}
	if first := toks[0]; first.kind != tokWord || (first.text != "select" && first.text != "with") {
		return fmt.Errorf("%w: only SELECT queries are allowed (the query starts with %q)", ErrRefused, toks[0].text)
	}
	for i, t := range toks {
		switch {
		case t.kind == tokPunct && t.text == ";":
			return fmt.Errorf("%w: only one statement is allowed; remove everything after the first ';'", ErrRefused)
		case t.kind == tokWord && slices.Contains(forbiddenWords, t.text):
			return fmt.Errorf("%w: the keyword %s is not allowed in a read-only query", ErrRefused, strings.ToUpper(t.text))
		case t.kind == tokWord || t.kind == tokQuoted:
			if slices.Contains(forbiddenFuncs, t.text) || strings.HasPrefix(t.text, "pg_") || strings.HasPrefix(t.text, "lo_") {
				return fmt.Errorf("%w: %s is not allowed in a read-only query", ErrRefused, t.text)
			}
			if strings.HasPrefix(t.text, "sqlite_") && i+1 < len(toks) && toks[i+1].text == "(" {
				return fmt.Errorf("%w: %s is not allowed in a read-only query", ErrRefused, t.text)
			}
		}
	}
	return checkTables(toks, allowed)
}

// checkTables refuses table references outside allowed (and the query's
// own common table expressions), schema-qualified names and table
// functions.
func checkTables(toks []token, allowed []string) error {
	ctes := map[string]bool{}
	for i := 0; i+1 < len(toks); i++ {
		if !isName(toks[i]) {
			continue
		}
		j := i + 1
		if toks[j].text == "(" { // name(cols) AS (
			depth := 0
			for ; j < len(toks); j++ {
				if toks[j].text == "(" {
					depth++
				} else if toks[j].text == ")" {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			j++
		}
		if j+1 < len(toks) && toks[j].text == "as" && toks[j+1].text == "(" {
			ctes[toks[i].text] = true
		}
	}
	stop := []string{"where", "group", "order", "limit", "having", "union", "intersect", "except", "on", "using", "window", "offset", "fetch", "join", "inner", "left", "right", "full", "cross", "natural", "outer"}
	for i := 0; i < len(toks); i++ {
		if toks[i].kind != tokWord || (toks[i].text != "from" && toks[i].text != "join") {
			continue
		}
		if i >= 3 && toks[i-2].text == "(" && slices.Contains([]string{"extract", "substring", "trim", "overlay", "position"}, toks[i-3].text) {
			continue // EXTRACT(YEAR FROM d) and friends
		}
		// Read a list of table references: name [[AS] alias] {, …}.
		j := i + 1
		for j < len(toks) {
			if toks[j].text == "lateral" || toks[j].text == "only" {
				j++
			}
			if j >= len(toks) || toks[j].text == "(" {
				break // a subquery: its own FROM is checked on its own
			}
			if !isName(toks[j]) {
				return fmt.Errorf("%w: expected a table name after %s, found %q", ErrRefused, strings.ToUpper(toks[i].text), toks[j].text)
			}
			name := toks[j].text
			j++
			if j < len(toks) && toks[j].text == "." {
				return fmt.Errorf("%w: schema-qualified names such as %s.%s are not allowed; name the table alone", ErrRefused, name, tokText(toks, j+1))
			}
			if j < len(toks) && toks[j].text == "(" {
				return fmt.Errorf("%w: table functions such as %s(…) are not allowed; read tables", ErrRefused, name)
			}
			if !ctes[name] && len(allowed) > 0 && !slices.Contains(allowed, name) {
				return fmt.Errorf("%w: table %s is not allowed; the tables are %s", ErrRefused, name, strings.Join(allowed, ", "))
			}
			if j < len(toks) && toks[j].text == "as" {
				j++
			}
			if j < len(toks) && isName(toks[j]) && !slices.Contains(stop, toks[j].text) {
				j++ // alias
			}
			if j < len(toks) && toks[j].text == "," && toks[i].text == "from" {
				j++
				continue
			}
			break
		}
	}
	return nil
}

func isName(t token) bool { return t.kind == tokWord || t.kind == tokQuoted }

func tokText(toks []token, i int) string {
	if i < len(toks) {
		return toks[i].text
	}
	return ""
}
