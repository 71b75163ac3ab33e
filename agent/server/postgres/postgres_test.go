package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/agent/server/servertest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

func TestMain(m *testing.M) {
	if target := os.Getenv(instanceEnv); target != "" {
		runInstance(target)
		return
	}
	goleak.VerifyTestMain(m)
}

// open returns a Store on a fresh schema, or skips the test when no
// PostgreSQL answers. It takes pending runs at once (PendingGrace < 0),
// as the Store contract that servertest checks says ClaimDue does: the
// grace is a policy between instances, tested on its own
// (TestClaimDueLeavesNewRuns).
func open(t *testing.T) *postgres.Store {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, PendingGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func TestStore(t *testing.T) {
	servertest.Run(t, func(t *testing.T) server.Store { return open(t) })
}

// TestNewTwice opens the schema again: the migrations are not applied
// twice.
func TestNewTwice(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	for range 2 {
		st, err := postgres.New(context.Background(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
}

// TestLockThread holds a thread's lock through one Store: another Store
// (another instance) waits for it, and gets it once released.
func TestLockThread(t *testing.T) {
	stores, _, _ := twoStores(t)
	unlock, err := stores[0].LockThread(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	if _, err := stores[1].LockThread(ctx, "t1"); err == nil {
		t.Fatal("a second Store took a lock that is held")
	}
	cancel()
	other, err := stores[1].LockThread(t.Context(), "t2")
	if err != nil {
		t.Fatalf("another thread's lock: %v", err)
	}
	other()
	got := make(chan error, 1)
	go func() {
		u, err := stores[1].LockThread(t.Context(), "t1")
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("lock after release: %v", err)
	}
}

// twoStores returns two Stores (two instances) on one fresh schema, with
// the schema's pool and name; the Stores close when the test ends.
func twoStores(t *testing.T) ([2]*postgres.Store, *pgxpool.Pool, string) {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	var stores [2]*postgres.Store
	for i := range stores {
		st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		stores[i] = st
	}
	return stores, pool, schema
}

// TestEndRunReleasesThreadLock: EndRun releases, with the run's end, the
// lock of the run's thread its Store holds when nobody waits for it:
// another Store takes it before the first Store's unlock (which then
// leaves it alone). A lock another Store waits for is left to the
// unlock, which wakes the waiter.
func TestEndRunReleasesThreadLock(t *testing.T) {
	stores, pool, schema := twoStores(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, id := range []string{"t1", "t2"} {
		if err := stores[0].CreateThread(t.Context(), &server.Thread{ID: id, Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy}); err != nil {
			t.Fatal(err)
		}
		if err := stores[0].CreateRun(t.Context(), &server.Run{ID: id + "-r", ThreadID: id, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunRunning, Owner: "o"}); err != nil {
			t.Fatal(err)
		}
	}
	unlock1, err := stores[0].LockThread(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	unlock2, err := stores[0].LockThread(t.Context(), "t2")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock2()
	end := func(id string) {
		t.Helper()
		if r, err := stores[0].EndRun(t.Context(), id, server.RunSuccess, "", at.Add(time.Minute)); err != nil || r.Status != server.RunSuccess {
			t.Fatalf("EndRun %s: %+v, %v; want success", id, r, err)
		}
	}
	guard := func() context.Context { // failure guard only
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	held := func(st *postgres.Store, id string) bool {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		u, err := st.LockThread(ctx, id)
		if err == nil {
			u()
		}
		return err != nil
	}

	// Nobody waits for t1: EndRun releases it.
	end("t1-r")
	u, err := stores[1].LockThread(guard(), "t1") // before unlock1
	if err != nil {
		t.Fatalf("t1's lock after EndRun, before the unlock: %v; want it free", err)
	}
	unlock1() // must leave the second Store's lock alone
	if !held(stores[0], "t1") {
		t.Error("the first Store took t1 while the second holds it: its unlock after EndRun released the second's lock")
	}
	u()
	if !held(stores[1], "t2") {
		t.Fatal("the second Store took t2: EndRun of t1's run released t2's lock")
	}

	// The second Store waits for t2 (it flagged the lock): EndRun leaves
	// it, the unlock releases it and wakes the waiter.
	got := make(chan error, 1)
	go func() {
		u, err := stores[1].LockThread(guard(), "t2")
		if err == nil {
			u()
		}
		got <- err
	}()
	locks := pgx.Identifier{schema, "agentserver_locks"}.Sanitize()
	waitFor(t, "the second Store waiting for t2", func() bool {
		var waited bool
		err := pool.QueryRow(t.Context(), "SELECT waited FROM "+locks+" WHERE thread_id = 't2'").Scan(&waited)
		return err == nil && waited
	})
	end("t2-r")
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM "+locks+" WHERE thread_id = 't2' AND waited").Scan(&n); err != nil || n != 1 {
		t.Errorf("t2's flagged lock after EndRun: %d rows, %v; want it left to the unlock", n, err)
	}
	unlock2()
	if err := <-got; err != nil {
		t.Errorf("the waiter's lock of t2 after the unlock: %v", err)
	}
}

// TestUncontendedUnlockSendsNoNotify: the thread locks' table is
// UNLOGGED and flags waited rows, so releasing a lock nobody waited for
// sends no NOTIFY; the first notification a listener gets is the fence
// sent after the release.
func TestUncontendedUnlockSendsNoNotify(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var persistence string
	if err := pool.QueryRow(t.Context(), "SELECT relpersistence::text FROM pg_class WHERE oid = $1::regclass",
		pgx.Identifier{schema, "agentserver_locks"}.Sanitize()).Scan(&persistence); err != nil {
		t.Fatal(err)
	}
	if persistence != "u" {
		t.Errorf("agentserver_locks persistence %q, want u (UNLOGGED)", persistence)
	}
	h := fnv.New64a()
	h.Write([]byte(schema))
	channel := fmt.Sprintf("agentserver_%x_locks", h.Sum64())
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "UNLISTEN *")
	for range 3 {
		unlock, err := st.LockThread(t.Context(), "t1")
		if err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	if _, err := pool.Exec(t.Context(), "SELECT pg_notify($1, 'fence')", channel); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	n, err := conn.Conn().WaitForNotification(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.Payload != "fence" {
		t.Errorf("uncontended releases sent a NOTIFY (%q)", n.Payload)
	}
}

// TestClaimDueLeavesNewRuns checks Config.PendingGrace: ClaimDue leaves
// a pending run changed less than PendingGrace ago to the instance that
// created it, takes one changed longer ago (a run delayed with
// after_seconds, due now, included), still takes a running run whose
// lease expired at once, and with a negative PendingGrace takes a new
// pending run at once.
func TestClaimDueLeavesNewRuns(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, PendingGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	ctx := t.Context()
	now := time.Now().UTC()
	mk := func(id, tid string, created, updated time.Time) {
		t.Helper()
		if err := st.CreateThread(ctx, &server.Thread{ID: tid, Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now, Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateRun(ctx, &server.Run{ID: id, ThreadID: tid, CreatedAt: created, UpdatedAt: updated, Status: server.RunPending,
			Kwargs: json.RawMessage(`{"assistant_id":"g"}`), Owner: "alice", Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("new", "t1", now, now)
	if c, err := st.ClaimDue(ctx, "w", time.Minute); c != nil || err != nil {
		t.Fatalf("ClaimDue with a pending run created now and PendingGrace 1h: %+v, %v; want none", c, err)
	}
	// Created (enqueued) two hours ago, due since an hour ago.
	mk("delayed", "t2", now.Add(-time.Hour), now.Add(-2*time.Hour))
	c, err := st.ClaimDue(ctx, "w", time.Minute)
	if err != nil || c == nil || c.ID != "delayed" {
		t.Fatalf("ClaimDue: %+v, %v; want the run delayed, enqueued before PendingGrace", c, err)
	}
	// Its lease expired: taken over at once, whatever its age.
	if err := st.Renew(ctx, "delayed", "w", -time.Second); err != nil {
		t.Fatal(err)
	}
	if c, err := st.ClaimDue(ctx, "w2", time.Minute); err != nil || c == nil || c.ID != "delayed" || c.Worker != "w2" {
		t.Fatalf("ClaimDue after the lease expired: %+v, %v; want the run delayed taken by w2", c, err)
	}
	if c, err := st.ClaimDue(ctx, "w", time.Minute); c != nil || err != nil {
		t.Fatalf("ClaimDue: %+v, %v; want none (the new run is in its grace)", c, err)
	}
	// Another Store on the same tables, without a grace, takes it.
	eager, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, PendingGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eager.Close)
	if c, err := eager.ClaimDue(ctx, "w3", time.Minute); err != nil || c == nil || c.ID != "new" {
		t.Fatalf("ClaimDue with PendingGrace < 0: %+v, %v; want the new run", c, err)
	}
}
