package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/internal/itemkey"
	"github.com/agentgraph/agentgraph/memory/internal/itemsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Items is a [memory.Items] in PostgreSQL: long-term memory records in the
// table memory_items (value as jsonb), keyed by namespace and key, whose
// migrations are recorded in memory_item_migrations. Filters and text
// queries run in SQL. It is safe for concurrent use.
type Items struct {
	pool   *pgxpool.Pool
	owned  bool
	schema string
	table  string
	log    *zap.Logger
	now    func() time.Time
}

var _ memory.Items = (*Items)(nil)

// itemMigrations are applied in order, once each; version i+1 is
// itemMigrations[i]. Never edit a released migration; append a new one.
// {items} stands for the schema-qualified table name. Namespaces and keys
// compare bytewise (COLLATE "C"), the order every store uses.
var itemMigrations = []string{
	`CREATE TABLE {items} (
		ns      TEXT COLLATE "C" NOT NULL,
		key     TEXT COLLATE "C" NOT NULL,
		value   JSONB NOT NULL,
		created TIMESTAMPTZ NOT NULL,
		updated TIMESTAMPTZ NOT NULL,
		ttl     BIGINT NOT NULL DEFAULT 0,
		expires TIMESTAMPTZ,
		PRIMARY KEY (ns, key)
	);
	CREATE INDEX ON {items} (expires) WHERE expires IS NOT NULL`,
}

// NewItems connects (when cfg.DSN is used) and migrates (unless
// cfg.SkipMigrate), and returns the item store. cfg.Now is its clock.
func NewItems(ctx context.Context, cfg Config) (*Items, error) {
	s := &Items{schema: cfg.Schema, table: pgdb.Table(cfg.Schema, "memory_items"), log: cfg.Logger, now: cfg.Now}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.pool, s.owned, err = pgdb.Setup(ctx, cfg.Pool, cfg.DSN, s.migrations(), !cfg.SkipMigrate); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the pool if Items opened it from Config.DSN.
func (s *Items) Close() {
	if s.owned {
		s.pool.Close()
	}
}

// Migrate creates the table or brings it up to date; see [Store.Migrate].
func (s *Items) Migrate(ctx context.Context) error {
	return pgdb.Migrate(ctx, s.pool, s.migrations())
}

func (s *Items) migrations() pgdb.Migrations {
	return pgdb.Migrations{
		Schema:   s.schema,
		Table:    "memory_item_migrations",
		Lock:     "agentgraph/memory/postgres/items",
		Steps:    itemMigrations,
		Replacer: strings.NewReplacer("{items}", s.table),
		Logger:   s.log,
		Message:  "postgres: applied item migration",
	}
}

// clock returns the current time at the microsecond precision the table
// keeps.
func (s *Items) clock() time.Time { return s.now().Truncate(time.Microsecond) }

func expiry(now time.Time, ttl time.Duration) *time.Time {
	if ttl <= 0 {
		return nil
	}
	e := now.Add(ttl).Truncate(time.Microsecond)
	return &e
}

// Put implements [memory.Items].
func (s *Items) Put(ctx context.Context, r memory.Record) error {
	val, err := memory.CheckRecord(r)
	if err != nil {
		return err
	}
	now := s.clock()
	_, err = s.pool.Exec(ctx, `INSERT INTO `+s.table+` AS i (ns, key, value, created, updated, ttl, expires)
		VALUES ($1, $2, $3::jsonb, $4, $4, $5, $6)
		ON CONFLICT (ns, key) DO UPDATE SET
			value = EXCLUDED.value, updated = EXCLUDED.updated, ttl = EXCLUDED.ttl, expires = EXCLUDED.expires,
			created = CASE WHEN i.expires <= EXCLUDED.updated THEN EXCLUDED.created ELSE i.created END`,
		itemkey.Encode(r.Namespace), r.Key, string(val), now, int64(r.TTL), expiry(now, r.TTL))
	if err != nil {
		return fmt.Errorf("postgres: put %q: %w", r.Key, err)
	}
	return nil
}

const itemColumns = `ns, key, value::text, created, updated, ttl, expires`

func scanItem(row pgx.Row) (memory.Record, error) {
	var (
		r       memory.Record
		ns, val string
		ttl     int64
		expires *time.Time
	)
	if err := row.Scan(&ns, &r.Key, &val, &r.Created, &r.Updated, &ttl, &expires); err != nil {
		return r, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(val)); err != nil {
		return r, fmt.Errorf("stored value is not JSON: %w", err)
	}
	r.Namespace, r.Value, r.TTL = itemkey.Decode(ns), b.Bytes(), time.Duration(ttl)
	if expires != nil {
		r.Expires = *expires
	}
	return r, nil
}

// Get implements [memory.Items].
func (s *Items) Get(ctx context.Context, namespace []string, key string, refreshTTL bool) (memory.Record, error) {
	if err := memory.CheckKey(namespace, key); err != nil {
		return memory.Record{}, err
	}
	now := s.clock()
	ns := itemkey.Encode(namespace)
	var row pgx.Row
	if refreshTTL {
		row = s.pool.QueryRow(ctx, `UPDATE `+s.table+`
			SET expires = CASE WHEN ttl > 0 THEN $3 + (ttl / 1000) * interval '1 microsecond' END
			WHERE ns = $1 AND key = $2 AND (expires IS NULL OR expires > $3)
			RETURNING `+itemColumns, ns, key, now)
	} else {
		row = s.pool.QueryRow(ctx, `SELECT `+itemColumns+` FROM `+s.table+`
			WHERE ns = $1 AND key = $2 AND (expires IS NULL OR expires > $3)`, ns, key, now)
	}
	r, err := scanItem(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.Record{}, memory.NotFound(namespace, key)
	}
	if err != nil {
		return memory.Record{}, fmt.Errorf("postgres: get %q: %w", key, err)
	}
	return r, nil
}

// Delete implements [memory.Items].
func (s *Items) Delete(ctx context.Context, namespace []string, key string) error {
	if err := memory.CheckKey(namespace, key); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE ns = $1 AND key = $2`, itemkey.Encode(namespace), key); err != nil {
		return fmt.Errorf("postgres: delete %q: %w", key, err)
	}
	return nil
}

// DeleteExpired removes the records that have expired and returns how
// many. Expired records are invisible anyway; this frees their space.
func (s *Items) DeleteExpired(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE expires <= $1`, s.clock())
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired items: %w", err)
	}
	return tag.RowsAffected(), nil
}

// query builds a statement and its arguments.
type query struct {
	b    strings.Builder
	args []any
}

// arg adds v to the arguments and returns its placeholder.
func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return "$" + strconv.Itoa(len(q.args))
}

// live adds the conditions shared by Search and Namespaces: live records
// under the encoded prefix.
func (q *query) live(prefix string, now time.Time) {
	q.b.WriteString(`(expires IS NULL OR expires > ` + q.arg(now) + `)`)
	if prefix != "" {
		q.b.WriteString(` AND ns >= ` + q.arg(prefix) + ` AND ns < ` + q.arg(itemkey.End(prefix)))
	}
}

// condition writes one filter condition on the value column; it is never
// NULL.
func (q *query) condition(c memory.Condition) string {
	if c.Op == memory.OpNe {
		return "NOT " + q.condition(memory.Condition{Field: c.Field, Op: memory.OpEq, Value: c.Value})
	}
	switch c.Value.(type) {
	case nil, bool:
		if c.Op != memory.OpEq {
			return "false" // null and booleans are not ordered
		}
	}
	f := q.arg(c.Field)
	switch v := c.Value.(type) {
	case nil:
		return `COALESCE(jsonb_typeof(value -> ` + f + `) = 'null', false)`
	case bool:
		return `COALESCE(value -> ` + f + ` = to_jsonb(` + q.arg(v) + `::boolean), false)`
	case float64:
		// As a float64 on both sides, as every store compares: the stored
		// number is read as its nearest float8 (a numeric compared
		// exactly with v's shortest digits found other items than the
		// memory and SQLite stores). A stored number beyond a float8's
		// range, which puts refuse (jsonnum.Bad) but an older item may
		// hold, is compared as a numeric instead of failing the query:
		// float8 holds the numbers below 2^1024-2^970 in magnitude (from
		// there they round to infinity) and above 2^-1075 (at or below
		// it they round to zero), which PostgreSQL folds into constants.
		n := q.arg(strconv.FormatFloat(v, 'g', -1, 64))
		num := `(value ->> ` + f + `)::numeric`
		return `CASE WHEN jsonb_typeof(value -> ` + f + `) = 'number' THEN (CASE` +
			` WHEN abs(` + num + `) < power(2::numeric, 1024) - power(2::numeric, 970)` +
			` AND (` + num + ` = 0 OR abs(` + num + `) * power(2::numeric, 1075) > 1)` +
			` THEN (value ->> ` + f + `)::float8 ` + itemsql.Op(c.Op) + ` ` + n + `::float8` +
			` ELSE ` + num + ` ` + itemsql.Op(c.Op) + ` ` + n + `::numeric END) ELSE false END`
	case string:
		return `CASE WHEN jsonb_typeof(value -> ` + f + `) = 'string' THEN (value ->> ` + f + `) COLLATE "C" ` + itemsql.Op(c.Op) + ` ` + q.arg(v) + `::text ELSE false END`
	}
	return "false"
}

// Search implements [memory.Items].
func (s *Items) Search(ctx context.Context, iq memory.ItemQuery) ([]memory.Record, error) {
	iq, conds, err := memory.CheckItemQuery(iq)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	var q query
	q.b.WriteString(`SELECT ` + itemColumns + ` FROM ` + s.table + ` WHERE `)
	q.live(itemkey.Encode(iq.Prefix), now)
	for _, c := range conds {
		q.b.WriteString(" AND " + q.condition(c))
	}
	for _, term := range memory.QueryTerms(iq.Query) {
		q.b.WriteString(` AND strpos(translate(value::text, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), ` + q.arg(term) + `) > 0`)
	}
	q.b.WriteString(` ORDER BY ns, key LIMIT ` + q.arg(iq.Limit) + ` OFFSET ` + q.arg(iq.Offset))
	sql := q.b.String()
	if iq.RefreshTTL {
		// Refresh the rows found, in the same statement, and return them
		// in order.
		sql = `WITH found AS (` + sql + `), touched AS (
			UPDATE ` + s.table + ` t SET expires = ` + q.arg(now) + `::timestamptz + (t.ttl / 1000) * interval '1 microsecond'
			FROM found f WHERE t.ns = f.ns AND t.key = f.key AND t.ttl > 0
			RETURNING t.ns, t.key, t.expires)
		SELECT f.ns, f.key, f.value, f.created, f.updated, f.ttl, COALESCE(u.expires, f.expires)
		FROM found f LEFT JOIN touched u ON u.ns = f.ns AND u.key = f.key
		ORDER BY f.ns, f.key`
	}
	rows, err := s.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: search items: %w", err)
	}
	defer rows.Close()
	var out []memory.Record
	size := 0
	for rows.Next() {
		r, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: search items: %w", err)
		}
		out = append(out, r)
		if size += len(r.Value); iq.MaxBytes > 0 && size > iq.MaxBytes {
			break // the page is cut here (ItemQuery.MaxBytes)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: search items: %w", err)
	}
	return out, nil
}

// Namespaces implements [memory.Items].
func (s *Items) Namespaces(ctx context.Context, nq memory.NamespaceQuery) ([][]string, error) {
	nq, err := memory.CheckNamespaceQuery(nq)
	if err != nil {
		return nil, err
	}
	var q query
	q.b.WriteString(`SELECT DISTINCT ns FROM ` + s.table + ` WHERE `)
	q.live(itemkey.Encode(nq.Prefix), s.clock())
	q.b.WriteString(` ORDER BY ns`)
	rows, err := s.pool.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list namespaces: %w", err)
	}
	defer rows.Close()
	list := itemkey.NewList(nq.Suffix, nq.MaxDepth, nq.Offset, nq.Limit)
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("postgres: list namespaces: %w", err)
		}
		if list.Add(ns) {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list namespaces: %w", err)
	}
	return list.Namespaces(), nil
}
