// Package postgres keeps conversations ([memory.Store]) and long-term
// memory ([memory.Items], see [NewItems]) in PostgreSQL through pgx.
//
// Two tables hold them: memory_conversations (one row per conversation: its
// last sequence number and its summary) and memory_messages (one row per
// message, keyed by conversation id and sequence number). An append locks
// its conversation's row while it reserves sequence numbers, so concurrent
// appends, from any number of processes, get consecutive numbers and lose
// nothing. A summary is saved only if the stored one is still the one the
// caller read. A third, memory_locks, holds the conversation locks of
// [Store.Lock] as lease rows.
//
// [New] creates the tables, or brings them up to date, with versioned
// migrations recorded in memory_migrations; running them again, or from
// several processes at once, is safe. Set Config.Schema to keep the tables
// out of the default schema.
//
// PostgreSQL text holds valid UTF-8 without NUL bytes; an append of content
// that is not fails with the server's error and stores nothing.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/internal/pglease"
	"github.com/agentgraph/agentgraph/internal/storeid"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Config configures [New]. Set Pool or DSN.
type Config struct {
	// Pool is the connection pool to use. The Store does not close it.
	Pool *pgxpool.Pool
	// DSN opens a pool of the Store's own when Pool is nil, e.g.
	// "postgres://user@host:5432/db?sslmode=disable"; [Store.Close]
	// closes it.
	DSN string
	// Schema is the schema that holds the tables; New creates it if
	// needed. Empty means the connection's search_path (normally "public").
	Schema string
	// SkipMigrate leaves the tables alone in New; run [Store.Migrate] (or
	// your own migration tool) before use.
	SkipMigrate bool
	// Logger receives a line per applied migration. Nil means no logging.
	Logger *zap.Logger
	// Now is the clock of [Items] (timestamps and TTLs); nil means
	// time.Now. [Store] does not use it.
	Now func() time.Time
	// MaxLocks is ignored: conversation locks ([Store.Lock]) are lease
	// rows that hold no connection.
	//
	// Deprecated: remove it; any number of locks may be held.
	MaxLocks int
	// LockLease is how long a conversation lock ([Store.Lock]) outlives
	// the last renewal by its holder: a process that dies holding one
	// frees it this long after. It is renewed every third of it while
	// held. Zero means [DefaultLockLease].
	LockLease time.Duration
}

// Store is a [memory.Store] in PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	owned  bool
	schema string
	log    *zap.Logger
	q      queries

	locks *pglease.Locks // the leases of Lock
}

var _ memory.Store = (*Store)(nil)

// New connects (when cfg.DSN is used) and migrates (unless
// cfg.SkipMigrate), and returns the store.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{schema: cfg.Schema, log: cfg.Logger}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	var err error
	if s.pool, s.owned, err = pgdb.Connect(ctx, cfg.Pool, cfg.DSN); err != nil {
		return nil, err
	}
	s.q = newQueries(cfg.Schema)
	if err := s.newLocks(cmp.Or(max(cfg.LockLease, 0), DefaultLockLease)); err != nil {
		s.Close()
		return nil, err
	}
	if !cfg.SkipMigrate {
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close releases the conversation locks still held and closes the pool
// if the Store opened it from Config.DSN.
func (s *Store) Close() {
	if s.locks != nil {
		s.locks.Close()
	}
	if s.owned {
		s.pool.Close()
	}
}

// Append implements [memory.Store].
func (s *Store) Append(ctx context.Context, id string, msgs ...memory.Message) (int64, error) {
	if err := memory.ValidateAppend(id, msgs); err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		var last int64
		err := s.pool.QueryRow(ctx, s.q.lastSeq, id).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("postgres: append to %q: %w", id, err)
		}
		return last, nil
	}
	now := time.Now()
	seqs := make([]int64, len(msgs))
	roles := make([]string, len(msgs))
	names := make([]string, len(msgs))
	bodies := make([]string, len(msgs))
	times := make([]time.Time, len(msgs))
	var last int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, s.q.reserve, id, len(msgs)).Scan(&last); err != nil {
			return err
		}
		first := last - int64(len(msgs)) + 1
		for i, m := range msgs {
			seqs[i], roles[i], names[i], bodies[i], times[i] = first+int64(i), string(m.Role), m.Name, m.Content, m.Time
			if m.Time.IsZero() {
				times[i] = now
			}
		}
		_, err := tx.Exec(ctx, s.q.insert, id, seqs, roles, names, bodies, times)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: append to %q: %w", id, err)
	}
	return last, nil
}

// Load implements [memory.Store].
func (s *Store) Load(ctx context.Context, id string, n int) (memory.State, error) {
	if err := memory.ValidateID(id); err != nil {
		return memory.State{}, err
	}
	rows, err := s.pool.Query(ctx, s.q.load, id, max(n, 0))
	if err != nil {
		return memory.State{}, fmt.Errorf("postgres: load %q: %w", id, err)
	}
	defer rows.Close()
	var st memory.State
	for rows.Next() {
		var (
			updated             *time.Time
			seq                 *int64
			role, name, content *string
			at                  *time.Time
		)
		if err := rows.Scan(&st.Summary.Text, &st.Summary.Through, &updated, &st.Last, &seq, &role, &name, &content, &at); err != nil {
			return memory.State{}, fmt.Errorf("postgres: load %q: %w", id, err)
		}
		if updated != nil {
			st.Summary.Updated = *updated
		}
		if seq != nil {
			st.Messages = append(st.Messages, memory.Message{Seq: *seq, Role: memory.Role(*role), Name: *name, Content: *content, Time: *at})
		}
	}
	if err := rows.Err(); err != nil {
		return memory.State{}, fmt.Errorf("postgres: load %q: %w", id, err)
	}
	return st, nil
}

// History implements [memory.Store].
func (s *Store) History(ctx context.Context, id string, after int64, limit int) ([]memory.Message, error) {
	if err := memory.ValidateID(id); err != nil {
		return nil, err
	}
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, s.q.history, id, after, lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: history of %q: %w", id, err)
	}
	var out []memory.Message
	for rows.Next() {
		var m memory.Message
		var role string
		if err := rows.Scan(&m.Seq, &role, &m.Name, &m.Content, &m.Time); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: history of %q: %w", id, err)
		}
		m.Role = memory.Role(role)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: history of %q: %w", id, err)
	}
	return out, nil
}

// SaveSummary implements [memory.Store].
func (s *Store) SaveSummary(ctx context.Context, id string, sum memory.Summary, prevThrough int64) error {
	if err := memory.ValidateID(id); err != nil {
		return err
	}
	var last, through int64
	err := s.pool.QueryRow(ctx, s.q.summaryState, id).Scan(&last, &through)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: save summary of %q: %w", id, err)
	}
	if err := memory.CheckSummary(id, sum, prevThrough, last); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.q.saveSummary, id, sum.Text, sum.Through, time.Now(), prevThrough)
	if err != nil {
		return fmt.Errorf("postgres: save summary of %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return memory.ErrSummaryConflict
	}
	return nil
}

// Delete implements [memory.Store].
func (s *Store) Delete(ctx context.Context, id string) error {
	if id == "" {
		return memory.ErrEmptyID
	}
	if !storeid.Storable(id) {
		// PostgreSQL holds no such id.
		return ctx.Err()
	}
	if _, err := s.pool.Exec(ctx, s.q.delete, id); err != nil {
		return fmt.Errorf("postgres: delete %q: %w", id, err)
	}
	return nil
}
