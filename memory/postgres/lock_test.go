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

// waitingLocks counts the advisory locks sessions wait for.
func waitingLocks(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitForWaiter polls pg_locks until a session waits for an advisory lock,
// the sign that a second Lock is blocked in PostgreSQL.
func waitForWaiter(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // failure guard only
	for waitingLocks(t, pool) == 0 {
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
	waitForWaiter(t, pool)
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
	waitForWaiter(t, pool)
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
	waitForWaiter(t, pool)
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
