package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestStartRunEventNotifies: StartRunEvent tells the other instances of
// the event it appended, as AppendEvent does (their streams of the run
// wake for it), and leaves the connection's synchronous_commit as it was.
func TestStartRunEventNotifies(t *testing.T) {
	_, schema := postgrestest.Schema(t, "agentserver_test_")
	cfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	a, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b := open2(t, schema)
	var mu sync.Mutex
	seen := map[string]bool{}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = b.WatchRuns(ctx, func(runID string) { mu.Lock(); seen[runID] = true; mu.Unlock() })
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })

	var want string
	if err := pool.QueryRow(t.Context(), `SHOW synchronous_commit`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := a.CreateThread(t.Context(), &server.Thread{ID: "t1", Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	// A run created before the watch listens is not the test's; the
	// watch is up once it saw one made after it started.
	for i := 0; ; i++ {
		id := "warm" + time.Now().Format("150405.000000")
		if err := a.CreateRun(t.Context(), &server.Run{ID: id, ThreadID: "t1", Status: server.RunPending, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.UpdateRun(t.Context(), id, func(*server.Run) error { return nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		ok := seen[id]
		mu.Unlock()
		if ok {
			break
		}
		if i > 1500 {
			t.Fatal("the other Store's watch saw no change in 30s")
		}
	}
	if err := a.CreateRun(t.Context(), &server.Run{ID: "r1", ThreadID: "t1", Status: server.RunRunning, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.StartRunEvent(t.Context(), "r1", "cp", "metadata", json.RawMessage(`{}`), 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other Store told of the start's event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["r1"]
	})
	var got string
	if err := pool.QueryRow(t.Context(), `SHOW synchronous_commit`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("synchronous_commit after StartRunEvent on its connection: %q; want %q as before: the setting is the start's transaction's alone", got, want)
	}
}

// open2 returns a second Store on schema, on a pool of its own.
func open2(t *testing.T, schema string) *postgres.Store {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// failingStarter is a Store whose StartRunEvent fails, as its statement
// can (the database gone for a moment).
type failingStarter struct{ *postgres.Store }

func (failingStarter) StartRunEvent(context.Context, string, string, string, json.RawMessage, int) (string, server.Event, error) {
	return "", server.Event{}, errors.New("start failed")
}

// TestFailedStartKeepsMetadata: when StartRunEvent fails, the run ends
// with an error and its stream still begins with the metadata event, as
// a run of a store without RunStarter does.
func TestFailedStartKeepsMetadata(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_start_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	hs, th := serveTrivial(t, server.Config{Store: failingStarter{st}})
	resp, err := http.Post(hs.URL+"/threads/"+th.ID+"/runs/stream", "application/json",
		strings.NewReader(`{"assistant_id":"trivial","input":{"name":"x"},"stream_mode":["values"]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
	}
	// The start's failure is the store's: the client is told of an
	// internal error under an error_id, its cause goes to the log.
	if !slices.Equal(names, []string{"metadata", "error"}) || !strings.Contains(string(body), "error_id") || strings.Contains(string(body), "start failed") {
		t.Fatalf("stream %q; want a metadata event, then an internal error with an error_id (not the store's text)", body)
	}
}
