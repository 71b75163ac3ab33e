// Package sqlite keeps conversations ([memory.Store]) and long-term memory
// ([memory.Items], see [NewItems]) in an SQLite database file, with the pure-Go modernc.org/sqlite driver: no cgo, no
// server, one file per service. It suits single-node services, desktop and
// edge agents, and tests that should survive a restart.
//
// Two tables hold the data: memory_conversations (one row per conversation:
// its last sequence number and its summary) and memory_messages (one row per
// message). [New] creates them, or brings them up to date, with versioned
// migrations recorded in memory_migrations; running them again is safe.
//
// Writes take SQLite's write lock at the start of their transaction
// (BEGIN IMMEDIATE) and wait up to Config.BusyTimeout for it, so concurrent
// appends, from goroutines or from processes sharing the file, get
// consecutive sequence numbers and lose nothing.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
	"github.com/agentgraph/agentgraph/memory"
	"go.uber.org/zap"
)

// DefaultBusyTimeout is how long a write waits for another writer's lock
// when Config.BusyTimeout is zero.
const DefaultBusyTimeout = sqlitedb.DefaultBusyTimeout

// Config configures [New]. Set Path or DB.
type Config struct {
	// Path is the database file, created if missing; ":memory:" keeps the
	// database in memory for the life of the Store. New opens it in WAL
	// mode with immediate write transactions, and [Store.Close] closes it.
	Path string
	// DB is an open database to use instead of Path, opened with the
	// modernc.org/sqlite driver; the Store does not close it. Open it with
	// "_txlock=immediate" and a busy timeout in its DSN (see [DSN]), or
	// concurrent appends may fail with SQLITE_BUSY.
	DB *sql.DB
	// BusyTimeout is how long a write waits for the lock held by another
	// writer, with Path. Zero means [DefaultBusyTimeout].
	BusyTimeout time.Duration
	// SyncFull, with Path, makes every append reach the disk before it
	// returns (PRAGMA synchronous=FULL). When false, the default, the file
	// uses synchronous=NORMAL, which in WAL mode keeps every committed
	// write through a crash of the process but may lose the last ones if
	// the machine loses power, and spares an fsync per write.
	SyncFull bool
	// SkipMigrate leaves the tables alone in New; run [Store.Migrate]
	// before use.
	SkipMigrate bool
	// Logger receives a line per applied migration. Nil means no logging.
	Logger *zap.Logger
	// Now is the clock of [Items] (timestamps and TTLs); nil means
	// time.Now. [Store] does not use it.
	Now func() time.Time
}

// DSN returns the data source name New uses for a database file: WAL
// journal with synchronous=NORMAL, immediate write transactions and the
// given busy timeout. Use it to open a *sql.DB for Config.DB that you share
// with other code.
func DSN(path string, busyTimeout time.Duration) string {
	return sqlitedb.DSN(path, options(busyTimeout, false))
}

// options are the pragmas of the Store's database: foreign keys on and, for
// a file, synchronous=FULL with syncFull, NORMAL otherwise.
func options(busyTimeout time.Duration, syncFull bool) sqlitedb.Options {
	o := sqlitedb.Options{BusyTimeout: busyTimeout, ForeignKeys: true, Synchronous: "NORMAL"}
	if syncFull {
		o.Synchronous = "FULL"
	}
	return o
}

// Store is a [memory.Store] in SQLite. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	owned bool
	log   *zap.Logger
	// wlock (a one-slot semaphore) serialises this Store's writes so that
	// they queue in Go instead of polling SQLite's write lock, whose busy
	// handler sleeps up to 100 ms between tries; other processes are kept
	// out by SQLite.
	wlock chan struct{}

	// stmts holds the prepared statements of Load and Append by query
	// text, prepared on first use (never inside a transaction: with one
	// connection, as for ":memory:", that would wait for itself).
	smu   sync.Mutex
	stmts map[string]*sql.Stmt
}

// maxCachedAppend is the largest number of messages an Append with a
// prepared statement inserts; longer ones are parsed each time.
const maxCachedAppend = 4

// prepared returns the statement prepared for query, preparing it on first
// use, or nil when it cannot be prepared (the caller then runs the query
// unprepared and meets the error there).
func (s *Store) prepared(ctx context.Context, query string) *sql.Stmt {
	s.smu.Lock()
	defer s.smu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st
	}
	if s.stmts == nil {
		return nil // closed
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	s.stmts[query] = st
	return st
}

// lockWrites waits for the Store's write slot, or for ctx to be done.
func (s *Store) lockWrites(ctx context.Context) (unlock func(), err error) {
	select {
	case s.wlock <- struct{}{}:
		return s.unlockWrites, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Store) unlockWrites() { <-s.wlock }

var _ memory.Store = (*Store)(nil)

// New opens (with cfg.Path) and migrates (unless cfg.SkipMigrate) the
// database and returns the store.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{log: cfg.Logger, wlock: make(chan struct{}, 1), stmts: map[string]*sql.Stmt{}}
	var err error
	o := options(cfg.BusyTimeout, cfg.SyncFull)
	if s.db, s.owned, err = sqlitedb.Setup(ctx, cfg.DB, cfg.Path, o, s.migrations(), !cfg.SkipMigrate); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the database if the Store opened it from Config.Path.
func (s *Store) Close() error {
	s.smu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.smu.Unlock()
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// migrations are applied in order, once each; version i+1 is
// migrations[i]. Never edit a released migration; append a new one.
var migrations = []string{
	`CREATE TABLE memory_conversations (
		id              TEXT PRIMARY KEY,
		last_seq        INTEGER NOT NULL DEFAULT 0,
		summary         TEXT NOT NULL DEFAULT '',
		summary_through INTEGER NOT NULL DEFAULT 0,
		summary_updated INTEGER NOT NULL DEFAULT 0,
		created         INTEGER NOT NULL
	);
	CREATE TABLE memory_messages (
		conversation_id TEXT NOT NULL REFERENCES memory_conversations (id) ON DELETE CASCADE,
		seq             INTEGER NOT NULL,
		role            TEXT NOT NULL,
		name            TEXT NOT NULL DEFAULT '',
		content         TEXT NOT NULL,
		created         INTEGER NOT NULL,
		PRIMARY KEY (conversation_id, seq)
	) WITHOUT ROWID`,
}

// Migrate creates the tables or brings them up to date, in one immediate
// transaction, recording each applied version in memory_migrations; it is
// idempotent.
func (s *Store) Migrate(ctx context.Context) error {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer unlock()
	return sqlitedb.Migrate(ctx, s.db, s.migrations())
}

func (s *Store) migrations() sqlitedb.Migrations {
	return sqlitedb.Migrations{
		Table: "memory_migrations", Steps: migrations, Logger: s.log, Message: "sqlite: applied migration",
	}
}

func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return sqlitedb.Tx(ctx, s.db, fn)
}

// qBump adds n messages to a conversation, creating it, and returns its
// last sequence number.
const qBump = `INSERT INTO memory_conversations (id, last_seq, created) VALUES (?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET last_seq = last_seq + excluded.last_seq
	RETURNING last_seq`

// queryRow runs query in tx through st, its prepared statement, or
// unprepared when st is nil.
func queryRow(ctx context.Context, tx *sql.Tx, st *sql.Stmt, query string, args ...any) *sql.Row {
	if st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// exec runs query in tx through st, its prepared statement, or unprepared
// when st is nil.
func exec(ctx context.Context, tx *sql.Tx, st *sql.Stmt, query string, args ...any) (sql.Result, error) {
	if st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// Append implements [memory.Store].
func (s *Store) Append(ctx context.Context, id string, msgs ...memory.Message) (int64, error) {
	if err := memory.ValidateAppend(id, msgs); err != nil {
		return 0, err
	}
	if len(msgs) == 0 {
		var last int64
		err := s.db.QueryRowContext(ctx, `SELECT last_seq FROM memory_conversations WHERE id = ?`, id).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("sqlite: append to %q: %w", id, err)
		}
		return last, nil
	}
	now := time.Now().UnixNano()
	var last int64
	var q strings.Builder
	q.WriteString(`INSERT INTO memory_messages (conversation_id, seq, role, name, content, created) VALUES `)
	for i := range msgs {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?)")
	}
	insert := q.String()
	bump, ins := s.prepared(ctx, qBump), (*sql.Stmt)(nil)
	if len(msgs) <= maxCachedAppend {
		ins = s.prepared(ctx, insert)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := queryRow(ctx, tx, bump, qBump, id, len(msgs), now).Scan(&last)
		if err != nil {
			return err
		}
		args := make([]any, 0, 6*len(msgs))
		first := last - int64(len(msgs)) + 1
		for i, m := range msgs {
			at := now
			if !m.Time.IsZero() {
				at = m.Time.UnixNano()
			}
			args = append(args, id, first+int64(i), string(m.Role), m.Name, m.Content, at)
		}
		_, err = exec(ctx, tx, ins, insert, args...)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: append to %q: %w", id, err)
	}
	return last, nil
}

const qLoad = `SELECT c.summary, c.summary_through, c.summary_updated, c.last_seq,
		m.seq, m.role, m.name, m.content, m.created
	FROM memory_conversations c
	LEFT JOIN memory_messages m ON m.conversation_id = c.id AND m.seq > c.last_seq - ?
	WHERE c.id = ?
	ORDER BY m.seq`

// Load implements [memory.Store].
func (s *Store) Load(ctx context.Context, id string, n int) (memory.State, error) {
	if err := memory.ValidateID(id); err != nil {
		return memory.State{}, err
	}
	var (
		rows *sql.Rows
		err  error
	)
	if st := s.prepared(ctx, qLoad); st != nil {
		rows, err = st.QueryContext(ctx, max(n, 0), id)
	} else {
		rows, err = s.db.QueryContext(ctx, qLoad, max(n, 0), id)
	}
	if err != nil {
		return memory.State{}, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	defer rows.Close()
	var st memory.State
	for rows.Next() {
		var (
			updated             int64
			seq, at             sql.NullInt64
			role, name, content sql.NullString
		)
		if err := rows.Scan(&st.Summary.Text, &st.Summary.Through, &updated, &st.Last, &seq, &role, &name, &content, &at); err != nil {
			return memory.State{}, fmt.Errorf("sqlite: load %q: %w", id, err)
		}
		if updated != 0 {
			st.Summary.Updated = time.Unix(0, updated)
		}
		if seq.Valid {
			st.Messages = append(st.Messages, memory.Message{
				Seq: seq.Int64, Role: memory.Role(role.String), Name: name.String, Content: content.String, Time: time.Unix(0, at.Int64),
			})
		}
	}
	if err := rows.Err(); err != nil {
		return memory.State{}, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	return st, nil
}

// History implements [memory.Store].
func (s *Store) History(ctx context.Context, id string, after int64, limit int) ([]memory.Message, error) {
	if err := memory.ValidateID(id); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, role, name, content, created FROM memory_messages
		WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	defer rows.Close()
	var out []memory.Message
	for rows.Next() {
		var m memory.Message
		var role string
		var at int64
		if err := rows.Scan(&m.Seq, &role, &m.Name, &m.Content, &at); err != nil {
			return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
		}
		m.Role, m.Time = memory.Role(role), time.Unix(0, at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: history of %q: %w", id, err)
	}
	return out, nil
}

// SaveSummary implements [memory.Store].
func (s *Store) SaveSummary(ctx context.Context, id string, sum memory.Summary, prevThrough int64) error {
	if err := memory.ValidateID(id); err != nil {
		return err
	}
	var last, through int64
	err := s.db.QueryRowContext(ctx, `SELECT last_seq, summary_through FROM memory_conversations WHERE id = ?`, id).Scan(&last, &through)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: save summary of %q: %w", id, err)
	}
	if err := memory.CheckSummary(id, sum, prevThrough, last); err != nil {
		return err
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: save summary of %q: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE memory_conversations
		SET summary = ?, summary_through = ?, summary_updated = ?
		WHERE id = ? AND summary_through = ? AND ? <= last_seq`,
		sum.Text, sum.Through, time.Now().UnixNano(), id, prevThrough, sum.Through)
	unlock()
	if err != nil {
		return fmt.Errorf("sqlite: save summary of %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: save summary of %q: %w", id, err)
	} else if n == 0 {
		return memory.ErrSummaryConflict
	}
	return nil
}

// Delete implements [memory.Store].
func (s *Store) Delete(ctx context.Context, id string) error {
	if id == "" {
		return memory.ErrEmptyID
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM memory_messages WHERE conversation_id = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM memory_conversations WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", id, err)
	}
	return nil
}
