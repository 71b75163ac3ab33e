// Package postgres keeps an [event.Journal] in PostgreSQL: keyed event
// streams that every instance of a service sharing the database can
// replay and follow live, without another server.
//
// A journal named N is three tables: N_keys (one row per key: its writer,
// its next position, whether it ended, when it was last written),
// N_events (one row per event, keyed by key and position) and N_writers
// (one lease row per open [Journal], renewed while it is open, as
// internal/pglease holds locks), and a function, N_trim_one
// ([TrimOneFunction]), that deletes one event of a key's log. Events are written by a [Log] on the
// same tables, which the agent server's PostgreSQL store also uses for
// its run event logs: the events appended while a write is in flight are
// written together by the next write, in one statement for any number
// of keys that takes each key's next positions, inserts the events,
// drops those that fall out of the key's last MaxEvents and sends one
// NOTIFY per key written. A reader reads a
// key's state and its next events in one statement (one snapshot), and
// waits for the NOTIFY of the next append or end, polling as a fallback.
// A reader whose key is not ended and whose writer's lease has ended gets
// [event.ErrWriterLost]. Keys not written for MaxAge are deleted with
// their events, once ended or left by their writer, by a pass over the
// keys' table every quarter of MaxAge (at most a minute apart): no index
// has a key's last write time, so that a write updates its key's row in
// place (a HOT update, adding no index entry).
//
// The tables are UNLOGGED: an append does not wait for a WAL flush (a
// turn's events are not slowed by the disk), and a database crash
// empties them, so streams in flight then cannot be resumed. A journal
// is for resuming live streams, not for keeping them.
package postgres

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/resume"
	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/internal/pglease"
	"github.com/agentgraph/agentgraph/internal/pgnotify"
)

// Defaults of [JournalConfig].
const (
	DefaultJournalName      = "event_journal"
	DefaultJournalMaxAge    = 10 * time.Minute
	DefaultJournalMaxEvents = 1024
	DefaultJournalLease     = 10 * time.Second
	// DefaultJournalMaxEventBytes is the default of
	// JournalConfig.MaxEventBytes: 8 MiB.
	DefaultJournalMaxEventBytes = 8 << 20
)

// readBatch bounds the events one read statement returns; MaxEventBytes
// bounds their bytes (see journalQueries.readQ).
const readBatch = 256

// JournalConfig configures [NewJournal]. Set Pool or DSN.
type JournalConfig struct {
	// Pool is the connection pool to use. The journal does not close it.
	Pool *pgxpool.Pool
	// DSN opens a pool of the journal's own when Pool is nil, e.g.
	// "postgres://user@host:5432/db?sslmode=disable"; Close closes it.
	DSN string
	// Schema holds the tables; NewJournal creates it if needed. Empty
	// means "public".
	Schema string
	// Name prefixes the tables' names: lower-case letters, digits and
	// '_', at most 40. Journals whose instances read each other's keys
	// use the same Schema and Name. Empty means DefaultJournalName.
	Name string
	// MaxAge is how long a key is kept after it was last written, once it
	// is ended or its writer's lease has ended (its Journal closed or its
	// process dead): a key still open by a live writer is kept however
	// long ago it was written, until it is ended or its writer goes.
	// Zero means DefaultJournalMaxAge.
	MaxAge time.Duration
	// MaxEvents is how many of its latest events a key keeps; a Read that
	// needed older ones starts with an events_lost error event. Zero
	// means DefaultJournalMaxEvents.
	MaxEvents int
	// MaxEventBytes bounds the JSON form of one event: Append refuses a
	// larger one. It also bounds the bytes a Read loads at once: the
	// events of one read statement stop at the first that reaches it
	// (one event at least), so a reader holds at most about twice it.
	// Zero means DefaultJournalMaxEventBytes.
	MaxEventBytes int
	// Lease is how long a reader follows a key after the last renewal of
	// its writer's lease (renewed every third of it while the writer's
	// Journal is open) before it ends with event.ErrWriterLost. Zero
	// means DefaultJournalLease.
	Lease time.Duration
	// Decoder decodes the events read into payload structs. Nil means
	// payloads arrive as event.Raw (and event.Error).
	Decoder *event.Decoder
	// Logger receives migrations and failures of the background work.
	// Nil means no logging.
	Logger *zap.Logger
}

// Journal is an [event.Journal] in PostgreSQL. It is safe for concurrent
// use. Give each process a Journal of its own (they may share a Pool):
// a Journal is the writer of the keys it appends to.
type Journal struct {
	cfg     JournalConfig
	pool    *pgxpool.Pool
	owned   bool
	log     *zap.Logger
	id      string // this writer's id
	channel string
	hub     *pgnotify.Hub
	log2    *Log // the events' storage
	writers *pglease.Locks
	q       journalQueries

	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
}

var _ event.Journal = (*Journal)(nil)

var namePattern = regexp.MustCompile(`^[a-z0-9_]{1,40}$`)

// checkTables checks the settings of a JournalConfig or a LogConfig (what)
// that place its tables, and returns its Name and Schema with their
// defaults.
func checkTables(what string, pool *pgxpool.Pool, dsn, name, schema string) (string, string, error) {
	if pool != nil && dsn != "" {
		return "", "", fmt.Errorf("postgres: %s has both Pool and DSN; set only one", what)
	}
	if name == "" {
		name = DefaultJournalName
	}
	if !namePattern.MatchString(name) {
		return "", "", fmt.Errorf("postgres: %s.Name %q: use 1 to 40 lower-case letters, digits and '_'", what, name)
	}
	if schema == "" {
		schema = "public"
	}
	return name, schema, nil
}

type journalQueries struct {
	keys, events, writers    string
	endQ, hasQ, readQ, prune string
}

func newJournalQueries(schema, name string) journalQueries {
	q := journalQueries{
		keys:    pgdb.Table(schema, name+"_keys"),
		events:  pgdb.Table(schema, name+"_events"),
		writers: pgdb.Table(schema, name+"_writers"),
	}
	r := strings.NewReplacer("{keys}", q.keys, "{events}", q.events, "{writers}", q.writers).Replace
	q.endQ = r(`WITH k AS (INSERT INTO {keys} AS k (key, writer, next, ended, updated) VALUES ($1, $2, 0, true, clock_timestamp())
			ON CONFLICT (key) DO UPDATE SET ended = true, updated = EXCLUDED.updated RETURNING key)
		SELECT pg_notify($3, md5($1)) FROM k`)
	q.hasQ = r(`SELECT EXISTS (SELECT 1 FROM {keys} WHERE key = $1)`)
	// The events after pos $2, at most $3 of them and only while the
	// bytes of those before stay under $4: a batch holds one event at
	// least and less than $4 plus its last. length(data) reads the
	// stored size, not the value.
	q.readQ = r(`SELECT k.ended,
			EXISTS (SELECT 1 FROM {writers} w WHERE w.writer = k.writer AND w.until >= clock_timestamp()),
			e.pos, e.seq, e.data
		FROM {keys} k LEFT JOIN LATERAL (SELECT pos, seq, data FROM (
				SELECT pos, seq, data, sum(length(data)) OVER (ORDER BY pos) - length(data) AS before
				FROM {events} WHERE key = k.key AND pos > $2 ORDER BY pos LIMIT $3) b
			WHERE before < $4) e ON true
		WHERE k.key = $1 ORDER BY e.pos`)
	// A key not ended whose writer's lease is alive is a stream still in
	// flight (a long tool call, a person answering): it stays. No index
	// has updated (see journalMigrations): the prune reads the keys
	// table whole, so that a write's update of its key's row is HOT.
	q.prune = r(`WITH k AS (DELETE FROM {keys} k WHERE updated < clock_timestamp() - $1 * interval '1 microsecond'
			AND (ended OR NOT EXISTS (SELECT 1 FROM {writers} w WHERE w.writer = k.writer AND w.until >= clock_timestamp()))
			RETURNING key)
		DELETE FROM {events} e USING k WHERE e.key = k.key`)
	return q
}

// journalMigrations are applied in order, once each; never edit a
// released one. {keys}, {events} and {writers} stand for the tables.
var journalMigrations = []string{
	`CREATE UNLOGGED TABLE {keys} (
		key     text PRIMARY KEY,
		writer  text NOT NULL,
		next    bigint NOT NULL,
		ended   boolean NOT NULL,
		updated timestamptz NOT NULL
	);
	CREATE INDEX ON {keys} (updated);
	CREATE UNLOGGED TABLE {events} (
		key  text NOT NULL,
		pos  bigint NOT NULL,
		seq  bigint NOT NULL,
		data bytea NOT NULL,
		PRIMARY KEY (key, pos)
	);
	CREATE UNLOGGED TABLE {writers} (
		writer text PRIMARY KEY,
		token  text NOT NULL,
		until  timestamptz NOT NULL
	)`,
	// A record's name: the agent server's event name (its run event logs
	// are a Log); a journal's events leave it empty.
	`ALTER TABLE {events} ADD COLUMN name text NOT NULL DEFAULT ''`,
	// Every write of a key sets its row's updated: with updated indexed,
	// no such update was HOT (each added an index entry, and a dead
	// row version for vacuum to find through both indexes). The prune,
	// the one reader by updated, now reads the keys table whole, once
	// every quarter of MaxAge (at most a minute apart): one row per key
	// written within MaxAge or still open, against the index entries of
	// every write of every key.
	`DROP INDEX IF EXISTS {updatedIndex}`,
	// The trim of a key's log by one record, {trimOne}(key, pos): the
	// one-record write calls it only when the key's log is full. As a
	// data-modifying WITH query of the write, its DELETE's nodes (the
	// events table opened with its index, a scan of it) were initialised
	// at every write, full or not (PostgreSQL instructions, callgrind).
	// PL/pgSQL keeps its statement's plan for the session. Creating a
	// function locks no table; a write of an earlier version, which
	// trims in its own statement, runs on beside it.
	`CREATE FUNCTION {trimOne}(k text, p bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $f$
	BEGIN
		DELETE FROM {events} WHERE key = k AND pos = p;
		RETURN true;
	END
	$f$`,
}

// TrimOneFunction returns the schema-qualified, quoted name of the
// function that the migrations of the log (or journal) name in schema
// create: fn(key text, pos bigint) deletes the record pos of key's log
// and returns true. A statement that appends one record to a log in SQL
// of its own (the agent server's run start and end) calls it, in a CASE
// arm, only when the log holds more than its cap, as [Log]'s own
// one-record write does.
func TrimOneFunction(schema, name string) string {
	return pgdb.Table(schema, name+"_trim_one")
}

// migrateJournal creates or migrates the tables of the journal (or log)
// name in schema.
func migrateJournal(ctx context.Context, pool *pgxpool.Pool, schema, name string, log *zap.Logger) error {
	q := newJournalQueries(schema, name)
	return pgdb.Migrate(ctx, pool, pgdb.Migrations{
		Schema: schema,
		Table:  name + "_migrations",
		Lock:   "agentgraph/event/postgres",
		Steps:  journalMigrations,
		Replacer: strings.NewReplacer("{keys}", q.keys, "{events}", q.events, "{writers}", q.writers,
			// The name PostgreSQL gave the index the first migration
			// made on the keys' updated.
			"{updatedIndex}", pgdb.Table(schema, name+"_keys_updated_idx"),
			"{trimOne}", TrimOneFunction(schema, name)),
		Logger:  log,
		Message: "postgres: applied journal migration",
	})
}

// NewJournal connects (when cfg.DSN is set), creates or migrates the
// tables, and opens this process's writer lease.
func NewJournal(ctx context.Context, cfg JournalConfig) (*Journal, error) {
	var err error
	if cfg.Name, cfg.Schema, err = checkTables("JournalConfig", cfg.Pool, cfg.DSN, cfg.Name, cfg.Schema); err != nil {
		return nil, err
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultJournalMaxAge
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = DefaultJournalMaxEvents
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultJournalLease
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = DefaultJournalMaxEventBytes
	}
	pool, owned, err := pgdb.Connect(ctx, cfg.Pool, cfg.DSN)
	if err != nil {
		return nil, err
	}
	j := &Journal{cfg: cfg, pool: pool, owned: owned, log: cfg.Logger, q: newJournalQueries(cfg.Schema, cfg.Name), stop: make(chan struct{})}
	if j.log == nil {
		j.log = zap.NewNop()
	}
	h := md5.Sum([]byte(j.q.keys))
	j.channel = "journal_" + hex.EncodeToString(h[:12])
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	j.id = hex.EncodeToString(b)
	j.log2, err = NewLog(ctx, LogConfig{Pool: pool, Schema: cfg.Schema, Name: cfg.Name, MaxEvents: cfg.MaxEvents, Writer: j.id,
		Channel: j.channel, Payload: tag, Logger: j.log, Stored: func(keys []string) {
			for _, k := range keys {
				j.hub.Wake(tag(k))
			}
		}})
	if err != nil {
		j.closePool()
		return nil, err
	}
	j.hub = pgnotify.New(pool, j.channel, j.log)
	j.writers, err = pglease.New(pglease.Config{Pool: pool, Table: j.q.writers, KeyColumn: "writer", Lease: cfg.Lease, Logger: j.log})
	if err == nil {
		_, err = j.writers.Lock(ctx, j.id)
	}
	if err != nil {
		j.hub.Close()
		j.log2.Close()
		j.closePool()
		return nil, fmt.Errorf("postgres: journal writer lease: %w", err)
	}
	j.done.Add(1)
	go j.sweep()
	return j, nil
}

func (j *Journal) closePool() {
	if j.owned {
		j.pool.Close()
	}
}

// sweep deletes the keys past MaxAge, every quarter of it (at most a
// minute apart), until Close.
func (j *Journal) sweep() {
	defer j.done.Done()
	t := time.NewTicker(min(j.cfg.MaxAge/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := j.pool.Exec(ctx, j.q.prune, j.cfg.MaxAge.Microseconds()); err != nil {
			j.log.Warn("postgres: pruning old journal keys failed; trying again later", zap.Error(err))
		}
		cancel()
	}
}

func tag(key string) string {
	h := md5.Sum([]byte(key))
	return hex.EncodeToString(h[:])
}

// Append implements [event.Journal] through the journal's [Log]: it
// returns once the event is stored, written in one statement with the
// events other goroutines append meanwhile.
func (j *Journal) Append(ctx context.Context, key string, ev event.Event) error {
	if err := event.CheckJournalKey(key); err != nil {
		return err
	}
	data, err := ev.AppendJSON(nil)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if len(data) > j.cfg.MaxEventBytes {
		return fmt.Errorf("postgres: journal %s: event #%d is %d bytes, above JournalConfig.MaxEventBytes (%d); raise it or send less",
			key, ev.Seq, len(data), j.cfg.MaxEventBytes)
	}
	if _, err := j.log2.Append(ctx, key, j.cfg.MaxEvents, Record{Seq: int64(ev.Seq), Data: data}); err != nil {
		return fmt.Errorf("postgres: journal %s: %w", key, err)
	}
	return nil
}

// End implements [event.Journal].
func (j *Journal) End(ctx context.Context, key string) error {
	if err := event.CheckJournalKey(key); err != nil {
		return err
	}
	if _, err := j.pool.Exec(ctx, j.q.endQ, key, j.id, j.channel); err != nil {
		return fmt.Errorf("postgres: ending journal %s: %w", key, err)
	}
	j.hub.Wake(tag(key))
	return nil
}

// Has implements [event.Journal].
func (j *Journal) Has(ctx context.Context, key string) (bool, error) {
	if err := event.CheckJournalKey(key); err != nil {
		return false, err
	}
	var ok bool
	if err := j.pool.QueryRow(ctx, j.q.hasQ, key).Scan(&ok); err != nil {
		return false, fmt.Errorf("postgres: journal %s: %w", key, err)
	}
	return ok, nil
}

// Read implements [event.Journal]. While it waits for events it holds no
// connection: it is woken by the NOTIFY of the key's next append or end
// (through one LISTEN connection per Journal, open while some Read
// waits), and reads again at least every third of the lease to see
// whether the writer is still alive.
// A stored row that does not decode is told to the reader by an
// error event with code "events_lost" and the row's Seq; so are events
// trimmed to MaxEvents while the reader read the key (its positions no
// longer follow each other).
func (j *Journal) Read(ctx context.Context, key string, after uint64) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		if err := event.CheckJournalKey(key); err != nil {
			yield(event.Event{}, err)
			return
		}
		var wake <-chan struct{} // subscribed once the reader first waits
		unsubscribe := func() {}
		defer func() { unsubscribe() }()
		pos := int64(-1)
		cur := resume.After(key, after)
		backoff := time.Millisecond
		for {
			b, err := j.readBatch(ctx, key, pos)
			if err != nil {
				yield(event.Event{}, err)
				return
			}
			if !b.found {
				yield(event.Event{}, event.ErrUnknownKey)
				return
			}
			// A key's positions follow each other: a batch that does not
			// start right after the last one read found the events
			// between trimmed (the key's last MaxEvents kept) meanwhile.
			if pos >= 0 && len(b.data) > 0 && b.first != pos+1 {
				if !cur.Dropped(uint64(b.seqs[0]), yield) {
					return
				}
			}
			for i, data := range b.data {
				ev, err := j.cfg.Decoder.Decode(data)
				if err != nil {
					j.log.Warn("postgres: journal row is not an event", zap.String("key", key), zap.Int64("seq", b.seqs[i]), zap.Error(err))
					if !cur.Undecodable(uint64(b.seqs[i]), err, yield) {
						return
					}
					continue
				}
				if _, more := cur.Pass(ev, yield); !more {
					return
				}
			}
			n := len(b.data)
			if n > 0 {
				pos = b.pos
			}
			if b.more {
				continue // more are stored
			}
			ended, alive := b.ended, b.alive
			if ended {
				return
			}
			if !alive {
				yield(event.Event{}, event.ErrWriterLost)
				return
			}
			if wake == nil {
				// From now on appends wake the reader; read once more
				// first, as one may have come before.
				wake, unsubscribe = j.hub.Subscribe(tag(key))
				continue
			}
			if n > 0 {
				backoff = time.Millisecond
			}
			pause := j.cfg.Lease / 3
			if !j.hub.Listening() {
				pause = min(backoff, pause, 250*time.Millisecond)
				backoff *= 2
			}
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				yield(event.Event{}, ctx.Err())
				return
			case <-wake:
				t.Stop()
			case <-t.C:
			}
		}
	}
}

// readRows is what one read statement returns: the key's state and its
// next events.
type readRows struct {
	found, ended, alive bool
	first, pos          int64    // of the first and the last event
	seqs                []int64  // of the events, as stored
	data                [][]byte // the events' JSON
	more                bool     // whether the batch was full: more may follow
}

// readBatch reads key's state and its events after position pos, at most
// readBatch of them and MaxEventBytes bytes (plus the last).
func (j *Journal) readBatch(ctx context.Context, key string, pos int64) (readRows, error) {
	var b readRows
	rows, err := j.pool.Query(ctx, j.q.readQ, key, pos, readBatch, j.cfg.MaxEventBytes)
	if err != nil {
		return b, j.readErr(ctx, key, err)
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		var p, seq *int64
		var data []byte
		if err := rows.Scan(&b.ended, &b.alive, &p, &seq, &data); err != nil {
			return b, j.readErr(ctx, key, err)
		}
		b.found = true
		if p != nil {
			if b.data == nil {
				b.first = *p
			}
			b.pos = *p
			b.seqs = append(b.seqs, *seq)
			b.data = append(b.data, data)
			size += len(data)
		}
	}
	if err := rows.Err(); err != nil {
		return b, j.readErr(ctx, key, err)
	}
	b.more = len(b.data) == readBatch || size >= j.cfg.MaxEventBytes
	return b, nil
}

func (j *Journal) readErr(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("postgres: journal %s: %w", key, err)
}

// Close releases the writer lease (readers following keys this journal
// did not end then get event.ErrWriterLost at their next read), stops
// the background work and closes the pool if the journal opened it.
func (j *Journal) Close() error {
	j.once.Do(func() {
		close(j.stop)
		j.done.Wait()
		j.log2.Close()
		j.writers.Close()
		j.hub.Close()
		j.closePool()
	})
	return nil
}
