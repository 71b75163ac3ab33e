package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/chain"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/prune"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/record"
	"github.com/agentgraph/agentgraph/internal/sqlitedb"
	"github.com/agentgraph/agentgraph/internal/sqlstore"
)

// Config configures a Saver.
type Config struct {
	// Path is the database file. It is created, with its tables, if it does
	// not exist. Required.
	Path string
	// BusyTimeout is how long a write waits for another process's write to
	// finish before failing. Zero means 5 seconds. New waits as long, at
	// most, for another process creating or migrating the same file.
	BusyTimeout time.Duration
	// SyncFull makes every write reach the disk before it returns
	// (PRAGMA synchronous=FULL). When false, the default, a write survives a
	// crash of the process but the last writes may be lost if the machine
	// loses power.
	SyncFull bool
	// Logger receives migration and pruning messages. Nil means no logging.
	Logger *zap.Logger
}

// Saver is a checkpoint.Saver storing its data in a SQLite file. It is safe
// for concurrent use by many goroutines and by several processes opening the
// same file.
type Saver struct {
	db  *sql.DB
	log *zap.Logger
	// mu serialises this process's write transactions so that they queue in
	// Go instead of polling SQLite's lock; other processes are kept out by
	// SQLite's own lock.
	mu sync.Mutex
	// stmts are the statements of Put and Get by query, prepared by New.
	stmts map[string]*sql.Stmt
}

var (
	_ checkpoint.Saver          = (*Saver)(nil)
	_ checkpoint.SnapshotLister = (*Saver)(nil)
	_ checkpoint.Pruner         = (*Saver)(nil)
	_ checkpoint.UsageReporter  = (*Saver)(nil)
	_ checkpoint.Copier         = (*Saver)(nil)
)

// New opens (creating if needed) the database at cfg.Path and brings its
// tables up to date.
func New(ctx context.Context, cfg Config) (*Saver, error) {
	if cfg.Path == "" {
		return nil, errors.New("sqlite: Config.Path is empty; set it to the database file, for example \"data/checkpoints.db\"")
	}
	if cfg.Path == ":memory:" || strings.HasPrefix(cfg.Path, "file::memory:") {
		return nil, errors.New("sqlite: Config.Path is an in-memory database, which each connection would see empty; use checkpoint.NewMemory for an in-memory store, or a file path")
	}
	if strings.ContainsAny(cfg.Path, "?#") {
		return nil, fmt.Errorf("sqlite: Config.Path %q contains '?' or '#'; use a plain file path", cfg.Path)
	}
	busy := cfg.BusyTimeout
	if busy == 0 {
		busy = 5 * time.Second
	}
	if busy < 0 {
		return nil, fmt.Errorf("sqlite: Config.BusyTimeout is %v; use 0 for the 5 s default or a positive duration", busy)
	}
	syncMode := "NORMAL"
	if cfg.SyncFull {
		syncMode = "FULL"
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+syncMode+")")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", cfg.Path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	s := &Saver{db: db, log: log}
	// The first connection's pragmas switch a new file to WAL; while
	// another connection (of this or another process) switches it or
	// migrates, that and the migration may fail with SQLITE_BUSY at once,
	// without waiting: they changed nothing, and are tried again for up
	// to the busy timeout (sqlitedb.RetryBusy).
	err = sqlitedb.RetryBusy(ctx, busy, func() error {
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("sqlite: open %s: %w; check that its directory exists and is writable", cfg.Path, err)
		}
		return s.migrate(ctx)
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Saver) Close() error {
	s.closeStmts()
	return s.db.Close()
}

// The statements of Put and Get, prepared once by New.
//
// The recursive walks (qChains, and loadPageChains's query) follow a
// delta's base only when it is older than the delta (w.base < w.writer),
// as every base Put writes is: each step goes to an older blob, so a walk
// ends after at most as many steps as its channel has stored blobs, and
// damaged data (a loop, a delta applying to itself or to a newer blob)
// stops it instead of making it spin. chain.Resolve then reports the
// damage.
const (
	qChains = `WITH RECURSIVE starts(channel, writer) AS MATERIALIZED (
			SELECT key, json_extract(value, '$[1]') FROM json_each(?)
		),
		walk(channel, writer, kind, base, data) AS (
			SELECT b.channel, b.writer, b.kind, b.base, b.data
			FROM starts AS s
			CROSS JOIN agentgraph_blobs AS b ON b.thread_id = ? AND b.channel = s.channel AND b.writer = s.writer
			UNION ALL
			SELECT b.channel, b.writer, b.kind, b.base, b.data
			FROM walk AS w
			JOIN agentgraph_blobs AS b ON b.thread_id = ? AND b.channel = w.channel AND b.writer = w.base
			WHERE w.kind = 2 AND w.base > 0 AND w.base < w.writer
		)
		SELECT channel, writer, kind, base, data FROM walk`
	qThread    = `SELECT latest_id, seq FROM agentgraph_threads WHERE thread_id = ?`
	qRefs      = `SELECT refs FROM agentgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`
	qPutThread = `INSERT INTO agentgraph_threads (thread_id, latest_id, seq, touched) VALUES (?, ?, ?, ?)
			ON CONFLICT (thread_id) DO UPDATE SET latest_id = excluded.latest_id, seq = excluded.seq, touched = excluded.touched`
	qPutCheckpoint = `INSERT INTO agentgraph_checkpoints (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qPutBlob  = `INSERT INTO agentgraph_blobs (thread_id, channel, writer, kind, base, data) VALUES (?, ?, ?, ?, ?, ?)`
	qPutWrite = `INSERT INTO agentgraph_writes (thread_id, checkpoint_seq, task_id, node, channel, value) VALUES (?, ?, ?, ?, ?, ?)`
	qLatest   = `SELECT ` + checkpointColumns + ` FROM agentgraph_checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1`
	qByID     = `SELECT ` + checkpointColumns + ` FROM agentgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`
	qWrites   = `SELECT task_id, node, channel, value FROM agentgraph_writes WHERE thread_id = ? AND checkpoint_seq = ? ORDER BY id`
)

var hotQueries = []string{qChains, qThread, qRefs, qPutThread, qPutCheckpoint, qPutBlob, qPutWrite, qLatest, qByID, qWrites}

// prepare prepares the statements of Put and Get.
func (s *Saver) prepare(ctx context.Context) error {
	s.stmts = make(map[string]*sql.Stmt, len(hotQueries))
	for _, q := range hotQueries {
		st, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			s.closeStmts()
			return fmt.Errorf("sqlite: preparing %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	return nil
}

func (s *Saver) closeStmts() {
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
}

// stmt returns tx's handle on the statement New prepared for query:
// SQLite parses it once per connection instead of once per call.
func (s *Saver) stmt(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	return tx.StmtContext(ctx, s.stmts[query])
}

// write runs fn in an immediate (write-locked) transaction.
func (s *Saver) write(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// read runs fn in a read-only transaction, which sees one snapshot.
func (s *Saver) read(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// Put implements checkpoint.Saver.
func (s *Saver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	p, err := record.EncodePut(expect, cp, blobs, writes)
	if err != nil {
		return err
	}
	body, md, pieces, id, created := p.Body, p.Metadata, p.Pieces, p.ID, cp.CreatedAt
	now := time.Now()
	if created.IsZero() {
		created = now
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		var actual string
		var seq int64
		err := s.stmt(ctx, tx, qThread).QueryRowContext(ctx, cp.ThreadID).Scan(&actual, &seq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: put: %w", err)
		}
		if actual != expect {
			return &checkpoint.ConflictError{ThreadID: cp.ThreadID, Expected: expect, Actual: actual}
		}
		var parent chain.Refs
		if cp.ParentID != "" {
			var raw []byte
			err := s.stmt(ctx, tx, qRefs).QueryRowContext(ctx, cp.ThreadID, cp.ParentID).Scan(&raw)
			if errors.Is(err, sql.ErrNoRows) {
				return checkpoint.NotFoundError(cp.ThreadID, cp.ParentID)
			}
			if err != nil {
				return fmt.Errorf("sqlite: put: %w", err)
			}
			if parent, err = chain.Decode(raw); err != nil {
				return fmt.Errorf("sqlite: put: %w", err)
			}
		}
		if cp.ID != "" {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM agentgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`, cp.ThreadID, cp.ID).Scan(&n); err != nil {
				return fmt.Errorf("sqlite: put: %w", err)
			}
			if n > 0 {
				return fmt.Errorf("%w: Put: thread %q already has checkpoint %q; leave Checkpoint.ID empty to get a new one", checkpoint.ErrInvalid, cp.ThreadID, cp.ID)
			}
		}
		seq++
		refs, err := chain.Next(parent, cp.Versions, pieces, seq)
		if err != nil {
			return fmt.Errorf("%w: Put: %v", checkpoint.ErrInvalid, err)
		}
		rawRefs, err := chain.Encode(refs)
		if err != nil {
			return fmt.Errorf("sqlite: put: %w", err)
		}
		if _, err := s.stmt(ctx, tx, qPutThread).ExecContext(ctx,
			cp.ThreadID, id, seq, now.UnixNano()); err != nil {
			return fmt.Errorf("sqlite: put: %w", err)
		}
		if _, err := s.stmt(ctx, tx, qPutCheckpoint).ExecContext(ctx,
			cp.ThreadID, seq, id, cp.ParentID, cp.Step, rawRefs, body, string(md), created.UnixNano()); err != nil {
			return fmt.Errorf("sqlite: put: %w", err)
		}
		for _, b := range blobs {
			data := b.Data
			if data == nil {
				data = []byte{}
			}
			if _, err := s.stmt(ctx, tx, qPutBlob).ExecContext(ctx,
				cp.ThreadID, b.Channel, seq, int(b.Kind), parent.Base(b.Channel, b.Kind == checkpoint.Delta), data); err != nil {
				return fmt.Errorf("sqlite: put: %w", err)
			}
		}
		if err := s.insertWrites(ctx, tx, cp.ThreadID, seq, writes); err != nil {
			return fmt.Errorf("sqlite: put: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	cp.ID, cp.CreatedAt = id, created
	return nil
}

// PatchMetadata implements checkpoint.MetadataPatcher.
func (s *Saver) PatchMetadata(ctx context.Context, threadID, checkpointID string, md map[string]string) error {
	if err := checkpoint.ValidateID("PatchMetadata", "the thread ID", threadID); err != nil {
		return err
	}
	if err := checkpoint.ValidateID("PatchMetadata", "the checkpoint ID", checkpointID); err != nil {
		return err
	}
	if err := checkpoint.ValidateMetadata("PatchMetadata", "the metadata", md); err != nil {
		return err
	}
	patch, err := record.EncodeMetadata(md)
	if err != nil {
		return fmt.Errorf("sqlite: patch metadata: %w", err)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE agentgraph_checkpoints SET metadata = json_patch(metadata, ?) WHERE thread_id = ? AND checkpoint_id = ?`,
			string(patch), threadID, checkpointID)
		if err != nil {
			return fmt.Errorf("sqlite: patch metadata: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("sqlite: patch metadata: %w", err)
		} else if n == 0 {
			return checkpoint.NotFoundError(threadID, checkpointID)
		}
		return nil
	})
}

// PutWrites implements checkpoint.Saver.
func (s *Saver) PutWrites(ctx context.Context, threadID, checkpointID string, writes []checkpoint.Write) error {
	if err := checkpoint.ValidateWrites(threadID, checkpointID, writes); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM agentgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`, threadID, checkpointID).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return checkpoint.NotFoundError(threadID, checkpointID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: put writes: %w", err)
		}
		done := map[string]bool{}
		for _, w := range writes {
			if done[w.TaskID] {
				continue
			}
			done[w.TaskID] = true
			if _, err := tx.ExecContext(ctx, `DELETE FROM agentgraph_writes WHERE thread_id = ? AND checkpoint_seq = ? AND task_id = ?`, threadID, seq, w.TaskID); err != nil {
				return fmt.Errorf("sqlite: put writes: %w", err)
			}
		}
		if err := s.insertWrites(ctx, tx, threadID, seq, writes); err != nil {
			return fmt.Errorf("sqlite: put writes: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agentgraph_threads SET touched = ? WHERE thread_id = ?`, time.Now().UnixNano(), threadID); err != nil {
			return fmt.Errorf("sqlite: put writes: %w", err)
		}
		return nil
	})
}

// insertWrites stores writes against the checkpoint with sequence number
// seq, in the order given.
func (s *Saver) insertWrites(ctx context.Context, tx *sql.Tx, threadID string, seq int64, writes []checkpoint.Write) error {
	for _, w := range writes {
		v := w.Value
		if v == nil {
			v = []byte{}
		}
		if _, err := s.stmt(ctx, tx, qPutWrite).ExecContext(ctx,
			threadID, seq, w.TaskID, w.Node, w.Channel, v); err != nil {
			return err
		}
	}
	return nil
}

const checkpointColumns = `checkpoint_id, seq, parent_id, step, refs, body, metadata, created_at`

type row struct {
	cp   checkpoint.Checkpoint
	seq  int64
	refs chain.Refs
}

func scanCheckpoint(threadID string, sc interface{ Scan(...any) error }) (row, error) {
	var (
		r       row
		rawRefs []byte
		body    []byte
		md      string
		created int64
	)
	if err := sc.Scan(&r.cp.ID, &r.seq, &r.cp.ParentID, &r.cp.Step, &rawRefs, &body, &md, &created); err != nil {
		return r, err
	}
	r.cp.ThreadID = threadID
	r.cp.CreatedAt = time.Unix(0, created)
	var err error
	if r.refs, err = chain.Decode(rawRefs); err != nil {
		return r, record.Corrupt(threadID, r.cp.ID, err)
	}
	r.cp.Versions = r.refs.Versions()
	if err := record.DecodeBody(body, &r.cp); err != nil {
		return r, err
	}
	if r.cp.Metadata, err = record.DecodeMetadata([]byte(md), threadID, r.cp.ID); err != nil {
		return r, err
	}
	return r, nil
}

// Get implements checkpoint.Saver.
func (s *Saver) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := checkpoint.ValidateID("Get", "the thread ID", threadID); err != nil {
		return nil, err
	}
	if err := checkpoint.ValidateID("Get", "the checkpoint ID", checkpointID); err != nil {
		return nil, err
	}
	var snap *checkpoint.Snapshot
	err := s.read(ctx, func(tx *sql.Tx) error {
		var q *sql.Row
		if checkpointID == "" {
			q = s.stmt(ctx, tx, qLatest).QueryRowContext(ctx, threadID)
		} else {
			q = s.stmt(ctx, tx, qByID).QueryRowContext(ctx, threadID, checkpointID)
		}
		r, err := scanCheckpoint(threadID, q)
		if errors.Is(err, sql.ErrNoRows) {
			return checkpoint.NotFoundError(threadID, checkpointID)
		}
		if errors.Is(err, checkpoint.ErrCorrupt) {
			return err
		}
		if err != nil {
			return fmt.Errorf("sqlite: get: %w", err)
		}
		blobs, err := s.loadChains(ctx, tx, threadID, r.refs)
		if err != nil {
			return err
		}
		if snap, err = record.Snapshot(ctx, threadID, r.cp, r.seq, r.refs, blobs, nil); err != nil {
			return err
		}
		rows, err := s.stmt(ctx, tx, qWrites).QueryContext(ctx, threadID, r.seq)
		if err != nil {
			return fmt.Errorf("sqlite: get: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var w checkpoint.Write
			if err := rows.Scan(&w.TaskID, &w.Node, &w.Channel, &w.Value); err != nil {
				return fmt.Errorf("sqlite: get: %w", err)
			}
			snap.Writes = append(snap.Writes, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// loadChains reads every blob the channels of refs need, following delta
// chains back to their full values, in one recursive query.
func (s *Saver) loadChains(ctx context.Context, tx *sql.Tx, threadID string, refs chain.Refs) (map[chain.Key]chain.Blob, error) {
	out := make(map[chain.Key]chain.Blob, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	raw, err := chain.Encode(refs)
	if err != nil {
		return nil, err
	}
	// As in loadPageChains, the references are unpacked once and drive
	// primary-key look-ups.
	rows, err := s.stmt(ctx, tx, qChains).QueryContext(ctx, string(raw), threadID, threadID)
	return readBlobs(rows, err, out)
}

// List implements checkpoint.Saver.
func (s *Saver) List(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	if err := validateList(threadID, opts); err != nil {
		return nil, err
	}
	var out []checkpoint.Checkpoint
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := listRows(ctx, tx, threadID, opts)
		if err != nil {
			return err
		}
		out = make([]checkpoint.Checkpoint, len(rows))
		for i, r := range rows {
			out[i] = r.cp
		}
		return nil
	})
	return out, err
}

// listRows reads the checkpoints List selects, newest first.
func listRows(ctx context.Context, tx *sql.Tx, threadID string, opts checkpoint.ListOptions) ([]row, error) {
	query := `SELECT ` + checkpointColumns + ` FROM agentgraph_checkpoints WHERE thread_id = ?`
	args := []any{threadID}
	if opts.Before != "" {
		var before int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM agentgraph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`, threadID, opts.Before).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, checkpoint.NotFoundError(threadID, opts.Before)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: list: %w", err)
		}
		query += ` AND seq < ?`
		args = append(args, before)
	}
	for k, v := range opts.Metadata {
		query += ` AND EXISTS (SELECT 1 FROM json_each(metadata) WHERE key = ? AND value = ?)`
		args = append(args, k, v)
	}
	query += ` ORDER BY seq DESC`
	if opts.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, opts.Limit)
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		r, err := scanCheckpoint(threadID, rows)
		if errors.Is(err, checkpoint.ErrCorrupt) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: list: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list: %w", err)
	}
	return out, nil
}

// ListSnapshots implements checkpoint.SnapshotLister: it reads a page of
// snapshots in one read transaction with four queries at most, whatever the
// page's size: the Before checkpoint, the page's checkpoints, every blob of
// their delta chains, and their pending writes.
func (s *Saver) ListSnapshots(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]*checkpoint.Snapshot, error) {
	if err := validateList(threadID, opts); err != nil {
		return nil, err
	}
	var out []*checkpoint.Snapshot
	err := s.read(ctx, func(tx *sql.Tx) error {
		page, err := listRows(ctx, tx, threadID, opts)
		if err != nil || len(page) == 0 {
			return err
		}
		blobs, err := loadPageChains(ctx, tx, threadID, page)
		if err != nil {
			return err
		}
		writes, err := loadPageWrites(ctx, tx, threadID, page)
		if err != nil {
			return err
		}
		out = make([]*checkpoint.Snapshot, len(page))
		for i, r := range page {
			snap, err := record.Snapshot(ctx, threadID, r.cp, r.seq, r.refs, blobs, writes[r.seq])
			if err != nil {
				return err
			}
			out[i] = snap
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readBlobs adds to out the blobs of rows, the result of a query that
// selects channel, writer, kind, base and data (or failed with err), and
// returns out.
func readBlobs(rows *sql.Rows, err error, out map[chain.Key]chain.Blob) (map[chain.Key]chain.Blob, error) {
	if err != nil {
		return nil, fmt.Errorf("sqlite: load blobs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k chain.Key
			b chain.Blob
		)
		if err := rows.Scan(&k.Channel, &k.Writer, &b.Kind, &b.Base, &b.Data); err != nil {
			return nil, fmt.Errorf("sqlite: load blobs: %w", err)
		}
		out[k] = b
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load blobs: %w", err)
	}
	return out, nil
}

// loadPageChains reads, in one recursive query, every blob the checkpoints
// of page need, each blob once however many checkpoints share it.
func loadPageChains(ctx context.Context, tx *sql.Tx, threadID string, page []row) (map[chain.Key]chain.Blob, error) {
	seen := map[chain.Key]bool{}
	starts := []byte{'['}
	for _, r := range page {
		for _, e := range r.refs {
			k := chain.Key{Channel: e.Channel, Writer: e.Writer}
			if seen[k] {
				continue
			}
			seen[k] = true
			name, err := json.Marshal(e.Channel)
			if err != nil {
				return nil, fmt.Errorf("sqlite: load blobs: %w", err)
			}
			if len(starts) > 1 {
				starts = append(starts, ',')
			}
			starts = append(starts, '[')
			starts = append(starts, name...)
			starts = append(starts, ',')
			starts = strconv.AppendInt(starts, e.Writer, 10)
			starts = append(starts, ']')
		}
	}
	starts = append(starts, ']')
	out := make(map[chain.Key]chain.Blob, len(seen))
	// The walk carries keys only, and UNION visits a blob shared by many
	// chains once; the data is read once per blob at the end.
	// The start keys are unpacked once (MATERIALIZED) and drive the join
	// (CROSS JOIN keeps them the outer loop), so each is a primary-key look-up.
	rows, err := tx.QueryContext(ctx, `WITH RECURSIVE starts(channel, writer) AS MATERIALIZED (
			SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)
		),
		walk(channel, writer, kind, base) AS (
			SELECT b.channel, b.writer, b.kind, b.base
			FROM starts AS s
			CROSS JOIN agentgraph_blobs AS b ON b.thread_id = ?2 AND b.channel = s.channel AND b.writer = s.writer
			UNION
			SELECT b.channel, b.writer, b.kind, b.base
			FROM walk AS w
			JOIN agentgraph_blobs AS b ON b.thread_id = ?2 AND b.channel = w.channel AND b.writer = w.base
			WHERE w.kind = 2 AND w.base > 0 AND w.base < w.writer
		)
		SELECT w.channel, w.writer, w.kind, w.base, b.data
		FROM walk AS w
		JOIN agentgraph_blobs AS b ON b.thread_id = ?2 AND b.channel = w.channel AND b.writer = w.writer`, string(starts), threadID)
	return readBlobs(rows, err, out)
}

// loadPageWrites reads the pending writes of the checkpoints of page in one
// query, by checkpoint sequence number, each in the order recorded.
func loadPageWrites(ctx context.Context, tx *sql.Tx, threadID string, page []row) (map[int64][]checkpoint.Write, error) {
	seqs := []byte{'['}
	for i, r := range page {
		if i > 0 {
			seqs = append(seqs, ',')
		}
		seqs = strconv.AppendInt(seqs, r.seq, 10)
	}
	seqs = append(seqs, ']')
	rows, err := tx.QueryContext(ctx, `SELECT checkpoint_seq, task_id, node, channel, value FROM agentgraph_writes
		WHERE thread_id = ? AND checkpoint_seq IN (SELECT value FROM json_each(?)) ORDER BY id`, threadID, string(seqs))
	if err != nil {
		return nil, fmt.Errorf("sqlite: load writes: %w", err)
	}
	defer rows.Close()
	out := map[int64][]checkpoint.Write{}
	for rows.Next() {
		var (
			seq int64
			w   checkpoint.Write
		)
		if err := rows.Scan(&seq, &w.TaskID, &w.Node, &w.Channel, &w.Value); err != nil {
			return nil, fmt.Errorf("sqlite: load writes: %w", err)
		}
		out[seq] = append(out[seq], w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: load writes: %w", err)
	}
	return out, nil
}

// DeleteThread implements checkpoint.Saver.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := deleteThreads(ctx, tx, `thread_id = ?`, threadID)
		return err
	})
}

// CopyThread implements checkpoint.Copier: it copies the thread's rows as
// they are stored, in one transaction.
func (s *Saver) CopyThread(ctx context.Context, from, to string) (int, error) {
	if from == "" || to == "" || from == to {
		return 0, fmt.Errorf("%w: CopyThread: from and to must be two different, non-empty thread ids", checkpoint.ErrInvalid)
	}
	if err := checkpoint.ValidateID("CopyThread", "from", from); err != nil {
		return 0, err
	}
	if err := checkpoint.ValidateID("CopyThread", "to", to); err != nil {
		return 0, err
	}
	n := 0
	err := s.write(ctx, func(tx *sql.Tx) error {
		var actual string
		switch err := tx.QueryRowContext(ctx, `SELECT latest_id FROM agentgraph_threads WHERE thread_id = ?`, to).Scan(&actual); {
		case err == nil:
			return &checkpoint.ConflictError{ThreadID: to, Actual: actual}
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlite: copy thread: %w", err)
		}
		for _, q := range []string{
			`INSERT INTO agentgraph_threads (thread_id, latest_id, seq, touched) SELECT ?, latest_id, seq, touched FROM agentgraph_threads WHERE thread_id = ?`,
			`INSERT INTO agentgraph_checkpoints (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
				SELECT ?, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at FROM agentgraph_checkpoints WHERE thread_id = ?`,
			`INSERT INTO agentgraph_blobs (thread_id, channel, writer, kind, base, data) SELECT ?, channel, writer, kind, base, data FROM agentgraph_blobs WHERE thread_id = ?`,
			`INSERT INTO agentgraph_writes (thread_id, checkpoint_seq, task_id, node, channel, value)
				SELECT ?, checkpoint_seq, task_id, node, channel, value FROM agentgraph_writes WHERE thread_id = ? ORDER BY id`,
		} {
			res, err := tx.ExecContext(ctx, q, to, from)
			if err != nil {
				return fmt.Errorf("sqlite: copy thread: %w", err)
			}
			if strings.Contains(q, "agentgraph_checkpoints") {
				m, err := res.RowsAffected()
				if err != nil {
					return fmt.Errorf("sqlite: copy thread: %w", err)
				}
				n = int(m)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// deleteThreads deletes the threads of agentgraph_threads matching where.
func deleteThreads(ctx context.Context, tx *sql.Tx, where string, args ...any) (checkpoint.Pruned, error) {
	var p checkpoint.Pruned
	sel := `SELECT thread_id FROM agentgraph_threads WHERE ` + where
	counts := []*int{nil, &p.Blobs, &p.Checkpoints, &p.Threads}
	for i, table := range []string{"agentgraph_writes", "agentgraph_blobs", "agentgraph_checkpoints", "agentgraph_threads"} {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE thread_id IN (`+sel+`)`, args...)
		if err != nil {
			return p, fmt.Errorf("sqlite: delete threads: %w", err)
		}
		if counts[i] != nil {
			n, err := res.RowsAffected()
			if err != nil {
				return p, fmt.Errorf("sqlite: delete threads: %w", err)
			}
			*counts[i] = int(n)
		}
	}
	return p, nil
}

// Prune implements checkpoint.Pruner.
func (s *Saver) Prune(ctx context.Context, r checkpoint.Retention) (checkpoint.Pruned, error) {
	return prune.Run(r, s.log, prune.Steps{
		Idle: func(before time.Time) (checkpoint.Pruned, error) {
			var p checkpoint.Pruned
			err := s.write(ctx, func(tx *sql.Tx) error {
				where, args := `touched < ?`, []any{before.UnixNano()}
				if r.ThreadID != "" {
					where += ` AND thread_id = ?`
					args = append(args, r.ThreadID)
				}
				var err error
				p, err = deleteThreads(ctx, tx, where, args...)
				return err
			})
			return p, err
		},
		Long: func() ([]string, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			query, args := `SELECT thread_id FROM agentgraph_checkpoints GROUP BY thread_id HAVING count(*) > ?`, []any{r.KeepLatest}
			if r.ThreadID != "" {
				query, args = `SELECT thread_id FROM agentgraph_checkpoints WHERE thread_id = ? GROUP BY thread_id HAVING count(*) > ?`, []any{r.ThreadID, r.KeepLatest}
			}
			rows, err := s.db.QueryContext(ctx, query, args...)
			if err != nil {
				return nil, fmt.Errorf("sqlite: prune: %w", err)
			}
			defer rows.Close()
			threads, err := sqlstore.Collect(rows, func(row sqlstore.Row) (id string, err error) {
				err = row.Scan(&id)
				return id, err
			})
			if err != nil {
				return nil, fmt.Errorf("sqlite: prune: %w", err)
			}
			return threads, nil
		},
		KeepLatest: func(threadID string) (checkpoint.Pruned, error) {
			var p checkpoint.Pruned
			err := s.write(ctx, func(tx *sql.Tx) error {
				var err error
				p, err = keepLatest(ctx, tx, threadID, r.KeepLatest)
				return err
			})
			return p, err
		},
	})
}

// keepLatest deletes the checkpoints of a thread beyond its newest keep, and
// the blobs no kept checkpoint needs.
func keepLatest(ctx context.Context, tx *sql.Tx, threadID string, keep int) (checkpoint.Pruned, error) {
	var p checkpoint.Pruned
	var cutoff int64
	err := tx.QueryRowContext(ctx, `SELECT seq FROM agentgraph_checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?`, threadID, keep-1).Scan(&cutoff)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM agentgraph_writes WHERE thread_id = ? AND checkpoint_seq < ?`, threadID, cutoff); err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM agentgraph_checkpoints WHERE thread_id = ? AND seq < ?`, threadID, cutoff)
	if err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	p.Checkpoints = int(n)

	var kept []chain.Refs
	rows, err := tx.QueryContext(ctx, `SELECT refs FROM agentgraph_checkpoints WHERE thread_id = ?`, threadID)
	if err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
		}
		refs, err := chain.Decode(raw)
		if err != nil {
			rows.Close()
			return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
		}
		kept = append(kept, refs)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	bases := map[chain.Key]int64{}
	rows, err = tx.QueryContext(ctx, `SELECT channel, writer, base FROM agentgraph_blobs WHERE thread_id = ?`, threadID)
	if err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	for rows.Next() {
		var k chain.Key
		var base int64
		if err := rows.Scan(&k.Channel, &k.Writer, &base); err != nil {
			rows.Close()
			return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
		}
		bases[k] = base
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	live := chain.Live(kept, func(k chain.Key) (int64, bool) {
		b, ok := bases[k]
		return b, ok
	})
	stmt, err := tx.PrepareContext(ctx, `DELETE FROM agentgraph_blobs WHERE thread_id = ? AND channel = ? AND writer = ?`)
	if err != nil {
		return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
	}
	defer stmt.Close()
	for k := range bases {
		if live[k] {
			continue
		}
		if _, err := stmt.ExecContext(ctx, threadID, k.Channel, k.Writer); err != nil {
			return p, fmt.Errorf("sqlite: prune %s: %w", threadID, err)
		}
		p.Blobs++
	}
	return p, nil
}

// Usage implements checkpoint.UsageReporter. It reads one row, the
// running totals on the thread's agentgraph_threads row (schema version
// 2), which triggers keep on every insert and delete; its cost does not
// grow with the thread's history.
func (s *Saver) Usage(ctx context.Context, threadID string) (checkpoint.Usage, error) {
	if err := checkpoint.ValidateID("Usage", "the thread ID", threadID); err != nil {
		return checkpoint.Usage{}, err
	}
	var u checkpoint.Usage
	err := s.read(ctx, func(tx *sql.Tx) error {
		// The running totals the triggers of schema version 2 keep; a
		// thread without a row stores nothing.
		err := tx.QueryRowContext(ctx, `SELECT checkpoints, blobs, blob_bytes, writes, write_bytes
				FROM agentgraph_threads WHERE thread_id = ?`, threadID).
			Scan(&u.Checkpoints, &u.Blobs, &u.BlobBytes, &u.Writes, &u.WriteBytes)
		if errors.Is(err, sql.ErrNoRows) {
			u = checkpoint.Usage{}
			return nil
		}
		if err != nil {
			return fmt.Errorf("sqlite: usage: %w", err)
		}
		return nil
	})
	return u, err
}

// validateList checks the thread ID and options of a List or
// ListSnapshots: the thread ID and opts.Before with checkpoint.ValidateID,
// and opts.Metadata with checkpoint.ValidateMetadata.
func validateList(threadID string, opts checkpoint.ListOptions) error {
	if err := checkpoint.ValidateID("List", "the thread ID", threadID); err != nil {
		return err
	}
	if err := checkpoint.ValidateID("List", "ListOptions.Before", opts.Before); err != nil {
		return err
	}
	return checkpoint.ValidateMetadata("List", "ListOptions.Metadata", opts.Metadata)
}
