package postgres

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/event"
	evpg "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/internal/pglease"
	"github.com/agentgraph/agentgraph/internal/pgnotify"
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
	// needed. Empty means "public". Instances that share work use the
	// same schema.
	Schema string
	// Logger receives migrations and reconnections of the watch. Nil
	// means no logging.
	Logger *zap.Logger
	// PendingGrace is how long [Store.ClaimDue] leaves a pending run to
	// the instance that created it (which claims it at once) before it
	// takes the run for its caller: without it, an instance's sweep
	// takes the runs other instances created a moment before, whose
	// streams then follow their events from PostgreSQL instead of from
	// memory. It counts from the run's UpdatedAt (its creation, or its
	// last change), so a run delayed (after_seconds) longer than
	// PendingGrace is due on time. 0 means DefaultPendingGrace; a
	// negative PendingGrace takes pending runs at once.
	PendingGrace time.Duration
	// SharedCheckpoints says that the graphs' checkpoints are saved in
	// the Store's PostgreSQL cluster (graph/checkpoint/postgres on the
	// same server, in the same database or another), whether their
	// commits wait for their WAL flush (the saver's default) or not (its
	// Config.AsyncCommit). A run's start ([Store.StartRunEvent]) then
	// commits without waiting for its own WAL flush, one flush wait fewer
	// per run: a PostgreSQL crash can lose that start only with
	// everything written after it to the WAL, the run's checkpoints
	// included, and the run's next attempt then starts it from its input
	// over the thread's checkpoints as they were before the run, as it
	// should; and the run's end, whose commit waits for its flush,
	// flushes the start and the checkpoints before it (see "Commit
	// durability" in the package doc, which says what the two settings
	// together guarantee). Leave it false when the checkpoints are
	// elsewhere (SQLite, another PostgreSQL server): a start lost there
	// would make the next attempt start afresh over steps the
	// checkpointer kept.
	SharedCheckpoints bool
}

// DefaultPendingGrace is Config.PendingGrace's default.
const DefaultPendingGrace = time.Second

// Store is a [server.Store] in PostgreSQL, and a [server.RunWatcher]. It
// is safe for concurrent use. Give each server instance a Store of its own
// (they may share a Pool): WatchRuns reports the changes made through
// other Store values, not through this one.
type Store struct {
	pool    *pgxpool.Pool
	owned   bool
	schema  string
	log     *zap.Logger
	q       queries
	channel string // NOTIFY channel
	origin  string // this Store's id in notifications
	locks   *pglease.Locks
	events  *evpg.Log // the runs' event logs, keyed by run id
	notes   *pgnotify.Sender
	grace   time.Duration // Config.PendingGrace, resolved
	shared  bool          // Config.SharedCheckpoints
	// readCommitted is whether the pool's sessions run their implicit
	// transactions READ COMMITTED (or READ UNCOMMITTED, run as READ
	// COMMITTED), read once by New: the one-round-trip batches that take
	// a thread's transaction-level lock and then read its LockThread
	// lease (the guessed creation, ClaimThreadLocked, FinishRunLocked)
	// hold the lock only then. Without it they are not sent: the guessed
	// creation reads the thread in a transaction begun READ COMMITTED,
	// and the others return ErrThreadLocked at once, for the server to
	// take the lock with LockThread. A session whose default changed
	// since (a SET on a connection of a shared pool) is refused by the
	// statements themselves (readCommitted in queries.go).
	readCommitted bool
	// guesses remembers the threads whose runs were last created here,
	// for the next creation's one round trip (createGuessed).
	guesses guesses
}

var (
	_ server.Store        = (*Store)(nil)
	_ server.RunWatcher   = (*Store)(nil)
	_ server.ThreadLocker = (*Store)(nil)

	_ server.ActiveRunLister = (*Store)(nil)
	_ server.RunRecorder     = (*Store)(nil)
	_ server.OwnerCounter    = (*Store)(nil)
	_ server.LockingRecorder = (*Store)(nil)
	_ server.RunStarter      = (*Store)(nil)
	_ server.RunClaimer      = (*Store)(nil)
	_ server.NextClaimer     = (*Store)(nil)
	_ server.LastEventReader = (*Store)(nil)
)

// New connects (when cfg.DSN is set) and brings the tables up to date.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Pool != nil && cfg.DSN != "" {
		return nil, errors.New("postgres: Config has both Pool and DSN; set only one")
	}
	pool, owned, err := pgdb.Connect(ctx, cfg.Pool, cfg.DSN)
	if err != nil {
		return nil, err
	}
	s := &Store{pool: pool, owned: owned, schema: cfg.Schema, log: cfg.Logger, grace: cfg.PendingGrace, shared: cfg.SharedCheckpoints}
	switch {
	case s.grace == 0:
		s.grace = DefaultPendingGrace
	case s.grace < 0:
		s.grace = 0
	}
	if s.schema == "" {
		s.schema = "public"
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.q = newQueries(s.schema)
	h := fnv.New64a()
	h.Write([]byte(s.schema))
	s.channel = fmt.Sprintf("agentserver_%x", h.Sum64())
	b := make([]byte, 8)
	rand.Read(b)
	s.origin = hex.EncodeToString(b)
	s.locks = newLocks(s)
	s.notes = pgnotify.NewSender(s.pool, s.channel, s.log)
	// The event logs' tables first: a migration below moves the rows of
	// the event table of earlier versions into them.
	s.events, err = evpg.NewLog(ctx, evpg.LogConfig{Pool: s.pool, Schema: s.schema, Name: logName, Parent: s.q.runs,
		Channel: s.channel, Payload: func(runID string) string { return s.origin + ":" + runID }, Writer: s.origin, Logger: s.log})
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := pgdb.Migrate(ctx, s.pool, pgdb.Migrations{
		Schema:   s.schema,
		Table:    "agentserver_migrations",
		Lock:     "agentgraph/agent/server/postgres",
		Steps:    migrations,
		Replacer: s.q.tables,
		Logger:   s.log,
		Message:  "postgres: applied migration",
	}); err != nil {
		s.Close()
		return nil, err
	}
	var iso string
	if err := s.pool.QueryRow(ctx, `SELECT current_setting('default_transaction_isolation')`).Scan(&iso); err != nil {
		s.Close()
		return nil, wrap("read default_transaction_isolation", err)
	}
	s.readCommitted = iso == "read committed" || iso == "read uncommitted"
	return s, nil
}

// Close releases the thread locks still held and closes the pool if the
// Store opened it from Config.DSN.
func (s *Store) Close() {
	s.locks.Close()
	if s.events != nil {
		s.events.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.notes.Wait(ctx)
	if s.owned {
		s.pool.Close()
	}
}

// wrap prefixes err with the package and the operation.
func wrap(op string, err error) error {
	if err == nil || errors.Is(err, server.ErrNotFound) || errors.Is(err, server.ErrExists) {
		return err
	}
	return fmt.Errorf("postgres: %s: %w", op, err)
}

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

// jsonb encodes a map for a jsonb column: nil stays SQL NULL.
func jsonb(m any) ([]byte, error) {
	switch v := m.(type) {
	case map[string]any:
		if v == nil {
			return nil, nil
		}
	case map[string][]server.Interrupt:
		if v == nil {
			return nil, nil
		}
	}
	return json.Marshal(m)
}

// raw returns a json.RawMessage as column bytes: nil stays NULL.
func raw(m json.RawMessage) []byte {
	if m == nil {
		return nil
	}
	return []byte(m)
}

// --- threads ---

func threadArgs(t *server.Thread) ([]any, error) {
	md, err := jsonb(t.Metadata)
	if err != nil {
		return nil, err
	}
	cfg, err := jsonb(t.Config)
	if err != nil {
		return nil, err
	}
	ins, err := interruptsColumn(t.Interrupts)
	if err != nil {
		return nil, err
	}
	return []any{t.ID, t.Owner, t.Status, t.CreatedAt, t.UpdatedAt, md, cfg, raw(t.Values), ins, t.GraphID, t.Head, t.Rolled}, nil
}

// unmarshalNumbers decodes a metadata column into v with its numbers as
// json.Number, so an integer beyond 2^53 reads back with the digits it
// was stored with rather than rounded to a float64 (the other stores read
// metadata so too). Threads and runs read their metadata so.
func unmarshalNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func scanThread(row pgx.Row) (*server.Thread, error) {
	var x threadScan
	if err := row.Scan(x.dest()...); err != nil {
		return nil, err
	}
	return x.thread()
}

// threadScan holds a thread's columns as scanned.
type threadScan struct {
	t                  server.Thread
	md, cfg, vals, ins []byte
}

// dest returns the scan destinations of a thread's columns.
func (x *threadScan) dest() []any {
	t := &x.t
	return []any{&t.ID, &t.Owner, &t.Status, &t.CreatedAt, &t.UpdatedAt, &x.md, &x.cfg, &x.vals, &x.ins, &t.GraphID, &t.Head, &t.Rolled}
}

// thread decodes the scanned columns.
func (x *threadScan) thread() (*server.Thread, error) {
	t := x.t
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	if x.md != nil {
		if err := unmarshalNumbers(x.md, &t.Metadata); err != nil {
			return nil, err
		}
	}
	if x.cfg != nil {
		if err := json.Unmarshal(x.cfg, &t.Config); err != nil {
			return nil, err
		}
	}
	if x.vals != nil {
		t.Values = json.RawMessage(x.vals)
	}
	if x.ins != nil {
		ins, err := interruptsFrom(x.ins)
		if err != nil {
			return nil, err
		}
		t.Interrupts = ins
	}
	return &t, nil
}

// deref returns *p, "" for nil: a text column of an outer join's row
// that may be NULL.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// interruptsColumn encodes a thread's interrupts for their jsonb column.
// Their values come from the graph, and jsonb cannot hold a string with a
// NUL character ("\u0000"): interrupts that have one are stored as a
// jsonb string, base64 of their JSON (an object otherwise), which
// interruptsFrom decodes.
func interruptsColumn(ins map[string][]server.Interrupt) ([]byte, error) {
	b, err := jsonb(ins)
	if err != nil || !bytes.Contains(b, []byte(`\u0000`)) {
		return b, err
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

// interruptsFrom decodes the interrupts column as interruptsColumn wrote
// it.
func interruptsFrom(col []byte) (map[string][]server.Interrupt, error) {
	var ins map[string][]server.Interrupt
	if t := bytes.TrimLeft(col, " \t\r\n"); len(t) > 0 && t[0] == '"' {
		var enc string
		if err := json.Unmarshal(col, &enc); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, fmt.Errorf("postgres: the interrupts column holds a string that is not base64: %w", err)
		}
		col = b
	}
	if err := json.Unmarshal(col, &ins); err != nil {
		return nil, err
	}
	return ins, nil
}

// CreateThread implements [server.Store].
func (s *Store) CreateThread(ctx context.Context, t *server.Thread) error {
	args, err := threadArgs(t)
	if err != nil {
		return wrap("create thread", err)
	}
	tag, err := s.pool.Exec(ctx, s.q.insertThread, args...)
	if err != nil {
		return wrap("create thread", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("thread %s: %w", t.ID, server.ErrExists)
	}
	return nil
}

// Thread implements [server.Store].
func (s *Store) Thread(ctx context.Context, id string) (*server.Thread, error) {
	t, err := scanThread(s.pool.QueryRow(ctx, s.q.selectThread, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("thread %s: %w", id, server.ErrNotFound)
	}
	return t, wrap("load thread", err)
}

// UpdateThread implements [server.Store]. It takes two round trips: one
// begins a transaction and reads the thread's row with a lock, the other
// writes it and commits.
func (s *Store) UpdateThread(ctx context.Context, id string, fn func(*server.Thread) error) (*server.Thread, error) {
	var out *server.Thread
	err := s.update(ctx, s.q.lockThread, id, func(row pgx.Row) error {
		t, err := scanThread(row)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("thread %s: %w", id, server.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return err
		}
		t.ID, out = id, t
		return nil
	}, func(b *pgx.Batch) error {
		args, err := threadArgs(out)
		if err != nil {
			return err
		}
		b.Queue(s.q.updateThread, args...)
		return nil
	})
	s.guesses.forget(id) // its record changed (or may have)
	if err != nil {
		return nil, wrap("update thread", err)
	}
	return out, nil
}

// update runs a read-modify-write transaction in two round trips: BEGIN
// and the locking read (whose row read gets), then what write queues, and
// COMMIT. An error from read or write rolls back.
func (s *Store) update(ctx context.Context, lock, id string, read func(pgx.Row) error, write func(*pgx.Batch) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue(lock, id)
	br := conn.SendBatch(ctx, b)
	_, beginErr := br.Exec()
	readErr := read(br.QueryRow())
	closeErr := br.Close()
	if err := errors.Join(beginErr, closeErr); err != nil {
		rollback(conn)
		return err
	}
	if readErr != nil {
		rollback(conn)
		return readErr
	}
	b = &pgx.Batch{}
	if err := write(b); err != nil {
		rollback(conn)
		return err
	}
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn)
		return err
	}
	return nil
}

// rollback ends a failed transaction; a connection where even that fails
// is closed rather than returned to the pool in a transaction.
func rollback(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		conn.Conn().Close(ctx)
	}
}

// DeleteThread implements [server.Store]; the thread's runs go with it
// (foreign keys ON DELETE CASCADE), and their event logs, in one
// statement.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, s.q.deleteThread, id)
	s.guesses.forget(id)
	return wrap("delete thread", err)
}

// CountThreads implements [server.OwnerCounter].
func (s *Store) CountThreads(ctx context.Context, owner string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.q.threads+` WHERE owner = $1`, owner).Scan(&n)
	return n, wrap("count threads", err)
}

// SetThreadBytes implements [server.ByteCounter].
func (s *Store) SetThreadBytes(ctx context.Context, threadID string, bytes, subgraphBytes int64) error {
	_, err := s.pool.Exec(ctx, s.q.setBytes, threadID, bytes, subgraphBytes)
	return wrap("set thread bytes", err)
}

// CountBytes implements [server.ByteCounter]: a sum over the owner's
// threads, read on the index of the threads by owner.
func (s *Store) CountBytes(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, s.q.countBytes, owner).Scan(&n)
	return n, wrap("count bytes", err)
}

// refreshBytes returns the bytes of f for the statements of a thread's
// refresh: -1 each when f is not Sized (the stored counts are left).
func refreshBytes(f server.ThreadRefresh) (bytes, sub int64) {
	if !f.Sized {
		return -1, -1
	}
	return f.Bytes, f.SubgraphBytes
}

// CountActiveRuns implements [server.OwnerCounter]: the owner's pending
// and running runs, of every instance, read from the index of the active
// runs by owner (no other principal's run is read).
func (s *Store) CountActiveRuns(ctx context.Context, owner string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, s.q.countActive, owner).Scan(&n)
	return n, wrap("count active runs", err)
}

// SearchThreads implements [server.Store]. Metadata pairs are compared as
// jsonb values, as the other stores compare them as JSON values.
func (s *Store) SearchThreads(ctx context.Context, q server.ThreadQuery) ([]*server.Thread, int, error) {
	where := []string{"owner = $1"}
	args := []any{q.Owner}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(q.Status))
	}
	if len(q.IDs) > 0 {
		where = append(where, "id = ANY("+arg(q.IDs)+")")
	}
	if len(q.Metadata) > 0 {
		// jsonb containment, as LangGraph's servers filter metadata:
		// {"obj":{"x":1}} selects {"obj":{"x":1,"y":2}}.
		b, err := json.Marshal(q.Metadata)
		if err != nil {
			return nil, 0, fmt.Errorf("postgres: search threads: metadata: %w", err)
		}
		where = append(where, "metadata @> "+arg(string(b))+"::jsonb")
	}
	cond := strings.Join(where, " AND ")
	if len(q.Values) > 0 {
		// The values are filtered here, after the query, as JSON: vals is
		// bytea that jsonb cannot always hold (a "\u0000" in a string).
		return s.searchValues(ctx, q, cond, args)
	}
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.q.threads+` WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap("search threads", err)
	}
	query := `SELECT ` + threadCols + ` FROM ` + s.q.threads + ` WHERE ` + cond + ` ORDER BY ` + threadOrder(q) + ` OFFSET ` + arg(q.Offset)
	if q.Limit > 0 {
		query += ` LIMIT ` + arg(q.Limit)
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, wrap("search threads", err)
	}
	defer rows.Close()
	out, size := []*server.Thread{}, 0
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, 0, wrap("search threads", err)
		}
		out = append(out, t)
		if size += t.Size(); q.MaxBytes > 0 && size > q.MaxBytes {
			break // the page is cut here (ThreadQuery.MaxBytes)
		}
	}
	return out, total, wrap("search threads", rows.Err())
}

// searchValues is SearchThreads with q.Values: it reads the threads that
// cond selects, in order, and keeps those whose values match.
func (s *Store) searchValues(ctx context.Context, q server.ThreadQuery, cond string, args []any) ([]*server.Thread, int, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+threadCols+` FROM `+s.q.threads+` WHERE `+cond+` ORDER BY `+threadOrder(q), args...)
	if err != nil {
		return nil, 0, wrap("search threads", err)
	}
	defer rows.Close()
	out, total, size, full := []*server.Thread{}, 0, 0, false
	for rows.Next() {
		t, err := scanThread(rows)
		if err != nil {
			return nil, 0, wrap("search threads", err)
		}
		if !q.ValuesMatch(t.Values) {
			continue
		}
		if total >= q.Offset && !full && (q.Limit <= 0 || len(out) < q.Limit) {
			out = append(out, t)
			if size += t.Size(); q.MaxBytes > 0 && size > q.MaxBytes {
				full = true // the page is cut here (ThreadQuery.MaxBytes); the rest is counted
			}
		}
		total++
	}
	return out, total, wrap("search threads", rows.Err())
}

// threadOrder is the ORDER BY of a search.
func threadOrder(q server.ThreadQuery) string {
	col := "created"
	switch q.SortBy {
	case "thread_id":
		col = "id"
	case "status":
		col = "status"
	case "updated_at":
		col = "updated"
	}
	dir := "ASC"
	if q.SortDesc {
		dir = "DESC"
	}
	return col + ` ` + dir + `, id ` + dir
}

// --- runs ---

// extraRow is a row whose last columns, after a run's, scan into extra.
type extraRow struct {
	pgx.Row
	extra []any
}

// Scan scans the row into dest then extra.
func (e extraRow) Scan(dest ...any) error {
	return e.Row.Scan(append(dest, e.extra...)...)
}

func scanRun(row pgx.Row) (*server.Run, error) {
	var x runScan
	if err := row.Scan(x.dest()...); err != nil {
		return nil, err
	}
	return x.run()
}

// runScan holds a run's columns as scanned.
type runScan struct {
	r      server.Run
	md, kw []byte
	lease  *time.Time
}

// dest returns the scan destinations of a run's columns.
func (x *runScan) dest() []any {
	r := &x.r
	return []any{&r.ID, &r.ThreadID, &r.AssistantID, &r.CreatedAt, &r.UpdatedAt, &r.Status, &x.md, &x.kw, &r.MultitaskStrategy,
		&r.Owner, &r.Worker, &x.lease, &r.Attempt, &r.Started, &r.Start, &r.Cancel, &r.Error}
}

// run decodes the scanned columns.
func (x *runScan) run() (*server.Run, error) {
	r := x.r
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	if x.lease != nil {
		r.LeaseUntil = x.lease.UTC()
	}
	if x.md != nil {
		if err := unmarshalNumbers(x.md, &r.Metadata); err != nil {
			return nil, err
		}
	}
	if x.kw != nil {
		r.Kwargs = json.RawMessage(x.kw)
	}
	return &r, nil
}

// scanRunThread scans a row of a run's columns then its thread's.
func scanRunThread(row pgx.Row) (*server.Run, *server.Thread, error) {
	var rx runScan
	var tx threadScan
	if err := row.Scan(append(rx.dest(), tx.dest()...)...); err != nil {
		return nil, nil, err
	}
	r, err := rx.run()
	if err != nil {
		return nil, nil, err
	}
	t, err := tx.thread()
	if err != nil {
		return nil, nil, err
	}
	return r, t, nil
}

func runArgs(r *server.Run) ([]any, error) {
	md, err := jsonb(r.Metadata)
	if err != nil {
		return nil, err
	}
	var lease *time.Time
	if !r.LeaseUntil.IsZero() {
		lease = &r.LeaseUntil
	}
	return []any{r.ID, r.ThreadID, r.AssistantID, r.CreatedAt, r.UpdatedAt, r.Status, md, raw(r.Kwargs), r.MultitaskStrategy,
		r.Owner, r.Worker, lease, r.Attempt, r.Started, r.Start, r.Cancel, r.Error}, nil
}

// CreateRun implements [server.Store]. The run's thread must exist.
func (s *Store) CreateRun(ctx context.Context, r *server.Run) error {
	args, err := runArgs(r)
	if err != nil {
		return wrap("create run", err)
	}
	_, err = s.pool.Exec(ctx, s.q.insertRun, args...)
	s.guesses.forget(r.ThreadID) // the thread has a run its guess does not know of
	return createErr(r, err)
}

// createErr is the error of a statement that inserts run r: ErrExists
// for a run id taken, ErrNotFound for a thread missing, nil for none.
func createErr(r *server.Run, err error) error {
	switch {
	case isUnique(err):
		return fmt.Errorf("run %s: %w", r.ID, server.ErrExists)
	case isForeignKey(err):
		return fmt.Errorf("thread %s of run %s: %w", r.ThreadID, r.ID, server.ErrNotFound)
	}
	return wrap("create run", err)
}

// Run implements [server.Store].
func (s *Store) Run(ctx context.Context, id string) (*server.Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, s.q.selectRun, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, server.ErrNotFound)
	}
	return r, wrap("load run", err)
}

// UpdateRun implements [server.Store], in two round trips, and notifies
// the other instances once it committed.
func (s *Store) UpdateRun(ctx context.Context, id string, fn func(*server.Run) error) (*server.Run, error) {
	var out *server.Run
	err := s.update(ctx, s.q.lockRun, id, func(row pgx.Row) error {
		r, err := scanRun(row)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("run %s: %w", id, server.ErrNotFound)
		}
		if err != nil {
			return err
		}
		tid := r.ThreadID
		if err := fn(r); err != nil {
			return err
		}
		r.ID, r.ThreadID, out = id, tid, r
		return nil
	}, func(b *pgx.Batch) error {
		args, err := runArgs(out)
		if err != nil {
			return err
		}
		b.Queue(s.q.updateRun, args...)
		return nil
	})
	if err != nil {
		return nil, wrap("update run", err)
	}
	s.changed(id)
	return out, nil
}

// DeleteRun implements [server.Store]; its events go with it, in the
// same statement.
func (s *Store) DeleteRun(ctx context.Context, id string) error {
	var n int
	if err := s.pool.QueryRow(ctx, s.q.deleteRun, id).Scan(&n); err != nil {
		return wrap("delete run", err)
	}
	if n > 0 {
		s.changed(id)
	}
	return nil
}

// changed tells the other instances, once the change committed, that
// the run's record or event log changed.
func (s *Store) changed(runID string) {
	s.notes.Send(s.origin + ":" + runID)
}

// Runs implements [server.Store]: one statement for the page, read up
// to q.MaxBytes.
func (s *Store) Runs(ctx context.Context, q server.RunQuery) ([]*server.Run, error) {
	query := s.q.threadRuns
	if q.Newest {
		query = s.q.newestRuns
	}
	var limit any // NULL: no LIMIT
	if q.Limit > 0 {
		limit = q.Limit
	}
	rows, err := s.pool.Query(ctx, query, q.ThreadID, q.Status, limit, q.Offset)
	if err != nil {
		return nil, wrap("list runs", err)
	}
	defer rows.Close()
	var out []*server.Run
	size := 0
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, wrap("list runs", err)
		}
		out = append(out, r)
		if size += r.Size(); q.MaxBytes > 0 && size > q.MaxBytes {
			break // the page is cut here (RunQuery.MaxBytes)
		}
	}
	return out, wrap("list runs", rows.Err())
}

// ActiveRuns implements [server.ActiveRunLister] in one statement, on the
// index of the pending and running runs.
func (s *Store) ActiveRuns(ctx context.Context, threadID string) ([]*server.Run, error) {
	return s.listRuns(ctx, s.q.activeRuns, threadID)
}

func (s *Store) listRuns(ctx context.Context, query string, args ...any) ([]*server.Run, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, wrap("list runs", err)
	}
	defer rows.Close()
	var out []*server.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, wrap("list runs", err)
		}
		out = append(out, r)
	}
	return out, wrap("list runs", rows.Err())
}

// Claim implements [server.Store] in one round trip: a transaction that
// locks the thread's row (so that claims of one thread, from any
// instance, are made one after the other, each seeing the one before) and
// then marks the thread's next run running.
func (s *Store) Claim(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, error) {
	r, _, err := s.claim(ctx, threadID, worker, lease, false)
	return r, err
}

// ThreadActive implements [server.RunRecorder]: the thread's read and
// ActiveRuns' in one round trip (two statements of one batch).
func (s *Store) ThreadActive(ctx context.Context, threadID string) (*server.Thread, []*server.Run, error) {
	b := &pgx.Batch{}
	b.Queue(s.q.selectThread, threadID)
	b.Queue(s.q.activeRuns, threadID)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	t, err := scanThread(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("thread %s: %w", threadID, server.ErrNotFound)
	}
	if err != nil {
		return nil, nil, wrap("load thread", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, nil, wrap("list runs", err)
	}
	defer rows.Close()
	var runs []*server.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, nil, wrap("list runs", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, wrap("list runs", err)
	}
	return t, runs, nil
}

// ClaimThread implements [server.RunRecorder]: Claim's transaction, in
// one round trip, whose claim returns the claimed run's thread with it
// (the thread's row is read only when a run is claimed).
func (s *Store) ClaimThread(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, *server.Thread, error) {
	return s.claim(ctx, threadID, worker, lease, true)
}

// claim is Claim's transaction in one round trip: the lock of the
// thread's row, then the claim (which returns the claimed run's thread
// too when withThread is set), in one batch.
//
// The Store's transactions of one round trip are batches without BEGIN
// and COMMIT: PostgreSQL runs the statements of one batch (one pipeline
// up to its Sync, or one simple-protocol query, whichever pgx sends) as
// one implicit transaction, committed after the last statement and
// rolled back whole when one fails. Such a transaction costs no BEGIN or
// COMMIT statement, and a failed one leaves its connection idle, with
// nothing to roll back. It runs at the connection's default isolation:
// under READ COMMITTED (PostgreSQL's default) each statement takes a
// snapshot of its own, after the locks the statements before it took;
// under REPEATABLE READ or SERIALIZABLE (a database's, a role's or a
// session's default_transaction_isolation) the transaction's snapshot is
// its first statement's, taken before the locks that statement waits
// for. The batches that read a LockThread lease after taking the
// thread's transaction-level lock therefore count the lock as held
// under another isolation than READ COMMITTED (see freeExpired), and a
// Store whose pool's default is another does not send them
// (Store.readCommitted). This batch runs under any: under REPEATABLE
// READ or SERIALIZABLE, a claim that waited for the thread's row while
// another claim of the thread committed fails to serialize (SQLSTATE
// 40001: its snapshot still holds the run the other claimed); having
// written nothing, it is sent again, with a new snapshot, up to
// claimTries times in all.
func (s *Store) claim(ctx context.Context, threadID, worker string, lease time.Duration, withThread bool) (*server.Run, *server.Thread, error) {
	query := s.q.claim
	if withThread {
		query = s.q.claimThread
	}
	for try := 1; ; try++ {
		b := &pgx.Batch{}
		b.Queue(s.q.lockThreadID, threadID)
		b.Queue(query, threadID, worker, lease.Microseconds())
		br := s.pool.SendBatch(ctx, b)
		_, lockErr := br.Exec()
		r, t, err := endClaim(br, withThread, lockErr)
		var pe *pgconn.PgError
		if try < claimTries && errors.As(err, &pe) && pe.Code == "40001" {
			continue
		}
		return r, t, err
	}
}

// claimTries is how many times claim sends its batch while it fails to
// serialize.
const claimTries = 3

// endClaim reads the claim of a claim's batch (an implicit transaction)
// whose earlier statements gave errs, and closes the batch. The claim
// returns the run's thread too when withThread is set; nothing claimed is
// (nil, nil, nil).
func endClaim(br pgx.BatchResults, withThread bool, errs ...error) (*server.Run, *server.Thread, error) {
	var r *server.Run
	var t *server.Thread
	var claimErr error
	if withThread {
		r, t, claimErr = scanRunThread(br.QueryRow())
	} else {
		r, claimErr = scanRun(br.QueryRow())
	}
	closeErr := br.Close()
	if errors.Is(claimErr, pgx.ErrNoRows) {
		claimErr, r, t = nil, nil, nil
	}
	if err := errors.Join(append(errs, claimErr, closeErr)...); err != nil {
		return nil, nil, wrap("claim", err)
	}
	return r, t, nil
}

// CreateRunLocked implements [server.LockingRecorder] in two round
// trips of one transaction: BEGIN, the lock's take (a transaction-level
// advisory lock), one read of the thread (with whether the lock is held)
// and its active runs; then, after plan, the run's insert that marks its
// thread busy, and COMMIT (or ROLLBACK when plan creates nothing, or the
// lock is held elsewhere). Other instances taking the thread's lock
// meanwhile wait for the commit.
func (s *Store) CreateRunLocked(ctx context.Context, threadID string, plan func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error) {
	return s.createRunLocked(ctx, threadID, -1, plan)
}

// CreateRunClaimedLocked implements [server.RunClaimer]: CreateRunLocked's
// transaction, whose insert of a run plan returns running sets the run's
// lease from the database's clock. The claim ClaimThreadLocked would
// make after the commit (one round trip, one implicit transaction of
// two statements) is not needed.
func (s *Store) CreateRunClaimedLocked(ctx context.Context, threadID string, lease time.Duration, plan func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error) {
	if lease <= 0 {
		return false, errors.New("postgres: create claimed run: lease must be positive; pass the server's Config.Lease")
	}
	return s.createRunLocked(ctx, threadID, lease, plan)
}

// CreateRunClaimedCountActive implements [server.CountingClaimer]:
// CreateRunClaimedLocked's transaction, whose read of the thread and its
// active runs also counts owner's pending and running runs (on the
// index of the active runs by owner), in the read's snapshot: the count
// CountActiveRuns would make before it (one statement, one round trip
// and one implicit transaction) is not needed.
func (s *Store) CreateRunClaimedCountActive(ctx context.Context, threadID, owner string, lease time.Duration, plan func(*server.Thread, []*server.Run, int) (*server.Run, string, map[string]any, error)) (bool, error) {
	if lease <= 0 {
		return false, errors.New("postgres: create claimed run: lease must be positive; pass the server's Config.Lease")
	}
	return s.createRun(ctx, threadID, &owner, lease, plan)
}

// createRunLocked is CreateRunLocked; with a lease ≥ 0, a run plan
// returns running is inserted with a lease until the database's clock
// plus lease.
func (s *Store) createRunLocked(ctx context.Context, threadID string, lease time.Duration, plan func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error) {
	return s.createRun(ctx, threadID, nil, lease, func(t *server.Thread, active []*server.Run, _ int) (*server.Run, string, map[string]any, error) {
		return plan(t, active)
	})
}

// createRun is createRunLocked; with owner non-nil, its read counts
// *owner's active runs too, which plan is passed (0 without owner).
func (s *Store) createRun(ctx context.Context, threadID string, owner *string, lease time.Duration, plan func(*server.Thread, []*server.Run, int) (*server.Run, string, map[string]any, error)) (bool, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, wrap("create run", err)
	}
	defer conn.Release()
	if done, created, err := s.createGuessed(ctx, conn, threadID, owner, lease, plan); done {
		return created, err
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue(s.q.xactLock, threadID)
	if owner != nil {
		b.Queue(s.q.threadFreeActiveCount, threadID, *owner)
	} else {
		b.Queue(s.q.threadFreeActive, threadID)
	}
	br := conn.SendBatch(ctx, b)
	_, beginErr := br.Exec()
	_, lockErr := br.Exec()
	var free bool
	var t *server.Thread
	var active []*server.Run
	var counted int
	readErr := lockErr
	if readErr == nil {
		free, t, active, counted, readErr = scanThreadActive(br, threadID, owner != nil)
	}
	closeErr := br.Close()
	if err := errors.Join(beginErr, lockErr, readErr, closeErr); err != nil {
		rollback(conn)
		return false, wrap("create run", err)
	}
	if !free {
		rollback(conn)
		s.guesses.forget(threadID)
		return false, fmt.Errorf("thread %s: %w", threadID, server.ErrThreadLocked)
	}
	r, graphID, md, err := plan(t, active, counted)
	if err != nil || r == nil {
		rollback(conn)
		return false, err
	}
	args, err := runArgs(r)
	if err != nil {
		rollback(conn)
		return false, wrap("create run", err)
	}
	m, err := json.Marshal(md)
	if err != nil {
		rollback(conn)
		return false, wrap("create run", err)
	}
	query := s.q.createRunBusyMD
	if lease >= 0 && r.Status == server.RunRunning {
		query = s.q.createRunClaimedMD
		args[11] = lease.Microseconds() // replaces the run's LeaseUntil
	}
	b = &pgx.Batch{}
	b.Queue(query, append(args, graphID, m)...)
	b.Queue("COMMIT")
	br = conn.SendBatch(ctx, b)
	var newMD []byte
	err = br.QueryRow().Scan(&newMD)
	updated := err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil // the run inserted, its thread's row not updated: nothing to remember
	}
	_, commitErr := br.Exec()
	if err := errors.Join(err, commitErr, br.Close()); err != nil {
		rollback(conn)
		s.guesses.forget(threadID)
		return false, createErr(r, err)
	}
	// The thread as this creation left it, for the next one's guess
	// (createGuessed): the columns a plan reads, the metadata as the
	// insert's update wrote it, and graph_id its $18.
	if t != nil && updated {
		x := threadGuess{owner: t.Owner, graphID: graphID, head: t.Head, rolled: t.Rolled, md: newMD, run: r.ID}
		if owner != nil {
			x.counter, x.n = *owner, counted
		}
		s.guesses.put(threadID, x)
	}
	return true, nil
}

// createGuessed is createRun in one round trip, for a thread whose
// record the Store remembers from its last run's creation here
// (guesses), the run that creation inserted since ended here (a thread
// whose run may still be active is read: the insert would be refused):
// plan is called on the thread as remembered, with no active
// run and, counting (owner non-nil), with the principal's active runs
// as that creation counted them plus guessSlack; the run it returns is
// then inserted, in one batch (the lock's take and createRunGuess: one
// implicit transaction, without BEGIN or COMMIT), only if the
// transaction is READ COMMITTED (a Store whose pool's default isolation
// is another makes no guess: Store.readCommitted), the thread's record
// still holds what plan read, it has no active run, no lease of
// LockThread's is live on it, and the principal has at most that many
// active runs: the plan on the record
// read under the lock would have given that run (a principal's bound is
// checked against more runs than it has). done is false when nothing
// was sent (the thread is not remembered, or plan on the guess created
// nothing or failed) or the batch inserted nothing (the record did not
// match, the guess is forgotten): the caller then creates the run as
// without a guess, reading the thread, and calls plan again, as it may
// (a plan is idempotent). An error sending the batch is returned with
// done true, as the batch may have committed; when its reply was lost
// (an error of the connection, not PostgreSQL's), createdBy reads
// whether it did, and a run it created is reported created.
func (s *Store) createGuessed(ctx context.Context, conn *pgxpool.Conn, threadID string, owner *string, lease time.Duration, plan func(*server.Thread, []*server.Run, int) (*server.Run, string, map[string]any, error)) (done, created bool, err error) {
	if !s.readCommitted {
		return false, false, nil // the guarded insert would be refused
	}
	x, ok := s.guesses.get(threadID)
	if !ok || x.run != "" {
		return false, false, nil // not remembered, or its last run may be active
	}
	t, err := x.thread(threadID)
	if err != nil {
		s.guesses.forget(threadID)
		return false, false, nil
	}
	limit := int64(-1)
	if owner != nil {
		n := 0
		if x.counter == *owner {
			n = x.n
		}
		limit = int64(n + guessSlack)
	}
	r, graphID, md, err := plan(t, nil, max(int(limit), 0))
	if err != nil || r == nil {
		return false, false, nil
	}
	args, err := runArgs(r)
	if err != nil {
		return false, false, nil
	}
	m, err := json.Marshal(md)
	if err != nil {
		return false, false, nil
	}
	query := s.q.createRunGuess
	if lease >= 0 && r.Status == server.RunRunning {
		query = s.q.createRunGuessClaimed
		args[11] = lease.Microseconds() // replaces the run's LeaseUntil
	}
	var mdGuess any // NULL for a thread without metadata
	if x.md != nil {
		mdGuess = x.md
	}
	counter := ""
	if owner != nil {
		counter = *owner
	}
	b := &pgx.Batch{}
	b.Queue(s.q.xactLock, threadID)
	b.Queue(query, append(args, graphID, m, x.owner, mdGuess, x.graphID, x.head, x.rolled, counter, limit)...)
	br := conn.SendBatch(ctx, b)
	_, lockErr := br.Exec()
	var newMD []byte
	var n int64
	err = br.QueryRow().Scan(&newMD, &n)
	inserted := err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	// A batch that failed rolled back whole and left the connection
	// idle: there is nothing to roll back.
	if err := errors.Join(lockErr, err, br.Close()); err != nil {
		s.guesses.forget(threadID)
		if outcomeUnknown(err) {
			// The batch may have committed with its reply lost (a
			// connection cut after the commit): the run, if there, is
			// reported created rather than left running (or pending)
			// while its client, told the creation failed, retries it.
			// The connection is broken: it goes back to the pool (the
			// caller's Release is then a no-op) before the read, which
			// takes another. Its backend may still be running the
			// batch (waiting for the thread's lock, PostgreSQL not
			// noticing the closed socket): createdBy ends it first.
			pid := conn.Conn().PgConn().PID()
			conn.Release()
			if ok, rerr := s.createdBy(ctx, pid, r, lease); ok {
				s.log.Info("postgres: a run's creation committed but its reply was lost; read it back", zap.String("run", r.ID), zap.Error(err))
				return true, true, nil
			} else if rerr != nil {
				s.log.Warn("postgres: reading whether a run's creation committed after its reply was lost", zap.String("run", r.ID), zap.Error(rerr))
			}
		}
		return true, false, createErr(r, err)
	}
	if !inserted {
		s.guesses.forget(threadID)
		return false, false, nil
	}
	x.graphID, x.md, x.run = graphID, newMD, r.ID
	if owner != nil {
		x.counter, x.n = *owner, int(n)
	}
	s.guesses.put(threadID, x)
	return true, true, nil
}

// scanThreadActive reads the rows of threadFreeActive (of
// threadFreeActiveCount with counted): whether the thread's lock is
// free, the thread (nil when there is none) with the fields a run's
// creation reads, and its active runs, each with its ID, ThreadID and
// Status, in activeRuns' order (running before pending, each by seq),
// which the rows do not come in, and the owner's active runs counted (0
// without counted).
func scanThreadActive(br pgx.BatchResults, threadID string, counted bool) (free bool, t *server.Thread, active []*server.Run, n int, err error) {
	rows, err := br.Query()
	if err != nil {
		return false, nil, nil, 0, err
	}
	defer rows.Close()
	type seqRun struct {
		seq int64
		run *server.Run
	}
	var runs []seqRun
	for first := true; rows.Next(); first = false {
		var rowFree bool
		var tid, owner, graphID, head, rid, status *string
		var md []byte
		var rolled *bool
		var seq *int64
		dest := []any{&rowFree, &tid, &owner, &md, &graphID, &head, &rolled, &rid, &status, &seq}
		if counted {
			dest = append(dest, &n) // the same on every row
		}
		if err := rows.Scan(dest...); err != nil {
			return false, nil, nil, 0, err
		}
		if first {
			free = rowFree
		}
		if tid != nil {
			t = &server.Thread{ID: *tid, Owner: deref(owner), GraphID: deref(graphID), Head: deref(head), Rolled: rolled != nil && *rolled}
			if md != nil {
				if err := unmarshalNumbers(md, &t.Metadata); err != nil {
					return false, nil, nil, 0, err
				}
			}
		}
		if rid != nil && seq != nil {
			runs = append(runs, seqRun{*seq, &server.Run{ID: *rid, ThreadID: threadID, Status: deref(status)}})
		}
	}
	if err := rows.Err(); err != nil {
		return false, nil, nil, 0, err
	}
	slices.SortFunc(runs, func(a, b seqRun) int {
		if ap, bp := a.run.Status == server.RunPending, b.run.Status == server.RunPending; ap != bp {
			if ap {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, r := range runs {
		active = append(active, r.run)
	}
	return free, t, active, n, nil
}

// ClaimThreadLocked implements [server.LockingRecorder]: ClaimThread's
// transaction, in one round trip of two statements (an implicit
// transaction): the lock's take (a transaction-level advisory lock) with
// the lock of the thread's row, then the claim, which returns whether
// the lock is held, and the run claimed with its thread. The batch holds
// the lock only under READ COMMITTED: on a pool whose default isolation
// is another it returns ErrThreadLocked without a round trip, and a
// session of another isolation gets it from the claim, which claims
// nothing.
func (s *Store) ClaimThreadLocked(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, *server.Thread, error) {
	if !s.readCommitted {
		return nil, nil, fmt.Errorf("thread %s: %w (the pool's default isolation is not READ COMMITTED: the claim is made under LockThread's lock)", threadID, server.ErrThreadLocked)
	}
	b := &pgx.Batch{}
	b.Queue(s.q.xactLockThread, threadID)
	b.Queue(s.q.claimLocked, threadID, worker, lease.Microseconds())
	br := s.pool.SendBatch(ctx, b)
	_, lockErr := br.Exec()
	var free, found bool
	var rx runScan
	var tx threadScan
	claimErr := br.QueryRow().Scan(append(append([]any{&free, &found}, rx.dest()...), tx.dest()...)...)
	closeErr := br.Close()
	if err := errors.Join(lockErr, claimErr, closeErr); err != nil {
		return nil, nil, wrap("claim", err)
	}
	if !free {
		return nil, nil, fmt.Errorf("thread %s: %w", threadID, server.ErrThreadLocked)
	}
	if !found {
		return nil, nil, nil
	}
	r, err := rx.run()
	if err != nil {
		return nil, nil, wrap("claim", err)
	}
	t, err := tx.thread()
	if err != nil {
		return nil, nil, wrap("claim", err)
	}
	return r, t, nil
}

// FinishRunLocked implements [server.LockingRecorder] in one round trip
// of two statements (an implicit transaction): the lock's take (a
// transaction-level advisory lock), then one statement that refreshes
// the thread, appends the run's last event and ends the run. Like EndRun
// it notifies the other instances once committed; that notification
// wakes their streams for the last event too. As ClaimThreadLocked's,
// the batch holds the lock only under READ COMMITTED: otherwise it
// writes nothing and returns ErrThreadLocked (without a round trip on a
// pool whose default isolation is another).
func (s *Store) FinishRunLocked(ctx context.Context, e server.RunEnd) (int, server.Event, error) {
	active, ev, _, _, err := s.finishRun(ctx, e, "", 0)
	return active, ev, err
}

// FinishClaimNextLocked implements [server.NextClaimer]: FinishRunLocked's
// batch with ClaimThreadLocked's claim as its third statement, in one
// round trip (an implicit transaction, one commit). The claim, a
// statement of its own, takes its snapshot after the run's end, which it
// sees.
func (s *Store) FinishClaimNextLocked(ctx context.Context, e server.RunEnd, worker string, lease time.Duration) (int, server.Event, *server.Run, *server.Thread, error) {
	if lease <= 0 {
		return 0, server.Event{}, nil, nil, errors.New("postgres: finish run and claim the next: lease must be positive; pass the server's Config.Lease")
	}
	return s.finishRun(ctx, e, worker, lease)
}

// finishRun is FinishRunLocked; with a lease > 0 it also claims the
// thread's next run for worker in the same batch, and returns it with
// its thread.
func (s *Store) finishRun(ctx context.Context, e server.RunEnd, worker string, lease time.Duration) (int, server.Event, *server.Run, *server.Thread, error) {
	fail := func(err error) (int, server.Event, *server.Run, *server.Thread, error) {
		return 0, server.Event{}, nil, nil, err
	}
	if !s.readCommitted {
		return fail(fmt.Errorf("thread %s: %w (the pool's default isolation is not READ COMMITTED: the end is made under LockThread's lock)", e.ThreadID, server.ErrThreadLocked))
	}
	s.guesses.ended(e.ThreadID, e.RunID) // before the end is sent: see guesses.endedRun
	f := e.Refresh
	bytes, sub := refreshBytes(f)
	ins, err := interruptsColumn(f.Interrupts)
	if err != nil {
		return fail(wrap("finish run", err))
	}
	exclude := f.Exclude
	if exclude == nil {
		exclude = []string{}
	}
	max := e.MaxEvents
	if max <= 0 {
		max = math.MaxInt32
	}
	b := &pgx.Batch{}
	if e.Worker != "" {
		b.Queue(s.q.xactLockThread, e.ThreadID) // see finishRun's ownership
	} else {
		b.Queue(s.q.xactLock, e.ThreadID)
	}
	b.Queue(s.q.finishRun, e.ThreadID, exclude, f.State, raw(f.Values), ins, f.Next, f.Failed, f.Cancelled, f.At,
		e.RunID, s.origin, e.EventName, raw(e.EventData), max, e.Status, e.Error, e.At, e.Worker, e.Attempt, logEpoch(e.Attempt, e.Next-1), bytes, sub)
	if lease > 0 {
		b.Queue(s.q.claimLocked, e.ThreadID, worker, lease.Microseconds())
	}
	br := s.pool.SendBatch(ctx, b)
	_, lockErr := br.Exec()
	var free, found, lost bool
	var active int
	var pos *int64
	var trimmed any
	endErr := br.QueryRow().Scan(&free, &found, &active, &pos, &lost, &trimmed)
	var claimed bool
	var nx runScan
	var tx threadScan
	var claimErr error
	if lease > 0 {
		var nextFree bool
		claimErr = br.QueryRow().Scan(append(append([]any{&nextFree, &claimed}, nx.dest()...), tx.dest()...)...)
	}
	closeErr := br.Close()
	if err := errors.Join(lockErr, endErr, claimErr, closeErr); err != nil {
		if !outcomeUnknown(err) {
			return fail(wrap("finish run", err))
		}
		// The batch may have committed with its reply lost (a connection
		// cut after the commit): if it did, what it did is returned as
		// its reply would have, the run it claimed included, rather than
		// left to wait for its lease.
		active, ev, next, t, ok, ferr := s.finishedBy(ctx, e, worker, lease)
		if ferr != nil || !ok {
			if ferr != nil {
				s.log.Warn("postgres: reading whether a run's end committed after its reply was lost", zap.String("run", e.RunID), zap.Error(ferr))
			}
			return fail(wrap("finish run", err))
		}
		s.log.Info("postgres: a run's end committed but its reply was lost; read it back", zap.String("run", e.RunID), zap.Error(err))
		s.changed(e.RunID)
		s.guesses.ended(e.ThreadID, e.RunID)
		return active, ev, next, t, nil
	}
	var next *server.Run
	var t *server.Thread
	if claimed {
		if next, err = nx.run(); err == nil {
			t, err = tx.thread()
		}
		if err != nil {
			return fail(wrap("finish run: the next run claimed", err))
		}
	}
	if lost {
		// The end wrote nothing, but the claim, a statement of its own,
		// may have claimed the thread's next run for worker (the run
		// lost was ended by its new owner): it is returned with the
		// error, for the caller to execute now rather than leave to its
		// lease.
		return 0, server.Event{}, next, t, fmt.Errorf("postgres: finish run %s: the run is no longer running under worker %q attempt %d; its end is its new owner's to record: %w",
			e.RunID, e.Worker, e.Attempt, server.ErrLeaseLost)
	}
	if !free {
		// The end found the thread's lease live and wrote nothing. The
		// claim, a statement later, claims only when that lease expired
		// in between (it deletes an expired lease): the run it claimed
		// is returned with the error, for the caller to execute rather
		// than leave to its lease.
		return 0, server.Event{}, next, t, fmt.Errorf("thread %s: %w", e.ThreadID, server.ErrThreadLocked)
	}
	if !found {
		return active, server.Event{}, next, t, fmt.Errorf("run %s: %w", e.RunID, server.ErrNotFound)
	}
	s.changed(e.RunID)
	s.guesses.ended(e.ThreadID, e.RunID)
	var ev server.Event
	if pos != nil {
		ev = server.Event{ID: *pos, Name: e.EventName, Data: e.EventData}
	}
	return active, ev, next, t, nil
}

// readBackTimeout bounds createdBy: the backend's end and the read.
const readBackTimeout = 5 * time.Second

// createdBy reads whether the batch that created run r committed
// although its reply was lost: the run is there (its id is the
// creation's own). The batch's backend, pid, may not have noticed its
// client gone (PostgreSQL does not while a statement waits, for a lock
// say) and commit later: createdBy first terminates it and waits until
// it has left pg_stat_activity, its transaction committed or rolled
// back for good, then reads. The read runs without ctx's cancellation
// (the reply is most often lost to ctx's end), for at most
// readBackTimeout. A backend still there after that, or one createdBy
// may not terminate (another role's without pg_signal_backend), is an
// error: whether the run was created stays unknown. A pid that is not
// a backend of the database's (a pooler's own) is not waited for.
//
// A run created claimed (lease ≥ 0 and r running) is
// the creation's to execute only if it is still running under r's
// worker and attempt: the read renews its lease (lease from now), so
// that no sweeper claims it before it runs, and finds nothing when its
// lease expired and a sweeper claimed it again (a new attempt, left to
// that sweeper).
func (s *Store) createdBy(ctx context.Context, pid uint32, r *server.Run, lease time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackTimeout)
	defer cancel()
	if err := s.endBackend(ctx, pid); err != nil {
		return false, err
	}
	if lease >= 0 && r.Status == server.RunRunning {
		tag, err := s.pool.Exec(ctx, s.q.renewAttempt, r.ID, r.Worker, lease.Microseconds(), r.Attempt)
		return err == nil && tag.RowsAffected() == 1, err
	}
	var ok bool
	err := s.pool.QueryRow(ctx, s.q.runExists, r.ID).Scan(&ok)
	return err == nil && ok, err
}

// endBackend terminates the backend pid, if it is still one of the
// database's, and waits until it has left pg_stat_activity (polling,
// until ctx ends).
func (s *Store) endBackend(ctx context.Context, pid uint32) error {
	if pid == 0 {
		return nil
	}
	var signalled bool
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(bool_or(pg_terminate_backend(pid)), false)
		FROM pg_stat_activity WHERE pid = $1 AND datname = current_database()`, int32(pid)).Scan(&signalled)
	if err != nil {
		return fmt.Errorf("terminate backend %d of a creation whose reply was lost: %w", pid, err)
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		var there bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND datname = current_database())`, int32(pid)).Scan(&there); err != nil {
			return fmt.Errorf("wait for backend %d of a creation whose reply was lost to end: %w", pid, err)
		}
		if !there {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("backend %d of a creation whose reply was lost still running: %w", pid, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// outcomeUnknown reports whether err leaves unknown whether the
// statements sent committed: an error of the connection, not one
// PostgreSQL returned (which rolled the transaction back).
func outcomeUnknown(err error) bool {
	var pe *pgconn.PgError
	return !errors.As(err, &pe)
}

// finishedBy reads whether finishRun's batch for e committed although
// its reply was lost, and if it did (ok), what it returned: the active
// runs and the event (read now, as the batch left them) and, for a
// worker, the run its claim took with its thread (the run under that
// worker written by the same transaction). The run's end is told apart
// from another's by its status and time, and by its worker when e names
// one (an end under another worker would have been refused). The run
// claimed is adopted only if its lease is still live as it is read, and
// the read renews the lease (lease from now): a lease that expired
// meanwhile may have been claimed by a sweeper too, and the run is left
// to it.
func (s *Store) finishedBy(ctx context.Context, e server.RunEnd, worker string, lease time.Duration) (active int, ev server.Event, next *server.Run, t *server.Thread, ok bool, err error) {
	exclude := e.Refresh.Exclude
	if exclude == nil {
		exclude = []string{}
	}
	var nx runScan
	var tx threadScan
	var pos *int64
	var claimed bool
	err = s.pool.QueryRow(ctx, s.q.finishedBy, e.RunID, worker, e.Status, e.At, exclude, lease.Microseconds()).Scan(
		append(append([]any{&active, &pos, &claimed}, nx.dest()...), tx.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, server.Event{}, nil, nil, false, nil
	}
	if err != nil {
		return 0, server.Event{}, nil, nil, false, err
	}
	if claimed {
		if next, err = nx.run(); err == nil {
			t, err = tx.thread()
		}
		if err != nil {
			return 0, server.Event{}, nil, nil, false, err
		}
	}
	if pos != nil && e.EventName != "" {
		ev = server.Event{ID: *pos, Name: e.EventName, Data: e.EventData}
	}
	return active, ev, next, t, true, nil
}

// CreateRunBusy implements [server.RunRecorder] in one statement, that
// inserts the run and updates its thread.
func (s *Store) CreateRunBusy(ctx context.Context, r *server.Run, graphID string, md map[string]any) error {
	args, err := runArgs(r)
	if err != nil {
		return wrap("create run", err)
	}
	m, err := json.Marshal(md)
	if err != nil {
		return wrap("create run", err)
	}
	_, err = s.pool.Exec(ctx, s.q.createRunBusy, append(args, graphID, m)...)
	s.guesses.forget(r.ThreadID) // the thread has a run its guess does not know of
	return createErr(r, err)
}

// StartRun implements [server.RunRecorder] in one statement. It sends no
// notification: no other instance acts on a run's start.
func (s *Store) StartRun(ctx context.Context, runID, start string) (*server.Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, s.q.startRun, runID, start))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", runID, server.ErrNotFound)
	}
	return r, wrap("start run", err)
}

// StartRunEvent implements [server.RunStarter] in one statement, that
// marks the run started, appends the event to the run's event log (as
// AppendEvent does, notifying the other instances) at one commit.
// With Config.SharedCheckpoints the commit does not wait for its WAL
// flush.
// max ≤ 0 keeps every event.
func (s *Store) StartRunEvent(ctx context.Context, runID, start, name string, data json.RawMessage, max int) (string, server.Event, error) {
	if max <= 0 {
		max = math.MaxInt32
	}
	var cancel string
	var pos int64
	var trimmed, sent, setting any
	query, dest := s.q.startRunEvent, []any{&cancel, &pos, &trimmed, &sent}
	if s.shared {
		query, dest = s.q.startRunEventAsync, append(dest, &setting)
	}
	err := s.pool.QueryRow(ctx, query, runID, start, s.origin, name, raw(data), max, s.channel, s.origin+":"+runID).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", server.Event{}, fmt.Errorf("run %s: %w", runID, server.ErrNotFound)
	}
	if err != nil {
		return "", server.Event{}, wrap("start run", err)
	}
	return cancel, server.Event{ID: pos, Name: name, Data: data}, nil
}

// EndRun implements [server.RunRecorder] in one statement, and notifies
// the other instances once it committed.
//
// The statement also releases the lock of the run's thread if this Store
// holds it ([Store.LockThread]) and no other instance waits for it, as
// the server ends a run as the last write under the thread's lock and
// unlocks right after: the release commits with the run's end, one round
// trip earlier, and the unlock function then sends nothing. A lock
// another instance waits for is left to the unlock function, whose
// release notifies the waiter (a NOTIFY in EndRun's transaction, which
// writes a logged table, would hold PostgreSQL's notification lock
// across its WAL flush). A caller that ends a run under the thread's
// lock must make EndRun its last write under it.
func (s *Store) EndRun(ctx context.Context, runID, status, msg string, at time.Time) (*server.Run, error) {
	s.guesses.endedRun(runID) // before the end is sent: see guesses.endedRun
	keys, tokens := s.locks.Holding()
	var released string
	r, err := scanRun(extraRow{s.pool.QueryRow(ctx, s.q.endRun, runID, status, msg, at, keys, tokens), []any{&released}})
	if released != "" {
		s.locks.Released(released)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", runID, server.ErrNotFound)
	}
	if err != nil {
		return nil, wrap("end run", err)
	}
	s.changed(runID)
	s.guesses.ended(r.ThreadID, runID)
	return r, nil
}

// EndRunOwned implements [server.OwnedEnder]: EndRun in one statement
// that ends the run only if it is running under worker with attempt.
// When it is not, it writes nothing and a second read tells
// [server.ErrLeaseLost] from [server.ErrNotFound].
func (s *Store) EndRunOwned(ctx context.Context, runID, status, msg string, at time.Time, worker string, attempt int) (*server.Run, error) {
	s.guesses.endedRun(runID) // before the end is sent: see guesses.endedRun
	keys, tokens := s.locks.Holding()
	var released string
	r, err := scanRun(extraRow{s.pool.QueryRow(ctx, s.q.endRunOwned, runID, status, msg, at, keys, tokens, worker, attempt), []any{&released}})
	if released != "" {
		s.locks.Released(released)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		var exists bool
		if err := s.pool.QueryRow(ctx, s.q.runExists, runID).Scan(&exists); err != nil {
			return nil, wrap("end run", err)
		}
		if !exists {
			return nil, fmt.Errorf("run %s: %w", runID, server.ErrNotFound)
		}
		return nil, fmt.Errorf("postgres: end run %s: the run is no longer running under worker %q attempt %d; its end is its new owner's to record: %w",
			runID, worker, attempt, server.ErrLeaseLost)
	}
	if err != nil {
		return nil, wrap("end run", err)
	}
	s.changed(runID)
	s.guesses.ended(r.ThreadID, runID)
	return r, nil
}

// RefreshThread implements [server.RunRecorder] in one statement, that
// counts the thread's active runs and updates the thread's row
// ([server.ThreadRefresh.Apply] in SQL).
func (s *Store) RefreshThread(ctx context.Context, threadID string, f server.ThreadRefresh) (int, error) {
	bytes, sub := refreshBytes(f)
	ins, err := interruptsColumn(f.Interrupts)
	if err != nil {
		return 0, wrap("refresh thread", err)
	}
	exclude := f.Exclude
	if exclude == nil {
		exclude = []string{}
	}
	var n int
	var found bool
	if err := s.pool.QueryRow(ctx, s.q.refreshThread, threadID, exclude, f.State, raw(f.Values), ins, f.Next, f.Failed, f.Cancelled, f.At, bytes, sub).Scan(&n, &found); err != nil {
		return 0, wrap("refresh thread", err)
	}
	if !found {
		return 0, nil // deleted meanwhile
	}
	return n, nil
}

// ClaimDue implements [server.Store] in one statement (one round trip,
// an implicit transaction): it locks, with FOR UPDATE SKIP LOCKED, the
// row of a thread that has a due run and no run under a live lease,
// oldest due run first, and claims that thread's next run. A pending run
// changed less than Config.PendingGrace ago is not due here yet: its
// creating instance claims it.
func (s *Store) ClaimDue(ctx context.Context, worker string, lease time.Duration) (*server.Run, error) {
	r, err := scanRun(s.pool.QueryRow(ctx, s.q.claimDue, s.grace.Microseconds(), worker, lease.Microseconds()))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return r, wrap("claim due run", err)
}

// Renew implements [server.Store].
func (s *Store) Renew(ctx context.Context, runID, worker string, lease time.Duration) error {
	tag, err := s.pool.Exec(ctx, s.q.renew, runID, worker, lease.Microseconds())
	if err != nil {
		return wrap("renew", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %s is not held by %s: %w", runID, worker, server.ErrNotFound)
	}
	return nil
}

// RenewAttempt implements [server.AttemptRenewer].
func (s *Store) RenewAttempt(ctx context.Context, runID, worker string, attempt int, lease time.Duration) error {
	tag, err := s.pool.Exec(ctx, s.q.renewAttempt, runID, worker, lease.Microseconds(), attempt)
	if err != nil {
		return wrap("renew", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("run %s is not held by %s attempt %d: %w", runID, worker, attempt, server.ErrNotFound)
	}
	return nil
}

// sweptLogs bounds the orphaned event logs one [Store.Prune] deletes.
const sweptLogs = 1000

// prunedRecords bounds the runs one [Store.Prune] deletes for keep; the
// next Prune deletes more.
const prunedRecords = 10000

// Prune implements [server.Store]: one statement deletes the runs past
// keep with their event logs (it reads the ended runs whole, and
// deletes up to 10,000 runs a call), one marks the runs ended before
// endedBefore pruned and deletes their event logs. It also deletes up to
// 1000 event logs whose run is gone or pruned (an append racing with the
// run's deletion can leave one), and drops the thread locks whose
// holders died.
func (s *Store) Prune(ctx context.Context, endedBefore time.Time, keep int) (int, error) {
	// Each step runs whatever the others did: a step that fails (a
	// statement_timeout on a large table) does not stop the rest.
	var errs []error
	n := 0
	if keep > 0 {
		var deleted int
		if err := s.pool.QueryRow(ctx, s.q.pruneRecords, keep, prunedRecords).Scan(&deleted); err != nil {
			errs = append(errs, wrap("prune: deleting the runs past keep", err))
		}
		n += deleted
	}
	if !endedBefore.IsZero() {
		rows, err := s.pool.Query(ctx, s.q.prune, endedBefore)
		if err == nil {
			var runs []string
			runs, err = pgx.CollectRows(rows, pgx.RowTo[string])
			n += len(runs)
		}
		if err != nil {
			errs = append(errs, wrap("prune", err))
		}
	}
	var swept int
	if err := s.pool.QueryRow(ctx, s.q.sweepLogs, sweptLogs).Scan(&swept); err != nil {
		errs = append(errs, wrap("prune: sweeping the event logs of deleted runs", err))
	}
	if swept > 0 {
		s.log.Info("postgres: deleted the event logs of deleted runs", zap.Int("logs", swept))
	}
	if _, err := s.pool.Exec(ctx, s.q.dropLocks); err != nil {
		errs = append(errs, wrap("prune: dropping the locks of dead holders", err))
	}
	return n, errors.Join(errs...)
}

// --- events ---

// AppendEvent implements [server.Store] through the event log
// ([evpg.Log]): the event is written with the events other runs append
// meanwhile, in one statement that numbers it from its run's log, drops
// the one that falls out of the last max and notifies the other
// instances; it returns once the event is stored. max ≤ 0 keeps every
// event.
func (s *Store) AppendEvent(ctx context.Context, runID, name string, data json.RawMessage, max int) (server.Event, error) {
	if max <= 0 {
		max = math.MaxInt32
	}
	id, err := s.events.Append(ctx, runID, max, evpg.Record{Name: name, Data: data})
	if errors.Is(err, event.ErrUnknownKey) {
		return server.Event{}, fmt.Errorf("run %s: %w", runID, server.ErrNotFound)
	}
	if err != nil {
		return server.Event{}, wrap("append event", err)
	}
	return server.Event{ID: id, Name: name, Data: data}, nil
}

// Events implements [server.Store]: an index range scan from after, so
// the cost is that of the events returned, not of the log. A run with
// no event yet costs a second statement, that finds the run. The read
// also returns the log's next id: a log whose next id is at or below
// after restarted (a database crash emptied its UNLOGGED tables and the
// run's next attempt numbered its events from 0 again), and Events then
// reads it again from its start, as [server.Store] says.
func (s *Store) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	out, first, next, found, err := s.readEvents(ctx, runID, after, limit)
	if err != nil {
		return nil, 0, wrap("read events", err)
	}
	if !found {
		if _, err := s.Run(ctx, runID); err != nil {
			return nil, 0, err
		}
		return nil, 0, nil
	}
	if after >= 0 && next <= after {
		if out, first, _, _, err = s.readEvents(ctx, runID, -1, limit); err != nil {
			return nil, 0, wrap("read events", err)
		}
	}
	return out, first, nil
}

// LastEvent implements [server.LastEventReader].
func (s *Store) LastEvent(ctx context.Context, runID, name string) (server.Event, bool, error) {
	var ev server.Event
	var data []byte
	err := s.pool.QueryRow(ctx, s.q.lastEvent, runID, name).Scan(&ev.ID, &ev.Name, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return server.Event{}, false, nil
	}
	if err != nil {
		return server.Event{}, false, wrap("read the last event", err)
	}
	ev.Data = json.RawMessage(data)
	return ev, true, nil
}

// LastEventID implements [server.LastEventIDReader].
func (s *Store) LastEventID(ctx context.Context, runID string) (int64, bool, error) {
	var id int64
	err := s.pool.QueryRow(ctx, s.q.lastEventID, runID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, wrap("read the last event id", err)
	}
	return id, true, nil
}

// readEvents reads up to limit (≤ 0: all) events of the run's log after
// after, the id of its oldest event kept (0 when none is), its next id,
// and whether the log exists, in one statement: the event log's read
// ([evpg.Log.Read]) with the log's next id.
func (s *Store) readEvents(ctx context.Context, runID string, after int64, limit int) (out []server.Event, first, next int64, found bool, err error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, s.q.readEvents, runID, after, lim)
	if err != nil {
		return nil, 0, 0, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var min, pos *int64
		var name *string
		var data []byte
		if err := rows.Scan(&next, &min, &pos, &name, &data); err != nil {
			return nil, 0, 0, false, err
		}
		found = true
		if min != nil {
			first = *min
		}
		if pos != nil {
			out = append(out, server.Event{ID: *pos, Name: *name, Data: json.RawMessage(data)})
		}
	}
	return out, first, next, found, rows.Err()
}

// --- watch ---

// WatchRuns implements [server.RunWatcher]: it LISTENs on a connection of
// its own (reconnecting after a failure, with a pause) and calls fn with
// the id of each run another Store changed, until ctx ends.
func (s *Store) WatchRuns(ctx context.Context, fn func(runID string)) error {
	for {
		err := s.listen(ctx, fn)
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("postgres: run watch lost its connection; reconnecting", zap.Error(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listen(ctx context.Context, fn func(runID string)) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection that listened is not returned to the pool: the next
	// user would receive its notifications.
	defer func() {
		c := conn.Hijack()
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		origin, runID, ok := strings.Cut(n.Payload, ":")
		if ok && origin != s.origin {
			fn(runID)
		}
	}
}
