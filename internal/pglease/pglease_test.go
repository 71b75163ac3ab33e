package pglease_test

import (
	"bufio"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pglease"
)

// childEnv, when set, makes the test binary a holder process: it takes
// the lock named by childKey on the table it names and waits to be killed.
const (
	childEnv   = "PGLEASE_TEST_CHILD_TABLE"
	childKey   = "PGLEASE_TEST_CHILD_KEY"
	childLease = "PGLEASE_TEST_CHILD_LEASE"
)

func TestMain(m *testing.M) {
	if table := os.Getenv(childEnv); table != "" {
		os.Exit(child(table))
	}
	goleak.VerifyTestMain(m)
}

// child holds a lock until it is killed.
func child(table string) int {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, postgrestest.DSN())
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	lease, _ := time.ParseDuration(os.Getenv(childLease))
	l, err := pglease.New(pglease.Config{Pool: pool, Table: table, Channel: "pglease_test", Lease: lease})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if _, err := l.Lock(ctx, os.Getenv(childKey)); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("held")
	select {}
}

// setup makes a schema with a lease table and returns the pool and the
// table's name.
func setup(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "pglease_")
	if _, err := pool.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{schema, "leases"}.Sanitize()
	if _, err := pool.Exec(t.Context(), pglease.DDL(table, "key")); err != nil {
		t.Fatal(err)
	}
	return pool, table
}

func newLocks(t *testing.T, cfg pglease.Config) *pglease.Locks {
	t.Helper()
	l, err := pglease.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// lockLater takes and releases l's lock of key in a goroutine of its own,
// and sends the lock's error on the channel it returns.
func lockLater(t *testing.T, l *pglease.Locks, key string) <-chan error {
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
		defer cancel()
		u, err := l.Lock(ctx, key)
		if err == nil {
			u()
		}
		got <- err
	}()
	return got
}

// held reports whether key's row is held under a live lease.
func held(t *testing.T, pool *pgxpool.Pool, table, key string) bool {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM "+table+" WHERE key = $1 AND until >= clock_timestamp())", key).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestManyHeldLocksHoldNoConnection holds 100 locks through a pool of 2
// connections: none is held by a lock, so another key's Lock, and every
// query, goes on.
func TestManyHeldLocksHoldNoConnection(t *testing.T) {
	_, table := setup(t)
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	l := newLocks(t, pglease.Config{Pool: pool, Table: table, Channel: "pglease_test"})
	var unlocks []func()
	for i := range 100 {
		u, err := l.Lock(t.Context(), fmt.Sprintf("held-%d", i))
		if err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
		unlocks = append(unlocks, u)
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d connections acquired while 100 locks are held, want 0", n)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	u, err := l.Lock(ctx, "another")
	if err != nil {
		t.Fatalf("another key's lock with 100 held: %v", err)
	}
	u()
	if !held(t, pool, table, "held-7") {
		t.Error("held-7 is not held")
	}
	for _, u := range unlocks {
		u()
	}
	if held(t, pool, table, "held-7") {
		t.Error("held-7 is held after its unlock")
	}
}

// TestReleaseWakesWaiterInOtherLocks has two Locks on one table, as two
// processes would, with a poll of an hour: the waiter gets the lock only
// because the release's notification wakes it.
func TestReleaseWakesWaiterInOtherLocks(t *testing.T) {
	for _, flag := range []bool{false, true} {
		t.Run(fmt.Sprintf("WaitFlag=%v", flag), func(t *testing.T) {
			pool, table := setup(t)
			cfg := pglease.Config{Pool: pool, Table: table, Channel: "pglease_test", Lease: time.Hour, Poll: time.Hour, WaitFlag: flag}
			a, b := newLocks(t, cfg), newLocks(t, cfg)
			unlock, err := a.Lock(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			got := lockLater(t, b, "k")
			select {
			case err := <-got:
				t.Fatalf("b took a held lock: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			unlock()
			unlock() // a second call does nothing
			if err := <-got; err != nil {
				t.Fatalf("waiter after the release: %v", err)
			}
		})
	}
}

// TestUnwaitedReleaseSendsNoNotify listens on the channel: with WaitFlag,
// the release of a lock nobody waited for sends no notification, and the
// release of one that a Lock waited for sends one.
func TestUnwaitedReleaseSendsNoNotify(t *testing.T) {
	pool, table := setup(t)
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), "LISTEN pglease_flag_test"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "UNLISTEN *") //nolint:errcheck
	cfg := pglease.Config{Pool: pool, Table: table, Channel: "pglease_flag_test", WaitFlag: true}
	a, b := newLocks(t, cfg), newLocks(t, cfg)
	u, err := a.Lock(t.Context(), "alone")
	if err != nil {
		t.Fatal(err)
	}
	u()
	u, err = a.Lock(t.Context(), "waited")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(ctx, "waited"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock of a held key: %v", err)
	}
	u()
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer wcancel()
	n, err := conn.Conn().WaitForNotification(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", md5.Sum([]byte("waited"))); n.Payload != want {
		t.Errorf("first notification %q, want the waited key's %q (the unwaited release notified)", n.Payload, want)
	}
}

// TestRenewalKeepsLock holds a lock for twice its lease: the renewals keep
// it held, and its row's lease stays ahead of the clock.
func TestRenewalKeepsLock(t *testing.T) {
	pool, table := setup(t)
	lease := 1500 * time.Millisecond
	a := newLocks(t, pglease.Config{Pool: pool, Table: table, Channel: "pglease_test", Lease: lease})
	b := newLocks(t, pglease.Config{Pool: pool, Table: table, Channel: "pglease_test", Lease: lease})
	unlock, err := a.Lock(t.Context(), "long")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var first time.Time
	if err := pool.QueryRow(t.Context(), "SELECT until FROM "+table+" WHERE key = 'long'").Scan(&first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * lease)
	var later time.Time
	var live bool
	if err := pool.QueryRow(t.Context(), "SELECT until, until > clock_timestamp() FROM "+table+" WHERE key = 'long'").Scan(&later, &live); err != nil {
		t.Fatal(err)
	}
	if !later.After(first) || !live {
		t.Errorf("lease until %v then %v (live %v): not renewed", first, later, live)
	}
	if !held(t, pool, table, "long") {
		t.Error("the lock was lost after twice its lease although its holder lives")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(ctx, "long"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("another Locks on a renewed lock: %v, want context.DeadlineExceeded", err)
	}
}

// TestKilledHolderReleasedWithinLease has a child process take a lock
// and be killed with SIGKILL: the lock is free once its lease ends.
func TestKilledHolderReleasedWithinLease(t *testing.T) {
	pool, table := setup(t)
	lease := 2 * time.Second
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+table, childKey+"=conv", childLease+"="+lease.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	l := newLocks(t, pglease.Config{Pool: pool, Table: table, Channel: "pglease_test", Lease: lease})
	if !held(t, pool, table, "conv") {
		t.Fatal("the child's lock is not held")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	unlock, err := l.Lock(ctx, "conv")
	if err != nil {
		t.Fatalf("lock of a killed holder: %v", err)
	}
	unlock()
	t.Logf("taken %v after the holder was killed (lease %v)", time.Since(killed).Round(time.Millisecond), lease)
}

// TestCancelledWaitAndClose checks that a Lock whose context ends while
// it waits returns the context's error, and that Close releases the
// locks still held, waking another Locks's waiter, and fails later Locks.
func TestCancelledWaitAndClose(t *testing.T) {
	pool, table := setup(t)
	cfg := pglease.Config{Pool: pool, Table: table, Channel: "pglease_test", Lease: time.Hour, Poll: time.Hour, WaitFlag: true}
	a, b := newLocks(t, cfg), newLocks(t, cfg)
	if _, err := a.Lock(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v, want context.DeadlineExceeded", err)
	}
	got := lockLater(t, b, "k")
	time.Sleep(50 * time.Millisecond)
	a.Close()
	if err := <-got; err != nil {
		t.Fatalf("waiter after the holder closed: %v", err)
	}
	if _, err := a.Lock(t.Context(), "other"); !errors.Is(err, pglease.ErrClosed) {
		t.Fatalf("Lock after Close: %v, want ErrClosed", err)
	}
}

// TestLockCommittedAsContextEndsIsReleased: a Lock whose context ends
// while its try statement is still running on the server (blocked here
// behind another transaction's row of the key) returns the context's
// error at once; when the statement then takes the lock, the lock is
// released rather than left taken for a lease.
func TestLockCommittedAsContextEndsIsReleased(t *testing.T) {
	pool, table := setup(t)
	l, err := pglease.New(pglease.Config{Pool: pool, Table: table, Lease: time.Hour, Poll: time.Hour, WaitFlag: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "INSERT INTO "+table+" (key, token, until) VALUES ('k', 'other', clock_timestamp() + interval '1 hour')"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan error, 1)
	go func() {
		_, err := l.Lock(ctx, "k")
		got <- err
	}()
	// Wait until the try statement waits for the transaction's row lock.
	for {
		var waiting bool
		if err := pool.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO '||$1||'%')", table).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock whose context ended: %v, want context.Canceled", err)
	}
	// The transaction goes away: the try statement takes the lock.
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	l.Close() // waits for the statement and its release
	for {     // and, were it abandoned, for the statement to end on the server
		var running bool
		if err := pool.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%INSERT INTO '||$1||'%')", table).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if !running {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if held(t, pool, table, "k") {
		t.Fatal("a lock taken as its Lock's context ended stays held")
	}
}

// TestReleasedByCallerStatement releases a held lock with a statement of
// the caller's, as Holding and Released document: Holding lists the held
// pairs, and after Released the lock is no longer listed, a waiter of the
// same Locks takes the key, and the first holder's unlock leaves the
// waiter's row alone.
func TestReleasedByCallerStatement(t *testing.T) {
	pool, table := setup(t)
	l := newLocks(t, pglease.Config{Pool: pool, Table: table, Channel: "pglease_test_released", WaitFlag: true})
	unlockA, err := l.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	unlockB, err := l.Lock(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	defer unlockB()
	keys, tokens := l.Holding()
	if len(keys) != 2 || len(tokens) != 2 {
		t.Fatalf("Holding: %v %v; want two locks", keys, tokens)
	}
	tokenA := ""
	for i, k := range keys {
		if k == "a" {
			tokenA = tokens[i]
		}
	}
	if tokenA == "" {
		t.Fatalf("Holding: keys %v; want a among them", keys)
	}
	got := lockLater(t, l, "a")
	// The caller's statement deletes a's row, then reports it.
	tag, err := pool.Exec(t.Context(), "DELETE FROM "+table+" WHERE key = $1 AND token = $2", "a", tokenA)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("deleting a's row: %v, %v; want one row", tag, err)
	}
	l.Released(tokenA)
	if keys, _ := l.Holding(); len(keys) != 1 || keys[0] != "b" {
		t.Errorf("Holding after Released: %v; want [b]", keys)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter's Lock after Released: %v", err)
	}
	unlockA() // sends nothing: a is no longer held
	l.Released("not-held")
	if !held(t, pool, table, "b") {
		t.Error("b's row is gone; want it held still")
	}
}

// TestXactLocksExcludeTakes: with Config.XactLocks, a transaction that
// holds a key's advisory lock (pglease.XactLock) makes Lock wait for its
// end, and a transaction that takes the advisory lock after Lock took the
// key sees the key's row.
func TestXactLocksExcludeTakes(t *testing.T) {
	for _, flag := range []bool{true, false} {
		t.Run(fmt.Sprintf("WaitFlag=%v", flag), func(t *testing.T) { testXactLocks(t, flag) })
	}
}

func testXactLocks(t *testing.T, waitFlag bool) {
	pool, table := setup(t)
	l := newLocks(t, pglease.Config{Pool: pool, Table: table, Channel: "pglease_test_xact", WaitFlag: waitFlag, XactLocks: true, Poll: 10 * time.Millisecond})
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "SELECT "+pglease.XactLock(table, "$1::text"), "k"); err != nil {
		t.Fatal(err)
	}
	type result struct {
		unlock func()
		err    error
	}
	got := make(chan result, 1)
	go func() {
		unlock, err := l.Lock(t.Context(), "k")
		got <- result{unlock, err}
	}()
	// The take waits in PostgreSQL for the transaction's advisory lock.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		select {
		case r := <-got:
			t.Fatalf("Lock returned (%v) while a transaction held the key's advisory lock", r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no take waited for the advisory lock in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if held(t, pool, table, "k") {
		t.Fatal("the key's row was written while a transaction held its advisory lock")
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.unlock()
	// A transaction that takes the advisory lock now sees the lease.
	tx, err = pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), "SELECT "+pglease.XactLock(table, "$1::text"), "k"); err != nil {
		t.Fatal(err)
	}
	var live bool
	if err := tx.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM "+table+" WHERE key = $1 AND until >= clock_timestamp())", "k").Scan(&live); err != nil || !live {
		t.Fatalf("after Lock took the key, a transaction holding its advisory lock sees a live lease: %v, %v; want true", live, err)
	}
}
