package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/postgres"
)

// notWithin fails the test if got delivers within d: a Lock that waits.
func notWithin(t *testing.T, got chan func(), d time.Duration, what string) {
	t.Helper()
	select {
	case u := <-got:
		u()
		t.Fatal(what)
	case <-time.After(d):
	}
}

// TestLockAcrossStores has two stores on one schema, as two processes
// would: a conversation locked through one waits in the other until it is
// unlocked, or until the first store closes; other conversations do not
// wait.
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
			u = func() {}
		}
		got <- u
	}()
	notWithin(t, got, 100*time.Millisecond, "the second store locked a conversation the first holds")
	unlock()
	(<-got)()

	// A holder that closes without unlocking releases its locks.
	if _, err := convA.Lock(t.Context(), "c3"); err != nil {
		t.Fatal(err)
	}
	go func() {
		u, err := convB.Lock(context.Background(), "c3")
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		got <- u
	}()
	notWithin(t, got, 100*time.Millisecond, "the second store locked c3 the first holds")
	a.Close()
	(<-got)()
}

// TestLockCancelled checks that a Lock whose context ends while it waits
// returns the context's error and holds nothing.
func TestLockCancelled(t *testing.T) {
	s := newStore(t, "memlock_")
	defer s.Close()
	unlock, err := s.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Lock(ctx, "c1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled Lock: %v, want context.DeadlineExceeded", err)
	}
	unlock()
	u, err := s.Lock(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	u()
}

// TestManyHeldLocksDoNotBlockATurn holds 100 conversations' locks (as
// 100 turns waiting for a person's answer would), through a pool of 4
// connections: another conversation's turn locks, reads and appends at
// once, and no connection is held by the locks.
func TestManyHeldLocksDoNotBlockATurn(t *testing.T) {
	_, schema := postgrestest.Schema(t, "memlock_")
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conv, err := memory.NewConversations(memory.ConversationConfig{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		u, err := conv.Lock(t.Context(), fmt.Sprintf("waiting-%d", i))
		if err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
		defer u()
	}
	if n := pool.Stat().AcquiredConns(); n != 0 {
		t.Errorf("%d connections held by 100 locks, want 0", n)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	unlock, err := conv.Lock(ctx, "another")
	if err != nil {
		t.Fatalf("another conversation's turn with 100 locks held: %v", err)
	}
	defer unlock()
	if err := conv.Append(ctx, "another", memory.Message{Role: memory.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if msgs, err := conv.Recent(ctx, "another", 10); err != nil || len(msgs) != 1 {
		t.Fatalf("recent: %v %v", msgs, err)
	}
	var rows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+postgres.LockTable(s)).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 101 {
		t.Errorf("%d lock rows, want 101", rows)
	}
}
