package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/internal/pglease"
)

// planCall is what a creation's plan was called with.
type planCall struct {
	thread *server.Thread
	active []string
	n      int
}

// guessPlan is a plan as the server's: a run of the thread's owner when
// the thread exists and has no active run (multitask_strategy reject:
// an error naming the active run otherwise), created running under
// worker w when it would run at once (running), and under the bound max
// of the owner's active runs counted (n + 1 ≤ max). It records its
// calls. With enqueue, a thread's active run does not refuse the run:
// it is created pending (multitask_strategy enqueue).
type guessPlan struct {
	mu      sync.Mutex
	calls   []planCall
	running bool
	enqueue bool
	max     int
	last    *server.Run
}

var errBusy = errors.New("thread busy (reject)")

func (p *guessPlan) plan(t *server.Thread, active []*server.Run, n int) (*server.Run, string, map[string]any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := planCall{thread: t, n: n}
	for _, a := range active {
		c.active = append(c.active, a.ID+":"+a.Status)
	}
	p.calls = append(p.calls, c)
	if t == nil {
		return nil, "", nil, server.ErrNotFound
	}
	if len(active) > 0 && !p.enqueue {
		return nil, "", nil, fmt.Errorf("%w: %s", errBusy, active[0].ID)
	}
	if p.max > 0 && n+1 > p.max {
		return nil, "", nil, fmt.Errorf("%d active runs: %w", n, server.ErrLimit)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	r := &server.Run{ID: fmt.Sprintf("run-%d-%d", now.UnixNano(), len(p.calls)), ThreadID: t.ID, AssistantID: "g", CreatedAt: now, UpdatedAt: now,
		Status: server.RunPending, Kwargs: json.RawMessage(`{"assistant_id":"g"}`), Owner: t.Owner, Metadata: map[string]any{}}
	if p.running && len(active) == 0 {
		r.Status, r.Worker, r.Attempt, r.LeaseUntil = server.RunRunning, "w", 1, now.Add(time.Minute)
	}
	p.last = r
	return r, "g", map[string]any{"graph_id": "g", "assistant_id": "g"}, nil
}

// plan2 is plan for a creation that does not count.
func (p *guessPlan) plan2(t *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
	return p.plan(t, active, 0)
}

// lastCall returns the plan's last call.
func (p *guessPlan) lastCall() planCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[len(p.calls)-1]
}

// guessStores returns n Stores on one schema, the first traced by
// count, and a thread "t" of alice's on them.
func guessStores(t *testing.T, count *postgrestest.Counter, n int) []*postgres.Store {
	t.Helper()
	base, schema := postgrestest.Schema(t, "agentserver_guess_")
	var out []*postgres.Store
	for i := range n {
		pool := base
		if i == 0 {
			pool = postgrestest.TracedPool(t, count, nil)
		}
		st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		out = append(out, st)
	}
	now := time.Now().UTC()
	if err := out[0].CreateThread(t.Context(), &server.Thread{ID: "t", Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now, Metadata: map[string]any{"k": 1}}); err != nil {
		t.Fatal(err)
	}
	return out
}

// endRun ends run r of thread "t" and refreshes the thread idle, as the
// server ends a run.
func endRun(t *testing.T, st *postgres.Store, r *server.Run) {
	t.Helper()
	if _, err := st.EndRun(t.Context(), r.ID, server.RunSuccess, "", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RefreshThread(t.Context(), "t", server.ThreadRefresh{At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
}

// TestCreateRunOneTrip checks that a run's creation on a thread whose
// last run this Store created, idle since, is one round trip (one
// transaction), counting the principal's active runs or not, claimed
// or not, and that the run and its thread are stored as by the
// creation in two round trips.
func TestCreateRunOneTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running bool
		counted bool
	}{{"locked", false, false}, {"claimed", true, false}, {"claimed-counted", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			count := &postgrestest.Counter{Apart: isNotify}
			st := guessStores(t, count, 1)[0]
			p := &guessPlan{running: tc.running, max: 100}
			create := func() {
				t.Helper()
				var ok bool
				var err error
				switch {
				case tc.counted:
					ok, err = st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan)
				case tc.running:
					ok, err = st.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2)
				default:
					ok, err = st.CreateRunLocked(t.Context(), "t", p.plan2)
				}
				if !ok || err != nil {
					t.Fatalf("create: %v, %v; want created", ok, err)
				}
			}
			create() // the thread's first creation here reads it
			endRun(t, st, p.last)
			for i := range 3 {
				before := count.Snapshot()
				create()
				after := count.Snapshot()
				if trips, txs := after.Trips-before.Trips, after.Txs-before.Txs; trips != 1 || txs != 1 {
					t.Fatalf("creation %d: %d round trips, %d transactions; want 1 and 1", i+2, trips, txs)
				}
				r, err := st.Run(t.Context(), p.last.ID)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != p.last.Status || r.Worker != p.last.Worker || r.Owner != "alice" {
					t.Fatalf("run stored %+v; want status %s, worker %q", r, p.last.Status, p.last.Worker)
				}
				if tc.running && (r.LeaseUntil.Before(time.Now().Add(30*time.Second)) || r.LeaseUntil.After(time.Now().Add(2*time.Minute))) {
					t.Fatalf("run's lease until %v; want about a minute from now", r.LeaseUntil)
				}
				th, err := st.Thread(t.Context(), "t")
				if err != nil {
					t.Fatal(err)
				}
				if th.Status != server.ThreadBusy || th.GraphID != "g" || fmt.Sprint(th.Metadata) != "map[assistant_id:g graph_id:g k:1]" {
					t.Fatalf("thread %+v; want busy, graph g, metadata k, graph_id and assistant_id", th)
				}
				if c := p.lastCall(); fmt.Sprint(c.thread.Metadata) != "map[assistant_id:g graph_id:g k:1]" || c.thread.Owner != "alice" {
					t.Fatalf("plan read thread %+v", c.thread)
				}
				endRun(t, st, p.last)
			}
		})
	}
}

// TestCreateRunGuessStale checks that a creation from what the Store
// remembers of a thread inserts nothing when the thread changed since
// (another instance's run active on it, its owner or metadata changed,
// its lock held, the principal's active runs past what the guess
// allowed): the plan is then called on the thread as stored, and its
// answer decides.
func TestCreateRunGuessStale(t *testing.T) {
	count := &postgrestest.Counter{Apart: isNotify}
	sts := guessStores(t, count, 2)
	a, b := sts[0], sts[1]
	p := &guessPlan{running: true, max: 100}
	create := func(st *postgres.Store) (bool, error) {
		return st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan)
	}
	warm := func() {
		t.Helper()
		if ok, err := create(a); !ok || err != nil {
			t.Fatalf("create: %v, %v", ok, err)
		}
		endRun(t, a, p.last)
	}
	warm()

	// Another instance's run is active on the thread: refused as busy,
	// the plan seeing that run.
	if ok, err := create(b); !ok || err != nil {
		t.Fatalf("create on b: %v, %v", ok, err)
	}
	other := p.last
	ok, err := create(a)
	if ok || !errors.Is(err, errBusy) {
		t.Fatalf("create on a busy thread: %v, %v; want refused as busy", ok, err)
	}
	if c := p.lastCall(); len(c.active) != 1 || c.active[0] != other.ID+":running" {
		t.Fatalf("plan's last call saw active runs %v; want [%s:running]", c.active, other.ID)
	}
	if runs, err := a.ActiveRuns(t.Context(), "t"); err != nil || len(runs) != 1 {
		t.Fatalf("active runs %d, %v; want 1", len(runs), err)
	}
	endRun(t, b, other)
	warm()

	// The thread's metadata changed: the run is created, planned from
	// the thread as stored.
	if _, err := b.UpdateThread(t.Context(), "t", func(th *server.Thread) error { th.Metadata["k"] = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	if ok, err := create(a); !ok || err != nil {
		t.Fatalf("create: %v, %v", ok, err)
	}
	if c := p.lastCall(); c.thread.Metadata["k"] != json.Number("2") {
		t.Fatalf("plan's last call read metadata %v; want k 2", c.thread.Metadata)
	}
	endRun(t, a, p.last)
	warm()

	// Its owner changed: planned from the new owner.
	if _, err := b.UpdateThread(t.Context(), "t", func(th *server.Thread) error { th.Owner = "bob"; return nil }); err != nil {
		t.Fatal(err)
	}
	if ok, err := create(a); !ok || err != nil {
		t.Fatalf("create: %v, %v", ok, err)
	}
	if c := p.lastCall(); c.thread.Owner != "bob" || p.last.Owner != "bob" {
		t.Fatalf("plan's last call read owner %q; want bob", c.thread.Owner)
	}
	endRun(t, a, p.last)
	if _, err := b.UpdateThread(t.Context(), "t", func(th *server.Thread) error { th.Owner = "alice"; return nil }); err != nil {
		t.Fatal(err)
	}
	warm()

	// Its lock held elsewhere: ErrThreadLocked, nothing created.
	unlock, err := b.LockThread(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	calls := len(p.calls)
	if ok, err := create(a); ok || !errors.Is(err, server.ErrThreadLocked) {
		t.Fatalf("create under another's lock: %v, %v; want ErrThreadLocked", ok, err)
	}
	if runs, err := a.ActiveRuns(t.Context(), "t"); err != nil || len(runs) != 0 {
		t.Fatalf("active runs %d, %v; want none", len(runs), err)
	}
	unlock()
	if len(p.calls) == calls {
		t.Fatal("the plan was not called")
	}
	warm()

	// The principal's active runs past the guess: 40 pending runs of
	// alice's on other threads. The plan gets the count as stored.
	now := time.Now().UTC()
	for i := range 40 {
		tid := fmt.Sprintf("o%d", i)
		if err := b.CreateThread(t.Context(), &server.Thread{ID: tid, Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now, Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if err := b.CreateRun(t.Context(), &server.Run{ID: "r" + tid, ThreadID: tid, AssistantID: "g", CreatedAt: now, UpdatedAt: now,
			Status: server.RunPending, Kwargs: json.RawMessage(`{}`), Owner: "alice", Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	p.max = 30
	if ok, err := create(a); ok || !errors.Is(err, server.ErrLimit) {
		t.Fatalf("create past the bound: %v, %v; want ErrLimit", ok, err)
	}
	if c := p.lastCall(); c.n != 40 {
		t.Fatalf("plan's last call counted %d active runs; want 40", c.n)
	}
	if runs, err := a.ActiveRuns(t.Context(), "t"); err != nil || len(runs) != 0 {
		t.Fatalf("active runs %d, %v; want none", len(runs), err)
	}
	p.max = 100
	if ok, err := create(a); !ok || err != nil {
		t.Fatalf("create: %v, %v", ok, err)
	}
	if c := p.lastCall(); c.n != 40 {
		t.Fatalf("plan's last call counted %d active runs; want 40", c.n)
	}
}

// TestCreateRunGuessSerialized creates runs concurrently on one thread
// from two Stores whose last creations were on it (each remembers it),
// with multitask_strategy reject's plan, many times: exactly one of each
// round's creations makes a run.
func TestCreateRunGuessSerialized(t *testing.T) {
	count := &postgrestest.Counter{Apart: isNotify}
	sts := guessStores(t, count, 2)
	p := &guessPlan{running: true}
	for _, st := range sts {
		if ok, err := st.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2); !ok || err != nil {
			t.Fatalf("create: %v, %v", ok, err)
		}
		endRun(t, st, p.last)
	}
	for round := range 20 {
		var created atomic.Int32
		var wg sync.WaitGroup
		for i := range 4 {
			st := sts[i%2]
			wg.Go(func() {
				ok, err := st.CreateRunClaimedLocked(context.Background(), "t", time.Minute, p.plan2)
				if ok {
					created.Add(1)
				} else if !errors.Is(err, errBusy) {
					t.Errorf("round %d: create: %v; want created or refused as busy", round, err)
				}
			})
		}
		wg.Wait()
		runs, err := sts[0].ActiveRuns(t.Context(), "t")
		if err != nil {
			t.Fatal(err)
		}
		if created.Load() != 1 || len(runs) != 1 {
			t.Fatalf("round %d: %d creations made a run, %d active; want 1 and 1", round, created.Load(), len(runs))
		}
		endRun(t, sts[0], runs[0])
	}
}

// trips calls create and returns the round trips and transactions it
// took.
func trips(count *postgrestest.Counter, create func()) (int, int) {
	before := count.Snapshot()
	create()
	after := count.Snapshot()
	return int(after.Trips - before.Trips), int(after.Txs - before.Txs)
}

// TestCreateRunBusyTrips checks that a creation on a thread whose run
// this Store created is still active does not try what it remembers of
// the thread (whose insert the active run refuses): two round trips,
// refused (multitask_strategy reject) or enqueued, every time; and that
// once the runs ended here, the next creation is one round trip again.
func TestCreateRunBusyTrips(t *testing.T) {
	for _, enqueue := range []bool{false, true} {
		t.Run(fmt.Sprint("enqueue=", enqueue), func(t *testing.T) {
			count := &postgrestest.Counter{Apart: isNotify}
			st := guessStores(t, count, 1)[0]
			p := &guessPlan{running: true, max: 100}
			create := func() (bool, error) {
				return st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan)
			}
			if ok, err := create(); !ok || err != nil {
				t.Fatalf("create: %v, %v", ok, err)
			}
			endRun(t, st, p.last)
			if ok, err := create(); !ok || err != nil { // from the guess
				t.Fatalf("create: %v, %v", ok, err)
			}
			runs := []*server.Run{p.last}
			p.enqueue = enqueue
			for i := range 3 {
				n, _ := trips(count, func() {
					ok, err := create()
					switch {
					case enqueue && (!ok || err != nil):
						t.Fatalf("creation %d: %v, %v; want enqueued", i, ok, err)
					case !enqueue && (ok || !errors.Is(err, errBusy)):
						t.Fatalf("creation %d: %v, %v; want refused as busy", i, ok, err)
					}
				})
				if n != 2 {
					t.Fatalf("creation %d on a busy thread: %d round trips; want 2", i, n)
				}
				if enqueue {
					runs = append(runs, p.last)
					if p.last.Status != server.RunPending {
						t.Fatalf("run enqueued %s; want pending", p.last.Status)
					}
				}
			}
			for _, r := range runs {
				endRun(t, st, r)
			}
			p.enqueue = false
			if n, _ := trips(count, func() {
				if ok, err := create(); !ok || err != nil {
					t.Fatalf("create: %v, %v", ok, err)
				}
			}); n != 1 {
				t.Fatalf("creation after the runs ended here: %d round trips; want 1", n)
			}
		})
	}
}

// TestCreateRunGuessLargeMetadata checks that a thread whose metadata
// is over the Store's bound (8 KiB) is not remembered: its runs'
// creation reads it, in two round trips.
func TestCreateRunGuessLargeMetadata(t *testing.T) {
	count := &postgrestest.Counter{Apart: isNotify}
	st := guessStores(t, count, 1)[0]
	if _, err := st.UpdateThread(t.Context(), "t", func(th *server.Thread) error {
		th.Metadata["big"] = strings.Repeat("x", 9<<10)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := &guessPlan{running: true}
	for i := range 3 {
		n, _ := trips(count, func() {
			if ok, err := st.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2); !ok || err != nil {
				t.Fatalf("create: %v, %v", ok, err)
			}
		})
		if n != 2 {
			t.Fatalf("creation %d: %d round trips; want 2 (the thread read, not remembered)", i, n)
		}
		if c := p.lastCall(); len(c.thread.Metadata["big"].(string)) != 9<<10 {
			t.Fatalf("plan read metadata of %d bytes", len(c.thread.Metadata["big"].(string)))
		}
		endRun(t, st, p.last)
	}
}

// TestCreateRunGuessForgotten checks that the Store forgets a thread
// whose record it changes (UpdateThread), deletes (DeleteThread) or
// locks (LockThread): the next creation does not try the guess, which
// would miss (three round trips), but reads the thread (two).
func TestCreateRunGuessForgotten(t *testing.T) {
	count := &postgrestest.Counter{Apart: isNotify}
	st := guessStores(t, count, 1)[0]
	p := &guessPlan{running: true}
	create := func() (bool, error) {
		return st.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2)
	}
	warm := func() {
		t.Helper()
		for range 2 {
			if ok, err := create(); !ok || err != nil {
				t.Fatalf("create: %v, %v", ok, err)
			}
			endRun(t, st, p.last)
		}
	}
	warm()
	if _, err := st.UpdateThread(t.Context(), "t", func(th *server.Thread) error { th.Metadata["k"] = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	if n, _ := trips(count, func() {
		if ok, err := create(); !ok || err != nil {
			t.Fatalf("create: %v, %v", ok, err)
		}
	}); n != 2 {
		t.Fatalf("creation after UpdateThread: %d round trips; want 2", n)
	}
	endRun(t, st, p.last)
	warm()

	unlock, err := st.LockThread(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := trips(count, func() {
		if ok, err := create(); ok || !errors.Is(err, server.ErrThreadLocked) {
			t.Fatalf("create under the lock: %v, %v; want ErrThreadLocked", ok, err)
		}
	}); n != 2 {
		t.Fatalf("creation under LockThread: %d round trips; want 2", n)
	}
	unlock()
	warm()

	if err := st.DeleteThread(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	if n, _ := trips(count, func() {
		if ok, err := create(); ok || !errors.Is(err, server.ErrNotFound) {
			t.Fatalf("create on a deleted thread: %v, %v; want ErrNotFound", ok, err)
		}
	}); n != 2 {
		t.Fatalf("creation after DeleteThread: %d round trips; want 2", n)
	}
}

// TestCreateRunGuessColumns checks that a creation from what the Store
// remembers inserts nothing when another instance changed the thread's
// graph, or its head and rolled (as a rollback does), or its metadata
// to a number equal but written differently (1.0 for 1): the plan is
// called again on the thread as stored.
func TestCreateRunGuessColumns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*server.Thread)
		check  func(*server.Thread) bool
	}{
		{"graph", func(th *server.Thread) { th.GraphID = "g2" }, func(th *server.Thread) bool { return th.GraphID == "g2" }},
		{"head", func(th *server.Thread) { th.Head = "cp1" }, func(th *server.Thread) bool { return th.Head == "cp1" && !th.Rolled }},
		{"rolled", func(th *server.Thread) { th.Rolled = true }, func(th *server.Thread) bool { return th.Head == "" && th.Rolled }},
		{"number", func(th *server.Thread) { th.Metadata["k"] = json.Number("1.0") }, func(th *server.Thread) bool { return th.Metadata["k"] == json.Number("1.0") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count := &postgrestest.Counter{Apart: isNotify}
			sts := guessStores(t, count, 2)
			a, b := sts[0], sts[1]
			p := &guessPlan{running: true}
			for range 2 {
				if ok, err := a.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2); !ok || err != nil {
					t.Fatalf("create: %v, %v", ok, err)
				}
				endRun(t, a, p.last)
			}
			if _, err := b.UpdateThread(t.Context(), "t", func(th *server.Thread) error { tc.change(th); return nil }); err != nil {
				t.Fatal(err)
			}
			if ok, err := a.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2); !ok || err != nil {
				t.Fatalf("create: %v, %v", ok, err)
			}
			if c := p.lastCall(); !tc.check(c.thread) {
				t.Fatalf("plan's last call read thread %+v (metadata %v); want it as stored", c.thread, c.thread.Metadata)
			}
		})
	}
}

// TestCreateRunGuessFailed checks that a creation from what the Store
// remembers whose batch fails (the run's id taken) returns the error
// and does not create the run again from a read of the thread: the plan
// is called once, and no run is inserted.
func TestCreateRunGuessFailed(t *testing.T) {
	count := &postgrestest.Counter{Apart: isNotify}
	st := guessStores(t, count, 1)[0]
	p := &guessPlan{running: true}
	for range 2 {
		if ok, err := st.CreateRunClaimedLocked(t.Context(), "t", time.Minute, p.plan2); !ok || err != nil {
			t.Fatalf("create: %v, %v", ok, err)
		}
		endRun(t, st, p.last)
	}
	taken := p.last.ID
	calls := 0
	ok, err := st.CreateRunClaimedLocked(t.Context(), "t", time.Minute, func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
		calls++
		r, g, md, err := p.plan2(th, active)
		if r != nil {
			r.ID = taken
		}
		return r, g, md, err
	})
	if ok || !errors.Is(err, server.ErrExists) {
		t.Fatalf("create with a taken id: %v, %v; want ErrExists", ok, err)
	}
	if calls != 1 {
		t.Fatalf("plan called %d times; want 1", calls)
	}
	if runs, err := st.ActiveRuns(t.Context(), "t"); err != nil || len(runs) != 0 {
		t.Fatalf("active runs %d, %v; want none", len(runs), err)
	}
}

// TestCreateRunGuessIsolation checks the one-round-trip creation, an
// implicit transaction whose guarded insert must see what was committed
// before the thread's lock was taken (READ COMMITTED: a snapshot per
// statement), against the pool's default isolation. Under READ
// UNCOMMITTED, which PostgreSQL runs as READ COMMITTED, it is made (one
// round trip). Under REPEATABLE READ or SERIALIZABLE (the transaction's
// snapshot is its first statement's, taken before the lock) the Store,
// which read the default once, makes no guess: the creation reads the
// thread in its transaction begun READ COMMITTED, and inserts the run,
// in two round trips each time, not three (a guess refused, then the
// read and the insert).
func TestCreateRunGuessIsolation(t *testing.T) {
	for _, tc := range []struct {
		isolation string
		trips     int
	}{{"read uncommitted", 1}, {"repeatable read", 2}, {"serializable", 2}} {
		t.Run(tc.isolation, func(t *testing.T) {
			_, schema := postgrestest.Schema(t, "agentserver_guess_")
			count := &postgrestest.Counter{Apart: isNotify}
			pool := postgrestest.TracedPool(t, count, func(c *pgxpool.Config) {
				c.ConnConfig.RuntimeParams["default_transaction_isolation"] = tc.isolation
			})
			st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			now := time.Now().UTC()
			if err := st.CreateThread(t.Context(), &server.Thread{ID: "t", Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			p := &guessPlan{running: true, max: 100}
			create := func() {
				t.Helper()
				if ok, err := st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan); !ok || err != nil {
					t.Fatalf("create: %v, %v; want created", ok, err)
				}
			}
			create() // the thread's first creation here reads it
			endRun(t, st, p.last)
			for i := range 3 {
				if trips, _ := trips(count, create); trips != tc.trips {
					t.Fatalf("creation %d of a remembered thread under %s: %d round trips; want %d", i+2, tc.isolation, trips, tc.trips)
				}
				r, err := st.Run(t.Context(), p.last.ID)
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != server.RunRunning || r.Worker != "w" {
					t.Fatalf("run stored %+v; want running under w", r)
				}
				endRun(t, st, p.last)
			}
		})
	}
}

// TestCreateRunGuessLostReply: when the one-round-trip creation's batch
// commits but its reply is lost (the connection cut after the commit),
// the creation reads back whether the run is there and reports it
// created, rather than failing while the run stays stored (a client
// told the creation failed would create another). A run created
// claimed is still running under its worker and attempt: its lease is
// renewed by the read, for the worker to execute it.
func TestCreateRunGuessLostReply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running bool
	}{{"claimed", true}, {"pending", false}} {
		t.Run(tc.name, func(t *testing.T) {
			direct, st, cutter := cutStores(t)
			now := time.Now().UTC()
			if err := direct.CreateThread(t.Context(), &server.Thread{ID: "t", Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			p := &guessPlan{running: tc.running, max: 100}
			if ok, err := st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan); !ok || err != nil {
				t.Fatalf("first creation: %v, %v; want created", ok, err)
			}
			endRun(t, st, p.last) // the thread is remembered, idle: the next creation is one batch
			cutter.armed.Store(true)
			ok, err := st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan)
			if n := cutter.cuts.Load(); n != 1 {
				t.Fatalf("the proxy cut %d replies; want 1 (the creation's batch)", n)
			}
			if !ok || err != nil {
				t.Fatalf("creation with its reply lost after its commit: %v, %v; want it created", ok, err)
			}
			r, err := direct.Run(t.Context(), p.last.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.running {
				if r.Status != server.RunPending {
					t.Fatalf("run stored %+v; want pending", r)
				}
				return
			}
			if r.Status != server.RunRunning || r.Worker != "w" || r.Attempt != 1 || !r.LeaseUntil.After(time.Now().Add(30*time.Second)) {
				t.Fatalf("run stored %+v; want running under w, attempt 1, its lease live", r)
			}
		})
	}
}

// TestCreateRunGuessLostReplyWaiting: a creation's batch waits for the
// thread's lock, held by another connection, when its connection is cut
// (a proxy's reset, the caller's context live). PostgreSQL does not
// notice the closed socket while the batch waits: the read-back must
// not read before that backend is gone, or the batch would insert the
// run once the lock is released, after the creation reported it failed
// (a client retrying creates it twice; a claimed run is left unrun
// until its lease expires). What the creation reports is what is
// stored, once the lock is released and the backend gone.
func TestCreateRunGuessLostReplyWaiting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running bool
	}{{"claimed", true}, {"pending", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			direct, st, cutter, pool, schema := cutStoresPool(t)
			now := time.Now().UTC()
			if err := direct.CreateThread(ctx, &server.Thread{ID: "t", Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			p := &guessPlan{running: tc.running, max: 100}
			if ok, err := st.CreateRunClaimedCountActive(ctx, "t", "alice", time.Minute, p.plan); !ok || err != nil {
				t.Fatalf("first creation: %v, %v; want created", ok, err)
			}
			endRun(t, st, p.last) // the thread is remembered, idle: the next creation is one batch
			first := p.last.ID
			other, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Release()
			tx, err := other.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			var otherPID int32
			if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&otherPID); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `SELECT `+pglease.XactLock(pgdb.Table(schema, "agentserver_locks"), "$1::text"), "t"); err != nil {
				t.Fatal(err)
			}
			type result struct {
				ok  bool
				err error
			}
			done := make(chan result, 1)
			go func() {
				ok, err := st.CreateRunClaimedCountActive(ctx, "t", "alice", time.Minute, p.plan)
				done <- result{ok, err}
			}()
			var waiter int32
			for deadline := time.Now().Add(30 * time.Second); waiter == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the creation's batch never waited for the thread's lock")
				}
				err := pool.QueryRow(ctx, `SELECT COALESCE(max(pid), 0) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, otherPID).Scan(&waiter)
				if err != nil {
					t.Fatal(err)
				}
				if waiter == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			cutter.dropCancels.Store(true) // the network lost the connection: pgx's cancel request is lost too
			cutter.cutAll()
			res := <-done
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			// The batch's backend, if it outlived the creation, has
			// taken the lock and committed or rolled back once it is
			// gone.
			for deadline := time.Now().Add(30 * time.Second); ; {
				var there bool
				if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, waiter).Scan(&there); err != nil {
					t.Fatal(err)
				}
				if !there {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("backend %d of the cut creation still there", waiter)
				}
				time.Sleep(time.Millisecond)
			}
			var runs []string
			rows, err := pool.Query(ctx, `SELECT id FROM `+pgdb.Table(schema, "agentserver_runs")+` WHERE thread_id = 't' AND id <> $1`, first)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				runs = append(runs, id)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if res.ok != (len(runs) == 1) || res.ok != (res.err == nil) || len(runs) > 1 {
				t.Fatalf("creation cut while waiting for the thread's lock: %v, %v; runs stored since: %v", res.ok, res.err, runs)
			}
		})
	}
}

// TestCreateRunGuessLostReplyCancelled: a creation whose batch
// committed but whose context ended as its reply was lost (the most
// common unknown outcome: a deadline mid-batch) reads back whether the
// run is there all the same, and reports it created.
func TestCreateRunGuessLostReplyCancelled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running bool
	}{{"claimed", true}, {"pending", false}} {
		t.Run(tc.name, func(t *testing.T) {
			direct, st, cutter := cutStores(t)
			now := time.Now().UTC()
			if err := direct.CreateThread(t.Context(), &server.Thread{ID: "t", Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			p := &guessPlan{running: tc.running, max: 100}
			if ok, err := st.CreateRunClaimedCountActive(t.Context(), "t", "alice", time.Minute, p.plan); !ok || err != nil {
				t.Fatalf("first creation: %v, %v; want created", ok, err)
			}
			endRun(t, st, p.last)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			cutter.onCut = cancel
			cutter.armed.Store(true)
			ok, err := st.CreateRunClaimedCountActive(ctx, "t", "alice", time.Minute, p.plan)
			if n := cutter.cuts.Load(); n != 1 {
				t.Fatalf("the proxy cut %d replies; want 1 (the creation's batch)", n)
			}
			if !ok || err != nil {
				t.Fatalf("creation committed, its context cancelled as its reply was lost: %v, %v; want it created", ok, err)
			}
			r, err := direct.Run(t.Context(), p.last.ID)
			if err != nil {
				t.Fatal(err)
			}
			if tc.running && (r.Status != server.RunRunning || r.Worker != "w" || r.Attempt != 1 || !r.LeaseUntil.After(time.Now().Add(30*time.Second))) {
				t.Fatalf("run stored %+v; want running under w, attempt 1, its lease live", r)
			}
		})
	}
}
