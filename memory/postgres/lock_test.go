package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/postgres"
)

// waitingLocks counts the sessions that wait for advisory lock key. Tests
// of other packages take advisory locks in the same database at the same
// time: only key's count. PostgreSQL shows a bigint key's high 32 bits as
// classid and its low ones as objid.
func waitingLocks(t *testing.T, pool *pgxpool.Pool, key int64) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1`,
		int64(uint64(key)>>32), int64(uint64(key)&0xffffffff)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForWaiter polls pg_locks until a session waits for advisory lock
// key, the sign that a second Lock is blocked in PostgreSQL.
func waitForWaiter(t *testing.T, pool *pgxpool.Pool, key int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // failure guard only
	for waitingLocks(t, pool, key) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no session waits for the conversation's lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLockAcrossStores has two stores on one schema, as two processes
// would: a conversation locked through one waits in the other until it is
// unlocked, or until the first store's connections close (a process that
// died); other conversations do not wait.
func TestLockAcrossStores(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "memlock_")
	open := func() *postgres.Store {
		s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open(), open()
	defer b.Close()
	convA, err := memory.NewConversations(memory.ConversationConfig{Store: a})
	if err != nil {
		t.Fatal(err)
	}
	convB, err := memory.NewConversations(memory.ConversationConfig{Store: b})
	if err != nil {
		t.Fatal(err)
	}

	unlock, err := convA.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := convB.Lock(t.Context(), "c2")
	if err != nil {
		t.Fatalf("another conversation: %v", err)
	}
	other()

	got := make(chan func(), 1)
	go func() {
		u, err := convB.Lock(context.Background(), "c1")
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	waitForWaiter(t, pool, postgres.LockKey(b, "c1"))
	select {
	case <-got:
		t.Fatal("the second store locked a conversation the first holds")
	default:
	}
	unlock()
	(<-got)()

	// A holder that goes away without unlocking: its session ends and
	// the lock with it.
	if _, err := convA.Lock(t.Context(), "c3"); err != nil {
		t.Fatal(err)
	}
	go func() {
		u, err := convB.Lock(context.Background(), "c3")
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	waitForWaiter(t, pool, postgres.LockKey(b, "c3"))
	a.Close() // the "process" dies holding c3
	(<-got)()
}

// TestLockCancelled checks that a Lock whose context ends while it waits
// returns the context's error and holds nothing.
func TestLockCancelled(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "memlock_")
	s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, MaxLocks: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	unlock, err := s.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Lock(ctx, "c1")
		errc <- err
	}()
	waitForWaiter(t, pool, postgres.LockKey(s, "c1"))
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock: %v, want context.Canceled", err)
	}
	unlock()
	// Both lock connections are free again: two locks at once succeed.
	u1, err := s.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	u2, err := s.Lock(t.Context(), "c2")
	if err != nil {
		t.Fatal(err)
	}
	u1()
	u2()
}

// TestLockAfterIdleConnectionDied ends the session of an idle lock
// connection, as a server restart would: the next Lock gets its lock on a
// new connection instead of failing.
func TestLockAfterIdleConnectionDied(t *testing.T) {
	_, schema := postgrestest.Schema(t, "memlockdead_")
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	app := schema // names this test's sessions in pg_stat_activity
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, MaxLocks: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	unlock, err := s.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	unlock() // the lock connection is now idle
	// End it from a session of the pool (which has another pid).
	if _, err := pool.Exec(t.Context(), "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid() AND query LIKE '%pg_advisory_unlock%'", app); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // failure guard only
	for {
		var n int
		if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid() AND query LIKE '%pg_advisory_unlock%'", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle lock connection's session did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
	unlock, err = s.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatalf("Lock after the idle connection died: %v", err)
	}
	unlock()
}
