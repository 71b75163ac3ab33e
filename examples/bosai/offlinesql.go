package bosai

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file is the offline model's SQL writer, for demos and tests only: a
// few rules that turn a question into SQL over whatever schema the prompt
// shows (tables, columns, foreign keys and the values of small text
// columns). It understands counts, sums, averages, revenue (quantity times
// unit price), grouping ("by", "per", "each", "which … most"), filters on
// known values, date ranges (a month, a quarter, a year, "between A and
// B"), top-N and lists. It is no language model: questions outside those
// shapes get the table overview.

type demoColumn struct {
	table, name, typ, ref string
	values                []string
}

type demoTable struct {
	name string
	cols []demoColumn
	rows int
}

type demoSchema struct {
	dialect string
	tables  []demoTable
}

var schemaLine = regexp.MustCompile(`^- (\w+)\((.*)\) (\d+) rows$`)

// parseDemoSchema reads dbserver.FormatSchema's text.
func parseDemoSchema(dialect, text string) demoSchema {
	sc := demoSchema{dialect: strings.TrimSpace(dialect)}
	for _, line := range strings.Split(text, "\n") {
		m := schemaLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		t := demoTable{name: m[1]}
		t.rows, _ = strconv.Atoi(m[3])
		for _, c := range strings.Split(m[2], ", ") {
			col := demoColumn{table: t.name}
			c, vals, _ := strings.Cut(c, " values: ")
			if vals != "" {
				col.values = strings.Split(vals, "|")
			}
			c, col.ref, _ = strings.Cut(c, " -> ")
			col.name, col.typ, _ = strings.Cut(c, " ")
			t.cols = append(t.cols, col)
		}
		sc.tables = append(sc.tables, t)
	}
	return sc
}

func (c demoColumn) numeric() bool {
	return strings.Contains(c.typ, "INT") || strings.Contains(c.typ, "REAL") || strings.Contains(c.typ, "NUMERIC") ||
		strings.Contains(c.typ, "DOUBLE") || strings.Contains(c.typ, "DECIMAL")
}
func (c demoColumn) date() bool {
	return strings.Contains(c.typ, "DATE") || strings.HasSuffix(c.name, "_date")
}
func (c demoColumn) qual() string { return c.table + "." + c.name }

func (sc demoSchema) table(name string) *demoTable {
	for i := range sc.tables {
		if sc.tables[i].name == name {
			return &sc.tables[i]
		}
	}
	return nil
}

// singular strips a plural ending.
func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// tableFor returns the table a word names: "customers", "customer",
// "items" (order_items), or nil.
func (sc demoSchema) tableFor(w string) *demoTable {
	w = singular(w)
	for i, t := range sc.tables {
		if singular(t.name) == w {
			return &sc.tables[i]
		}
	}
	for i, t := range sc.tables {
		parts := strings.Split(t.name, "_")
		if singular(parts[len(parts)-1]) == w && len(parts) > 1 {
			return &sc.tables[i]
		}
	}
	return nil
}

// columnFor returns the non-key column a word names, preferring table
// hint's.
func (sc demoSchema) columnFor(w string, hint *demoTable) *demoColumn {
	var found *demoColumn
	for ti := range sc.tables {
		for ci := range sc.tables[ti].cols {
			c := &sc.tables[ti].cols[ci]
			if c.name == "id" || c.ref != "" {
				continue
			}
			if c.name == w || singular(c.name) == singular(w) {
				if hint != nil && c.table == hint.name {
					return c
				}
				if found == nil {
					found = c
				}
			}
		}
	}
	return found
}

// label is the column that names a table's rows: name, title, or its first
// text column.
func (t *demoTable) label() demoColumn {
	for _, n := range []string{"name", "title"} {
		for _, c := range t.cols {
			if c.name == n {
				return c
			}
		}
	}
	for _, c := range t.cols {
		if strings.Contains(c.typ, "TEXT") || strings.Contains(c.typ, "CHAR") {
			return c
		}
	}
	return t.cols[0]
}

// joinPath returns the JOIN clauses from base to every table in need,
// following foreign keys in either direction (breadth first).
func (sc demoSchema) joinPath(base string, need []string) ([]string, []string, bool) {
	type edge struct{ from, to, on string }
	var edges []edge
	for _, t := range sc.tables {
		for _, c := range t.cols {
			if c.ref == "" {
				continue
			}
			rt, rc, _ := strings.Cut(c.ref, ".")
			on := c.qual() + " = " + rt + "." + rc
			edges = append(edges, edge{t.name, rt, on}, edge{rt, t.name, on})
		}
	}
	joined := []string{base}
	var clauses []string
	for _, target := range need {
		if slices.Contains(joined, target) {
			continue
		}
		prev := map[string]edge{}
		queue := []string{base}
		seen := map[string]bool{base: true}
		for len(queue) > 0 && !seen[target] {
			cur := queue[0]
			queue = queue[1:]
			for _, e := range edges {
				if e.from == cur && !seen[e.to] {
					seen[e.to] = true
					prev[e.to] = e
					queue = append(queue, e.to)
				}
			}
		}
		if !seen[target] {
			return nil, nil, false
		}
		var path []edge
		for t := target; t != base; t = prev[t].from {
			path = append([]edge{prev[t]}, path...)
		}
		for _, e := range path {
			if !slices.Contains(joined, e.to) {
				joined = append(joined, e.to)
				clauses = append(clauses, "JOIN "+e.to+" ON "+e.on)
			}
		}
	}
	return clauses, joined, true
}

var (
	months = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	isoDay = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})\b`)
	yearRe = regexp.MustCompile(`\b(19|20)\d{2}\b`)
	topRe  = regexp.MustCompile(`\b(?:top|first|best)\s+(\d+)\b|\b(\d+)\s+(?:most|least|best|biggest|largest|highest|lowest|cheapest)\b`)
)

// demoMetric is the aggregate a question asks for.
type demoMetric struct {
	expr, alias, table string
}

// offlineSQL writes a query for q over the schema, or explains why not.
func offlineSQL(q, dialect, schemaText string) sqlQuery {
	sc := parseDemoSchema(dialect, schemaText)
	if len(sc.tables) == 0 {
		return sqlQuery{Explanation: "the prompt shows no schema"}
	}
	low := strings.ToLower(q)
	words := tokens(q)
	has := func(ws ...string) bool {
		for _, w := range ws {
			if slices.Contains(words, w) {
				return true
			}
		}
		return false
	}
	if has("tables", "table") && has("list", "which", "what", "show", "all") && !has("rows") {
		return overview(sc, "lists the tables of the database with their row counts")
	}

	// The entity: the table named after "how many"/"number of", else the
	// first table named.
	var entity *demoTable
	countAsked := strings.Contains(low, "how many") || strings.Contains(low, "number of") || has("count")
	for i, w := range words {
		if t := sc.tableFor(w); t != nil {
			if entity == nil || (countAsked && i > 0 && (words[i-1] == "many" || words[i-1] == "of")) {
				entity = t
			}
		}
	}

	// The metric.
	var metric *demoMetric
	round := func(e string) string { return "ROUND(" + e + ", 2)" }
	if has("revenue", "sales", "spend", "spent", "spending", "income", "turnover", "earned", "earnings") {
		if qty, price := findRevenue(sc); qty != nil {
			metric = &demoMetric{round("SUM(" + qty.qual() + " * " + price.qual() + ")"), "revenue", qty.table}
		}
	}
	if metric == nil && has("average", "avg", "mean") {
		for i, w := range words {
			if w != "average" && w != "avg" && w != "mean" {
				continue
			}
			for _, n := range words[i+1:] {
				if c := sc.columnFor(n, entity); c != nil && c.numeric() {
					metric = &demoMetric{round("AVG(" + c.qual() + ")"), "average_" + c.name, c.table}
					break
				}
			}
		}
	}
	if metric == nil && has("total", "sum") || metric == nil && has("sold") {
		for _, w := range words {
			if c := sc.columnFor(w, nil); c != nil && c.numeric() {
				metric = &demoMetric{"SUM(" + c.qual() + ")", "total_" + c.name, c.table}
				break
			}
		}
	}
	if metric == nil && countAsked && entity != nil {
		metric = &demoMetric{"COUNT(*)", "count", entity.name}
	}
	if metric == nil && entity != nil && has("most", "fewest", "least") {
		// "which country has the most customers": count per named column.
		for _, w := range words {
			if c := sc.columnFor(w, entity); c != nil && !c.numeric() && !c.date() && c.table == entity.name {
				metric = &demoMetric{"COUNT(*)", "count", entity.name}
				break
			}
		}
	}

	// The grouping: "by/per/each X" naming a column, a table or a period.
	var group []demoColumn
	var groupExpr, groupAlias string
	var topByColumn *demoColumn
	for i, w := range words {
		if w != "by" && w != "per" && w != "each" && w != "every" {
			continue
		}
		rest := words[i+1:]
		if len(rest) > 0 && rest[0] == "each" {
			rest = rest[1:]
		}
		if len(rest) > 3 {
			rest = rest[:3]
		}
		if len(rest) > 0 && (rest[0] == "month" || rest[0] == "year" || rest[0] == "day") {
			groupAlias = rest[0]
			break
		}
		var hint *demoTable
		for _, n := range rest {
			if t := sc.tableFor(n); t != nil {
				hint = t
			}
		}
		done := false
		for _, n := range rest {
			if c := sc.columnFor(n, hint); c != nil {
				if c.numeric() {
					topByColumn = c
				} else {
					group = []demoColumn{*c}
				}
				done = true
				break
			}
		}
		if !done && hint != nil && (metric == nil || hint.name != metric.table || metric.expr != "COUNT(*)") {
			group = []demoColumn{hint.label()}
		}
		if done || hint != nil {
			break
		}
	}
	if has("monthly") {
		groupAlias = "month"
	}
	if topByColumn != nil && (metric == nil || metric.expr == "COUNT(*)") {
		metric = &demoMetric{"SUM(" + topByColumn.qual() + ")", "total_" + topByColumn.name, topByColumn.table}
	}

	// Top-N and superlatives.
	limit, desc := 0, true
	if m := topRe.FindStringSubmatch(low); m != nil {
		limit, _ = strconv.Atoi(m[1] + m[2])
	} else if has("top") {
		limit = 5
	}
	super := has("most", "highest", "largest", "biggest", "best", "least", "lowest", "fewest", "cheapest", "expensive", "top")
	if has("least", "lowest", "fewest", "cheapest", "worst") {
		desc = false
	}
	if super && limit == 0 {
		// "which country …", "who …": one answer.
		for i, w := range words {
			if w == "who" || (w == "which" || w == "what") && i+1 < len(words) && words[i+1] == singular(words[i+1]) && words[i+1] != "is" && words[i+1] != "are" && words[i+1] != "was" {
				limit = 1
				break
			}
		}
	}
	if super && len(group) == 0 && groupAlias == "" && metric != nil && entity != nil && entity.name != metric.table {
		// "the top 5 customers by spend": group by the entity.
		group = []demoColumn{entity.label()}
	}
	if super && len(group) == 0 && groupAlias == "" && metric != nil && metric.expr == "COUNT(*)" {
		// "which country has the most customers": group by the named column.
		for _, w := range words {
			if c := sc.columnFor(w, entity); c != nil && !c.numeric() && !c.date() {
				group = []demoColumn{*c}
				break
			}
		}
	}

	// Filters: known values, date ranges.
	var where []string
	var need []string
	for _, t := range sc.tables {
		for _, c := range t.cols {
			for _, v := range c.values {
				if slices.Contains(words, strings.ToLower(v)) || len(strings.Fields(v)) > 1 && strings.Contains(low, strings.ToLower(v)) {
					where = append(where, c.qual()+" = '"+strings.ReplaceAll(v, "'", "''")+"'")
					need = append(need, c.table)
				}
			}
		}
	}
	dateCol := pickDate(sc, entity, metric)
	if dateCol != nil {
		if cond := dateRange(low, words, dateCol.qual()); cond != "" {
			where = append(where, cond)
			need = append(need, dateCol.table)
		}
	}
	if groupAlias != "" {
		if dateCol == nil {
			return sqlQuery{Explanation: "no date column to group by " + groupAlias}
		}
		groupExpr = periodExpr(sc.dialect, groupAlias, dateCol.qual())
		need = append(need, dateCol.table)
	}

	// Assemble.
	base := ""
	switch {
	case metric != nil:
		base = metric.table
	case entity != nil:
		base = entity.name
	default:
		return overview(sc, "the question names no table; here is what the database holds")
	}
	if entity != nil {
		need = append(need, entity.name)
	}
	for _, c := range group {
		need = append(need, c.table)
	}
	joins, joined, ok := sc.joinPath(base, need)
	if !ok {
		return sqlQuery{Explanation: "the tables the question needs are not joined by foreign keys"}
	}
	if metric != nil && metric.expr == "COUNT(*)" && len(joined) > 1 {
		metric.expr = "COUNT(DISTINCT " + metric.table + ".id)"
	}
	var sel, groupBy []string
	switch {
	case groupExpr != "":
		sel = append(sel, groupExpr+" AS "+groupAlias)
		groupBy = append(groupBy, groupExpr)
	case len(group) > 0:
		for _, c := range group {
			sel = append(sel, c.qual()+" AS "+c.name)
			groupBy = append(groupBy, c.qual())
		}
		if t := sc.table(group[0].table); t != nil && group[0].name == t.label().name && t.label().name != "" {
			groupBy = append(groupBy, t.name+".id")
		}
	}
	var order string
	if metric != nil {
		sel = append(sel, metric.expr+" AS "+metric.alias)
		if len(groupBy) > 0 {
			dir := " DESC"
			if !desc {
				dir = " ASC"
			}
			if super || limit > 0 {
				order = metric.alias + dir + ", " + groupBy[0]
			} else {
				order = groupBy[0]
			}
		}
	} else {
		// A list of the entity's rows.
		for _, c := range entity.cols {
			if c.ref == "" && c.name != "id" {
				sel = append(sel, c.qual())
			}
		}
		order = entity.name + ".id"
		if super {
			for _, w := range words {
				c := sc.columnFor(w, entity)
				if w == "expensive" || w == "cheapest" || w == "cheap" {
					c = sc.columnFor("price", entity)
				}
				if c != nil && c.numeric() {
					dir := " DESC"
					if !desc {
						dir = " ASC"
					}
					order = c.qual() + dir + ", " + entity.name + ".id"
					break
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("SELECT " + strings.Join(sel, ", ") + " FROM " + base)
	for _, j := range joins {
		b.WriteString(" " + j)
	}
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	if len(groupBy) > 0 && metric != nil {
		b.WriteString(" GROUP BY " + strings.Join(groupBy, ", "))
	}
	if order != "" {
		b.WriteString(" ORDER BY " + order)
	}
	if limit > 0 {
		b.WriteString(" LIMIT " + strconv.Itoa(limit))
	}
	return sqlQuery{Query: b.String(), Explanation: "demo rules: " + explainShape(metric, group, groupAlias, where, limit)}
}

func explainShape(m *demoMetric, group []demoColumn, period string, where []string, limit int) string {
	var parts []string
	if m != nil {
		parts = append(parts, m.alias)
	} else {
		parts = append(parts, "rows")
	}
	if len(group) > 0 {
		parts = append(parts, "by "+group[0].qual())
	}
	if period != "" {
		parts = append(parts, "by "+period)
	}
	if len(where) > 0 {
		parts = append(parts, "where "+strings.Join(where, " and "))
	}
	if limit > 0 {
		parts = append(parts, fmt.Sprintf("top %d", limit))
	}
	return strings.Join(parts, ", ")
}

// overview lists the tables and their row counts, from the schema.
func overview(sc demoSchema, why string) sqlQuery {
	var parts []string
	for _, t := range sc.tables {
		parts = append(parts, fmt.Sprintf("SELECT '%s' AS table_name, %d AS row_count", t.name, t.rows))
	}
	return sqlQuery{Query: strings.Join(parts, " UNION ALL "), Explanation: "demo rules: " + why}
}

// findRevenue finds a quantity column and a price column in one table.
func findRevenue(sc demoSchema) (qty, price *demoColumn) {
	for ti := range sc.tables {
		var q, p *demoColumn
		for ci := range sc.tables[ti].cols {
			c := &sc.tables[ti].cols[ci]
			switch {
			case c.name == "quantity" || c.name == "qty":
				q = c
			case strings.Contains(c.name, "price") || c.name == "amount":
				p = c
			}
		}
		if q != nil && p != nil {
			return q, p
		}
	}
	return nil, nil
}

// pickDate chooses the date column a date filter applies to: the entity's,
// else one reachable from the metric's table (orders' date for order
// items).
func pickDate(sc demoSchema, entity *demoTable, m *demoMetric) *demoColumn {
	try := func(name string) *demoColumn {
		if t := sc.table(name); t != nil {
			for i := range t.cols {
				if t.cols[i].date() {
					return &t.cols[i]
				}
			}
		}
		return nil
	}
	if m != nil {
		if c := try(m.table); c != nil {
			return c
		}
		if t := sc.table(m.table); t != nil {
			for _, c := range t.cols {
				if c.ref != "" {
					rt, _, _ := strings.Cut(c.ref, ".")
					if d := try(rt); d != nil && (entity == nil || rt != "customers" || entity.name == rt) {
						return d
					}
				}
			}
		}
	}
	if entity != nil {
		if c := try(entity.name); c != nil {
			return c
		}
	}
	return nil
}

// dateRange turns "in March 2024", "in Q2 2024", "in 2024" or "between
// 2024-01-01 and 2024-03-31" into a condition on col.
func dateRange(low string, words []string, col string) string {
	if d := isoDay.FindAllString(low, 2); len(d) == 2 {
		return fmt.Sprintf("%s >= '%s' AND %s <= '%s'", col, d[0], col, d[1])
	}
	year := yearRe.FindString(low)
	for i, m := range months {
		if slices.Contains(words, m) && year != "" {
			y, _ := strconv.Atoi(year)
			ny, nm := y, i+2
			if nm == 13 {
				ny, nm = y+1, 1
			}
			return fmt.Sprintf("%s >= '%s-%02d-01' AND %s < '%d-%02d-01'", col, year, i+1, col, ny, nm)
		}
	}
	for q := 1; q <= 4; q++ {
		if slices.Contains(words, fmt.Sprintf("q%d", q)) && year != "" {
			y, _ := strconv.Atoi(year)
			start, end := fmt.Sprintf("%d-%02d-01", y, 3*q-2), fmt.Sprintf("%d-%02d-01", y, 3*q+1)
			if q == 4 {
				end = fmt.Sprintf("%d-01-01", y+1)
			}
			return fmt.Sprintf("%s >= '%s' AND %s < '%s'", col, start, col, end)
		}
	}
	if year != "" {
		y, _ := strconv.Atoi(year)
		return fmt.Sprintf("%s >= '%d-01-01' AND %s < '%d-01-01'", col, y, col, y+1)
	}
	return ""
}

func periodExpr(dialect, period, col string) string {
	if dialect == "sqlite" {
		f := map[string]string{"month": "%Y-%m", "year": "%Y", "day": "%Y-%m-%d"}[period]
		return "strftime('" + f + "', " + col + ")"
	}
	f := map[string]string{"month": "YYYY-MM", "year": "YYYY", "day": "YYYY-MM-DD"}[period]
	return "to_char(" + col + ", '" + f + "')"
}
