package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// barrierStore is a Store, with every optional interface of its, whose
// first k counts of active runs, once read, wait until all k have been
// read: k run creations count at the same moment. A count made by a
// creation's read (CreateRunClaimedCountActive) waits in its plan, with the
// read's transaction open.
type barrierStore struct {
	*postgres.Store
	mu   sync.Mutex
	k, n int
	all  chan struct{}
}

func (s *barrierStore) CountActiveRuns(ctx context.Context, owner string) (int, error) {
	n, err := s.Store.CountActiveRuns(ctx, owner)
	if err != nil {
		return 0, err
	}
	if err := s.arrive(ctx); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *barrierStore) CreateRunClaimedCountActive(ctx context.Context, threadID, owner string, lease time.Duration, plan func(*server.Thread, []*server.Run, int) (*server.Run, string, map[string]any, error)) (bool, error) {
	return s.Store.CreateRunClaimedCountActive(ctx, threadID, owner, lease, func(t *server.Thread, active []*server.Run, n int) (*server.Run, string, map[string]any, error) {
		if err := s.arrive(ctx); err != nil {
			return nil, "", nil, err
		}
		return plan(t, active, n)
	})
}

// arrive waits, for the first k counts, until all k have been read.
func (s *barrierStore) arrive(ctx context.Context) error {
	s.mu.Lock()
	s.n++
	i := s.n
	if i == s.k {
		close(s.all)
	}
	s.mu.Unlock()
	if i > s.k {
		return nil
	}
	select {
	case <-s.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// serveHeld serves, with cfg over HTTP, the one-node graph "held" whose
// node waits until the test ends (or its run is cancelled).
func serveHeld(t *testing.T, cfg server.Config) string {
	t.Helper()
	release := make(chan struct{})
	hs := serveGreet(t, cfg, "held", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		select {
		case <-release:
		case <-ctx.Done():
			return graph.Update[greeting]{}, ctx.Err()
		}
		return greetingReply.Set("hi " + s.Name), nil
	})
	t.Cleanup(func() { close(release) }) // before serveGreet's Close, which runs after
	return hs.URL
}

// postJSON sends body and returns the status and the answer; safe from
// several goroutines (an error returns code 0 and its text).
func postJSON(ctx context.Context, url, body string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// heldThread creates a thread at url.
func heldThread(t *testing.T, url string) string {
	t.Helper()
	code, body := postJSON(t.Context(), url+"/threads", `{}`)
	var th createdThread
	if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
		t.Fatalf("POST /threads: %d %s", code, body)
	}
	return th.ID
}

// TestMaxActiveRunsConcurrentCreations: on PostgreSQL, 8 run creations
// of one principal on 8 threads that count its active runs at the same
// moment (each sees none), with Config.MaxActiveRuns 3: exactly 3 runs
// are created, the others refused with 429. Before, each creation's count
// passed and all 8 were created.
func TestMaxActiveRunsConcurrentCreations(t *testing.T) {
	const burst, bound = 8, 3
	_, schema := postgrestest.Schema(t, "agentserver_active_")
	// The burst's creations wait for each other with their reads'
	// transactions open: a connection each.
	pool := postgrestest.TracedPool(t, nil, func(c *pgxpool.Config) { c.MaxConns = 2 * burst })
	pst, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pst.Close)
	st := &barrierStore{Store: pst, k: burst, all: make(chan struct{})}
	url := serveHeld(t, server.Config{Store: st, MaxActiveRuns: bound, SweepInterval: time.Hour})
	paths := make([]string, burst)
	for i := range paths {
		paths[i] = url + "/threads/" + heldThread(t, url) + "/runs"
	}
	codes, bodies := make([]int, burst), make([]string, burst)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], bodies[i] = postJSON(t.Context(), p, `{"assistant_id":"held","input":{"name":"x"}}`)
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
	if n, err := pst.CountActiveRuns(t.Context(), ""); err != nil || n != created {
		t.Errorf("active runs after the burst: %d, %v; want the %d created", n, err, created)
	}
}

// TestMaxActiveRunsStrategies: on PostgreSQL, with Config.MaxActiveRuns 2
// reached on one thread (a running run and one queued behind it), a run
// with multitask_strategy interrupt or rollback on that thread is
// accepted (it cancels both, which makes room; it was refused with 429);
// at the bound enqueue on that thread answers 429, reject on it 409 (the
// thread is busy), and a run on another thread 429.
func TestMaxActiveRunsStrategies(t *testing.T) {
	for _, strategy := range []string{"interrupt", "rollback"} {
		t.Run(strategy, func(t *testing.T) {
			_, schema := postgrestest.Schema(t, "agentserver_active_")
			st, err := postgres.New(t.Context(), postgres.Config{DSN: postgrestest.DSN(), Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			url := serveHeld(t, server.Config{Store: st, MaxActiveRuns: 2, SweepInterval: time.Hour})
			t1, t2 := heldThread(t, url), heldThread(t, url)
			run := func(tid, strategy string) (int, string) {
				return postJSON(t.Context(), url+"/threads/"+tid+"/runs", fmt.Sprintf(`{"assistant_id":"held","input":{"name":"x"},"multitask_strategy":%q}`, strategy))
			}
			for _, s := range []string{"reject", "enqueue"} {
				if code, b := run(t1, s); code != 200 {
					t.Fatalf("run (%s) under the bound: %d %s", s, code, b)
				}
			}
			for _, c := range []struct {
				tid, strategy string
				want          int
			}{
				{t1, "enqueue", http.StatusTooManyRequests},
				{t1, "reject", http.StatusConflict},
				{t2, strategy, http.StatusTooManyRequests},
			} {
				if code, b := run(c.tid, c.strategy); code != c.want {
					t.Errorf("at the bound, %s on thread %s: %d %s; want %d", c.strategy, c.tid, code, b, c.want)
				}
			}
			if code, b := run(t1, strategy); code != 200 {
				t.Errorf("at the bound, %s on the thread whose 2 runs it cancels: %d %s; want 200", strategy, code, b)
			}
		})
	}
}
