package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

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

// boundStores opens the memory and SQLite stores, each with its counts
// of active runs passing b.
var boundStores = map[string]func(t *testing.T, b *countBarrier) server.Store{
	"memory": func(_ *testing.T, b *countBarrier) server.Store {
		return barrierMemory{server.NewMemoryStore(), b}
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
// created. On the memory and SQLite stores.
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
// stateless one, with 429. On the memory and SQLite stores.
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
