// Package pglease holds named locks as lease rows of a PostgreSQL table,
// for the stores of this module whose instances share one database
// (agent/server/postgres's thread locks, memory/postgres's conversation
// locks).
//
// A lock is a row (key, token, until, waited): taking it inserts the
// row, or overwrites one whose lease has ended, in one statement;
// releasing it deletes the row and, if a Lock waited for it (or always,
// without [Config.WaitFlag]), sends a NOTIFY. No connection is held while a lock
// is: a process may hold any number of locks with a pool of any size.
// While a lock is held its lease is renewed every third of
// [Config.Lease], all of a [Locks]'s held locks in one statement, so a
// lock held for as long as a person takes to answer stays held; when its
// holder dies the renewals stop and the lock is free a lease later.
//
// A Lock that finds its key held waits for the release's notification
// (one LISTEN connection per [Locks], held while some Lock waits and
// for pgnotify.IdleListen after), for the holder's lease to end, or at most [Config.Poll], and
// tries again. The notification carries the md5 of the key, so keys of
// any length fit its payload; two keys with one digest only wake each
// other's waiters for nothing.
//
// A Locks runs goroutines only while it holds or awaits a lock (and
// briefly after): the renewal while a lock is held, the listener while a
// Lock waits and for pgnotify.IdleListen after, and a try statement
// whose Lock's context ended.
package pglease

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/internal/pgnotify"
)

// Defaults of [Config].
const (
	DefaultLease = 30 * time.Second
	DefaultPoll  = 250 * time.Millisecond
)

// ErrClosed is returned by Lock after [Locks.Close].
var ErrClosed = errors.New("pglease: the locks are closed")

// DDL returns the statement that creates a lease table named table
// (quoted and qualified already) whose key column is keyColumn, for a
// store's migrations. The table is UNLOGGED: taking and releasing a lock
// does not wait for a WAL flush, and a database crash frees every lock
// (as it ends every session, and with it every advisory lock).
func DDL(table, keyColumn string) string {
	return `CREATE UNLOGGED TABLE ` + table + ` (
		` + pgx.Identifier{keyColumn}.Sanitize() + ` text PRIMARY KEY,
		token  text NOT NULL,
		until  timestamptz NOT NULL,
		waited boolean NOT NULL DEFAULT false
	)`
}

// Config configures [New].
type Config struct {
	// Pool runs the statements. Required.
	Pool *pgxpool.Pool
	// Table is the lease table, quoted and qualified, with the columns of
	// [DDL]. Required.
	Table string
	// KeyColumn is the table's key column. Empty means "key".
	KeyColumn string
	// Channel is the NOTIFY channel of releases; every Locks on Table
	// uses the same. Empty means no notifications: a waiting Lock polls.
	Channel string
	// Lease is how long a lock outlives its holder's last renewal. Zero
	// means DefaultLease.
	Lease time.Duration
	// Poll is the longest pause between two tries of a held lock when no
	// notification comes. Zero means DefaultPoll.
	Poll time.Duration
	// WaitFlag says the table has the waited column of [DDL]: a Lock
	// that finds the key held flags its row, and a release sends a NOTIFY
	// only for a flagged row. Every commit that sent a NOTIFY takes one
	// lock of the whole database cluster, so a release nobody waits for
	// had better send none. False means every release notifies.
	WaitFlag bool
	// XactLocks says that transactions of the table's store also hold
	// keys' locks, each for the transaction's length alone, with no row:
	// they take the key's transaction-level advisory lock with the
	// expression [XactLock] and then hold the key if no row of the table
	// has a live lease on it. Lock's take then takes the same advisory
	// lock before it writes its row, so that it waits for such a
	// transaction to end, and such a transaction that comes after the
	// take sees its row.
	XactLocks bool
	// Logger receives failed renewals and releases. Nil means no logging.
	Logger *zap.Logger
}

// XactLock returns the SQL expression that takes the transaction-level
// advisory lock of the key that the SQL expression key gives, for the
// lease table table (quoted and qualified, as [Config.Table]): a
// transaction that evaluates it excludes, until it ends, the takes of
// the key's lease by the Locks of table whose Config.XactLocks is set,
// and the other transactions that evaluate it. The advisory lock is the
// one of two int4 keys: a hash of the table and hashtext of the key
// (two keys with one hash only wait for each other needlessly). A
// statement's snapshot is taken before the lock: a transaction reads
// the lease rows in a later statement, and only under READ COMMITTED,
// where that statement takes a snapshot of its own; under REPEATABLE
// READ or SERIALIZABLE the transaction's snapshot is its first
// statement's, which misses a lease committed while the lock was waited
// for.
func XactLock(table, key string) string {
	h := fnv.New32a()
	h.Write([]byte(table))
	return "pg_advisory_xact_lock(" + strconv.Itoa(int(int32(h.Sum32()))) + ", hashtext(" + key + "))"
}

// Locks takes and releases the locks of one lease table. It is safe for
// concurrent use.
type Locks struct {
	cfg                                Config
	tryQ, unlockQ, renewQ, releaseAllQ string

	hub *pgnotify.Hub // nil without Channel

	mu        sync.Mutex
	held      map[string]string // token -> key
	renewStop chan struct{}     // open while the renewal runs
	closed    bool
	wg        sync.WaitGroup
}

// New returns the locks of cfg.Table; it does not touch the database.
func New(cfg Config) (*Locks, error) {
	if cfg.Pool == nil {
		return nil, errors.New("pglease: Config.Pool is nil; set it")
	}
	if cfg.Table == "" {
		return nil, errors.New("pglease: Config.Table is empty; name the lease table")
	}
	if cfg.KeyColumn == "" {
		cfg.KeyColumn = "key"
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	k := pgx.Identifier{cfg.KeyColumn}.Sanitize()
	l := &Locks{cfg: cfg, held: map[string]string{}}
	if cfg.Channel != "" {
		l.hub = pgnotify.New(cfg.Pool, cfg.Channel, cfg.Logger)
	}
	// The second column is the holder's remaining lease, in seconds, as
	// of the statement's snapshot (0 when none is visible). With
	// WaitFlag, a try that fails flags the holder's row.
	// With XactLocks, the row is written once the key's advisory lock is
	// taken.
	xact, from := "", ""
	if cfg.XactLocks {
		xact, from = `a AS (SELECT `+XactLock(cfg.Table, "$1::text")+`), `, ` FROM a`
	}
	if cfg.WaitFlag {
		l.tryQ = `WITH ` + xact + `t AS (INSERT INTO ` + cfg.Table + ` AS l (` + k + `, token, until, waited)
				SELECT $1, $2, clock_timestamp() + $3 * interval '1 microsecond', false` + from + `
				ON CONFLICT (` + k + `) DO UPDATE SET token = EXCLUDED.token, until = EXCLUDED.until, waited = false WHERE l.until < clock_timestamp()
				RETURNING true),
			w AS (UPDATE ` + cfg.Table + ` SET waited = true WHERE ` + k + ` = $1 AND NOT EXISTS (SELECT 1 FROM t)
				RETURNING extract(epoch FROM until - clock_timestamp()) AS r)
			SELECT EXISTS (SELECT 1 FROM t), COALESCE((SELECT r FROM w), 0)::float8`
	} else {
		l.tryQ = `WITH ` + xact + `t AS (INSERT INTO ` + cfg.Table + ` AS l (` + k + `, token, until)
				SELECT $1, $2, clock_timestamp() + $3 * interval '1 microsecond'` + from + `
				ON CONFLICT (` + k + `) DO UPDATE SET token = EXCLUDED.token, until = EXCLUDED.until WHERE l.until < clock_timestamp()
				RETURNING true)
			SELECT EXISTS (SELECT 1 FROM t),
				COALESCE((SELECT extract(epoch FROM until - clock_timestamp()) FROM ` + cfg.Table + ` WHERE ` + k + ` = $1), 0)::float8`
	}
	l.renewQ = `UPDATE ` + cfg.Table + ` AS l SET until = clock_timestamp() + $3 * interval '1 microsecond'
		FROM unnest($1::text[], $2::text[]) AS h(k, tok) WHERE l.` + k + ` = h.k AND l.token = h.tok RETURNING l.token`
	flagged := ""
	if cfg.WaitFlag {
		flagged = ` WHERE waited`
	}
	if cfg.Channel != "" {
		l.unlockQ = `WITH d AS (DELETE FROM ` + cfg.Table + ` WHERE ` + k + ` = $1 AND token = $2 RETURNING *)
			SELECT pg_notify($3, md5(` + k + `)) FROM d` + flagged
		l.releaseAllQ = `WITH d AS (DELETE FROM ` + cfg.Table + ` AS l USING unnest($1::text[]) AS h(tok) WHERE l.token = h.tok RETURNING l.*)
			SELECT pg_notify($2, md5(` + k + `)) FROM d` + flagged
	} else {
		l.unlockQ = `DELETE FROM ` + cfg.Table + ` WHERE ` + k + ` = $1 AND token = $2`
		l.releaseAllQ = `DELETE FROM ` + cfg.Table + ` AS l USING unnest($1::text[]) AS h(tok) WHERE l.token = h.tok`
	}
	return l, nil
}

// Lease is the configured lease.
func (l *Locks) Lease() time.Duration { return l.cfg.Lease }

// tag is a key's notification payload.
func tag(key string) string {
	h := md5.Sum([]byte(key))
	return hex.EncodeToString(h[:])
}

// Lock waits until it holds key, or ctx ends (then it returns ctx's
// error and holds nothing). The lock is held until unlock is called (once
// is enough; later calls do nothing), Close is called, or the process
// dies and its lease ends.
//
// A held lock is lost, without a signal to its holder, when its renewals
// fail (the database unreachable, every renewal statement failing) for a
// whole lease: another Lock may then take the key while the first holder
// still believes it holds it. The loss is logged at error level when a
// later renewal finds the row gone. Holders whose work must not overlap
// use a Lease well above the longest outage they must ride out, and
// check, where it matters, that their writes still belong to them.
func (l *Locks) Lock(ctx context.Context, key string) (unlock func(), err error) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	var wake <-chan struct{}
	var unwait func()
	defer func() {
		if unwait != nil {
			unwait()
		}
	}()
	backoff := time.Millisecond
	for {
		if l.isClosed() {
			return nil, ErrClosed
		}
		ok, remaining, err := l.try(ctx, key, token)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("pglease: lock %q: %w", key, err)
		}
		if ok {
			if !l.hold(token, key) { // closed meanwhile
				l.release(key, token)
				return nil, ErrClosed
			}
			var once sync.Once
			return func() { once.Do(func() { l.unlock(key, token) }) }, nil
		}
		if wake == nil {
			// Waiting starts: be woken by releases from now on, and try
			// again at once (a release may have come before).
			wake, unwait = l.wait(key)
			continue
		}
		pause := l.cfg.Poll
		if !l.isListening() {
			pause = min(backoff, l.cfg.Poll)
			backoff *= 2
		}
		if r := time.Duration(remaining*float64(time.Second)) + time.Millisecond; remaining > 0 && r < pause {
			pause = r
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// try runs the try statement once. The statement runs apart from ctx,
// bounded by a lease: were it cancelled, a lock it took as ctx ended
// could commit unseen and stay taken for a lease. If ctx ends first, try
// returns ctx's error at once and leaves the statement to a goroutine,
// which releases the lock should the statement take it. After a failed
// statement, whose outcome is unknown, the lock is released in the
// background too.
func (l *Locks) try(ctx context.Context, key, token string) (ok bool, remaining float64, err error) {
	type result struct {
		ok        bool
		remaining float64
		err       error
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false, 0, ErrClosed
	}
	l.wg.Add(1)
	l.mu.Unlock()
	got, gone := make(chan result), make(chan struct{})
	go func() {
		defer l.wg.Done()
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Lease)
		var r result
		r.err = l.cfg.Pool.QueryRow(qctx, l.tryQ, key, token, l.cfg.Lease.Microseconds()).Scan(&r.ok, &r.remaining)
		cancel()
		abandoned := false
		select {
		case got <- r:
		case <-gone:
			abandoned = true
		}
		if r.err != nil || abandoned && r.ok { // a failed statement may have committed
			l.release(key, token)
		}
	}()
	select {
	case r := <-got:
		return r.ok, r.remaining, r.err
	case <-ctx.Done():
		close(gone)
		return false, 0, ctx.Err()
	}
}

func (l *Locks) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *Locks) isListening() bool {
	return l.hub != nil && l.hub.Listening()
}

// hold records a taken lock and starts the renewal if it is the first.
func (l *Locks) hold(token, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.held[token] = key
	if l.renewStop == nil {
		l.renewStop = make(chan struct{})
		l.wg.Add(1)
		go l.renew(l.renewStop)
	}
	return true
}

// unlock releases a held lock.
func (l *Locks) unlock(key, token string) {
	l.mu.Lock()
	_, held := l.held[token]
	delete(l.held, token)
	if len(l.held) == 0 && l.renewStop != nil {
		close(l.renewStop)
		l.renewStop = nil
	}
	l.mu.Unlock()
	if held {
		l.release(key, token)
	}
}

// Holding returns the keys and tokens of the locks held now, one pair
// per lock, for a statement of the caller's that releases one of them
// with its own write, in one round trip: the statement deletes the row
// whose key and token are a returned pair, then the caller reports the
// token it deleted to [Locks.Released]; the unlock function of that lock
// then sends nothing. Such a statement sends no NOTIFY, so it must not
// release a lock whose waiters count on one: with WaitFlag it deletes
// only a row whose waited is false (a flagged lock is left to its unlock
// function, which notifies); without WaitFlag, with a Channel, every
// waiter counts on one, so only a Locks without a Channel (whose waiters
// poll) may release that way.
func (l *Locks) Holding() (keys, tokens []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys, tokens = make([]string, 0, len(l.held)), make([]string, 0, len(l.held))
	for tok, k := range l.held {
		keys, tokens = append(keys, k), append(tokens, tok)
	}
	return keys, tokens
}

// Released records that a statement of the caller's deleted the row of
// the held lock token (see [Locks.Holding]): the lock is no longer
// renewed, its unlock function sends nothing, and this Locks's own
// waiters for its key are woken. A token not held is ignored.
func (l *Locks) Released(token string) {
	l.mu.Lock()
	key, held := l.held[token]
	delete(l.held, token)
	if len(l.held) == 0 && l.renewStop != nil {
		close(l.renewStop)
		l.renewStop = nil
	}
	l.mu.Unlock()
	if held && l.hub != nil {
		l.hub.Wake(tag(key))
	}
}

// release deletes key's row if token still holds it, notifies, and wakes
// this Locks's own waiters at once.
func (l *Locks) release(key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := []any{key, token}
	if l.cfg.Channel != "" {
		args = append(args, l.cfg.Channel)
	}
	if _, err := l.cfg.Pool.Exec(ctx, l.unlockQ, args...); err != nil {
		l.cfg.Logger.Warn("pglease: releasing a lock failed; it is free when its lease ends",
			zap.String("key", key), zap.Duration("lease", l.cfg.Lease), zap.Error(err))
	}
	if l.hub != nil {
		l.hub.Wake(tag(key))
	}
}

// renew extends the leases of the held locks every third of the lease
// until stop closes.
func (l *Locks) renew(stop chan struct{}) {
	defer l.wg.Done()
	t := time.NewTicker(l.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		keys, tokens := make([]string, 0, len(l.held)), make([]string, 0, len(l.held))
		for tok, k := range l.held {
			keys, tokens = append(keys, k), append(tokens, tok)
		}
		l.mu.Unlock()
		if len(tokens) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.Lease/3)
		rows, err := l.cfg.Pool.Query(ctx, l.renewQ, keys, tokens, l.cfg.Lease.Microseconds())
		var renewed []string
		if err == nil {
			renewed, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		cancel()
		if err != nil {
			l.cfg.Logger.Warn("pglease: renewing held locks failed; trying again", zap.Int("locks", len(tokens)), zap.Error(err))
			continue
		}
		if len(renewed) == len(tokens) {
			continue
		}
		got := make(map[string]bool, len(renewed))
		for _, tok := range renewed {
			got[tok] = true
		}
		l.mu.Lock()
		for i, tok := range tokens {
			if _, still := l.held[tok]; still && !got[tok] {
				l.cfg.Logger.Error("pglease: a held lock's lease ended before it was renewed; another holder may have it",
					zap.String("key", keys[i]), zap.Duration("lease", l.cfg.Lease))
			}
		}
		l.mu.Unlock()
	}
}

// wait subscribes to key's releases. Without a Channel it returns a
// channel that never receives: the waiter polls.
func (l *Locks) wait(key string) (<-chan struct{}, func()) {
	if l.hub == nil {
		return make(chan struct{}), func() {}
	}
	return l.hub.Subscribe(tag(key))
}

// Close releases the locks still held (their unlock functions then do
// nothing), stops the goroutines and fails later Locks with ErrClosed.
// Locks waiting when Close is called return ErrClosed at their next try.
func (l *Locks) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	tokens := make([]string, 0, len(l.held))
	for tok := range l.held {
		tokens = append(tokens, tok)
	}
	clear(l.held)
	if l.renewStop != nil {
		close(l.renewStop)
		l.renewStop = nil
	}
	l.mu.Unlock()
	if l.hub != nil {
		l.hub.Close() // wakes the waiters, which find the Locks closed
	}
	if len(tokens) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		args := []any{tokens}
		if l.cfg.Channel != "" {
			args = append(args, l.cfg.Channel)
		}
		if _, err := l.cfg.Pool.Exec(ctx, l.releaseAllQ, args...); err != nil {
			l.cfg.Logger.Warn("pglease: releasing the held locks on close failed; they are free when their leases end",
				zap.Int("locks", len(tokens)), zap.Error(err))
		}
		cancel()
	}
	l.wg.Wait()
}
