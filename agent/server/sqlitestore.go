package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/internal/sqlitedb"
)

// SQLiteStore is a [Store] in a SQLite file, the embedded default of a
// server that runs as one process: threads, runs and event logs survive a
// restart. Records are kept as JSON documents beside the columns queries
// need. Make one with OpenSQLite; Close it after the server.
type SQLiteStore struct {
	db    *sql.DB
	owned bool
	mu    sync.Mutex // one writer at a time, without SQLITE_BUSY retries
	// The statements of an event's append, prepared once (each
	// connection keeps them) rather than parsed at every event.
	nextEvent, insertEvent, dropEvents *sql.Stmt
}

// The statements of appendEvent. The run's head is created or moved on
// only when the run exists: no row back is a missing run, with no
// statement of its own.
const (
	nextEventSQL = `INSERT INTO agentserver_event_heads (run_id, next)
		SELECT id, 1 FROM agentserver_runs WHERE id = ?
		ON CONFLICT (run_id) DO UPDATE SET next = next + 1 RETURNING next - 1`
	insertEventSQL = `INSERT INTO agentserver_events (run_id, id, name, data) VALUES (?, ?, ?, ?)`
	dropEventsSQL  = `DELETE FROM agentserver_events WHERE run_id = ? AND id <= ?`
)

var sqliteMigrations = []string{
	`CREATE TABLE agentserver_threads (
		id      TEXT PRIMARY KEY,
		owner   TEXT NOT NULL,
		status  TEXT NOT NULL,
		created INTEGER NOT NULL,
		doc     TEXT NOT NULL
	);
	CREATE INDEX agentserver_threads_owner ON agentserver_threads (owner, created);
	CREATE TABLE agentserver_runs (
		id        TEXT PRIMARY KEY,
		thread_id TEXT NOT NULL,
		status    TEXT NOT NULL,
		seq       INTEGER NOT NULL,
		doc       TEXT NOT NULL
	);
	CREATE INDEX agentserver_runs_thread ON agentserver_runs (thread_id, seq);
	CREATE TABLE agentserver_events (
		run_id TEXT NOT NULL,
		id     INTEGER NOT NULL,
		name   TEXT NOT NULL,
		data   TEXT NOT NULL,
		PRIMARY KEY (run_id, id)
	) WITHOUT ROWID;
	CREATE TABLE agentserver_event_heads (
		run_id TEXT PRIMARY KEY,
		next   INTEGER NOT NULL
	);`,
	// ClaimDue and Prune select runs by status.
	`CREATE INDEX agentserver_runs_status ON agentserver_runs (status, seq);`,
	// CountActiveRuns counts a principal's pending and running runs at each
	// run's creation (Config.MaxActiveRuns): without an index by owner it
	// read every principal's active runs and their threads. A run's owner
	// is its thread's, copied into a column of the run's at its creation
	// (here from the threads, for the runs of earlier versions).
	`ALTER TABLE agentserver_runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
	UPDATE agentserver_runs SET owner = COALESCE((SELECT t.owner FROM agentserver_threads t WHERE t.id = agentserver_runs.thread_id), '');
	CREATE INDEX agentserver_runs_owner_active ON agentserver_runs (owner, status) WHERE status IN ('pending', 'running');`,
	// A thread search sorted by updated_at orders its page in the
	// statement, on a column of the thread's UpdatedAt in Unix
	// nanoseconds (as created is its CreatedAt), rather than reading
	// every thread to sort them in the process. The threads of earlier
	// versions take it from their documents' RFC 3339 text: the whole
	// seconds and the zone (Z or an offset) by unixepoch, the fraction's
	// digits (up to 9, as time.Time writes them) added after. unixepoch
	// is given no fraction: it rounds one of .9995 s or more up to the
	// next second.
	`ALTER TABLE agentserver_threads ADD COLUMN updated INTEGER NOT NULL DEFAULT 0;
	UPDATE agentserver_threads SET updated = (SELECT unixepoch(substr(u, 1, 19) || substr(f, z)) * 1000000000 + CASE WHEN substr(f, 1, 1) = '.'
		THEN CAST(substr(substr(f, 2, z - 2) || '000000000', 1, 9) AS INTEGER) ELSE 0 END
		FROM (SELECT u, f, CASE WHEN instr(f, 'Z') > 0 THEN instr(f, 'Z') WHEN instr(f, '+') > 0 THEN instr(f, '+') ELSE instr(f, '-') END AS z
			FROM (SELECT json_extract(doc, '$.updated_at') AS u, substr(json_extract(doc, '$.updated_at'), 20) AS f)))
	WHERE json_type(doc, '$.updated_at') = 'text';`,
	// The bytes of checkpoints each thread keeps, its own and its
	// durable subgraphs' (ByteCounter, Config.MaxThreadBytes), summed
	// by owner on an index that holds them, with no thread's document
	// read. Threads of earlier versions count none until their next
	// run's end.
	`ALTER TABLE agentserver_threads ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE agentserver_threads ADD COLUMN subgraph_bytes INTEGER NOT NULL DEFAULT 0;
	CREATE INDEX agentserver_threads_owner_bytes ON agentserver_threads (owner, bytes, subgraph_bytes);`,
	// The assistants clients create (AssistantStore): one row each, with
	// its current and highest versions, and one row per version holding
	// the assistant's document at that version.
	`CREATE TABLE agentserver_assistants (
		id      TEXT PRIMARY KEY,
		owner   TEXT NOT NULL,
		current INTEGER NOT NULL,
		latest  INTEGER NOT NULL,
		created INTEGER NOT NULL
	);
	CREATE INDEX agentserver_assistants_owner ON agentserver_assistants (owner, created);
	CREATE TABLE agentserver_assistant_versions (
		id      TEXT NOT NULL,
		version INTEGER NOT NULL,
		doc     TEXT NOT NULL,
		PRIMARY KEY (id, version)
	) WITHOUT ROWID;`,
}

// OpenSQLite opens (creating it if needed) the SQLite file at path and
// brings its tables up to date. ":memory:" gives a private in-memory
// database.
func OpenSQLite(ctx context.Context, path string) (*SQLiteStore, error) {
	if path == "" {
		return nil, errors.New("server: OpenSQLite needs a file path (or \":memory:\")")
	}
	db, owned, err := sqlitedb.Open(nil, path, sqlitedb.Options{Synchronous: "NORMAL"})
	if err != nil {
		return nil, fmt.Errorf("server: opening %s: %w", path, err)
	}
	s := &SQLiteStore{db: db, owned: owned}
	if err := sqlitedb.Migrate(ctx, db, sqlitedb.Migrations{Table: "agentserver_migrations", Steps: sqliteMigrations}); err != nil {
		s.Close()
		return nil, fmt.Errorf("server: migrating %s: %w", path, err)
	}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.nextEvent, nextEventSQL}, {&s.insertEvent, insertEventSQL}, {&s.dropEvents, dropEventsSQL}} {
		if *p.stmt, err = db.PrepareContext(ctx, p.sql); err != nil {
			s.Close()
			return nil, fmt.Errorf("server: preparing the statements of %s: %w", path, err)
		}
	}
	return s, nil
}

// Close closes the database.
func (s *SQLiteStore) Close() error {
	for _, st := range []*sql.Stmt{s.nextEvent, s.insertEvent, s.dropEvents} {
		if st != nil {
			st.Close()
		}
	}
	if s.owned {
		return s.db.Close()
	}
	return nil
}

func (s *SQLiteStore) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sqlitedb.Tx(ctx, s.db, fn)
}

func loadThread(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id string) (*Thread, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM agentserver_threads WHERE id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("thread %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeThread(doc)
}

// threadDoc is a Thread with the fields its JSON form hides.
type threadDoc struct {
	Thread
	XOwner   string `json:"owner"`
	XGraphID string `json:"graph_id"`
	XHead    string `json:"head"`
	XRolled  bool   `json:"rolled"`
}

func encodeThread(t *Thread) (string, error) {
	b, err := json.Marshal(threadDoc{Thread: *t, XOwner: t.Owner, XGraphID: t.GraphID, XHead: t.Head, XRolled: t.Rolled})
	return string(b), err
}

func decodeThread(doc string) (*Thread, error) {
	var d threadDoc
	// Numbers as json.Number: a metadata integer beyond 2^53 keeps its
	// digits (see jsonObject).
	if err := decodeNumbers([]byte(doc), &d); err != nil {
		return nil, fmt.Errorf("server: a stored thread does not decode: %w", err)
	}
	t := d.Thread
	t.Owner, t.GraphID, t.Head, t.Rolled = d.XOwner, d.XGraphID, d.XHead, d.XRolled
	if string(t.Values) == "null" {
		// A thread without values is stored as values: null; it reads
		// back without values, as from the other stores (and is shown as
		// {}, as it was when created).
		t.Values = nil
	}
	return &t, nil
}

type runDoc struct {
	Run
	XOwner      string    `json:"owner"`
	XWorker     string    `json:"worker"`
	XLeaseUntil time.Time `json:"lease_until"`
	XError      string    `json:"error"`
	XAttempt    int       `json:"attempt,omitempty"`
	XStarted    bool      `json:"started,omitempty"`
	XStart      string    `json:"start,omitempty"`
	XCancel     string    `json:"cancel,omitempty"`
}

func encodeRun(r *Run) (string, error) {
	b, err := json.Marshal(runDoc{Run: *r, XOwner: r.Owner, XWorker: r.Worker, XLeaseUntil: r.LeaseUntil, XError: r.Error,
		XAttempt: r.Attempt, XStarted: r.Started, XStart: r.Start, XCancel: r.Cancel})
	return string(b), err
}

func decodeRun(doc string) (*Run, error) {
	var d runDoc
	// Numbers as json.Number, as for a thread: a metadata integer beyond
	// 2^53 keeps its digits.
	if err := decodeNumbers([]byte(doc), &d); err != nil {
		return nil, fmt.Errorf("server: a stored run does not decode: %w", err)
	}
	r := d.Run
	r.Owner, r.Worker, r.LeaseUntil, r.Error = d.XOwner, d.XWorker, d.XLeaseUntil, d.XError
	r.Attempt, r.Started, r.Start, r.Cancel = d.XAttempt, d.XStarted, d.XStart, d.XCancel
	return &r, nil
}

// CreateThread implements [Store].
func (s *SQLiteStore) CreateThread(ctx context.Context, t *Thread) error {
	doc, err := encodeThread(t)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO agentserver_threads (id, owner, status, created, updated, doc) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			t.ID, t.Owner, t.Status, t.CreatedAt.UnixNano(), t.UpdatedAt.UnixNano(), doc)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("thread %s: %w", t.ID, ErrExists)
		}
		return nil
	})
}

// Thread implements [Store].
func (s *SQLiteStore) Thread(ctx context.Context, id string) (*Thread, error) {
	return loadThread(ctx, s.db, id)
}

// UpdateThread implements [Store].
func (s *SQLiteStore) UpdateThread(ctx context.Context, id string, fn func(*Thread) error) (*Thread, error) {
	var out *Thread
	err := s.tx(ctx, func(tx *sql.Tx) error {
		t, err := loadThread(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return err
		}
		t.ID = id
		doc, err := encodeThread(t)
		if err != nil {
			return err
		}
		out = t
		_, err = tx.ExecContext(ctx, `UPDATE agentserver_threads SET status = ?, updated = ?, doc = ? WHERE id = ?`, t.Status, t.UpdatedAt.UnixNano(), doc, id)
		return err
	})
	return out, err
}

// DeleteThread implements [Store].
func (s *SQLiteStore) DeleteThread(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM agentserver_events WHERE run_id IN (SELECT id FROM agentserver_runs WHERE thread_id = ?)`,
			`DELETE FROM agentserver_event_heads WHERE run_id IN (SELECT id FROM agentserver_runs WHERE thread_id = ?)`,
			`DELETE FROM agentserver_runs WHERE thread_id = ?`,
			`DELETE FROM agentserver_threads WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// SearchThreads implements [Store]. A statement selects the owner's
// threads by status and ids and orders their ids (a sort of keys, not of
// documents); without a metadata or values filter it also cuts the page
// (and another counts the rest). With one, the selected threads'
// metadata (and values, for a values filter) are read a chunk at a
// time, in order, filtered in the process and counted, and only the
// page's ids are kept. The page's threads are then read one by one, up
// to q.MaxBytes, and checked again against q: only the page's documents
// are read whole. The count, the ids and the threads are read in one
// read transaction, so they agree.
func (s *SQLiteStore) SearchThreads(ctx context.Context, q ThreadQuery) ([]*Thread, int, error) {
	cond, args := `owner = ?`, []any{q.Owner}
	if q.Status != "" {
		cond += ` AND status = ?`
		args = append(args, q.Status)
	}
	if len(q.IDs) > 0 {
		ids, err := json.Marshal(q.IDs)
		if err != nil {
			return nil, 0, err
		}
		cond += ` AND id IN (SELECT value FROM json_each(?))`
		args = append(args, string(ids))
	}
	key, dir := "created", "ASC"
	switch q.SortBy {
	case "thread_id":
		key = "id"
	case "status":
		key = "status"
	case "updated_at":
		key = "updated"
	}
	if q.SortDesc {
		dir = "DESC"
	}
	ordered := `SELECT id FROM agentserver_threads WHERE ` + cond + ` ORDER BY ` + key + ` ` + dir + `, id ` + dir
	limit := -1 // no LIMIT
	if q.Limit > 0 {
		limit = q.Limit
	}
	// One read transaction (a snapshot of the database) for the count,
	// the page's ids and their threads: no thread deleted, created or
	// changed in between makes the count disagree with the page or
	// brings another principal's thread into it.
	rtx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer rtx.Rollback()
	var page []string
	total := 0
	if len(q.Metadata) == 0 && len(q.Values) == 0 {
		if err := rtx.QueryRowContext(ctx, `SELECT count(*) FROM agentserver_threads WHERE `+cond, args...).Scan(&total); err != nil {
			return nil, 0, err
		}
		if page, err = queryIDs(ctx, rtx, ordered+` LIMIT ? OFFSET ?`, append(args, limit, q.Offset)...); err != nil {
			return nil, 0, err
		}
	} else {
		all, err := queryIDs(ctx, rtx, ordered, args...)
		if err != nil {
			return nil, 0, err
		}
		if page, total, err = filterThreads(ctx, rtx, all, q, limit); err != nil {
			return nil, 0, err
		}
	}
	if searchPaged != nil {
		searchPaged()
	}
	out, size := []*Thread{}, 0
	for _, id := range page {
		t, err := loadThread(ctx, rtx, id)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, 0, err
		}
		// The thread loaded by its id alone is checked again against
		// the query, whatever the snapshot promises.
		if t.Owner != q.Owner || (q.Status != "" && t.Status != q.Status) || !containsAll(t.Metadata, q.Metadata) || !q.ValuesMatch(t.Values) {
			continue
		}
		out = append(out, t)
		if size += t.Size(); q.MaxBytes > 0 && size > q.MaxBytes {
			break // the page is cut here (ThreadQuery.MaxBytes)
		}
	}
	return out, total, nil
}

// searchPaged, when set (by tests), runs in SearchThreads between the
// choice of the page's ids and the reading of their threads.
var searchPaged func()

// searchChunk is how many threads' metadata a filtered search reads per
// statement.
const searchChunk = 100

// filterThreads reads the metadata (and the values, for a values
// filter) of the threads ids, searchChunk at a time, and returns the
// ids of those q's filters keep, from q.Offset on and up to limit (-1:
// no limit), and how many it keeps in all.
func filterThreads(ctx context.Context, tx *sql.Tx, ids []string, q ThreadQuery, limit int) (page []string, total int, err error) {
	vals := `NULL`
	if len(q.Values) > 0 {
		vals = `doc -> '$.values'`
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), searchChunk)]
		ids = ids[len(chunk):]
		list, err := json.Marshal(chunk)
		if err != nil {
			return nil, 0, err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, doc -> '$.metadata', `+vals+` FROM agentserver_threads WHERE id IN (SELECT value FROM json_each(?))`, string(list))
		if err != nil {
			return nil, 0, err
		}
		kept := make(map[string]bool, len(chunk))
		for rows.Next() {
			var id string
			var md, values sql.RawBytes
			if err := rows.Scan(&id, &md, &values); err != nil {
				rows.Close()
				return nil, 0, err
			}
			var m map[string]any
			if err := decodeNumbers(md, &m); len(md) > 0 && err != nil {
				rows.Close()
				return nil, 0, fmt.Errorf("server: the metadata of stored thread %s does not decode: %w", id, err)
			}
			kept[id] = containsAll(m, q.Metadata) && q.ValuesMatch(json.RawMessage(values))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
		for _, id := range chunk { // in order
			if !kept[id] {
				continue
			}
			if total >= q.Offset && (limit < 0 || len(page) < limit) {
				page = append(page, id)
			}
			total++
		}
	}
	return page, total, nil
}

// queryIDs returns the first column of query's rows, as strings.
func queryIDs(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// CountThreads implements [OwnerCounter]: a count of the owner's index,
// with no thread read.
func (s *SQLiteStore) CountThreads(ctx context.Context, owner string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM agentserver_threads WHERE owner = ?`, owner).Scan(&n)
	return n, err
}

// SetThreadBytes implements [ByteCounter].
func (s *SQLiteStore) SetThreadBytes(ctx context.Context, threadID string, bytes, subgraphBytes int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE agentserver_threads SET bytes = ?2,
			subgraph_bytes = CASE WHEN ?3 >= 0 THEN ?3 ELSE subgraph_bytes END WHERE id = ?1`, threadID, bytes, subgraphBytes)
		return err
	})
}

// CountBytes implements [ByteCounter]: a sum over the owner's entries
// of the index agentserver_threads_owner_bytes, with no thread read.
func (s *SQLiteStore) CountBytes(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT coalesce(sum(bytes + subgraph_bytes), 0) FROM agentserver_threads WHERE owner = ?`, owner).Scan(&n)
	return n, err
}

// CountActiveRuns implements [OwnerCounter]: a count of the index of the
// active runs by owner, with no other principal's run read. A run's
// owner is its thread's (a principal runs only its own threads).
func (s *SQLiteStore) CountActiveRuns(ctx context.Context, owner string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, sqliteCountActive, owner).Scan(&n)
	return n, err
}

// sqliteCountActive counts the active runs of an owner; it reads the
// index agentserver_runs_owner_active.
const sqliteCountActive = `SELECT count(*) FROM agentserver_runs WHERE owner = ? AND status IN ('pending', 'running')`

func loadRun(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id string) (*Run, error) {
	var doc string
	err := q.QueryRowContext(ctx, `SELECT doc FROM agentserver_runs WHERE id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeRun(doc)
}

// CreateRun implements [Store].
func (s *SQLiteStore) CreateRun(ctx context.Context, r *Run) error {
	doc, err := encodeRun(r)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO agentserver_runs (id, thread_id, status, seq, doc, owner)
			VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM agentserver_runs), ?, ?) ON CONFLICT DO NOTHING`, r.ID, r.ThreadID, r.Status, doc, r.Owner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("run %s: %w", r.ID, ErrExists)
		}
		return nil
	})
}

// Run implements [Store].
func (s *SQLiteStore) Run(ctx context.Context, id string) (*Run, error) {
	return loadRun(ctx, s.db, id)
}

func saveRun(ctx context.Context, tx *sql.Tx, r *Run) error {
	doc, err := encodeRun(r)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE agentserver_runs SET status = ?, doc = ? WHERE id = ?`, r.Status, doc, r.ID)
	return err
}

// UpdateRun implements [Store].
func (s *SQLiteStore) UpdateRun(ctx context.Context, id string, fn func(*Run) error) (*Run, error) {
	var out *Run
	err := s.tx(ctx, func(tx *sql.Tx) error {
		r, err := loadRun(ctx, tx, id)
		if err != nil {
			return err
		}
		tid := r.ThreadID
		if err := fn(r); err != nil {
			return err
		}
		r.ID, r.ThreadID = id, tid
		out = r
		return saveRun(ctx, tx, r)
	})
	return out, err
}

// DeleteRun implements [Store].
func (s *SQLiteStore) DeleteRun(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return deleteRun(ctx, tx, id) })
}

// deleteRun deletes the run and its event log.
func deleteRun(ctx context.Context, tx *sql.Tx, id string) error {
	for _, q := range []string{`DELETE FROM agentserver_events WHERE run_id = ?`, `DELETE FROM agentserver_event_heads WHERE run_id = ?`, `DELETE FROM agentserver_runs WHERE id = ?`} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	return nil
}

// prunedRuns bounds the runs one [SQLiteStore.Prune] deletes for its
// keep, so that its transaction, which holds SQLite's only writer,
// stays short; the next Prune deletes more.
const prunedRuns = 10000

// deleteRunsPast deletes, with their event logs, up to prunedRuns ended
// runs of the threads past their keep newest ended runs, and returns how
// many.
func deleteRunsPast(ctx context.Context, tx *sql.Tx, keep int) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY thread_id ORDER BY seq DESC) AS n
		FROM agentserver_runs WHERE status NOT IN ('pending', 'running')) WHERE n > ? LIMIT ?`, keep, prunedRuns)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := deleteRun(ctx, tx, id); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

func threadRuns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, threadID, status string) ([]*Run, error) {
	return queryRuns(ctx, q, RunQuery{ThreadID: threadID, Status: status})
}

// queryRuns reads the runs rq selects, in its order, with its page in
// the statement's LIMIT and OFFSET, and stops reading at rq.MaxBytes.
func queryRuns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, rq RunQuery) ([]*Run, error) {
	order, limit := "seq", -1 // no LIMIT
	if rq.Newest {
		order = "seq DESC"
	}
	if rq.Limit > 0 {
		limit = rq.Limit
	}
	rows, err := q.QueryContext(ctx, `SELECT doc FROM agentserver_runs WHERE thread_id = ? AND (? = '' OR status = ?) ORDER BY `+order+` LIMIT ? OFFSET ?`,
		rq.ThreadID, rq.Status, rq.Status, limit, rq.Offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Run
	size := 0
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		r, err := decodeRun(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		if size += r.Size(); rq.MaxBytes > 0 && size > rq.MaxBytes {
			break
		}
	}
	return out, rows.Err()
}

// Runs implements [Store]: one statement for the page, read up to
// q.MaxBytes.
func (s *SQLiteStore) Runs(ctx context.Context, q RunQuery) ([]*Run, error) {
	return queryRuns(ctx, s.db, q)
}

// Claim implements [Store].
func (s *SQLiteStore) Claim(ctx context.Context, threadID, worker string, lease time.Duration) (*Run, error) {
	var out *Run
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = claimIn(ctx, tx, threadID, worker, lease)
		return err
	})
	return out, err
}

// claimIn claims the thread's next run in tx.
func claimIn(ctx context.Context, tx *sql.Tx, threadID, worker string, lease time.Duration) (*Run, error) {
	runs, err := threadRuns(ctx, tx, threadID, "")
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var next *Run
	for _, r := range runs {
		switch {
		case r.Status == RunRunning && r.LeaseUntil.After(now):
			return nil, nil
		case r.Status == RunRunning && next == nil:
			next = r
		case r.Status == RunPending && next == nil && !r.CreatedAt.After(now):
			next = r
		}
	}
	if next == nil {
		return nil, nil
	}
	next.Status, next.Worker, next.LeaseUntil, next.UpdatedAt = RunRunning, worker, now.Add(lease), now.UTC()
	next.Attempt++
	return next, saveRun(ctx, tx, next)
}

// ClaimDue implements [Store].
func (s *SQLiteStore) ClaimDue(ctx context.Context, worker string, lease time.Duration) (*Run, error) {
	var out *Run
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT thread_id FROM agentserver_runs WHERE status IN ('pending', 'running') ORDER BY seq`)
		if err != nil {
			return err
		}
		var tids []string
		for rows.Next() {
			var tid string
			if err := rows.Scan(&tid); err != nil {
				rows.Close()
				return err
			}
			tids = append(tids, tid)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, tid := range tids {
			if out, err = claimIn(ctx, tx, tid, worker, lease); out != nil || err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// Prune implements [Store].
func (s *SQLiteStore) Prune(ctx context.Context, endedBefore time.Time, keep int) (int, error) {
	n := 0
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if keep > 0 {
			deleted, err := deleteRunsPast(ctx, tx, keep)
			if err != nil {
				return err
			}
			n += deleted
		}
		if endedBefore.IsZero() {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT doc FROM agentserver_runs WHERE status NOT IN ('pending', 'running')`)
		if err != nil {
			return err
		}
		var old []*Run
		for rows.Next() {
			var doc string
			if err := rows.Scan(&doc); err != nil {
				rows.Close()
				return err
			}
			r, err := decodeRun(doc)
			if err != nil {
				rows.Close()
				return err
			}
			if r.UpdatedAt.Before(endedBefore) {
				old = append(old, r)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range old {
			res, err := tx.ExecContext(ctx, `DELETE FROM agentserver_events WHERE run_id = ?`, r.ID)
			if err != nil {
				return err
			}
			dropped, _ := res.RowsAffected()
			if (len(r.Kwargs) == 0 || string(r.Kwargs) == "null") && dropped == 0 {
				continue
			}
			n++
			r.Kwargs = nil
			if err := saveRun(ctx, tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// Renew implements [Store].
func (s *SQLiteStore) Renew(ctx context.Context, runID, worker string, lease time.Duration) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		r, err := loadRun(ctx, tx, runID)
		if err != nil {
			return err
		}
		if r.Worker != worker || r.Status != RunRunning {
			return fmt.Errorf("run %s is not held by %s: %w", runID, worker, ErrNotFound)
		}
		r.LeaseUntil = time.Now().Add(lease)
		return saveRun(ctx, tx, r)
	})
}

// RenewAttempt implements [AttemptRenewer].
func (s *SQLiteStore) RenewAttempt(ctx context.Context, runID, worker string, attempt int, lease time.Duration) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		r, err := loadRun(ctx, tx, runID)
		if err != nil {
			return err
		}
		if r.Worker != worker || r.Attempt != attempt || r.Status != RunRunning {
			return fmt.Errorf("run %s is not held by %s attempt %d: %w", runID, worker, attempt, ErrNotFound)
		}
		r.LeaseUntil = time.Now().Add(lease)
		return saveRun(ctx, tx, r)
	})
}

// AppendEvent implements [Store].
func (s *SQLiteStore) AppendEvent(ctx context.Context, runID, name string, data json.RawMessage, max int) (Event, error) {
	var ev Event
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		ev, err = s.appendEvent(ctx, tx, runID, name, data, max)
		return err
	})
	return ev, err
}

// EndRunEvent implements [EventEnder]: the run's end and its last event
// in one transaction.
func (s *SQLiteStore) EndRunEvent(ctx context.Context, e RunEnd) (*Run, Event, error) {
	var out *Run
	var ev Event
	err := s.tx(ctx, func(tx *sql.Tx) error {
		r, err := loadRun(ctx, tx, e.RunID)
		if err != nil {
			return err
		}
		if e.Worker != "" && (r.Status != RunRunning || r.Worker != e.Worker || r.Attempt != e.Attempt) {
			return fmt.Errorf("run %s: %s under worker %q attempt %d, no longer running under %q attempt %d: %w",
				e.RunID, r.Status, r.Worker, r.Attempt, e.Worker, e.Attempt, ErrLeaseLost)
		}
		if ev, err = s.appendEvent(ctx, tx, e.RunID, e.EventName, e.EventData, e.MaxEvents); err != nil {
			return err
		}
		r.endAt(e.Status, e.Error, e.At)
		out = r
		return saveRun(ctx, tx, r)
	})
	if err != nil {
		return nil, Event{}, err
	}
	return out, ev, nil
}

// appendEvent appends an event to the log of the run runID in tx, with
// the store's prepared statements; ErrNotFound when there is no such run.
func (s *SQLiteStore) appendEvent(ctx context.Context, tx *sql.Tx, runID, name string, data json.RawMessage, max int) (Event, error) {
	var next int64
	err := tx.StmtContext(ctx, s.nextEvent).QueryRowContext(ctx, runID).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	if err != nil {
		return Event{}, err
	}
	if _, err := tx.StmtContext(ctx, s.insertEvent).ExecContext(ctx, runID, next, name, string(data)); err != nil {
		return Event{}, err
	}
	if max > 0 && next >= int64(max) {
		if _, err := tx.StmtContext(ctx, s.dropEvents).ExecContext(ctx, runID, next-int64(max)); err != nil {
			return Event{}, err
		}
	}
	return Event{ID: next, Name: name, Data: data}, nil
}

// LastEvent implements [LastEventReader]: one row, read backwards on
// the log's primary key (the error event of a failed run is at or near
// its end).
func (s *SQLiteStore) LastEvent(ctx context.Context, runID, name string) (Event, bool, error) {
	var ev Event
	var data string
	err := s.db.QueryRowContext(ctx, `SELECT id, name, data FROM agentserver_events WHERE run_id = ? AND name = ? ORDER BY id DESC LIMIT 1`, runID, name).Scan(&ev.ID, &ev.Name, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, err
	}
	ev.Data = json.RawMessage(data)
	return ev, true, nil
}

// LastEventID implements [LastEventIDReader]: the log's (run_id, id)
// index read backwards.
func (s *SQLiteStore) LastEventID(ctx context.Context, runID string) (int64, bool, error) {
	var last sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(id) FROM agentserver_events WHERE run_id = ?`, runID).Scan(&last); err != nil {
		return 0, false, err
	}
	return last.Int64, last.Valid, nil
}

// Events implements [Store].
func (s *SQLiteStore) Events(ctx context.Context, runID string, after int64, limit int) ([]Event, int64, error) {
	if limit <= 0 {
		limit = -1
	}
	var first sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MIN(id) FROM agentserver_events WHERE run_id = ?`, runID).Scan(&first); err != nil {
		return nil, 0, err
	}
	if !first.Valid {
		if _, err := loadRun(ctx, s.db, runID); err != nil {
			return nil, 0, err
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, data FROM agentserver_events WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`, runID, after, limit)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		var data string
		if err := rows.Scan(&ev.ID, &ev.Name, &data); err != nil {
			return nil, 0, err
		}
		ev.Data = json.RawMessage(data)
		out = append(out, ev)
	}
	return out, first.Int64, rows.Err()
}
