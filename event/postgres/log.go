package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// Defaults and bounds of [Log].
const (
	// DefaultLogMaxPending is LogConfig.MaxPending's default.
	DefaultLogMaxPending = 4096
	// maxWrite bounds the records one write statement stores.
	maxWrite = 1024
	// EpochSize is the positions of one epoch of a log (see
	// Log.AppendEpoch): 2^32.
	EpochSize int64 = 1 << 32
	// MaxEpoch bounds the epochs: positions stay below 2^53, a
	// JavaScript number's exact integers.
	MaxEpoch int64 = 1 << 21
	// epochSizeSQL is EpochSize in the write statements.
	epochSizeSQL = "4294967296"
	// writeTimeout bounds one write.
	writeTimeout = time.Minute
)

// LogConfig configures [NewLog]. Set Pool or DSN.
type LogConfig struct {
	// Pool is the connection pool to use. The log does not close it.
	Pool *pgxpool.Pool
	// DSN opens a pool of the log's own when Pool is nil; Close closes
	// it.
	DSN string
	// Schema holds the tables; NewLog creates it if needed. Empty means
	// "public".
	Schema string
	// Name prefixes the tables' names, as JournalConfig.Name does (a
	// [Journal] of the same Schema and Name reads and writes the same
	// tables). Empty means DefaultJournalName.
	Name string
	// MaxEvents is how many of its latest records a key keeps when an
	// append gives no bound of its own. Zero means
	// DefaultJournalMaxEvents.
	MaxEvents int
	// MaxPending bounds the records waiting to be written: an append
	// past it waits for the write in flight (or for its context to
	// end). Zero means
	// DefaultLogMaxPending.
	MaxPending int
	// Parent, when set, is a schema-qualified and quoted table whose
	// text column id lists the keys that may be written: a record of
	// another key is not stored and its append fails with
	// event.ErrUnknownKey (the agent server's runs table: a run's log
	// is written only while its run exists).
	Parent string
	// Channel, when set, is the NOTIFY channel each write notifies once
	// per key it wrote, with Payload(key) (the key itself when Payload
	// is nil), delivered at its commit. The tables being UNLOGGED, a
	// write's commit does not wait for a WAL flush, so it holds
	// PostgreSQL's notification lock only briefly.
	Channel string
	// Payload gives the notification payload of a key (at most 8000
	// bytes).
	Payload func(key string) string
	// Stored, when set, is called after each write with the keys it
	// stored, in the writer's process (a NOTIFY is delivered to the
	// other processes).
	Stored func(keys []string)
	// Writer names the writer in the keys' rows (a Journal's lease).
	Writer string
	// Logger receives migrations. Nil means no logging.
	Logger *zap.Logger
}

// Record is one record of a key's log.
type Record struct {
	// Pos numbers the key's records from 0, in append order; set by the
	// log.
	Pos int64
	// Name and Seq are the caller's: an agent server event's name, a
	// journal event's Seq.
	Name string
	Seq  int64
	// Data is the record's payload.
	Data []byte
}

// Log is a keyed, ordered, capped log of records in PostgreSQL, written
// in batches: the records appended while a write is in flight are
// written together by the next one, in one statement for any number of
// keys (group commit), so that concurrent writers share a transaction,
// a WAL record and a notification per key. It is the storage under
// [Journal] and under the agent server's PostgreSQL run event logs. It
// is safe for concurrent use.
//
// Its tables are the Journal's (see the package doc): UNLOGGED, so a
// write does not wait for a WAL flush and a database crash empties them.
type Log struct {
	cfg   LogConfig
	pool  *pgxpool.Pool
	owned bool
	q     logQueries

	mu       sync.Mutex
	next     *batch // collecting; nil when nothing waits
	inflight *batch // being written
	running  bool
	room     chan struct{} // closed (and replaced) when next is taken or the log closes
	closed   bool
}

type logQueries struct {
	keys, events                       string
	write, write1, writeOne, read, del string
}

// batch is the records of one write.
type batch struct {
	done chan struct{}
	recs []pending
}

type pending struct {
	key   string
	max   int
	epoch int64 // a new log of key numbers its records from epoch × EpochSize
	rec   Record
	err   error // the record's failure (event.ErrUnknownKey, a refused value, the write's failure)
}

func newLogQueries(schema, name, parent string) logQueries {
	q := logQueries{keys: pgdb.Table(schema, name+"_keys"), events: pgdb.Table(schema, name+"_events")}
	r := strings.NewReplacer("{keys}", q.keys, "{events}", q.events, "{trimOne}", TrimOneFunction(schema, name)).Replace
	guard := ""
	if parent != "" {
		// OFFSET 0 keeps the EXISTS a lookup per key: as a semi-join, a
		// plan made while the parent table was small (a prepared
		// statement's generic plan, made at a connection's start) read
		// the whole table at every write.
		guard = ` WHERE EXISTS (SELECT 1 FROM ` + parent + ` p WHERE p.id = c.key OFFSET 0)`
	}
	// One statement writes any number of keys: c has a row per key (its
	// record count n, its cap m and its notification payload), e a row per record to insert (its
	// index among its key's records of this write; only a key's last m
	// are sent). The key's row numbers the records, and the records that
	// fall out of the key's last m are dropped by their row ids, found by
	// an ordered, limited range of the primary key per key: a join of the
	// events table with h and c let a plan cached while the table was
	// small scan the whole table at each write. The drop runs only when
	// some key of the write holds more than its m records (the EXISTS,
	// which reads no events, is a one-time filter over the drop's scan):
	// a generic plan made on a nearly empty table scans the events table
	// for the row ids (a TID scan of an array of unknown length costs the
	// planner more than a scan of a few pages), and without the filter
	// that scan ran at every write, records to drop or not.
	// The keys come sorted (see writeChunk), so that the upsert locks
	// the keys' rows in one order in every process: two writes of the
	// same keys cannot deadlock.
	//
	// A key's new row starts at its epoch's first position ($12, in
	// units of EpochSize), plus its count: an existing row adds the
	// count alone, the inserted value modulo EpochSize (a write holds
	// fewer than EpochSize records of a key). A key's log thus holds
	// next modulo EpochSize records (fewer than EpochSize): that, not
	// next, is what the drop's filters compare with the cap, or a log
	// started at an epoch above 0 would run the drop at every write.
	q.write = r(`WITH c AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $10::text[], $12::bigint[]) AS c(key, n, m, payload, epoch)),
		h AS (INSERT INTO {keys} AS k (key, writer, next, ended, updated)
				SELECT c.key, $4, c.epoch * ` + epochSizeSQL + ` + c.n, false, clock_timestamp() FROM c` + guard + `
			ON CONFLICT (key) DO UPDATE SET next = k.next + EXCLUDED.next % ` + epochSizeSQL + `, writer = EXCLUDED.writer, updated = EXCLUDED.updated
			RETURNING key, next),
		i AS (INSERT INTO {events} (key, pos, seq, name, data)
			SELECT e.key, h.next - c.n + e.idx, e.seq, e.name, e.data
			FROM unnest($5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::bytea[]) AS e(key, idx, seq, name, data)
			JOIN h ON h.key = e.key JOIN c ON c.key = e.key),
		d AS (DELETE FROM {events} x WHERE x.ctid = ANY (ARRAY(SELECT y.ctid FROM h JOIN c ON c.key = h.key
			CROSS JOIN LATERAL (SELECT z.ctid FROM {events} z WHERE z.key = h.key AND z.pos >= h.next - c.n - c.m AND z.pos < h.next - c.m
				ORDER BY z.pos LIMIT c.n) y))
			AND EXISTS (SELECT 1 FROM h JOIN c ON c.key = h.key WHERE h.next % ` + epochSizeSQL + ` > c.m))
		SELECT h.key, h.next, CASE WHEN $11::text <> '' THEN pg_notify($11, c.payload) END FROM h JOIN c ON c.key = h.key`)
	// write1 is write for one key ($1), the common case of a lone
	// writer: the drop is a range of the primary key under the key
	// given as a parameter, run only when the key holds more than its
	// cap ($4; a one-time filter, as in write).
	guard1 := ""
	if parent != "" {
		guard1 = ` WHERE EXISTS (SELECT 1 FROM ` + parent + ` p WHERE p.id = $1)`
	}
	// A new row starts at the epoch $11 (see write).
	q.write1 = r(`WITH h AS (INSERT INTO {keys} AS k (key, writer, next, ended, updated)
				SELECT $1, $2, $11::bigint * ` + epochSizeSQL + ` + $3, false, clock_timestamp()` + guard1 + `
			ON CONFLICT (key) DO UPDATE SET next = k.next + $3, writer = EXCLUDED.writer, updated = EXCLUDED.updated
			RETURNING next),
		i AS (INSERT INTO {events} (key, pos, seq, name, data)
			SELECT $1, h.next - $3 + e.idx, e.seq, e.name, e.data
			FROM h, unnest($5::bigint[], $6::bigint[], $7::text[], $8::bytea[]) AS e(idx, seq, name, data)),
		d AS (DELETE FROM {events} WHERE key = $1 AND pos >= (SELECT next FROM h) - $3::bigint - $4::bigint AND pos < (SELECT next FROM h) - $4::bigint
			AND (SELECT next FROM h) % ` + epochSizeSQL + ` > $4::bigint)
		SELECT next, CASE WHEN $9::text <> '' THEN pg_notify($9, $10) END FROM h`)
	// writeOne is write1 for one record: scalar parameters, the
	// cheapest to send and to plan.
	// A new row starts at the epoch $9 (see write).
	// The record that falls out of the key's last $3 is deleted by the
	// function {trimOne} (see journalMigrations), called only when the
	// key holds more than $3 (next modulo EpochSize, see write): a
	// DELETE in the statement had its nodes initialised at every write.
	q.writeOne = r(`WITH h AS (INSERT INTO {keys} AS k (key, writer, next, ended, updated)
				SELECT $1, $2, $9::bigint * ` + epochSizeSQL + ` + 1, false, clock_timestamp()` + guard1 + `
			ON CONFLICT (key) DO UPDATE SET next = k.next + 1, writer = EXCLUDED.writer, updated = EXCLUDED.updated
			RETURNING next),
		i AS (INSERT INTO {events} (key, pos, seq, name, data) SELECT $1, h.next - 1, $4, $5, $6 FROM h)
		SELECT next, CASE WHEN $7::text <> '' THEN pg_notify($7, $8) END,
			CASE WHEN next % ` + epochSizeSQL + ` > $3::bigint THEN {trimOne}($1, next - 1 - $3::bigint) END FROM h`)
	q.read = r(`SELECT (SELECT min(pos) FROM {events} WHERE key = $1), e.pos, e.seq, e.name, e.data
		FROM {keys} k LEFT JOIN LATERAL (SELECT pos, seq, name, data FROM {events} WHERE key = k.key AND pos > $2 ORDER BY pos LIMIT $3) e ON true
		WHERE k.key = $1 ORDER BY e.pos`)
	q.del = r(`WITH k AS (DELETE FROM {keys} WHERE key = ANY($1)) DELETE FROM {events} WHERE key = ANY($1)`)
	return q
}

// NewLog connects (when cfg.DSN is set) and creates or migrates the
// tables.
func NewLog(ctx context.Context, cfg LogConfig) (*Log, error) {
	var err error
	if cfg.Name, cfg.Schema, err = checkTables("LogConfig", cfg.Pool, cfg.DSN, cfg.Name, cfg.Schema); err != nil {
		return nil, err
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = DefaultJournalMaxEvents
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultLogMaxPending
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	pool, owned, err := pgdb.Connect(ctx, cfg.Pool, cfg.DSN)
	if err != nil {
		return nil, err
	}
	l := &Log{cfg: cfg, pool: pool, owned: owned, q: newLogQueries(cfg.Schema, cfg.Name, cfg.Parent), room: make(chan struct{})}
	if err := migrateJournal(ctx, pool, cfg.Schema, cfg.Name, cfg.Logger); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Close waits for the records appended so far to be written and closes
// the pool if the log opened it.
func (l *Log) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		l.signalRoom()
	}
	b := l.pendingBatch()
	l.mu.Unlock()
	if b != nil {
		<-b.done
	}
	if l.owned {
		l.pool.Close()
	}
}

// pendingBatch returns the batch that will hold everything appended so
// far (the collecting one, or the one in flight), or nil. l.mu is held.
func (l *Log) pendingBatch() *batch {
	if l.next != nil {
		return l.next
	}
	return l.inflight
}

// signalRoom wakes the appends waiting for room. l.mu is held.
func (l *Log) signalRoom() {
	close(l.room)
	l.room = make(chan struct{})
}

// enqueue adds a record to the collecting batch and returns the batch
// and the record's index in it. When no writer runs, the caller becomes
// it (leads is set) and must call l.lead: a lone writer then waits for no
// hand-off between goroutines. It waits while MaxPending records are
// collected, or until ctx ends.
func (l *Log) enqueue(ctx context.Context, p pending) (b *batch, i int, leads bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.next != nil && len(l.next.recs) >= l.cfg.MaxPending && !l.closed {
		room := l.room
		l.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			l.mu.Lock()
			return nil, 0, false, ctx.Err()
		}
		l.mu.Lock()
	}
	if l.closed {
		return nil, 0, false, errors.New("postgres: log closed")
	}
	if l.next == nil {
		l.next = &batch{done: make(chan struct{})}
	}
	b = l.next
	b.recs = append(b.recs, p)
	if !l.running {
		l.running, leads = true, true
	}
	return b, len(b.recs) - 1, leads, nil
}

// lead writes the collecting batch in the caller's goroutine, under the
// caller's ctx, when it holds the caller's record alone (so that ending
// ctx ends only the caller's write); else, and for what was collected
// meanwhile, it leaves the writing to a writer goroutine.
func (l *Log) lead(ctx context.Context) {
	l.mu.Lock()
	b := l.next
	if len(b.recs) > 1 {
		l.mu.Unlock()
		go l.run()
		return
	}
	l.take(b)
	l.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	l.write(wctx, b.recs)
	cancel()
	l.complete(b)
	l.mu.Lock()
	if l.next == nil {
		l.running, l.inflight = false, nil
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	go l.run()
}

// Append appends a record to key's log, keeping the key's last max
// records (max ≤ 0: LogConfig.MaxEvents), and returns its position once
// it is stored. It fails with event.ErrUnknownKey when LogConfig.Parent
// does not list key, and with the record's own failure (a value
// PostgreSQL refuses) without failing the records written with it.
//
// It returns ctx.Err() once ctx ends, whether it waits for room (see
// LogConfig.MaxPending) or for the write. The record may then still be
// stored: the write it joined goes on for the records of the others,
// and a write PostgreSQL received may commit. A caller that must know
// reads the key's log.
func (l *Log) Append(ctx context.Context, key string, max int, rec Record) (int64, error) {
	return l.AppendEpoch(ctx, key, max, 0, rec)
}

// AppendEpoch is Append, except that when key has no log (its first
// record, or its log was lost: the tables are UNLOGGED, and a database
// crash empties them), the log it starts numbers its records from epoch
// × [EpochSize] instead of 0. A log that exists goes on from its next
// position, whatever epoch. A writer that gave out positions of a log
// that may be lost passes the epoch after theirs, so that a new log's
// positions stay above every position given out. epoch must be at least
// 0 and below [MaxEpoch].
func (l *Log) AppendEpoch(ctx context.Context, key string, max int, epoch int64, rec Record) (int64, error) {
	if epoch < 0 || epoch >= MaxEpoch {
		return 0, fmt.Errorf("postgres: log %s: epoch %d is out of range; give 0 to %d", key, epoch, MaxEpoch-1)
	}
	b, i, leads, err := l.enqueue(ctx, pending{key: key, max: max, epoch: epoch, rec: rec})
	if err != nil {
		return 0, err
	}
	if leads {
		l.lead(ctx)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if err := b.recs[i].err; err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	return b.recs[i].rec.Pos, nil
}

// run writes the collected batches one after the other until none is
// left.
func (l *Log) run() {
	for l.writeNext() {
	}
}

// writeNext writes the collecting batch; when there is none it marks the
// writer stopped and reports false.
func (l *Log) writeNext() bool {
	l.mu.Lock()
	b := l.next
	l.next = nil
	if b == nil {
		l.running = false
		l.inflight = nil
		l.mu.Unlock()
		return false
	}
	l.take(b)
	l.mu.Unlock()
	// The write is the batch's, not one caller's: it runs to its end
	// (or writeTimeout) whatever the callers' contexts.
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	l.write(ctx, b.recs)
	cancel()
	l.complete(b)
	return true
}

// take makes b, the collecting batch, the one in flight. l.mu is held.
func (l *Log) take(b *batch) {
	l.next = nil
	l.inflight = b
	l.signalRoom()
}

// complete reports b's stored keys to LogConfig.Stored and wakes b's
// callers.
func (l *Log) complete(b *batch) {
	var keys []string
	if l.cfg.Stored != nil {
		seen := map[string]bool{}
		for _, p := range b.recs {
			if p.err == nil && !seen[p.key] {
				seen[p.key] = true
				keys = append(keys, p.key)
			}
		}
	}
	close(b.done)
	if len(keys) > 0 {
		l.cfg.Stored(keys)
	}
}

// write stores recs, in statements of at most maxWrite records, each
// committing on its own, and sets each record's failure. When PostgreSQL
// refuses a statement of several records (it then stored none of them),
// its records are written again one by one, so that one record
// PostgreSQL refuses (a NUL byte in a name) fails alone. When a statement
// fails otherwise its outcome is unknown (see refusedWhole), and each of
// its records fails with that error rather than risk being stored twice.
func (l *Log) write(ctx context.Context, recs []pending) {
	for len(recs) > 0 {
		n := min(len(recs), maxWrite)
		chunk := recs[:n]
		recs = recs[n:]
		err := l.writeChunk(ctx, chunk)
		if err == nil {
			continue
		}
		if len(chunk) == 1 || ctx.Err() != nil || !refusedWhole(err) {
			for i := range chunk {
				chunk[i].err = err
			}
			continue
		}
		for i := range chunk {
			if err := l.writeOne(ctx, &chunk[i]); err != nil {
				chunk[i].err = err
			}
		}
	}
}

// refusedWhole reports whether a failed write statement stored none of its
// records for certain: PostgreSQL refused it (the statement, which commits
// on its own, rolled back), or it failed before it was sent. After any
// other failure (the connection broke while the result came back, the
// write timed out) the statement may have committed, and writing its
// records again would store them twice.
func refusedWhole(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) || pgconn.SafeToRetry(err)
}

// keyWrite is what one write does to one key.
type keyWrite struct {
	n, m  int64
	epoch int64 // the highest of its records' epochs
	base  int64 // position of the key's first record of the write
	ok    bool
}

// payload is key's notification payload ("" when the log notifies
// nobody).
func (l *Log) payload(key string) string {
	switch {
	case l.cfg.Channel == "":
		return ""
	case l.cfg.Payload != nil:
		return l.cfg.Payload(key)
	}
	return key
}

// writeOne stores a write of one record.
func (l *Log) writeOne(ctx context.Context, p *pending) error {
	m := int64(p.max)
	if m <= 0 {
		m = int64(l.cfg.MaxEvents)
	}
	var next int64
	err := l.pool.QueryRow(ctx, l.q.writeOne, p.key, l.cfg.Writer, m, p.rec.Seq, p.rec.Name, p.rec.Data, l.cfg.Channel, l.payload(p.key), p.epoch).Scan(&next, nil, nil)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		p.err = fmt.Errorf("postgres: log %s: %w", p.key, event.ErrUnknownKey)
	case err != nil:
		return fmt.Errorf("postgres: log write: %w", err)
	default:
		p.rec.Pos = next - 1
	}
	return nil
}

func (l *Log) writeChunk(ctx context.Context, recs []pending) error {
	if len(recs) == 1 {
		return l.writeOne(ctx, &recs[0])
	}
	per := make(map[string]*keyWrite, 4)
	var keys []string
	var ns, ms, epochs []int64
	idx := make([]int64, len(recs))
	for i, p := range recs {
		k := per[p.key]
		if k == nil {
			k = &keyWrite{}
			per[p.key] = k
			keys = append(keys, p.key)
		}
		idx[i] = k.n
		k.n++
		k.epoch = max(k.epoch, p.epoch)
		k.m = int64(p.max)
		if k.m <= 0 {
			k.m = int64(l.cfg.MaxEvents)
		}
	}
	// Sorted keys: the upsert locks their rows in this order (see
	// newLogQueries), and so does every other writer.
	slices.Sort(keys)
	for _, key := range keys {
		k := per[key]
		ns, ms, epochs = append(ns, k.n), append(ms, k.m), append(epochs, k.epoch)
	}
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(recs[a].key, recs[b].key) })
	var ekeys, enames []string
	var eidx, eseqs []int64
	var edata [][]byte
	for _, i := range order {
		p := recs[i]
		k := per[p.key]
		if idx[i] < k.n-k.m {
			continue // falls out of the key's last m at once
		}
		ekeys, eidx, eseqs, enames, edata = append(ekeys, p.key), append(eidx, idx[i]), append(eseqs, p.rec.Seq), append(enames, p.rec.Name), append(edata, p.rec.Data)
	}
	var rows pgx.Rows
	var err error
	payloads := make([]string, len(keys))
	for i, key := range keys {
		payloads[i] = l.payload(key)
	}
	if len(keys) == 1 {
		rows, err = l.pool.Query(ctx, l.q.write1, keys[0], l.cfg.Writer, ns[0], ms[0], eidx, eseqs, enames, edata, l.cfg.Channel, payloads[0], epochs[0])
	} else {
		rows, err = l.pool.Query(ctx, l.q.write, keys, ns, ms, l.cfg.Writer, ekeys, eidx, eseqs, enames, edata, payloads, l.cfg.Channel, epochs)
	}
	if err != nil {
		return fmt.Errorf("postgres: log write: %w", err)
	}
	for rows.Next() {
		var key string
		var next int64
		if len(keys) == 1 {
			key, err = keys[0], rows.Scan(&next, nil)
		} else {
			err = rows.Scan(&key, &next, nil)
		}
		if err != nil {
			rows.Close()
			return fmt.Errorf("postgres: log write: %w", err)
		}
		if k := per[key]; k != nil {
			k.base, k.ok = next-k.n, true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: log write: %w", err)
	}
	for i := range recs {
		p := &recs[i]
		k := per[p.key]
		if !k.ok {
			p.err = fmt.Errorf("postgres: log %s: %w", p.key, event.ErrUnknownKey)
			continue
		}
		p.rec.Pos = k.base + idx[i]
	}
	return nil
}

// Read returns up to limit (≤ 0: all) of key's records after position
// after (-1 for all), oldest first, the position of the key's oldest
// record still kept (0 when none is), and whether key has a log (a key
// allowed by LogConfig.Parent has none until its first record). It is
// one statement, an index range scan from after.
func (l *Log) Read(ctx context.Context, key string, after int64, limit int) (recs []Record, first int64, found bool, err error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := l.pool.Query(ctx, l.q.read, key, after, lim)
	if err != nil {
		return nil, 0, false, fmt.Errorf("postgres: log %s: %w", key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var min, pos, seq *int64
		var name *string
		var data []byte
		if err := rows.Scan(&min, &pos, &seq, &name, &data); err != nil {
			return nil, 0, false, fmt.Errorf("postgres: log %s: %w", key, err)
		}
		found = true
		if min != nil {
			first = *min
		}
		if pos != nil {
			recs = append(recs, Record{Pos: *pos, Seq: *seq, Name: *name, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, fmt.Errorf("postgres: log %s: %w", key, err)
	}
	return recs, first, found, nil
}

// Delete deletes the logs of keys, in one statement.
func (l *Log) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := l.pool.Exec(ctx, l.q.del, keys); err != nil {
		return fmt.Errorf("postgres: deleting logs: %w", err)
	}
	return nil
}
