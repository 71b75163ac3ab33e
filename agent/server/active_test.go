package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// countBarrier holds the first k counts of active runs, once read, until
// all k have been read, so that k run creations count at the same
// moment: each sees the runs stored before any of them. Later counts
// pass.
type countBarrier struct {
	mu   sync.Mutex
	k, n int
	all  chan struct{}
}

func newCountBarrier(k int) *countBarrier { return &countBarrier{k: k, all: make(chan struct{})} }

// wait is called by a count once it has read the store.
func (b *countBarrier) wait(ctx context.Context) error {
	b.mu.Lock()
	b.n++
	n := b.n
	if n == b.k {
		close(b.all)
	}
	b.mu.Unlock()
	if n > b.k {
		return nil
	}
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// barrierMemory and barrierSQLite are the memory and SQLite stores, with
// every optional interface of theirs, whose counts of active runs pass
// a countBarrier.
type barrierMemory struct {
	*server.MemoryStore
	b *countBarrier
}

func (s barrierMemory) CountActiveRuns(ctx context.Context, owner string) (int, error) {
	n, err := s.MemoryStore.CountActiveRuns(ctx, owner)
	if err != nil {
		return 0, err
	}
	return n, s.b.wait(ctx)
}

type barrierSQLite struct {
	*server.SQLiteStore
	b *countBarrier
}

func (s barrierSQLite) CountActiveRuns(ctx context.Context, owner string) (int, error) {
	n, err := s.SQLiteStore.CountActiveRuns(ctx, owner)
	if err != nil {
		return 0, err
	}
	return n, s.b.wait(ctx)
}

// boundStores opens the memory and SQLite stores, and the memory store as
// a CountingClaimer (claimingMemory, whose creations count in their
// read), each with its counts of active runs passing b.
var boundStores = map[string]func(t *testing.T, b *countBarrier) server.Store{
	"memory": func(_ *testing.T, b *countBarrier) server.Store {
		return barrierMemory{server.NewMemoryStore(), b}
	},
	"claiming": func(_ *testing.T, b *countBarrier) server.Store {
		return newClaimingMemory(b)
	},
	"sqlite": func(t *testing.T, b *countBarrier) server.Store {
		st, err := server.OpenSQLite(t.Context(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return barrierSQLite{st, b}
	},
}

// post sends a JSON body and returns the status and the answer's body;
// it is safe to call from several goroutines (errors return code 0).
func post(ctx context.Context, url string, body any) (int, string) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(string(b)))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestMaxActiveRunsConcurrentCreations: 8 run creations of one principal
// that count its active runs at the same moment (each sees none) on 8
// threads, and 8 stateless ones, with Config.MaxActiveRuns 3: exactly 3
// runs are created, the others refused with 429, and the principal has
// 3 active runs. Before, each creation's count passed and all 8 were
// created. On the stores of boundStores.
func TestMaxActiveRunsConcurrentCreations(t *testing.T) {
	const burst, bound = 8, 3
	for name, open := range boundStores {
		for _, stateless := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stateless=%v", name, stateless), func(t *testing.T) {
				b := newCountBarrier(burst)
				st := open(t, b)
				ts := newTestServer(t, server.Config{Store: st, MaxActiveRuns: bound})
				paths := make([]string, burst)
				for i := range paths {
					paths[i] = "/runs"
					if !stateless {
						var th map[string]any
						if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
							t.Fatalf("POST /threads: %d", code)
						}
						tid := th["thread_id"].(string)
						t.Cleanup(func() { ts.gates.release(tid) })
						paths[i] = "/threads/" + tid + "/runs"
					}
				}
				codes := make([]int, burst)
				bodies := make([]string, burst)
				var wg sync.WaitGroup
				for i, p := range paths {
					wg.Add(1)
					go func() {
						defer wg.Done()
						codes[i], bodies[i] = post(t.Context(), ts.URL+p, map[string]any{"assistant_id": "slow", "input": humanInput("x")})
					}()
				}
				wg.Wait()
				created := 0
				for i, c := range codes {
					switch {
					case c == 200:
						created++
					case c != http.StatusTooManyRequests || !strings.Contains(bodies[i], "Config.MaxActiveRuns"):
						t.Errorf("creation %d: %d %s; want 200 or 429 naming Config.MaxActiveRuns", i, c, bodies[i])
					}
				}
				if created != bound {
					t.Errorf("%d of %d concurrent creations were created with MaxActiveRuns %d; want %d", created, burst, bound, bound)
				}
				if n, err := st.(server.OwnerCounter).CountActiveRuns(t.Context(), ""); err != nil || n != created {
					t.Errorf("active runs after the burst: %d, %v; want the %d created", n, err, created)
				}
				// A CountingClaimer's stateful creations count in their
				// read; stateless ones (checked before their thread
				// exists) count apart.
				if cm, ok := st.(*claimingMemory); ok {
					if n := cm.countedInRead.Load(); stateless != (n == 0) {
						t.Errorf("%d creations counted in their read (stateless %v); want some when stateful, none when stateless", n, stateless)
					}
				}
				releaseStateless(t, ts, st)
			})
		}
	}
}

// releaseStateless releases the slow nodes of the stateless runs' threads.
func releaseStateless(t *testing.T, ts *testServer, st server.Store) {
	t.Helper()
	ths, _, err := st.SearchThreads(t.Context(), server.ThreadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ths {
		t.Cleanup(func() { ts.gates.release(th.ID) })
	}
}

// TestMaxActiveRunsStrategies: with Config.MaxActiveRuns 2 reached on
// one thread (a running run and one queued behind it), a run with
// multitask_strategy interrupt or rollback on that thread is accepted:
// it cancels both, which makes room for it (it was refused with 429). At
// the bound, enqueue on that thread (which would add a run) is refused
// with 429, reject on it with 409 (the thread is busy: a refusal of its
// own, which it answers first), and any run on another thread, or a
// stateless one, with 429. On the stores of boundStores.
func TestMaxActiveRunsStrategies(t *testing.T) {
	for name, open := range boundStores {
		for _, strategy := range []string{"interrupt", "rollback"} {
			t.Run(name+"/"+strategy, func(t *testing.T) {
				st := open(t, newCountBarrier(0))
				ts := newTestServer(t, server.Config{Store: st, MaxActiveRuns: 2})
				newThread := func() string {
					var th map[string]any
					if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
						t.Fatalf("POST /threads: %d", code)
					}
					tid := th["thread_id"].(string)
					t.Cleanup(func() { ts.gates.release(tid) })
					return tid
				}
				t1, t2 := newThread(), newThread()
				run := func(tid, strategy string) (int, string) {
					path := "/runs"
					if tid != "" {
						path = "/threads/" + tid + "/runs"
					}
					var e struct {
						Detail string `json:"detail"`
					}
					code := do(t, "POST", ts.URL+path, map[string]any{"assistant_id": "slow", "input": humanInput("x"), "multitask_strategy": strategy}, nil, &e)
					return code, e.Detail
				}
				for _, s := range []string{"reject", "enqueue"} {
					if code, d := run(t1, s); code != 200 {
						t.Fatalf("run (%s) under the bound: %d %s", s, code, d)
					}
				}
				for _, c := range []struct {
					tid, strategy string
					want          int
				}{
					{t1, "enqueue", http.StatusTooManyRequests},
					{t1, "reject", http.StatusConflict},
					{t2, "reject", http.StatusTooManyRequests},
					{t2, strategy, http.StatusTooManyRequests},
					{"", "reject", http.StatusTooManyRequests},
				} {
					if code, d := run(c.tid, c.strategy); code != c.want {
						t.Errorf("at the bound, %s on thread %q: %d %s; want %d", c.strategy, c.tid, code, d, c.want)
					}
				}
				if code, d := run(t1, strategy); code != 200 {
					t.Errorf("at the bound, %s on the thread whose 2 runs it cancels: %d %s; want 200", strategy, code, d)
				}
				if _, n, err := st.SearchThreads(t.Context(), server.ThreadQuery{}); err != nil || n != 2 {
					t.Errorf("threads after the refusals: %d, %v; want the 2 made (a refused stateless run leaves none)", n, err)
				}
			})
		}
	}
}

// claimingMemory is the memory store as a [server.CountingClaimer]:
// each *Locked method takes the thread's lock (held elsewhere:
// ErrThreadLocked) and makes its reads and writes under it, and
// CreateRunClaimedCountActive counts the owner's active runs there, passing
// b as barrierMemory's counts do. It takes the server down the path of
// the PostgreSQL store's runs (a run created claimed, a count in the
// creation's read) without PostgreSQL.
type claimingMemory struct {
	barrierMemory
	mu    sync.Mutex
	locks map[string]chan struct{} // a thread's lock: held while it holds a value
	// countedInRead counts the calls of CreateRunClaimedCountActive: the
	// creations that counted in their read.
	countedInRead atomic.Int64
}

var (
	_ server.CountingClaimer = (*claimingMemory)(nil)
	// A CountingClaimer is an OwnerCounter, which the server needs to
	// bound a principal's active runs at all: a store that counted only
	// in a creation's read would leave them unbounded.
	_ server.OwnerCounter = server.CountingClaimer(nil)
)

func newClaimingMemory(b *countBarrier) *claimingMemory {
	return &claimingMemory{barrierMemory: barrierMemory{server.NewMemoryStore(), b}, locks: map[string]chan struct{}{}}
}

// lock returns the thread's lock.
func (s *claimingMemory) lock(threadID string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.locks[threadID]
	if l == nil {
		l = make(chan struct{}, 1)
		s.locks[threadID] = l
	}
	return l
}

func (s *claimingMemory) LockThread(ctx context.Context, threadID string) (func(), error) {
	l := s.lock(threadID)
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// tryLock takes the thread's lock if it is free: ErrThreadLocked if not.
func (s *claimingMemory) tryLock(threadID string) (func(), error) {
	l := s.lock(threadID)
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	default:
		return nil, server.ErrThreadLocked
	}
}

func (s *claimingMemory) ThreadActive(ctx context.Context, threadID string) (*server.Thread, []*server.Run, error) {
	t, err := s.Thread(ctx, threadID)
	if err != nil {
		return nil, nil, err
	}
	active, err := s.ActiveRuns(ctx, threadID)
	return t, active, err
}

func (s *claimingMemory) ClaimThread(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, *server.Thread, error) {
	r, err := s.Claim(ctx, threadID, worker, lease)
	if r == nil || err != nil {
		return nil, nil, err
	}
	t, err := s.Thread(ctx, threadID)
	return r, t, err
}

func (s *claimingMemory) CreateRunBusy(ctx context.Context, r *server.Run, graphID string, md map[string]any) error {
	if _, err := s.Thread(ctx, r.ThreadID); err != nil {
		return err
	}
	if err := s.CreateRun(ctx, r); err != nil {
		return err
	}
	_, err := s.UpdateThread(ctx, r.ThreadID, func(t *server.Thread) error {
		t.Status, t.UpdatedAt, t.GraphID = server.ThreadBusy, r.UpdatedAt, graphID
		maps.Copy(t.Metadata, md)
		return nil
	})
	return err
}

func (s *claimingMemory) StartRun(ctx context.Context, runID, start string) (*server.Run, error) {
	return s.UpdateRun(ctx, runID, func(r *server.Run) error {
		if !r.Started {
			r.Started, r.Start = true, start
		}
		return nil
	})
}

func (s *claimingMemory) EndRun(ctx context.Context, runID, status, msg string, at time.Time) (*server.Run, error) {
	return s.UpdateRun(ctx, runID, func(r *server.Run) error {
		r.Status, r.Error, r.UpdatedAt, r.Worker, r.LeaseUntil = status, msg, at, "", time.Time{}
		return nil
	})
}

func (s *claimingMemory) RefreshThread(ctx context.Context, threadID string, f server.ThreadRefresh) (int, error) {
	active, err := s.ActiveRuns(ctx, threadID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range active {
		if !slices.Contains(f.Exclude, r.ID) {
			n++
		}
	}
	_, err = s.UpdateThread(ctx, threadID, func(t *server.Thread) error {
		f.Apply(t, n)
		return nil
	})
	if errors.Is(err, server.ErrNotFound) {
		return 0, nil
	}
	return n, err
}

func (s *claimingMemory) CreateRunLocked(ctx context.Context, threadID string, plan func(t *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error) {
	return s.CreateRunClaimedLocked(ctx, threadID, 0, plan)
}

func (s *claimingMemory) CreateRunClaimedLocked(ctx context.Context, threadID string, lease time.Duration, plan func(t *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error) {
	return s.create(ctx, threadID, nil, lease, func(t *server.Thread, active []*server.Run, _ int) (*server.Run, string, map[string]any, error) {
		return plan(t, active)
	})
}

func (s *claimingMemory) CreateRunClaimedCountActive(ctx context.Context, threadID, owner string, lease time.Duration, plan func(t *server.Thread, active []*server.Run, activeRuns int) (*server.Run, string, map[string]any, error)) (bool, error) {
	s.countedInRead.Add(1)
	return s.create(ctx, threadID, &owner, lease, plan)
}

// create is CreateRunClaimedCountActive, counting the active runs of *owner
// only when owner is not nil.
func (s *claimingMemory) create(ctx context.Context, threadID string, owner *string, lease time.Duration, plan func(t *server.Thread, active []*server.Run, activeRuns int) (*server.Run, string, map[string]any, error)) (bool, error) {
	unlock, err := s.tryLock(threadID)
	if err != nil {
		return false, err
	}
	defer unlock()
	t, active, err := s.ThreadActive(ctx, threadID)
	if errors.Is(err, server.ErrNotFound) {
		t, err = nil, nil
	}
	if err != nil {
		return false, err
	}
	// plan is passed only what CreateRunLocked promises it, as the
	// PostgreSQL store reads it: a field the server came to need beyond
	// it fails the tests on this store.
	if t != nil {
		t = &server.Thread{ID: t.ID, Owner: t.Owner, Metadata: t.Metadata, GraphID: t.GraphID, Head: t.Head, Rolled: t.Rolled}
	}
	for i, r := range active {
		active[i] = &server.Run{ID: r.ID, ThreadID: r.ThreadID, Status: r.Status}
	}
	n := 0
	if owner != nil {
		if n, err = s.CountActiveRuns(ctx, *owner); err != nil {
			return false, err
		}
	}
	r, graphID, md, err := plan(t, active, n)
	if r == nil || err != nil {
		return false, err
	}
	if r.Status == server.RunRunning {
		r.LeaseUntil = time.Now().Add(lease)
	}
	return true, s.CreateRunBusy(ctx, r, graphID, md)
}

func (s *claimingMemory) ClaimThreadLocked(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, *server.Thread, error) {
	unlock, err := s.tryLock(threadID)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	return s.ClaimThread(ctx, threadID, worker, lease)
}

func (s *claimingMemory) FinishRunLocked(ctx context.Context, e server.RunEnd) (int, server.Event, error) {
	unlock, err := s.tryLock(e.ThreadID)
	if err != nil {
		return 0, server.Event{}, err
	}
	defer unlock()
	if e.Worker != "" {
		r, err := s.Run(ctx, e.RunID)
		if err == nil && (r.Status != server.RunRunning || r.Worker != e.Worker || r.Attempt != e.Attempt) {
			err = server.ErrLeaseLost
		}
		if err != nil && !errors.Is(err, server.ErrNotFound) {
			return 0, server.Event{}, err
		}
	}
	active, err := s.RefreshThread(ctx, e.ThreadID, e.Refresh)
	if err != nil {
		return 0, server.Event{}, err
	}
	_, ev, err := s.EndRunEvent(ctx, e)
	return active, ev, err
}
