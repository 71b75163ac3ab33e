package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/internal/itemkey"
	"github.com/agentgraph/agentgraph/memory/internal/itemsql"
	"go.uber.org/zap"
)

// Items is a [memory.Items] in SQLite: long-term memory records in the
// table memory_items, keyed by namespace and key, whose migrations are
// recorded in memory_item_migrations. Filters run in SQL through
// json_each. It is safe for concurrent use.
type Items struct {
	db    *sql.DB
	owned bool
	log   *zap.Logger
	now   func() time.Time
	wlock chan struct{} // see Store.wlock
}

var _ memory.Items = (*Items)(nil)

// itemMigrations are applied in order, once each; version i+1 is
// itemMigrations[i]. Never edit a released migration; append a new one.
var itemMigrations = []string{
	`CREATE TABLE memory_items (
		ns      TEXT NOT NULL,
		key     TEXT NOT NULL,
		value   TEXT NOT NULL,
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL,
		ttl     INTEGER NOT NULL DEFAULT 0,
		expires INTEGER,
		PRIMARY KEY (ns, key)
	) WITHOUT ROWID;
	CREATE INDEX memory_items_expires ON memory_items (expires) WHERE expires IS NOT NULL`,
}

// NewItems opens (with cfg.Path) and migrates (unless cfg.SkipMigrate) the
// database and returns the item store. cfg.Now is its clock.
func NewItems(ctx context.Context, cfg Config) (*Items, error) {
	s := &Items{log: cfg.Logger, now: cfg.Now, wlock: make(chan struct{}, 1)}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	o := options(cfg.BusyTimeout, cfg.SyncFull)
	if s.db, s.owned, err = sqlitedb.Setup(ctx, cfg.DB, cfg.Path, o, s.migrations(), !cfg.SkipMigrate); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the database if Items opened it from Config.Path.
func (s *Items) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// Migrate creates the table or brings it up to date, recording each
// applied version in memory_item_migrations; it is idempotent.
func (s *Items) Migrate(ctx context.Context) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: migrate items: %w", err)
	}
	defer unlock()
	return sqlitedb.Migrate(ctx, s.db, s.migrations())
}

func (s *Items) migrations() sqlitedb.Migrations {
	return sqlitedb.Migrations{
		Table: "memory_item_migrations", Steps: itemMigrations, Logger: s.log, Message: "sqlite: applied item migration",
	}
}

func (s *Items) lock(ctx context.Context) (unlock func(), err error) {
	select {
	case s.wlock <- struct{}{}:
		return func() { <-s.wlock }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func nanos(t time.Time) int64 { return t.UnixNano() }

// expiry is the expires column of a record put or refreshed at now.
func expiry(now time.Time, ttl time.Duration) any {
	if ttl <= 0 {
		return nil
	}
	return nanos(now.Add(ttl))
}

// Put implements [memory.Items].
func (s *Items) Put(ctx context.Context, r memory.Record) error {
	val, err := memory.CheckRecord(r)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: put %q: %w", r.Key, err)
	}
	defer unlock()
	now := s.now()
	_, err = s.db.ExecContext(ctx, `INSERT INTO memory_items (ns, key, value, created, updated, ttl, expires)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (ns, key) DO UPDATE SET
			value = excluded.value, updated = excluded.updated, ttl = excluded.ttl, expires = excluded.expires,
			created = CASE WHEN memory_items.expires <= excluded.updated THEN excluded.created ELSE memory_items.created END`,
		itemkey.Encode(r.Namespace), r.Key, string(val), nanos(now), nanos(now), int64(r.TTL), expiry(now, r.TTL))
	if err != nil {
		return fmt.Errorf("sqlite: put %q: %w", r.Key, err)
	}
	return nil
}

const itemColumns = `ns, key, value, created, updated, ttl, expires`

func scanItem(sc interface{ Scan(...any) error }) (memory.Record, error) {
	var (
		r                memory.Record
		ns, val          string
		created, updated int64
		ttl              int64
		expires          sql.NullInt64
	)
	if err := sc.Scan(&ns, &r.Key, &val, &created, &updated, &ttl, &expires); err != nil {
		return r, err
	}
	r.Namespace, r.Value = itemkey.Decode(ns), json.RawMessage(val)
	r.Created, r.Updated, r.TTL = time.Unix(0, created), time.Unix(0, updated), time.Duration(ttl)
	if expires.Valid {
		r.Expires = time.Unix(0, expires.Int64)
	}
	return r, nil
}

// Get implements [memory.Items].
func (s *Items) Get(ctx context.Context, namespace []string, key string, refreshTTL bool) (memory.Record, error) {
	if err := memory.CheckKey(namespace, key); err != nil {
		return memory.Record{}, err
	}
	now := s.now()
	ns := itemkey.Encode(namespace)
	if refreshTTL {
		unlock, err := s.lock(ctx)
		if err != nil {
			return memory.Record{}, fmt.Errorf("sqlite: get %q: %w", key, err)
		}
		_, err = s.db.ExecContext(ctx, `UPDATE memory_items SET expires = ? + ttl
			WHERE ns = ? AND key = ? AND ttl > 0 AND expires > ?`, nanos(now), ns, key, nanos(now))
		unlock()
		if err != nil {
			return memory.Record{}, fmt.Errorf("sqlite: get %q: %w", key, err)
		}
	}
	r, err := scanItem(s.db.QueryRowContext(ctx, `SELECT `+itemColumns+` FROM memory_items
		WHERE ns = ? AND key = ? AND (expires IS NULL OR expires > ?)`, ns, key, nanos(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return memory.Record{}, memory.NotFound(namespace, key)
	}
	if err != nil {
		return memory.Record{}, fmt.Errorf("sqlite: get %q: %w", key, err)
	}
	return r, nil
}

// Delete implements [memory.Items].
func (s *Items) Delete(ctx context.Context, namespace []string, key string) error {
	if err := memory.CheckKey(namespace, key); err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", key, err)
	}
	defer unlock()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM memory_items WHERE ns = ? AND key = ?`, itemkey.Encode(namespace), key); err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", key, err)
	}
	return nil
}

// DeleteExpired removes the records that have expired and returns how
// many. Expired records are invisible anyway; this frees their space.
func (s *Items) DeleteExpired(ctx context.Context) (int64, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired items: %w", err)
	}
	defer unlock()
	res, err := s.db.ExecContext(ctx, `DELETE FROM memory_items WHERE expires <= ?`, nanos(s.now()))
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete expired items: %w", err)
	}
	return res.RowsAffected()
}

// where builds the conditions shared by Search and Namespaces: live
// records under the encoded prefix.
func where(prefix string, now time.Time) (string, []any) {
	var b strings.Builder
	args := []any{nanos(now)}
	b.WriteString(`(expires IS NULL OR expires > ?)`)
	if prefix != "" {
		b.WriteString(` AND ns >= ? AND ns < ?`)
		args = append(args, prefix, itemkey.End(prefix))
	}
	return b.String(), args
}

// condition returns the SQL of one filter condition on the value column.
func condition(c memory.Condition) (string, []any) {
	if c.Op == memory.OpNe {
		eq, args := condition(memory.Condition{Field: c.Field, Op: memory.OpEq, Value: c.Value})
		return "NOT " + eq, args
	}
	test, args := "", []any{}
	switch v := c.Value.(type) {
	case nil:
		if c.Op != memory.OpEq {
			return "0", nil
		}
		test = `j.type = 'null'`
	case bool:
		if c.Op != memory.OpEq {
			return "0", nil
		}
		test = `j.type = 'false'`
		if v {
			test = `j.type = 'true'`
		}
	case float64:
		// As a float64 on both sides, as every store compares: an
		// integer atom (exact up to 2^63) is rounded to its nearest
		// float64, not compared exactly with the filter's.
		test, args = `j.type IN ('integer', 'real') AND CAST(j.atom AS REAL) `+itemsql.Op(c.Op)+` ?`, []any{v}
	case string:
		test, args = `j.type = 'text' AND j.atom `+itemsql.Op(c.Op)+` ?`, []any{v}
	}
	return `EXISTS (SELECT 1 FROM json_each(m.value) AS j WHERE j.key = ? AND ` + test + `)`, append([]any{c.Field}, args...)
}

// Search implements [memory.Items].
func (s *Items) Search(ctx context.Context, q memory.ItemQuery) ([]memory.Record, error) {
	q, conds, err := memory.CheckItemQuery(q)
	if err != nil {
		return nil, err
	}
	now := s.now()
	cond, args := where(itemkey.Encode(q.Prefix), now)
	var b strings.Builder
	b.WriteString(`SELECT ` + itemColumns + ` FROM memory_items AS m WHERE ` + cond)
	for _, c := range conds {
		sql, a := condition(c)
		b.WriteString(" AND " + sql)
		args = append(args, a...)
	}
	for _, term := range memory.QueryTerms(q.Query) {
		b.WriteString(` AND instr(lower(m.value), ?) > 0`)
		args = append(args, term)
	}
	b.WriteString(` ORDER BY ns, key LIMIT ? OFFSET ?`)
	args = append(args, q.Limit, q.Offset)

	var unlock func()
	if q.RefreshTTL {
		if unlock, err = s.lock(ctx); err != nil {
			return nil, fmt.Errorf("sqlite: search items: %w", err)
		}
		defer unlock()
	}
	rows, err := s.db.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search items: %w", err)
	}
	var out []memory.Record
	size := 0
	for rows.Next() {
		r, err := scanItem(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: search items: %w", err)
		}
		out = append(out, r)
		if size += len(r.Value); q.MaxBytes > 0 && size > q.MaxBytes {
			break // the page is cut here (ItemQuery.MaxBytes)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search items: %w", err)
	}
	if q.RefreshTTL {
		err := sqlitedb.Tx(ctx, s.db, func(tx *sql.Tx) error {
			for i := range out {
				if out[i].TTL <= 0 {
					continue
				}
				out[i].Expires = now.Add(out[i].TTL)
				if _, err := tx.ExecContext(ctx, `UPDATE memory_items SET expires = ? WHERE ns = ? AND key = ?`,
					nanos(out[i].Expires), itemkey.Encode(out[i].Namespace), out[i].Key); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sqlite: search items: refresh TTL: %w", err)
		}
	}
	return out, nil
}

// Namespaces implements [memory.Items].
func (s *Items) Namespaces(ctx context.Context, q memory.NamespaceQuery) ([][]string, error) {
	q, err := memory.CheckNamespaceQuery(q)
	if err != nil {
		return nil, err
	}
	cond, args := where(itemkey.Encode(q.Prefix), s.now())
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT ns FROM memory_items WHERE `+cond+` ORDER BY ns`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list namespaces: %w", err)
	}
	defer rows.Close()
	out, err := collectNamespaces(rows, q)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list namespaces: %w", err)
	}
	return out, nil
}

// collectNamespaces reads encoded namespaces in order and applies the
// suffix, depth, offset and limit of q.
func collectNamespaces(rows *sql.Rows, q memory.NamespaceQuery) ([][]string, error) {
	list := itemkey.NewList(q.Suffix, q.MaxDepth, q.Offset, q.Limit)
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, err
		}
		if list.Add(ns) {
			break
		}
	}
	return list.Namespaces(), rows.Err()
}
