package postgres_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestServerRepeatableReadDefault runs a server whose Store's pool runs
// its sessions REPEATABLE READ (a database's or role's
// default_transaction_isolation): the Store's one-round-trip claims and
// ends under the thread's lock, which need READ COMMITTED, return
// ErrThreadLocked, and the server takes the lock with LockThread and
// records them step by step (the Store sends none of the statements
// that read the lease under the lock: ClaimThreadLocked's claim and
// FinishRunLocked's end, which begin "WITH f AS"). A run, then one that blocks while three
// more are enqueued behind it (each claimed in turn at the end of the
// one before), all end successfully, in order, each with its end event;
// the thread ends idle with the last run's values, and no lease of
// LockThread's is left.
func TestServerRepeatableReadDefault(t *testing.T) {
	base, schema := postgrestest.Schema(t, "agentserver_iso_")
	count := &postgrestest.Counter{}
	pool := postgrestest.TracedPool(t, count, func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["default_transaction_isolation"] = "repeatable read"
	})
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: base, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	hs := serveGreet(t, server.Config{Store: st, Checkpointer: saver, SweepInterval: time.Hour}, "greet",
		func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
			if s.Name == "block" {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return graph.Update[greeting]{}, ctx.Err()
				}
			}
			return greetingReply.Set("hi " + s.Name), nil
		})
	resp, err := http.Post(hs.URL+"/threads", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var th createdThread
	if err := jsonDecode(resp, &th); err != nil {
		t.Fatal(err)
	}
	post := func(name string) string {
		t.Helper()
		resp, err := http.Post(hs.URL+"/threads/"+th.ID+"/runs", "application/json",
			strings.NewReader(fmt.Sprintf(`{"assistant_id":"greet","input":{"name":%q},"multitask_strategy":"enqueue"}`, name)))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID string `json:"run_id"`
		}
		if err := jsonDecode(resp, &r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	ended := func(id string) func() bool {
		return func() bool {
			r, err := st.Run(t.Context(), id)
			return err == nil && finishedStatus(r.Status)
		}
	}
	first := post("a")
	waitFor(t, "the first run's end", ended(first))
	ids := []string{first, post("block")}
	<-entered
	for _, name := range []string{"q1", "q2", "q3"} {
		ids = append(ids, post(name))
	}
	close(release)
	for _, id := range ids {
		waitFor(t, "run "+id+"'s end", ended(id))
	}
	var prev time.Time
	for i, id := range ids {
		r, err := st.Run(t.Context(), id)
		if err != nil || r.Status != server.RunSuccess {
			t.Fatalf("run %d %s: %+v, %v; want success", i, id, r, err)
		}
		if i > 1 && r.UpdatedAt.Before(prev) {
			t.Errorf("run %d ended at %v, before the run ahead of it (%v)", i, r.UpdatedAt, prev)
		}
		prev = r.UpdatedAt
		evs, _, err := st.Events(t.Context(), id, -1, 0)
		if err != nil || len(evs) == 0 || evs[len(evs)-1].Name != "end" {
			t.Fatalf("run %d's events %+v, %v; want the end event last", i, evs, err)
		}
	}
	waitFor(t, "the thread idle", func() bool {
		got, err := st.Thread(t.Context(), th.ID)
		return err == nil && got.Status == server.ThreadIdle
	})
	got, err := st.Thread(t.Context(), th.ID)
	if err != nil || !strings.Contains(string(got.Values), "hi q3") {
		t.Fatalf("thread %+v, %v; want the last run's values", got, err)
	}
	for sql, n := range count.Snapshot().SQL {
		if strings.HasPrefix(sql, "WITH f AS") {
			t.Errorf("the Store sent %d times %q, a statement that reads the thread's lease under its lock in a batch without BEGIN, under REPEATABLE READ", n, sql)
		}
	}
	// The last end's lease is released after the end is recorded.
	locks := pgx.Identifier{schema, "agentserver_locks"}.Sanitize()
	waitFor(t, "no live lease", func() bool {
		var leases int
		err := base.QueryRow(t.Context(), `SELECT count(*) FROM `+locks+` WHERE until > clock_timestamp()`).Scan(&leases)
		return err == nil && leases == 0
	})
}

// TestClaimRepeatableReadConcurrent: two claims of a thread's one
// pending run on a pool whose sessions run REPEATABLE READ (the
// step-by-step path a server takes there) race for the thread's row:
// one claims the run, the other claims nothing, and neither fails (the
// later claim's snapshot, taken before the first committed, must not
// turn into a serialization failure).
func TestClaimRepeatableReadConcurrent(t *testing.T) {
	base, schema := postgrestest.Schema(t, "agentserver_iso_")
	ctx := t.Context()
	pool := postgrestest.TracedPool(t, &postgrestest.Counter{}, func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["default_transaction_isolation"] = "repeatable read"
	})
	st, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	at := time.Now().UTC().Add(-time.Hour)
	if err := st.CreateThread(ctx, &server.Thread{ID: "t", Owner: "o", Status: server.ThreadBusy, CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &server.Run{ID: "r", ThreadID: "t", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"}); err != nil {
		t.Fatal(err)
	}
	// A third connection holds the thread's row while both claims start.
	tx, err := base.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var holder int32
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM `+pgx.Identifier{schema, "agentserver_threads"}.Sanitize()+` WHERE id = 't' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type claimed struct {
		r   *server.Run
		err error
	}
	out := make(chan claimed, 2)
	for _, w := range []string{"w1", "w2"} {
		go func() {
			r, _, err := st.ClaimThread(ctx, "t", w, time.Minute)
			out <- claimed{r, err}
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		// The first waits for the holder, the second for the first.
		if err := base.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid <> $1 AND cardinality(pg_blocking_pids(pid)) > 0
			AND strpos(query, $2) > 0`, holder, schema).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d claims waiting for the thread's row; want 2", n)
		}
		time.Sleep(time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var runs int
	for range 2 {
		c := <-out
		if c.err != nil {
			t.Fatalf("concurrent claim under REPEATABLE READ: %v; want a run or nothing", c.err)
		}
		if c.r != nil {
			runs++
		}
	}
	if runs != 1 {
		t.Fatalf("%d claims took the run; want 1", runs)
	}
}
