package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/chain"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/prune"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/record"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// Config configures a Saver. Set Pool or DSN.
type Config struct {
	// Pool is the connection pool to use. The Saver does not close it.
	Pool *pgxpool.Pool
	// DSN is a connection string ("postgres://user@host:5432/db") used when
	// Pool is nil; the Saver opens a pool and Close closes it.
	DSN string
	// Schema is the schema holding the tables; it is created if missing.
	// Empty means "public".
	Schema string
	// AsyncCommit lets Put and PutWrites return before PostgreSQL has
	// flushed their commit to disk (synchronous_commit = off for those
	// transactions; a Put the Saver makes from memory stays one
	// statement), which roughly halves their latency when the disk is
	// slow to sync. A crash of the database server, not of this process,
	// may then lose the writes of its last moments (up to three times
	// wal_writer_delay, 600 ms by default), never corrupting the rest.
	// Any later commit that waits for its flush on the same PostgreSQL
	// server (the cluster: any database, any connection) flushes them
	// first, as the write-ahead log is flushed in order: once such a
	// commit returned, the Puts that returned before it started are as
	// durable as with AsyncCommit false. False, the default, waits for
	// the flush of each.
	// Runs in graph.DurabilityAsync need not set it: they save through
	// [Saver.PutNoSync] and wait for one flush per run ([Saver.Sync]).
	AsyncCommit bool
	// Logger receives migration and pruning messages. Nil means no logging.
	Logger *zap.Logger
	// RecentThreads is how many threads' latest checkpoint (its ID,
	// sequence number and channel references) the Saver remembers from its
	// own Puts and Gets, so that a Put on one of them, expecting and
	// extending that checkpoint, is a single statement instead of a
	// transaction of two round trips. The statement checks that what is
	// remembered still holds, and the Put falls back to the transaction when
	// it does not (another process moved the thread), so it only costs
	// memory: per thread, its ID and the checkpoint's references (some tens
	// of bytes per channel). 0 means DefaultRecentThreads; a negative
	// number remembers nothing.
	RecentThreads int
}

// Saver is a checkpoint.Saver storing its data in PostgreSQL. It is safe for
// concurrent use by many goroutines and by many processes sharing one
// database.
type Saver struct {
	pool    *pgxpool.Pool
	ownPool bool
	async   bool
	log     *zap.Logger
	schema  string
	q       queries
	recent  *recent
	group   group // the one-statement Puts waiting to be sent together
}

var (
	_ checkpoint.Saver          = (*Saver)(nil)
	_ checkpoint.SnapshotLister = (*Saver)(nil)
	_ checkpoint.Pruner         = (*Saver)(nil)
	_ checkpoint.UsageReporter  = (*Saver)(nil)
	_ checkpoint.Copier         = (*Saver)(nil)
)

// New connects (when cfg.DSN is set) and brings the schema up to date.
func New(ctx context.Context, cfg Config) (*Saver, error) {
	s := &Saver{pool: cfg.Pool, log: cfg.Logger, schema: cfg.Schema, async: cfg.AsyncCommit, recent: newRecent(cfg.RecentThreads)}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.schema == "" {
		s.schema = "public"
	}
	switch {
	case cfg.Pool != nil && cfg.DSN != "":
		return nil, errors.New("postgres: Config has both Pool and DSN; set only one")
	case cfg.Pool == nil && cfg.DSN == "":
		return nil, errors.New("postgres: Config has neither Pool nor DSN; pass a *pgxpool.Pool or a connection string such as \"postgres://postgres@127.0.0.1:5432/app\"")
	case cfg.Pool == nil:
		pool, err := pgxpool.New(ctx, cfg.DSN)
		if err != nil {
			return nil, fmt.Errorf("postgres: open pool: %w", err)
		}
		s.pool, s.ownPool = pool, true
	}
	s.q = newQueries(pgx.Identifier{s.schema}.Sanitize())
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close waits for the Puts being sent together (see the package doc) and
// closes the pool if the Saver opened it from Config.DSN.
func (s *Saver) Close() {
	s.group.wait()
	if s.ownPool {
		s.pool.Close()
	}
}

// micro truncates t to the microsecond precision PostgreSQL stores.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// Put implements checkpoint.Saver.
func (s *Saver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	return s.put(ctx, expect, cp, blobs, writes, s.async)
}

// PutNoSync implements [checkpoint.Syncer]: Put with synchronous_commit
// off for its transaction.
func (s *Saver) PutNoSync(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	return s.put(ctx, expect, cp, blobs, writes, true)
}

// PutWritesNoSync implements [checkpoint.Syncer]: PutWrites with
// synchronous_commit off for its transaction.
func (s *Saver) PutWritesNoSync(ctx context.Context, threadID, checkpointID string, writes []checkpoint.Write) error {
	return s.putWrites(ctx, threadID, checkpointID, writes, true)
}

// Sync implements [checkpoint.Syncer]: it commits a transaction that has
// a transaction id, with synchronous_commit on, and so waits until the
// write-ahead log is flushed through its commit, which follows every
// commit made before it.
func (s *Saver) Sync(ctx context.Context) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	b.Queue("SET LOCAL synchronous_commit = on")
	b.Queue("SELECT txid_current()")
	b.Queue("COMMIT")
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("postgres: sync: %w", err)
	}
	return nil
}

var _ checkpoint.Syncer = (*Saver)(nil)

func (s *Saver) put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write, lazy bool) error {
	p, err := record.EncodePut(expect, cp, blobs, writes)
	if err != nil {
		return err
	}
	body, md, pieces, id, created := p.Body, p.Metadata, p.Pieces, p.ID, micro(cp.CreatedAt)
	now := micro(time.Now())
	if created.IsZero() {
		created = now
	}
	if done, err := s.putOnce(ctx, expect, cp, blobs, writes, lazy, pieces, id, now, created, body, md); done || err != nil {
		return err
	}
	return s.putTx(ctx, expect, cp, blobs, writes, lazy, pieces, id, now, created, body, md)
}

// putOnce saves a checkpoint in one statement when it can: when it is the
// first of its thread, or when it extends (expect and parent both name)
// the thread's latest checkpoint as s.recent remembers it. It reports
// whether the checkpoint was saved; when it was not, and err is nil,
// nothing was written and the Put must go through putTx, which tells why
// (a conflict, a missing parent, a taken ID, a stale memory).
func (s *Saver) putOnce(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write, lazy bool,
	pieces []chain.Piece, id string, now, created time.Time, body, md []byte) (bool, error) {
	var (
		parent latestRef
		seq    int64 = 1
	)
	switch {
	case expect == "" && cp.ParentID == "":
	case expect != "" && cp.ParentID == expect:
		var ok bool
		if parent, ok = s.recent.get(cp.ThreadID); !ok || parent.id != expect {
			return false, nil
		}
		seq = parent.seq + 1
	default:
		return false, nil
	}
	refs, err := chain.Next(parent.refs, cp.Versions, pieces, seq)
	if err != nil {
		return false, nil // putTx reports it, or what comes before it
	}
	rawRefs, err := chain.Encode(refs)
	if err != nil {
		return false, fmt.Errorf("postgres: put: %w", err)
	}
	p := &onePut{expect: expect, thread: cp.ThreadID, parentID: cp.ParentID, step: cp.Step, blobs: blobs, writes: writes, parent: parent, seq: seq, refs: refs, raw: rawRefs,
		id: id, now: now, created: created, body: body, md: md}
	saved, err := s.group.put(ctx, s, p, lazy)
	if err != nil || !saved {
		return false, err
	}
	cp.ID, cp.CreatedAt = id, created
	return true, nil
}

// sendOne sends p alone, as one statement (queries.putFirst or putNext,
// or their NoSync forms), and reports whether it saved the checkpoint.
// When it did, the thread's new latest checkpoint is remembered.
func (s *Saver) sendOne(ctx context.Context, p *onePut, lazy bool) (bool, error) {
	args := make([]any, 0, 20)
	query := s.q.putFirst
	args = append(args, p.thread, p.id, p.now)
	if p.expect != "" {
		query = s.q.putNext
		args = append(args, p.expect, p.parent.seq, string(p.parent.raw))
	}
	args = append(args, p.parentID, p.step, string(p.raw), p.body, string(p.md), p.created)
	args = append(args, blobColumns(p.blobs, p.parent.refs)...)
	args = append(args, writeColumns(p.writes)...)
	var got int64
	dest := []any{&got}
	if lazy {
		// One statement too, whose own transaction commits without the
		// flush wait (queries.putFirstNoSync).
		query = s.q.putFirstNoSync
		if p.expect != "" {
			query = s.q.putNextNoSync
		}
		var setting string
		dest = append(dest, &setting)
	}
	// No row means the statement saved nothing (putTx tells why).
	if err := s.pool.QueryRow(ctx, query, args...).Scan(dest...); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, refused(err)
	}
	if got != p.seq {
		return false, nil
	}
	s.recent.put(p.thread, latestRef{id: p.id, seq: p.seq, raw: p.raw, refs: p.refs})
	return true, nil
}

// uniqueViolation is the SQLSTATE of a unique constraint's violation.
const uniqueViolation = "23505"

// refused returns nil when err is the one refusal of a one-statement Put
// that putTx explains: a unique violation, which is a taken checkpoint ID
// (the statement then changed nothing, and putTx finds and reports the
// cause). The tables have no foreign keys, so a missing parent is no
// error but a statement that saves nothing. Every other error (a statement
// or lock timeout, a server out of memory, a broken statement) is err,
// wrapped: redoing the Put on the slow path would only load the server
// more, or hide the fault behind more round trips.
func refused(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == uniqueViolation {
		return nil
	}
	return fmt.Errorf("postgres: put: %w", err)
}

// blobColumns returns the channel, kind, base and data columns of blobs, the
// last four arguments of the insertBlobs query, with the bases taken from
// the parent's references.
func blobColumns(blobs []checkpoint.Blob, parent chain.Refs) []any {
	channels := make([]string, len(blobs))
	kinds := make([]int16, len(blobs))
	bases := make([]int64, len(blobs))
	data := make([][]byte, len(blobs))
	for i, bl := range blobs {
		channels[i], kinds[i], bases[i], data[i] = bl.Channel, int16(bl.Kind), parent.Base(bl.Channel, bl.Kind == checkpoint.Delta), bl.Data
		if data[i] == nil {
			data[i] = []byte{}
		}
	}
	return []any{channels, kinds, bases, data}
}

// putTx saves a checkpoint in a transaction of two round trips, reading
// what it needs from the database.
func (s *Saver) putTx(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write, lazy bool,
	pieces []chain.Piece, id string, now, created time.Time, body, md []byte) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: put: %w", err)
	}
	defer conn.Release()
	// Two round trips: the first begins the transaction, moves the thread's
	// latest pointer (whose row lock orders concurrent writers; a writer
	// that finds the pointer moved stores nothing) and reads the parent; the
	// second inserts and commits.
	b := &pgx.Batch{}
	begins := queueBegin(b, lazy)
	if expect == "" {
		b.Queue(s.q.createThread, cp.ThreadID, id, now)
	} else {
		b.Queue(s.q.advanceThread, cp.ThreadID, id, now, expect)
	}
	b.Queue(s.q.parentRefs, cp.ThreadID, cp.ParentID)
	b.Queue(s.q.idTaken, cp.ThreadID, cp.ID)
	br := conn.SendBatch(ctx, b)
	var (
		seq       int64
		rawParent []byte
		taken     bool
	)
	beginErr := execN(br, begins)
	seqErr := br.QueryRow().Scan(&seq)
	parentErr := br.QueryRow().Scan(&rawParent)
	takenErr := br.QueryRow().Scan(&taken)
	closeErr := br.Close()
	err = s.putChecks(ctx, conn, expect, cp, beginErr, seqErr, parentErr, takenErr, closeErr, taken)
	if err != nil {
		rollback(conn)
		return err
	}
	var parent chain.Refs
	if cp.ParentID != "" {
		if parent, err = chain.Decode(rawParent); err != nil {
			rollback(conn)
			return fmt.Errorf("postgres: put: %w", err)
		}
	}
	refs, err := chain.Next(parent, cp.Versions, pieces, seq)
	if err != nil {
		rollback(conn)
		return fmt.Errorf("%w: Put: %v", checkpoint.ErrInvalid, err)
	}
	rawRefs, err := chain.Encode(refs)
	if err != nil {
		rollback(conn)
		return fmt.Errorf("postgres: put: %w", err)
	}
	b = &pgx.Batch{}
	var blobBytes, writeBytes int64
	for _, bl := range blobs {
		blobBytes += int64(len(bl.Data))
	}
	for _, w := range writes {
		writeBytes += int64(len(w.Value))
	}
	b.Queue(s.q.insertCheckpoint, cp.ThreadID, seq, id, cp.ParentID, cp.Step, string(rawRefs), body, string(md), created,
		len(blobs), blobBytes, len(writes), writeBytes)
	if len(blobs) > 0 {
		b.Queue(s.q.insertBlobs, append([]any{cp.ThreadID, seq}, blobColumns(blobs, parent)...)...)
	}
	if len(writes) > 0 {
		b.Queue(s.q.insertWrites, append([]any{cp.ThreadID, seq}, writeColumns(writes)...)...)
	}
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn)
		return fmt.Errorf("postgres: put: %w", err)
	}
	s.recent.put(cp.ThreadID, latestRef{id: id, seq: seq, raw: rawRefs, refs: refs})
	cp.ID, cp.CreatedAt = id, created
	return nil
}

// queueBegin queues the start of a write transaction, with
// synchronous_commit off when lazy, and returns the number of statements
// queued.
func queueBegin(b *pgx.Batch, lazy bool) int {
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	if lazy {
		b.Queue("SET LOCAL synchronous_commit = off")
		return 2
	}
	return 1
}

// execN reads the results of n statements that return no rows.
func execN(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// putChecks turns the results of a Put's first round trip into the error to
// return, if any: a failure, a conflict, a missing parent or a taken ID.
func (s *Saver) putChecks(ctx context.Context, conn *pgxpool.Conn, expect string, cp *checkpoint.Checkpoint, beginErr, seqErr, parentErr, takenErr, closeErr error, taken bool) error {
	if beginErr != nil {
		return fmt.Errorf("postgres: put: %w", beginErr)
	}
	if errors.Is(seqErr, pgx.ErrNoRows) {
		var actual string
		err := conn.QueryRow(ctx, s.q.latest, cp.ThreadID).Scan(&actual)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: put: %w", err)
		}
		return &checkpoint.ConflictError{ThreadID: cp.ThreadID, Expected: expect, Actual: actual}
	}
	for _, err := range []error{seqErr, closeErr} {
		if err != nil {
			return fmt.Errorf("postgres: put: %w", err)
		}
	}
	if cp.ParentID != "" {
		if errors.Is(parentErr, pgx.ErrNoRows) {
			return checkpoint.NotFoundError(cp.ThreadID, cp.ParentID)
		}
		if parentErr != nil {
			return fmt.Errorf("postgres: put: %w", parentErr)
		}
	}
	if takenErr != nil {
		return fmt.Errorf("postgres: put: %w", takenErr)
	}
	if taken {
		return fmt.Errorf("%w: Put: thread %q already has checkpoint %q; leave Checkpoint.ID empty to get a new one", checkpoint.ErrInvalid, cp.ThreadID, cp.ID)
	}
	return nil
}

// rollback ends the transaction open on conn, if any. If it cannot, the
// connection is closed, so the pool never hands out a connection inside a
// transaction.
func rollback(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		conn.Conn().Close(ctx)
	}
}

// PutWrites implements checkpoint.Saver.
func (s *Saver) PutWrites(ctx context.Context, threadID, checkpointID string, writes []checkpoint.Write) error {
	return s.putWrites(ctx, threadID, checkpointID, writes, s.async)
}

func (s *Saver) putWrites(ctx context.Context, threadID, checkpointID string, writes []checkpoint.Write, lazy bool) error {
	if err := checkpoint.ValidateWrites(threadID, checkpointID, writes); err != nil {
		return err
	}
	seen := map[string]bool{}
	var replaced []string
	for _, w := range writes {
		if !seen[w.TaskID] {
			seen[w.TaskID] = true
			replaced = append(replaced, w.TaskID)
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: put writes: %w", err)
	}
	defer conn.Release()
	// One round trip, in one transaction (implicit, that of the batch, when
	// the commit is synchronous). Touching the thread locks it against a
	// concurrent prune and orders concurrent PutWrites, and the statements
	// after it, each reading the database as it is once the lock is held,
	// replace what an earlier PutWrites stored for the same tasks.
	b := &pgx.Batch{}
	if lazy {
		queueBegin(b, true)
	}
	found := false
	b.Queue(s.q.touchCheckpoint, threadID, checkpointID, micro(time.Now())).Query(func(rows pgx.Rows) error {
		found = rows.Next()
		rows.Close()
		return rows.Err()
	})
	if len(writes) > 0 {
		b.Queue(s.q.deleteTaskWrites, threadID, checkpointID, replaced)
		b.Queue(s.q.addWrites, append([]any{threadID, checkpointID}, writeColumns(writes)...)...).Exec(func(ct pgconn.CommandTag) error {
			// A checkpoint that a Put committed after the touch read the
			// database is found by these statements only; they lock the
			// thread themselves, as the touch then did not.
			found = found || ct.RowsAffected() > 0
			return nil
		})
	}
	if lazy {
		b.Queue("COMMIT")
	}
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn)
		return fmt.Errorf("postgres: put writes: %w", err)
	}
	if !found {
		return checkpoint.NotFoundError(threadID, checkpointID)
	}
	return nil
}

// writeColumns returns the task, node, channel and value columns of writes,
// the last four arguments of the insertWrites query.
func writeColumns(writes []checkpoint.Write) []any {
	tasks := make([]string, len(writes))
	nodes := make([]string, len(writes))
	channels := make([]string, len(writes))
	values := make([][]byte, len(writes))
	for i, w := range writes {
		tasks[i], nodes[i], channels[i], values[i] = w.TaskID, w.Node, w.Channel, w.Value
		if values[i] == nil {
			values[i] = []byte{}
		}
	}
	return []any{tasks, nodes, channels, values}
}

type row struct {
	cp   checkpoint.Checkpoint
	seq  int64
	refs chain.Refs
}

func scanCheckpoint(threadID string, sc pgx.Row) (row, error) {
	var (
		r       row
		rawRefs []byte
		body    []byte
		md      []byte
		created time.Time
	)
	if err := sc.Scan(&r.cp.ID, &r.seq, &r.cp.ParentID, &r.cp.Step, &rawRefs, &body, &md, &created); err != nil {
		return r, err
	}
	return r, decodeCheckpoint(threadID, &r, rawRefs, body, md, created)
}

// decodeCheckpoint fills r, whose checkpoint ID, sequence number, parent
// and step are read, from the other columns of its checkpoint record.
func decodeCheckpoint(threadID string, r *row, rawRefs, body, md []byte, created time.Time) error {
	r.cp.ThreadID = threadID
	r.cp.CreatedAt = created
	var err error
	if r.refs, err = chain.Decode(rawRefs); err != nil {
		return record.Corrupt(threadID, r.cp.ID, err)
	}
	r.cp.Versions = r.refs.Versions()
	if err := record.DecodeBody(body, &r.cp); err != nil {
		return err
	}
	if r.cp.Metadata, err = record.DecodeMetadata(md, threadID, r.cp.ID); err != nil {
		return err
	}
	return nil
}

// Get implements checkpoint.Saver.
func (s *Saver) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	if err := checkpoint.ValidateID("Get", "the thread ID", threadID); err != nil {
		return nil, err
	}
	if err := checkpoint.ValidateID("Get", "the checkpoint ID", checkpointID); err != nil {
		return nil, err
	}
	// One statement, which reads from one snapshot of the database: the
	// checkpoint, with the blobs of its chains and its writes aggregated
	// into arrays.
	byID := 0
	if checkpointID != "" {
		byID = 1
	}
	var (
		r                      row
		rawRefs, body, md      []byte
		created                time.Time
		bChannels              []string
		bWriters, bBases       []int64
		bKinds                 []int16
		bData, wValues         [][]byte
		wTasks, wNodes, wChans []string
	)
	err := s.pool.QueryRow(ctx, s.q.getOne[byID], threadID, checkpointID).Scan(
		&r.cp.ID, &r.seq, &r.cp.ParentID, &r.cp.Step, &rawRefs, &body, &md, &created,
		&bChannels, &bWriters, &bKinds, &bBases, &bData,
		&wTasks, &wNodes, &wChans, &wValues)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, checkpoint.NotFoundError(threadID, checkpointID)
	case dataException(err):
		return nil, s.damaged(ctx, threadID, checkpointID, byID, err)
	case err != nil:
		return nil, fmt.Errorf("postgres: get: %w", err)
	}
	if err := decodeCheckpoint(threadID, &r, rawRefs, body, md, created); err != nil {
		return nil, err
	}
	if len(bWriters) != len(bChannels) || len(bKinds) != len(bChannels) || len(bBases) != len(bChannels) || len(bData) != len(bChannels) ||
		len(wNodes) != len(wTasks) || len(wChans) != len(wTasks) || len(wValues) != len(wTasks) {
		return nil, fmt.Errorf("postgres: get: the columns of blobs or writes read for checkpoint %q of thread %q differ in length", r.cp.ID, threadID)
	}
	blobs := make(map[chain.Key]chain.Blob, len(bChannels))
	for i, ch := range bChannels {
		blobs[chain.Key{Channel: ch, Writer: bWriters[i]}] = chain.Blob{Kind: uint8(bKinds[i]), Base: bBases[i], Data: bData[i]}
	}
	var writes []checkpoint.Write
	if len(wTasks) > 0 {
		writes = make([]checkpoint.Write, len(wTasks))
		for i := range writes {
			writes[i] = checkpoint.Write{TaskID: wTasks[i], Node: wNodes[i], Channel: wChans[i], Value: wValues[i]}
		}
	}
	snap, err := record.Snapshot(ctx, threadID, r.cp, r.seq, r.refs, blobs, writes)
	if err != nil {
		return nil, err
	}
	if checkpointID == "" {
		s.recent.put(threadID, latestRef{id: r.cp.ID, seq: r.seq, raw: rawRefs, refs: r.refs})
	}
	return snap, nil
}

// damaged reports the data exception err, raised by Get's statement, as the
// corruption of the checkpoint Get looked for: as its record's corruption
// when the record itself does not decode, as its chains' otherwise.
func (s *Saver) damaged(ctx context.Context, threadID, checkpointID string, byID int, err error) error {
	r, rowErr := scanCheckpoint(threadID, s.pool.QueryRow(ctx, s.q.get[byID], threadID, checkpointID))
	if errors.Is(rowErr, checkpoint.ErrCorrupt) {
		return rowErr
	}
	id := r.cp.ID
	if id == "" {
		id = checkpointID
	}
	return damagedChains(threadID, id, err)
}

// listArgs checks the arguments of a List or ListSnapshots
// (validateList) and returns the metadata filter (nil for none)
// and the limit (nil for none).
func listArgs(threadID string, opts checkpoint.ListOptions) (filter []byte, limit *int, err error) {
	if err := validateList(threadID, opts); err != nil {
		return nil, nil, err
	}
	if len(opts.Metadata) > 0 {
		if filter, err = record.EncodeMetadata(opts.Metadata); err != nil {
			return nil, nil, err
		}
	}
	if opts.Limit > 0 {
		limit = &opts.Limit
	}
	return filter, limit, nil
}

// List implements checkpoint.Saver.
func (s *Saver) List(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]checkpoint.Checkpoint, error) {
	filter, limit, err := listArgs(threadID, opts)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q.list, threadID, opts.Before, nullString(filter), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list: %w", err)
	}
	var out []checkpoint.Checkpoint
	for rows.Next() {
		r, err := scanCheckpoint(threadID, rows)
		if errors.Is(err, checkpoint.ErrCorrupt) {
			rows.Close()
			return nil, err
		}
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: list: %w", err)
		}
		out = append(out, r.cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list: %w", err)
	}
	if len(out) == 0 && opts.Before != "" {
		var exists bool
		if err := s.pool.QueryRow(ctx, s.q.idTaken, threadID, opts.Before).Scan(&exists); err != nil {
			return nil, fmt.Errorf("postgres: list: %w", err)
		}
		if !exists {
			return nil, checkpoint.NotFoundError(threadID, opts.Before)
		}
	}
	return out, nil
}

// ListSnapshots implements checkpoint.SnapshotLister: it reads a page of
// snapshots in one round trip, a read-only repeatable-read transaction in
// which three queries read the page's checkpoints, every blob of their delta
// chains (each blob once, however many checkpoints share it) and their
// pending writes from one snapshot of the database.
func (s *Saver) ListSnapshots(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]*checkpoint.Snapshot, error) {
	filter, limit, err := listArgs(threadID, opts)
	if err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: list snapshots: %w", err)
	}
	defer conn.Release()
	var (
		page       []row
		blobs      = map[chain.Key]chain.Blob{}
		writes     = map[int64][]checkpoint.Write{}
		beforeSeen = true
	)
	args := []any{threadID, opts.Before, nullString(filter), limit}
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	b.Queue(s.q.list, args...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			r, err := scanCheckpoint(threadID, rows)
			if err != nil {
				return err
			}
			page = append(page, r)
		}
		return rows.Err()
	})
	b.Queue(s.q.pageChains, args...).Query(func(rows pgx.Rows) error {
		var (
			k    chain.Key
			bl   chain.Blob
			kind int16
		)
		_, err := pgx.ForEachRow(rows, []any{&k.Channel, &k.Writer, &kind, &bl.Base, &bl.Data}, func() error {
			bl.Kind = uint8(kind)
			blobs[k] = bl
			bl = chain.Blob{}
			return nil
		})
		return err
	})
	b.Queue(s.q.pageWrites, args...).Query(func(rows pgx.Rows) error {
		var (
			seq int64
			w   checkpoint.Write
		)
		_, err := pgx.ForEachRow(rows, []any{&seq, &w.TaskID, &w.Node, &w.Channel, &w.Value}, func() error {
			writes[seq] = append(writes[seq], w)
			w = checkpoint.Write{}
			return nil
		})
		return err
	})
	if opts.Before != "" {
		b.Queue(s.q.idTaken, threadID, opts.Before).QueryRow(func(row pgx.Row) error {
			return row.Scan(&beforeSeen)
		})
	}
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn)
		if errors.Is(err, checkpoint.ErrCorrupt) {
			return nil, err
		}
		if dataException(err) {
			return nil, damagedChains(threadID, "", err)
		}
		return nil, fmt.Errorf("postgres: list snapshots: %w", err)
	}
	if !beforeSeen {
		return nil, checkpoint.NotFoundError(threadID, opts.Before)
	}
	out := make([]*checkpoint.Snapshot, len(page))
	for i, r := range page {
		snap, err := record.Snapshot(ctx, threadID, r.cp, r.seq, r.refs, blobs, writes[r.seq])
		if err != nil {
			return nil, err
		}
		out[i] = snap
	}
	return out, nil
}

// dataException reports whether err is a PostgreSQL data exception (SQLSTATE
// class 22). The queries that load checkpoints pass only well-formed
// parameters, so in them such an error comes from stored data: channel
// references that are not what Put writes.
func dataException(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && len(pe.Code) == 5 && pe.Code[:2] == "22"
}

// damagedChains reports a data exception raised while loading the blob
// chains of a checkpoint of the thread ("" when not known) as corruption.
func damagedChains(threadID, checkpointID string, err error) error {
	var pe *pgconn.PgError
	errors.As(err, &pe)
	return &checkpoint.CorruptError{ThreadID: threadID, CheckpointID: checkpointID,
		Err: &chain.Corruption{Reason: fmt.Sprintf("the channel references cannot be followed: %s (SQLSTATE %s)", pe.Message, pe.Code)}}
}

func nullString(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// DeleteThread implements checkpoint.Saver.
// A thread ID PostgreSQL cannot hold (a NUL byte, invalid UTF-8) names no
// stored thread: there is nothing to delete. A longer thread ID than
// checkpoint.MaxIDLen, stored by an earlier release, is deleted.
func (s *Saver) DeleteThread(ctx context.Context, threadID string) error {
	if unstorable(threadID) {
		return nil
	}
	s.recent.forget(threadID)
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The thread row goes first: its lock waits for a Put in progress,
		// whose checkpoint is then deleted with the rest.
		if _, err := tx.Exec(ctx, s.q.deleteThread, threadID); err != nil {
			return fmt.Errorf("postgres: delete thread: %w", err)
		}
		_, err := s.deleteThreadData(ctx, tx, []string{threadID})
		return err
	})
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
		return fmt.Errorf("postgres: patch metadata: %w", err)
	}
	ct, err := s.pool.Exec(ctx, `UPDATE `+pgx.Identifier{s.schema}.Sanitize()+`.agentgraph_checkpoints SET metadata = metadata || $3::jsonb WHERE thread_id = $1 AND checkpoint_id = $2`,
		threadID, checkpointID, string(patch))
	if err != nil {
		return fmt.Errorf("postgres: patch metadata: %w", err)
	}
	if ct.RowsAffected() == 0 {
		return checkpoint.NotFoundError(threadID, checkpointID)
	}
	return nil
}

// CopyThread implements checkpoint.Copier: it copies the thread's rows as
// they are stored, in one transaction. It locks from's thread row first,
// so a Put to from waits for the copy (and the copy for a Put in
// progress).
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
	n, sch := 0, pgx.Identifier{s.schema}.Sanitize()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var actual string
		switch err := tx.QueryRow(ctx, s.q.latest, to).Scan(&actual); {
		case err == nil:
			return &checkpoint.ConflictError{ThreadID: to, Actual: actual}
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("postgres: copy thread: %w", err)
		}
		var seq int64
		switch err := tx.QueryRow(ctx, `SELECT seq FROM `+sch+`.agentgraph_threads WHERE thread_id = $1 FOR SHARE`, from).Scan(&seq); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil // nothing to copy
		case err != nil:
			return fmt.Errorf("postgres: copy thread: %w", err)
		}
		// The running totals are copied with the row: the share lock
		// keeps them those of the rows copied below.
		ct, err := tx.Exec(ctx, `INSERT INTO `+sch+`.agentgraph_threads (thread_id, latest_id, seq, touched, checkpoints, blobs, blob_bytes, writes, write_bytes)
			SELECT $1, latest_id, seq, touched, checkpoints, blobs, blob_bytes, writes, write_bytes FROM `+sch+`.agentgraph_threads WHERE thread_id = $2 ON CONFLICT (thread_id) DO NOTHING`, to, from)
		if err != nil {
			return fmt.Errorf("postgres: copy thread: %w", err)
		}
		if ct.RowsAffected() == 0 {
			return &checkpoint.ConflictError{ThreadID: to, Actual: "(saved during the copy)"}
		}
		for i, q := range []string{
			`INSERT INTO {s}.agentgraph_checkpoints (thread_id, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at)
				SELECT $1, seq, checkpoint_id, parent_id, step, refs, body, metadata, created_at FROM {s}.agentgraph_checkpoints WHERE thread_id = $2`,
			`INSERT INTO {s}.agentgraph_blobs (thread_id, channel, writer, kind, base, data)
				SELECT $1, channel, writer, kind, base, data FROM {s}.agentgraph_blobs WHERE thread_id = $2`,
			`INSERT INTO {s}.agentgraph_writes (thread_id, checkpoint_seq, task_id, node, channel, value)
				SELECT $1, checkpoint_seq, task_id, node, channel, value FROM {s}.agentgraph_writes WHERE thread_id = $2 ORDER BY id`,
		} {
			ct, err := tx.Exec(ctx, strings.ReplaceAll(q, "{s}", sch), to, from)
			if err != nil {
				return fmt.Errorf("postgres: copy thread: %w", err)
			}
			if i == 0 {
				n = int(ct.RowsAffected())
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func (s *Saver) deleteThreadData(ctx context.Context, tx pgx.Tx, threads []string) (checkpoint.Pruned, error) {
	var p checkpoint.Pruned
	b := &pgx.Batch{}
	b.Queue(s.q.deleteThreadsWrites, threads)
	b.Queue(s.q.deleteThreadsBlobs, threads).Exec(func(ct pgconn.CommandTag) error { p.Blobs = int(ct.RowsAffected()); return nil })
	b.Queue(s.q.deleteThreadsCheckpoints, threads).Exec(func(ct pgconn.CommandTag) error { p.Checkpoints = int(ct.RowsAffected()); return nil })
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return p, fmt.Errorf("postgres: delete threads: %w", err)
	}
	return p, nil
}

// Prune implements checkpoint.Pruner. It reads tables whole: with
// MaxIdle, agentgraph_threads (one short row per thread; its touched
// column is not indexed, so that a Put's update of the row adds no index
// entries), and with KeepLatest, the thread ids of
// agentgraph_checkpoints. Call it periodically, not per run. A
// Retention.ThreadID PostgreSQL cannot hold (a NUL byte, invalid UTF-8)
// names no stored thread: nothing is pruned.
func (s *Saver) Prune(ctx context.Context, r checkpoint.Retention) (checkpoint.Pruned, error) {
	if unstorable(r.ThreadID) {
		return checkpoint.Pruned{}, checkpoint.ValidateRetention(r)
	}
	return prune.Run(r, s.log, prune.Steps{
		Idle: func(before time.Time) (checkpoint.Pruned, error) {
			var p checkpoint.Pruned
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				threads, err := pgdb.Strings(ctx, tx, s.q.deleteIdle, before, r.ThreadID)
				if err != nil {
					return fmt.Errorf("postgres: prune: %w", err)
				}
				if len(threads) == 0 {
					return nil
				}
				p, err = s.deleteThreadData(ctx, tx, threads)
				p.Threads = len(threads)
				return err
			})
			return p, err
		},
		Long: func() ([]string, error) {
			threads, err := pgdb.Strings(ctx, s.pool, s.q.longThreads, r.KeepLatest, r.ThreadID)
			if err != nil {
				return nil, fmt.Errorf("postgres: prune: %w", err)
			}
			return threads, nil
		},
		KeepLatest: func(threadID string) (checkpoint.Pruned, error) {
			var p checkpoint.Pruned
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				var err error
				p, err = s.keepLatest(ctx, tx, threadID, r.KeepLatest)
				return err
			})
			return p, err
		},
	})
}

// keepLatest deletes the checkpoints of a thread beyond its newest keep, and
// the blobs no kept checkpoint needs.
func (s *Saver) keepLatest(ctx context.Context, tx pgx.Tx, threadID string, keep int) (checkpoint.Pruned, error) {
	var p checkpoint.Pruned
	fail := func(err error) (checkpoint.Pruned, error) {
		return p, fmt.Errorf("postgres: prune %s: %w", threadID, err)
	}
	// Lock the thread against concurrent writers, then find the oldest
	// checkpoint to keep.
	var cutoff int64
	err := tx.QueryRow(ctx, s.q.lockCutoff, threadID, keep-1).Scan(&cutoff)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, s.q.deleteOldWrites, threadID, cutoff); err != nil {
		return fail(err)
	}
	ct, err := tx.Exec(ctx, s.q.deleteOldCheckpoints, threadID, cutoff)
	if err != nil {
		return fail(err)
	}
	p.Checkpoints = int(ct.RowsAffected())
	rows, err := tx.Query(ctx, s.q.threadRefs, threadID)
	if err != nil {
		return fail(err)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return fail(err)
	}
	kept := make([]chain.Refs, len(raws))
	for i, raw := range raws {
		if kept[i], err = chain.Decode(raw); err != nil {
			return fail(err)
		}
	}
	rows, err = tx.Query(ctx, s.q.blobHeaders, threadID)
	if err != nil {
		return fail(err)
	}
	bases := map[chain.Key]int64{}
	var (
		k    chain.Key
		base int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&k.Channel, &k.Writer, &base}, func() error {
		bases[k] = base
		return nil
	}); err != nil {
		return fail(err)
	}
	live := chain.Live(kept, func(k chain.Key) (int64, bool) {
		b, ok := bases[k]
		return b, ok
	})
	var channels []string
	var writers []int64
	for k := range bases {
		if !live[k] {
			channels, writers = append(channels, k.Channel), append(writers, k.Writer)
		}
	}
	if len(channels) > 0 {
		ct, err := tx.Exec(ctx, s.q.deleteBlobs, threadID, channels, writers)
		if err != nil {
			return fail(err)
		}
		p.Blobs = int(ct.RowsAffected())
	}
	return p, nil
}

// Usage implements checkpoint.UsageReporter. It reads one row, the
// running totals on the thread's agentgraph_threads row (schema version
// 3), which the statements that insert rows and triggers on the deletes
// keep; its cost does not grow with the thread's history.
func (s *Saver) Usage(ctx context.Context, threadID string) (checkpoint.Usage, error) {
	if err := checkpoint.ValidateID("Usage", "the thread ID", threadID); err != nil {
		return checkpoint.Usage{}, err
	}
	var u checkpoint.Usage
	err := s.pool.QueryRow(ctx, s.q.usage, threadID).Scan(&u.Checkpoints, &u.Blobs, &u.BlobBytes, &u.Writes, &u.WriteBytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return checkpoint.Usage{}, nil
	}
	if err != nil {
		return u, fmt.Errorf("postgres: usage: %w", err)
	}
	return u, nil
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

// unstorable reports whether PostgreSQL's text cannot hold s (it has a NUL
// byte or is not valid UTF-8): no stored ID is s, and a query passing it
// fails with a data exception instead of matching nothing.
func unstorable(s string) bool {
	return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s)
}
