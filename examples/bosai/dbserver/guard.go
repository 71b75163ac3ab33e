package dbserver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrRefused wraps every refusal of Check: the query is not a single
// read-only SELECT over the allowed tables.
var ErrRefused = errors.New("query refused")

// forbiddenWords are keywords a read-only query never needs. Each one
// starts or hides a write, a schema change, a session change or a
// command (SELECT … INTO creates a table in PostgreSQL; FOR UPDATE locks;
// TABLE t reads t without a FROM). UESCAPE is allowed only right after
// its U& literal, where lex consumes it.
var forbiddenWords = []string{
	"insert", "update", "delete", "merge", "upsert", "drop", "alter", "create", "truncate",
	"grant", "revoke", "attach", "detach", "pragma", "vacuum", "reindex", "analyze",
	"copy", "call", "do", "execute", "exec", "prepare", "deallocate", "lock", "set", "reset",
	"listen", "notify", "unlisten", "load", "begin", "commit", "rollback", "savepoint",
	"release", "into", "returning", "refresh", "cluster", "comment", "security", "import",
	"table", "uescape",
}

// forbiddenFuncs are functions that sleep, touch files, run SQL given as
// text, change settings or signal other sessions. Every name starting with
// pg_ or lo_ is refused too. None of them is in allowedFuncs; the list
// gives the clearer message and guards names that are not calls.
var forbiddenFuncs = []string{
	"set_config", "current_setting", "dblink", "dblink_exec", "query_to_xml",
	"query_to_xml_and_xmlschema", "query_to_xmlschema", "cursor_to_xml", "table_to_xml",
	"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "sleep",
}

// allowedFuncs are, per dialect, the functions a query may call:
// aggregates, window functions, and common date, string, math,
// conditional and JSON functions that the database has built in (in
// PostgreSQL's pg_catalog, or its grammar: coalesce, greatest, trim…).
// None of them reads files, runs SQL given as text, takes locks, changes
// settings or signals sessions. Each list holds only names the dialect
// has: PostgreSQL would resolve another name (ifnull, strftime) to a
// function of the search_path, which anyone who may create one writes.
// Open refuses a PostgreSQL search_path with a function of one of these
// names outside pg_catalog (checkFuncs).
var allowedFuncs = map[string]map[string]bool{
	"postgres": setOf(append(slices.Clone(sharedFuncs), pgFuncs...)...),
	"sqlite":   setOf(append(slices.Clone(sharedFuncs), sqliteFuncs...)...),
}

// sharedFuncs are built into both databases; pgFuncs into PostgreSQL
// only, sqliteFuncs into SQLite only (SQLite compiles CURRENT_DATE to a
// call of current_date).
var (
	sharedFuncs = []string{
		"count", "sum", "avg", "min", "max", "string_agg", "row_number", "rank", "dense_rank",
		"percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
		"abs", "ceil", "ceiling", "floor", "round", "trunc", "sqrt", "power", "pow", "exp", "ln", "log",
		"log10", "mod", "sign", "pi", "degrees", "radians", "sin", "cos", "tan", "asin", "acos", "atan",
		"atan2", "random", "length", "octet_length", "lower", "upper", "trim", "ltrim", "rtrim", "substr",
		"substring", "replace", "concat", "concat_ws", "format", "char", "like", "current_timestamp",
		"current_time", "date", "time", "coalesce", "nullif", "cast", "json_object", "json_array_length",
	}
	pgFuncs = []string{
		"array_agg", "bool_and", "bool_or", "every", "stddev", "stddev_pop", "stddev_samp", "variance",
		"var_pop", "var_samp", "percentile_cont", "percentile_disc", "mode", "corr", "covar_pop",
		"covar_samp", "regr_slope", "regr_intercept", "regr_r2", "json_agg", "jsonb_agg",
		"json_object_agg", "jsonb_object_agg", "grouping", "cbrt", "div", "width_bucket", "greatest",
		"least", "scale", "char_length", "character_length", "bit_length", "initcap", "btrim", "left",
		"right", "lpad", "rpad", "translate", "reverse", "position", "strpos", "split_part",
		"starts_with", "ascii", "chr", "md5", "regexp_replace", "regexp_match", "regexp_matches",
		"regexp_like", "regexp_count", "regexp_substr", "regexp_split_to_array", "string_to_array",
		"array_to_string", "overlay", "to_hex", "now", "localtimestamp", "localtime", "date_trunc",
		"date_part", "extract", "age", "make_date", "make_time", "make_timestamp", "make_interval",
		"to_char", "to_date", "to_timestamp", "to_number", "justify_days", "justify_hours",
		"justify_interval", "isfinite", "date_bin", "timezone", "json_build_object", "jsonb_build_object",
		"json_build_array", "jsonb_build_array", "to_json", "to_jsonb", "jsonb_array_length",
		"json_typeof", "jsonb_typeof", "array_length", "cardinality", "unnest", "array_position",
		"array_remove", "array_append", "generate_series",
	}
	sqliteFuncs = []string{
		"total", "group_concat", "json_group_array", "json_group_object", "log2", "instr", "printf",
		"unicode", "hex", "typeof", "glob", "datetime", "julianday", "strftime", "unixepoch", "ifnull",
		"iif", "json_array", "json_extract", "current_date",
	}
)

// callKeywords are reserved words that may stand right before "(" without
// being a function call: no function can be called by them. Non-reserved
// words that do so only in one place (OVER, FILTER and WITHIN after ")",
// PARTITION after "(", and in PostgreSQL ROLLUP and CUBE after BY, SETS
// after GROUPING) are accepted there only, by checkCalls.
var callKeywords = setOf(
	"select", "from", "join", "where", "and", "or", "not", "in", "exists", "any", "all", "some",
	"as", "on", "using", "values", "array", "row", "when", "then", "else", "case", "by", "with",
	"lateral", "distinct", "between", "to", "is", "union", "intersect", "except", "having",
	"limit", "offset", "group", "order", "only", "interval",
)

// fromFuncs are the functions whose arguments may hold the word FROM
// (EXTRACT(YEAR FROM d), SUBSTRING(s FROM 2)): it starts no FROM clause.
var fromFuncs = setOf("extract", "substring", "trim", "overlay", "position")

// clauseEnds are the reserved words that end a FROM clause, or (ON and
// USING) a table reference's alias, in PostgreSQL; sqliteClauseEnds are
// SQLite's, where FETCH, OFFSET, FOR and WINDOW may be aliases.
var (
	clauseEnds = setOf("where", "group", "having", "window", "order", "limit", "offset", "fetch",
		"for", "union", "intersect", "except", "on", "using")
	sqliteClauseEnds = setOf("where", "group", "having", "order", "limit", "union", "intersect",
		"except", "on", "using")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
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
	// text is a word in ASCII lower case; a quoted identifier unquoted (U&
	// decoded), as written for PostgreSQL and in ASCII lower case for
	// SQLite (each dialect's identity of names); punctuation as is.
	text string
}

// foldASCII lowers the ASCII letters of s only, as both databases fold
// unquoted names (strings.ToLower would fold K, the Kelvin sign, to k).
func foldASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// lex splits sql into tokens of dialect ("postgres" or "sqlite"), dropping
// comments and whitespace, as that database reads them. It fails on an
// unterminated comment, string or quoted identifier, on a U& literal it
// cannot decode, and on what the two databases read differently enough to
// hide a query from Check: a carriage return in a -- comment (PostgreSQL
// ends the comment there, SQLite does not), E'…' strings (PostgreSQL reads
// backslash escapes in them and in the strings that continue them) and,
// for SQLite, parameters ($x(…), @x, :x, #x and ? : SQLite's $x(…) swallows
// quotes). For PostgreSQL "[" is punctuation (a subscript): what it
// encloses is lexed, so checked, like the rest; for SQLite [name] is a
// quoted identifier, /* comments do not nest, and U&"…" is not special.
func lex(sql, dialect string) ([]token, error) {
	pg := dialect == "postgres"
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
				j = len(sql) - i
			}
			if strings.IndexByte(sql[i:i+j], '\r') >= 0 {
				return nil, fmt.Errorf("%w: a -- comment holds a carriage return, where PostgreSQL ends the comment and SQLite does not; end comments with a newline", ErrRefused)
			}
			i += j
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*' && !pg:
			// SQLite does not nest block comments.
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("%w: unterminated /* comment", ErrRefused)
			}
			i += j + 4
			out = append(out, token{tokPunct, " "})
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
		case pg && (c == 'u' || c == 'U') && i+2 < len(sql) && sql[i+1] == '&' && (sql[i+2] == '"' || sql[i+2] == '\''):
			t, n, err := lexUnicode(sql[i:])
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			i += n
		case (c == 'e' || c == 'E') && i+1 < len(sql) && sql[i+1] == '\'':
			return nil, fmt.Errorf("%w: E'…' strings are not allowed; write a standard '…' string (a backslash in it is an ordinary character)", ErrRefused)
		case !pg && strings.IndexByte("$@:#?", c) >= 0:
			return nil, fmt.Errorf("%w: parameters (%c…) are not allowed; write the values into the query", ErrRefused, c)
		case !pg && c == '[':
			j := strings.IndexByte(sql[i+1:], ']')
			if j < 0 {
				return nil, fmt.Errorf("%w: unterminated quoted identifier", ErrRefused)
			}
			out = append(out, token{tokQuoted, foldASCII(sql[i+1 : i+1+j])})
			i += j + 2
		case c == '\'':
			j := i + 1
			for {
				if j >= len(sql) {
					return nil, fmt.Errorf("%w: unterminated string literal", ErrRefused)
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
		case c == '"':
			body, n, err := quoted(sql[i:])
			if err != nil {
				return nil, err
			}
			if !pg {
				body = foldASCII(body)
			}
			out = append(out, token{tokQuoted, body})
			i += n
		case c == '`':
			// SQLite's quoted identifier; PostgreSQL reads ` as an operator,
			// so only plain names may be quoted this way.
			j := strings.IndexByte(sql[i+1:], '`')
			if j < 0 {
				return nil, fmt.Errorf("%w: unterminated quoted identifier", ErrRefused)
			}
			name := sql[i+1 : i+1+j]
			if strings.IndexFunc(name, func(r rune) bool { return r != ' ' && (r >= utf8.RuneSelf || !isIdentPart(byte(r))) }) >= 0 {
				return nil, fmt.Errorf("%w: `%s` is not a plain name; quote identifiers with \"", ErrRefused, name)
			}
			out = append(out, token{tokQuoted, foldASCII(name)})
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
			out = append(out, token{tokWord, foldASCII(sql[i:j])})
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

// quoted reads the literal that s starts with, quoted by s[0] ("…" or
// '…', the quote doubled inside), and returns its body and length.
func quoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		if s[j] != q {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			b.WriteByte(q)
			j++
			continue
		}
		return b.String(), j + 1, nil
	}
	if q == '"' {
		return "", 0, fmt.Errorf("%w: unterminated quoted identifier", ErrRefused)
	}
	return "", 0, fmt.Errorf("%w: unterminated string literal", ErrRefused)
}

// lexUnicode reads PostgreSQL's U&"…" identifier or U&'…' string that s
// starts with, and the UESCAPE 'c' clause that may follow it after
// whitespace, and returns it decoded: U&"\0070g_sleep" is pg_sleep.
func lexUnicode(s string) (token, int, error) {
	body, n, err := quoted(s[2:])
	if err != nil {
		return token{}, 0, err
	}
	n += 2
	esc := '\\'
	j := n
	for j < len(s) && strings.IndexByte(" \t\n\r\f\v", s[j]) >= 0 {
		j++
	}
	if len(s)-j >= 7 && strings.EqualFold(s[j:j+7], "uescape") && (len(s) == j+7 || !isIdentPart(s[j+7])) {
		k := j + 7
		for k < len(s) && strings.IndexByte(" \t\n\r\f\v", s[k]) >= 0 {
			k++
		}
		if k >= len(s) || s[k] != '\'' {
			return token{}, 0, fmt.Errorf("%w: UESCAPE must be followed by a one-character string such as '!'", ErrRefused)
		}
		e, m, err := quoted(s[k:])
		if err != nil {
			return token{}, 0, err
		}
		r, size := utf8.DecodeRuneInString(e)
		if size == 0 || size != len(e) || strings.ContainsRune("0123456789abcdefABCDEF+'\" \t\n\r\f\v", r) {
			return token{}, 0, fmt.Errorf("%w: invalid UESCAPE character %q", ErrRefused, e)
		}
		esc, n = r, k+m
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRuneInString(body[i:])
		i += size
		if r != esc {
			b.WriteRune(r)
			continue
		}
		digits := 4
		switch {
		case strings.HasPrefix(body[i:], string(esc)):
			b.WriteRune(esc)
			i += len(string(esc))
			continue
		case strings.HasPrefix(body[i:], "+"):
			digits = 6
			i++
		}
		if i+digits > len(body) {
			return token{}, 0, fmt.Errorf("%w: invalid Unicode escape in %s", ErrRefused, s[:n])
		}
		v, err := strconv.ParseUint(body[i:i+digits], 16, 32)
		if err != nil || v == 0 || !utf8.ValidRune(rune(v)) {
			return token{}, 0, fmt.Errorf("%w: invalid Unicode escape in %s", ErrRefused, s[:n])
		}
		b.WriteRune(rune(v))
		i += digits
	}
	if s[2] == '\'' {
		return token{tokString, s[:n]}, n, nil
	}
	return token{tokQuoted, b.String()}, n, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// Check is the first line of defence of mcp_db_query: it accepts one
// read-only SELECT (or WITH … SELECT) in dialect ("postgres" or "sqlite")
// that reads only the allowed tables and calls only common functions
// (aggregates, window functions, date, string and math functions), and
// refuses anything else with an error wrapping ErrRefused that says what
// to change. It lexes the query as that database does, and compares names
// as it does: PostgreSQL keeps quoted names as written, SQLite ignores
// ASCII case. A nil allowed list allows every table (for callers that
// check a query before they know the tables); an empty one allows none.
// PostgreSQL's U&"…" identifiers are decoded before they are checked.
//
// Check is defence in depth and the source of clear messages: what the
// database itself enforces is listed in the package documentation.
func Check(sql, dialect string, allowed []string) error {
	if dialect != "postgres" && dialect != "sqlite" {
		return fmt.Errorf("%w: dialect %q: want postgres or sqlite", ErrRefused, dialect)
	}
	toks, err := lex(sql, dialect)
	if err != nil {
		return err
	}
	for len(toks) > 0 && isPunct(toks[len(toks)-1], ";") {
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
		case isPunct(t, ";"):
			return fmt.Errorf("%w: only one statement is allowed; remove everything after the first ';'", ErrRefused)
		case t.kind == tokWord && slices.Contains(forbiddenWords, t.text):
			return fmt.Errorf("%w: the keyword %s is not allowed in a read-only query", ErrRefused, strings.ToUpper(t.text))
		case isName(t):
			if n := foldASCII(t.text); slices.Contains(forbiddenFuncs, n) || strings.HasPrefix(n, "pg_") || strings.HasPrefix(n, "lo_") {
				return fmt.Errorf("%w: %s is not allowed in a read-only query", ErrRefused, t.text)
			}
			if dialect == "postgres" && isWord(t, "operator") && isPunct(tokAt(toks, i+1), "(") {
				return fmt.Errorf("%w: OPERATOR(…) is not allowed (it may call an operator of any schema); write the operator alone, such as a + b", ErrRefused)
			}
			if strings.HasPrefix(foldASCII(t.text), "sqlite_") && i+1 < len(toks) && isPunct(toks[i+1], "(") {
				return fmt.Errorf("%w: %s is not allowed in a read-only query", ErrRefused, t.text)
			}
		}
	}
	p, err := parse(toks, dialect)
	if err != nil {
		return err
	}
	if err := p.checkTables(allowed); err != nil {
		return err
	}
	return p.checkCalls()
}

// cte is a common table expression: its name, where it is defined and
// the tokens it is visible in.
type cte struct {
	name     string
	def      int // index of the name
	from, to int // visible in toks[from:to]
}

// query is a lexed query with its parentheses matched and its common
// table expressions found.
type query struct {
	toks    []token
	dialect string
	// match maps each "(" to its ")" and back; outer maps each token to
	// the "(" of the innermost parentheses around it, or -1.
	match, outer []int
	ctes         []cte
}

func parse(toks []token, dialect string) (*query, error) {
	p := &query{toks: toks, dialect: dialect, match: make([]int, len(toks)), outer: make([]int, len(toks))}
	var stack []int
	for i, t := range toks {
		p.match[i] = -1
		p.outer[i] = -1
		if len(stack) > 0 {
			p.outer[i] = stack[len(stack)-1]
		}
		switch {
		case isPunct(t, "("):
			stack = append(stack, i)
		case isPunct(t, ")"):
			if len(stack) == 0 {
				return nil, fmt.Errorf("%w: unbalanced parentheses: a ')' closes nothing", ErrRefused)
			}
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p.match[o], p.match[i] = i, o
			p.outer[i] = p.outer[o]
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("%w: unbalanced parentheses: a '(' is never closed", ErrRefused)
	}
	depth := 0
	for _, t := range toks {
		if isPunct(t, "[") {
			depth++
		} else if isPunct(t, "]") {
			if depth--; depth < 0 {
				return nil, fmt.Errorf("%w: unbalanced brackets: a ']' closes nothing", ErrRefused)
			}
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("%w: unbalanced brackets: a '[' is never closed", ErrRefused)
	}
	for w, t := range toks {
		if t.kind == tokWord && t.text == "with" {
			p.readWith(w)
		}
	}
	return p, nil
}

// readWith records the common table expressions of the WITH at toks[w]:
// WITH [RECURSIVE] name [(cols)] AS [[NOT] MATERIALIZED] (body) {, …}.
// A CTE is visible up to the end of the parentheses around its WITH; a
// recursive one from its name on, another only after its body (before,
// the name is a table's).
func (p *query) readWith(w int) {
	toks := p.toks
	end := len(toks)
	if o := p.outer[w]; o >= 0 {
		end = p.match[o]
	}
	j := w + 1
	recursive := j < len(toks) && isWord(toks[j], "recursive")
	if recursive {
		j++
	}
	for j < len(toks) && isName(toks[j]) {
		c := cte{name: toks[j].text, def: j, to: end}
		j++
		if j < len(toks) && isPunct(toks[j], "(") {
			j = p.match[j] + 1
		}
		if j >= len(toks) || !isWord(toks[j], "as") {
			return
		}
		j++
		for j < len(toks) && (isWord(toks[j], "not") || isWord(toks[j], "materialized")) {
			j++
		}
		if j >= len(toks) || !isPunct(toks[j], "(") {
			return
		}
		j = p.match[j]
		c.from = j
		if recursive {
			c.from = c.def
		}
		p.ctes = append(p.ctes, c)
		j++
		if j >= len(toks) || !isPunct(toks[j], ",") {
			return
		}
		j++
	}
}

// sameName reports whether the allowed table name a is the name read as
// token text n: the same string in PostgreSQL (n is folded as PostgreSQL
// folds it), the same but for ASCII case in SQLite.
func (p *query) sameName(a, n string) bool {
	if p.dialect == "sqlite" {
		return foldASCII(a) == n
	}
	return a == n
}

// isCTE reports whether the name at toks[i] is a common table expression.
func (p *query) isCTE(i int) bool {
	return slices.ContainsFunc(p.ctes, func(c cte) bool { return c.name == p.toks[i].text && c.from < i && i < c.to })
}

// checkTables refuses table references outside allowed (and the query's
// own common table expressions), schema-qualified names and table
// functions, in every FROM clause: after FROM, each comma and each JOIN,
// inside parenthesised joins, and in subqueries (each has its own FROM).
func (p *query) checkTables(allowed []string) error {
	for i, t := range p.toks {
		if t.kind != tokWord || (t.text != "from" && t.text != "join") {
			continue
		}
		if o := p.outer[i]; o > 0 && p.toks[o-1].kind == tokWord && fromFuncs[p.toks[o-1].text] {
			continue // EXTRACT(YEAR FROM d) and friends
		}
		if i >= 2 && isWord(p.toks[i-1], "distinct") && (isWord(p.toks[i-2], "is") || isWord(p.toks[i-2], "not")) {
			continue // a IS [NOT] DISTINCT FROM b
		}
		if err := p.fromList(i, allowed); err != nil {
			return err
		}
	}
	if p.dialect != "sqlite" {
		return nil
	}
	// SQLite's expr IN table-name reads the table.
	for i, t := range p.toks {
		if isWord(t, "in") && isName(tokAt(p.toks, i+1)) {
			if _, err := p.tableRef(i+1, "IN", allowed); err != nil {
				return err
			}
		}
	}
	return nil
}

// ends returns the words that end a FROM clause in the query's dialect.
func (p *query) ends() map[string]bool {
	if p.dialect == "sqlite" {
		return sqliteClauseEnds
	}
	return clauseEnds
}

// fromList checks the table references of the FROM clause whose keyword
// (FROM, JOIN, or the "(" of a parenthesised join) is toks[k], up to the
// end of the clause.
func (p *query) fromList(k int, allowed []string) error {
	toks := p.toks
	kw := strings.ToUpper(toks[k].text)
	expect := true
	for j := k + 1; j < len(toks); j++ {
		t := toks[j]
		if expect {
			expect = false
			var err error
			if j, err = p.tableRef(j, kw, allowed); err != nil {
				return err
			}
			continue
		}
		switch {
		case isPunct(t, "("):
			j = p.match[j]
		case isPunct(t, "["):
			for depth := 1; depth > 0 && j+1 < len(toks); {
				j++
				if isPunct(toks[j], "[") {
					depth++
				} else if isPunct(toks[j], "]") {
					depth--
				}
			}
		case isPunct(t, ")"):
			return nil // the end of the parentheses around the clause
		case isPunct(t, ","):
			expect, kw = true, ","
		case t.kind == tokWord && !isPunct(toks[j-1], "."):
			if t.text == "join" {
				expect, kw = true, "JOIN"
			} else if p.ends()[t.text] && t.text != "on" && t.text != "using" {
				return nil
			}
		}
	}
	return nil
}

// tableRef checks the table reference at toks[j] (after kw) and returns
// the index of its last token: [LATERAL|ONLY] name [[AS] alias [(cols)]],
// or a subquery or parenthesised join in place of name.
func (p *query) tableRef(j int, kw string, allowed []string) (int, error) {
	toks := p.toks
	for j < len(toks) && (isWord(toks[j], "lateral") || isWord(toks[j], "only")) {
		j++
	}
	if j >= len(toks) {
		return j, fmt.Errorf("%w: expected a table name after %s", ErrRefused, kw)
	}
	switch {
	case isPunct(toks[j], "("):
		if n := tokAt(toks, j+1); !isWord(n, "select") && !isWord(n, "with") && !isWord(n, "values") {
			// A parenthesised join: its tables are a FROM list of their own.
			if err := p.fromList(j, allowed); err != nil {
				return j, err
			}
		} // else a subquery: its own FROM is checked on its own.
		j = p.match[j]
	case isName(toks[j]):
		name := toks[j].text
		if n := tokAt(toks, j+1); isPunct(n, ".") {
			return j, fmt.Errorf("%w: schema-qualified names such as %s.%s are not allowed; name the table alone", ErrRefused, name, tokAt(toks, j+2).text)
		} else if isPunct(n, "(") {
			return j, fmt.Errorf("%w: table functions such as %s(…) are not allowed; read tables", ErrRefused, name)
		}
		if !p.isCTE(j) && allowed != nil && !slices.ContainsFunc(allowed, func(a string) bool { return p.sameName(a, name) }) {
			if len(allowed) == 0 {
				return j, fmt.Errorf("%w: table %s is not allowed; no table may be read", ErrRefused, name)
			}
			return j, fmt.Errorf("%w: table %s is not allowed; the tables are %s", ErrRefused, name, strings.Join(allowed, ", "))
		}
	default:
		return j, fmt.Errorf("%w: expected a table name after %s, found %q", ErrRefused, kw, toks[j].text)
	}
	// The alias, and its column list.
	if n := tokAt(toks, j+1); isWord(n, "as") && isName(tokAt(toks, j+2)) {
		j += 2
	} else if isName(n) && (n.kind == tokQuoted || !p.ends()[n.text] && !callKeywords[n.text] &&
		!slices.Contains([]string{"inner", "left", "right", "full", "cross", "natural", "outer"}, n.text)) {
		j++
	} else {
		return j, nil
	}
	if isPunct(tokAt(toks, j+1), "(") {
		j = p.match[j+1]
	}
	return j, nil
}

// checkCalls refuses calls of functions outside the dialect's allowedFuncs. A name right
// before "(" is a call unless it is a keyword (IN (…), OVER (…)), a CTE's
// name, a type (x::numeric(10,2), CAST(x AS varchar(9))) or an alias's
// column list (AS t(a, b), (VALUES …) v(a, b)).
func (p *query) checkCalls() error {
	toks := p.toks
	for i := 0; i+1 < len(toks); i++ {
		t := toks[i]
		if !isName(t) || !isPunct(toks[i+1], "(") {
			continue
		}
		if i > 0 && isPunct(toks[i-1], ".") {
			return fmt.Errorf("%w: schema-qualified function calls such as %s.%s(…) are not allowed; call the function by its name alone", ErrRefused, toks[i-2].text, t.text)
		}
		if allowedFuncs[p.dialect][t.text] {
			continue
		}
		if t.kind == tokWord && p.keywordBeforeParen(i) || slices.ContainsFunc(p.ctes, func(c cte) bool { return c.def == i }) {
			continue
		}
		if i > 0 && (isWord(toks[i-1], "as") || isPunct(toks[i-1], ")")) || i > 1 && isPunct(toks[i-1], ":") && isPunct(toks[i-2], ":") {
			continue
		}
		return fmt.Errorf("%w: the function %s is not allowed; use aggregates, window functions and common date, string and math functions (such as count, sum, round, lower, coalesce, date_trunc, strftime)", ErrRefused, t.text)
	}
	return nil
}

// keywordBeforeParen reports whether the word at toks[i], before "(", is
// a keyword there rather than a function's name.
func (p *query) keywordBeforeParen(i int) bool {
	w, prev := p.toks[i].text, token{kind: tokPunct}
	if i > 0 {
		prev = p.toks[i-1]
	}
	switch w {
	case "over", "filter", "within":
		return isPunct(prev, ")")
	case "partition":
		return isPunct(prev, "(")
	case "rollup", "cube":
		return p.dialect == "postgres" && p.inGroupBy(i) // SQLite has no ROLLUP or CUBE
	case "sets":
		return p.dialect == "postgres" && isWord(prev, "grouping")
	case "materialized":
		return p.dialect == "postgres" && (isWord(prev, "as") || isWord(prev, "not")) // WITH x AS [NOT] MATERIALIZED (…)
	case "ilike":
		// a [NOT] ILIKE (…): an operator after an expression; ILIKE (…)
		// elsewhere calls a function.
		if isWord(prev, "not") && i > 1 {
			prev = p.toks[i-2]
		}
		return p.dialect == "postgres" && p.endsExpr(prev)
	}
	return callKeywords[w]
}

// endsExpr reports whether t can be the last token of an expression: a
// literal, a name that is no keyword, ")" or "]".
func (p *query) endsExpr(t token) bool {
	switch t.kind {
	case tokString, tokNumber, tokQuoted:
		return true
	case tokWord:
		return !callKeywords[t.text] && !p.ends()[t.text] && t.text != "not"
	}
	return isPunct(t, ")") || isPunct(t, "]")
}

// inGroupBy reports whether toks[i] is an element of a GROUP BY clause,
// directly (GROUP BY a, ROLLUP (b), GROUP BY DISTINCT CUBE (a)) or inside
// GROUPING SETS, ROLLUP or CUBE.
func (p *query) inGroupBy(i int) bool {
	toks := p.toks
	for j := i - 1; j >= 0; j-- {
		t := toks[j]
		switch {
		case isPunct(t, ")"):
			j = p.match[j]
		case isPunct(t, "("):
			if in := tokAt(toks, max(j-1, 0)); j == 0 || !isWord(in, "sets") && !isWord(in, "rollup") && !isWord(in, "cube") {
				return false
			}
		case isWord(t, "by"):
			return j > 0 && isWord(toks[j-1], "group")
		case t.kind == tokWord && (t.text == "select" || p.ends()[t.text] || t.text == "from" || t.text == "join"):
			return false
		}
	}
	return false
}

func isName(t token) bool { return t.kind == tokWord || t.kind == tokQuoted }

func isWord(t token, w string) bool { return t.kind == tokWord && t.text == w }

func isPunct(t token, p string) bool { return t.kind == tokPunct && t.text == p }

// tokAt returns toks[i], or the zero token past the end.
func tokAt(toks []token, i int) token {
	if i < len(toks) {
		return toks[i]
	}
	return token{kind: tokPunct}
}
