package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// isNotify reports whether sql is pgnotify.Sender's statement: the
// notifications sent after commit (its own transaction, off the run's
// path), which the counters of TestStatementsPerRun count apart.
func isNotify(sql string) bool { return strings.HasPrefix(sql, "SELECT count(pg_notify(") }

// isCountBytes picks out the read of a principal's sum of thread bytes
// (Store.CountBytes), which a server makes at most once a second per
// principal (Config.MaxThreadBytes).
func isCountBytes(sql string) bool {
	return strings.HasPrefix(sql, "SELECT coalesce(sum(bytes + subgraph_bytes)")
}

// Bounds pinned by TestStatementsPerRun: what one background run of a
// one-node graph costs the Store, on average, on one instance. The
// thread's lock is taken and released inside the transactions of the
// run's creation and end (server.LockingRecorder), as a
// transaction-level advisory lock: no round trip or transaction of its
// own, and no row written. A transaction of one round trip is a batch
// without BEGIN or COMMIT (PostgreSQL runs a batch as one implicit
// transaction). The store's 6 statements: the run's creation, which
// claims it too (server.RunClaimer: a transaction of one round trip, as
// the Store created the thread's last run: the lock's take and the
// run's insert, running under this instance's lease, that marks its
// thread busy, made only if the thread's record, its active runs (none)
// and the principal's pending and running runs (Config.MaxActiveRuns,
// server.CountingClaimer) are as the Store remembers them from that
// creation; one batch, without BEGIN or COMMIT), its start (one statement that marks the run started and
// appends its metadata event, server.RunStarter, committed without a
// WAL flush wait), its values event, and its end (one batch: the lock's
// take, the statement that refreshes the thread, appends the end event
// and ends the run): 4 round trips, 4 transactions (the count had a
// statement, a round trip and an implicit transaction of its own before
// the creation's read made it; the creation read the thread in a round
// trip of its own before it remembered it). The
// saver's 3: one read of
// the thread's latest checkpoint (the server's, for the run's start,
// which the graph's run starts from with graph.ContinueFrom instead of
// reading it again) and the run's two checkpoint writes; the state the
// run ends in comes from its last values event, not from a third read.
// The one notification is the run's end (its events notify from their
// own statement; the end event is announced by the run's end's). The
// saver's fourth is the count of the thread's checkpoint bytes at the
// run's end (checkpoint.UsageReporter, Config.MaxThreadBytes), recorded
// in the end's statement. The read of the principal's sum of those bytes
// (Store.CountBytes) is made at most once a second per principal, not
// per run: it is counted apart (isCountBytes).
const (
	maxStatementsPerRun = 6
	maxTripsPerRun      = 4
	maxTxsPerRun        = 4
	maxSaverPerRun      = 4
	maxNotifiesPerRun   = 1
)

// createdThread is a thread as POST /threads returns it.
type createdThread struct {
	ID string `json:"thread_id"`
}

// serveTrivial serves the one-node graph "trivial" with cfg over HTTP,
// until the test ends, and creates a thread on it.
func serveTrivial(t *testing.T, cfg server.Config) (*httptest.Server, createdThread) {
	t.Helper()
	hs := serveGreet(t, cfg, "trivial", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
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
	return hs, th
}

// serveGreet serves, with cfg over HTTP until the test ends, the
// one-node graph name whose node is greet.
func serveGreet(t *testing.T, cfg server.Config, name string, greet func(context.Context, greeting) (graph.Update[greeting], error)) *httptest.Server {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[greeting]()
	g.AddNode("greet", greet)
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, name, app); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close(context.Background()) })
	return hs
}

func finishedStatus(s string) bool { return s != server.RunPending && s != server.RunRunning }

// TestStatementsPerRun counts what the Store sends PostgreSQL for a
// background run of a one-node graph (POST /threads/{id}/runs, from its
// creation to its end), averaged over runs, and fails when it exceeds the
// pinned bounds: a change that adds statements, round trips or
// transactions to the run path shows here. A client that streams the run
// adds the reads of its stream, which depend on timing, so the test does
// not stream. The checkpoint saver's statements are pinned too (their
// number depends on how many times the server reads the thread's state).
//
// It runs with the Store's and the saver's defaults, and as the example
// server and the benchmark's instances are configured: the Store's
// Config.SharedCheckpoints with the saver's Config.AsyncCommit, whose
// statements are as many (each commit's setting is made inside its one
// statement).
func TestStatementsPerRun(t *testing.T) {
	t.Run("defaults", func(t *testing.T) { statementsPerRun(t, false) })
	t.Run("SharedCheckpoints+AsyncCommit", func(t *testing.T) { statementsPerRun(t, true) })
}

func statementsPerRun(t *testing.T, shared bool) {
	base, schema := postgrestest.Schema(t, "agentserver_count_")
	storeCount := &postgrestest.Counter{Apart: isNotify}
	saverCount := &postgrestest.Counter{Apart: isNotify}
	st, err := postgres.New(t.Context(), postgres.Config{Pool: postgrestest.TracedPool(t, storeCount, nil), Schema: schema, SharedCheckpoints: shared})
	if err != nil {
		t.Fatal(err)
	}
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: postgrestest.TracedPool(t, saverCount, nil), Schema: schema, AsyncCommit: shared})
	if err != nil {
		t.Fatal(err)
	}
	// An untraced Store on the same tables, to watch for each run's end.
	probe, err := postgres.New(t.Context(), postgres.Config{Pool: base, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	hs, th := serveTrivial(t, server.Config{Store: st, Checkpointer: saver, SweepInterval: time.Hour})
	run := func() {
		t.Helper()
		resp, err := http.Post(hs.URL+"/threads/"+th.ID+"/runs", "application/json",
			strings.NewReader(`{"assistant_id":"trivial","input":{"name":"x"},"stream_mode":["values"]}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID string `json:"run_id"`
		}
		if err := jsonDecode(resp, &r); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the run's end recorded", func() bool {
			r, err := probe.Run(t.Context(), r.ID)
			return err == nil && finishedStatus(r.Status)
		})
		if got, err := probe.Run(t.Context(), r.ID); err != nil || got.Status != server.RunSuccess {
			t.Fatalf("run %s: %+v, %v; want success", r.ID, got, err)
		}
	}
	run() // the thread's first run reads no checkpoint; measure the next ones
	store0, saver0 := storeCount.Snapshot(), saverCount.Snapshot()
	start := time.Now()
	const runs = 10
	for range runs {
		run()
	}
	store1, saver1 := storeCount.Snapshot(), saverCount.Snapshot()
	elapsed := time.Since(start)
	s0, r0, x0, n0, q0 := store0.Statements, store0.Trips, store0.Txs, store0.Apart, store0.SQL
	s1, r1, x1, n1, q1 := store1.Statements, store1.Trips, store1.Txs, store1.Apart, store1.SQL
	// The reads of the principal's sum of thread bytes are made once a
	// second, not per run: each is a statement, a round trip and an
	// implicit transaction, taken off the run's counts and bounded by
	// the seconds the runs took.
	sums := 0
	for k, v := range q1 {
		if isCountBytes(k) {
			sums += v - q0[k]
		}
	}
	s1, r1, x1 = s1-sums, r1-sums, x1-sums
	if limit := int(elapsed/time.Second) + 1; sums > limit {
		t.Errorf("%d runs in %v read the principal's sum of thread bytes %d times; want at most %d (once a second)", runs, elapsed, sums, limit)
	}
	c0, cq0, c1, cq1 := saver0.Statements, saver0.SQL, saver1.Statements, saver1.SQL
	per := func(a, b int) float64 { return float64(b-a) / runs }
	t.Logf("per run: store %.1f statements, %.1f round trips, %.1f transactions, %.1f notification sends; checkpoint saver %.1f statements",
		per(s0, s1), per(r0, r1), per(x0, x1), per(n0, n1), per(c0, c1))
	for k, v := range q1 {
		if d := v - q0[k]; d > 0 {
			t.Logf("  %5.1f  %s", float64(d)/runs, k)
		}
	}
	for k, v := range cq1 {
		if d := v - cq0[k]; d > 0 {
			t.Logf("  saver %5.1f  %s", float64(d)/runs, k)
		}
	}
	// A creation can miss its remembered thread when it races the
	// bookkeeping of the run before it on a loaded machine (the guarded
	// insert finds the thread not yet as remembered, and the thread is
	// read as before: 2 statements, a round trip and a transaction more).
	// Up to missSlack such misses in the runs measured are allowed: a
	// change that lost the one-round-trip creation altogether would cost
	// every run one more round trip and fail.
	const missSlack = 3
	slack := func(pinned, perMiss int) float64 { return float64(pinned) + float64(missSlack*perMiss)/runs }
	if got := per(s0, s1); got > slack(maxStatementsPerRun, 2) {
		t.Errorf("a run sends %.1f statements, more than the %d pinned (and %d creations missing their remembered thread)", got, maxStatementsPerRun, missSlack)
	}
	if got := per(r0, r1); got > slack(maxTripsPerRun, 1) {
		t.Errorf("a run takes %.1f round trips, more than the %d pinned (and %d creations missing their remembered thread)", got, maxTripsPerRun, missSlack)
	}
	if got := per(x0, x1); got > slack(maxTxsPerRun, 1) {
		t.Errorf("a run takes %.1f transactions, more than the %d pinned (and %d creations missing their remembered thread)", got, maxTxsPerRun, missSlack)
	}
	// Notifications go out after commit, off the run's path: the warm-up
	// run's may land inside the measured window (and the last run's after
	// it), so the window may hold up to one run's worth more.
	if got := n1 - n0; got > maxNotifiesPerRun*(runs+1) {
		t.Errorf("%d runs sent %d notification statements, more than the %d per run pinned (plus one run's late ones)", runs, got, maxNotifiesPerRun)
	}
	if got := per(c0, c1); got > maxSaverPerRun {
		t.Errorf("a run sends the checkpoint saver %.1f statements, more than the %d pinned", got, maxSaverPerRun)
	}
}

// TestOwnStreamReadsNoEvents streams runs on one instance: the stream of
// a run created by its own request follows the events its instance
// appends from memory, so it reads none of them from PostgreSQL (and
// with no other instance, and heartbeats an hour apart, nothing wakes it
// to poll).
func TestOwnStreamReadsNoEvents(t *testing.T) {
	_, schema := postgrestest.Schema(t, "agentserver_count_")
	var reads readCounter
	pool := postgrestest.TracedPool(t, &reads, nil)
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	hs, th := serveTrivial(t, server.Config{Store: st, Checkpointer: saver, SweepInterval: time.Hour, Heartbeat: time.Hour})
	for range 5 {
		resp, err := http.Post(hs.URL+"/threads/"+th.ID+"/runs/stream", "application/json",
			strings.NewReader(`{"assistant_id":"trivial","input":{"name":"x"},"stream_mode":["values"]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, "event: metadata") || !strings.Contains(s, "event: values") || !strings.Contains(s, "event: end") {
			t.Fatalf("stream: %s; want metadata, values and end", s)
		}
	}
	if n := reads.n.Load(); n != 0 {
		t.Fatalf("5 streamed runs read their event logs %d times; want 0", n)
	}
}

// readCounter counts the reads of run event logs.
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "agentserver_log_events") && strings.HasPrefix(d.SQL, "SELECT") {
		c.n.Add(1)
	}
	return ctx
}

func (c *readCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestClaimDueOneTrip pins what the sweeper's poll costs: ClaimDue is
// one statement, one round trip and one transaction, whether it claims a
// run or finds none due, and it claims a thread's runs one at a time and
// in order.
func TestClaimDueOneTrip(t *testing.T) {
	_, schema := postgrestest.Schema(t, "agentserver_count_")
	// EndRun's notification goes out after its commit, from a goroutine
	// of its own: it may land inside a claim's window, so it is counted
	// apart.
	count := &postgrestest.Counter{Apart: isNotify}
	st, err := postgres.New(t.Context(), postgres.Config{Pool: postgrestest.TracedPool(t, count, nil), Schema: schema, PendingGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	ctx := t.Context()
	now := time.Now().UTC()
	for _, tid := range []string{"t1", "t2"} {
		if err := st.CreateThread(ctx, &server.Thread{ID: tid, Owner: "alice", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now, Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range [][2]string{{"a1", "t1"}, {"b1", "t2"}, {"a2", "t1"}} {
		at := now.Add(time.Duration(i-10) * time.Second)
		if err := st.CreateRun(ctx, &server.Run{ID: r[0], ThreadID: r[1], CreatedAt: at, UpdatedAt: at, Status: server.RunPending,
			Kwargs: json.RawMessage(`{"assistant_id":"g"}`), Owner: "alice", Metadata: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(want string) {
		t.Helper()
		before := count.Snapshot()
		c, err := st.ClaimDue(ctx, "w", time.Minute)
		after := count.Snapshot()
		got := ""
		if c != nil {
			got = c.ID
		}
		if err != nil || got != want || c != nil && (c.Status != server.RunRunning || c.Worker != "w" || c.Attempt != 1) {
			t.Fatalf("ClaimDue: %+v, %v; want run %q claimed by w", c, err, want)
		}
		if s, r, x := after.Statements-before.Statements, after.Trips-before.Trips, after.Txs-before.Txs; s != 1 || r != 1 || x != 1 {
			t.Errorf("ClaimDue (claiming %q) sent %d statements in %d round trips, %d transactions; want 1, 1, 1", want, s, r, x)
		}
	}
	claim("a1")
	claim("b1")
	claim("") // a2 waits for a1, whose lease lives
	if _, err := st.EndRun(ctx, "a1", server.RunSuccess, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	claim("a2")
	claim("")
}

// TestFinishClaimNextLocked: FinishClaimNextLocked ends a run and claims
// its thread's next one at one commit, in one round trip (the lock's
// take, the end, the claim: one implicit transaction), and the claim
// sees the end (the run ended no longer holds the thread); with nothing
// left it claims nothing; under a lock another Store holds it records
// and claims nothing.
func TestFinishClaimNextLocked(t *testing.T) {
	_, schema := postgrestest.Schema(t, "agentserver_count_")
	count := &postgrestest.Counter{Apart: isNotify}
	st, err := postgres.New(t.Context(), postgres.Config{Pool: postgrestest.TracedPool(t, count, nil), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	other := open2(t, schema)
	ctx := t.Context()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := st.CreateThread(ctx, &server.Thread{ID: "t1", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy, GraphID: "g"}); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"r1", "r2"} {
		r := &server.Run{ID: id, ThreadID: "t1", AssistantID: "a", CreatedAt: at.Add(time.Duration(i) * time.Second), UpdatedAt: at, Status: server.RunPending, Owner: "o"}
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if r, _, err := st.ClaimThreadLocked(ctx, "t1", "w", time.Minute); err != nil || r == nil || r.ID != "r1" {
		t.Fatalf("ClaimThreadLocked: %+v, %v; want r1", r, err)
	}
	end := func(id string) server.RunEnd {
		return server.RunEnd{RunID: id, ThreadID: "t1", Refresh: server.ThreadRefresh{State: true, Values: json.RawMessage(`{"v":"` + id + `"}`),
			Exclude: []string{id}, At: at}, EventName: "end", EventData: json.RawMessage(`{"status":"success"}`), Status: server.RunSuccess, At: at}
	}

	unlock, err := other.LockThread(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, next, _, err := st.FinishClaimNextLocked(ctx, end("r1"), "w", time.Minute); !errors.Is(err, server.ErrThreadLocked) || next != nil {
		t.Fatalf("FinishClaimNextLocked under another Store's lock: next %+v, %v; want ErrThreadLocked, nothing claimed", next, err)
	}
	if r, err := st.Run(ctx, "r2"); err != nil || r.Status != server.RunPending {
		t.Fatalf("r2 after a refused FinishClaimNextLocked: %+v, %v; want pending", r, err)
	}
	if r, err := st.Run(ctx, "r1"); err != nil || r.Status != server.RunRunning {
		t.Fatalf("r1 after a refused FinishClaimNextLocked: %+v, %v; want running", r, err)
	}
	unlock()

	before := count.Snapshot()
	active, ev, next, th, err := st.FinishClaimNextLocked(ctx, end("r1"), "w", time.Minute)
	after := count.Snapshot()
	ended, _ := other.Run(ctx, "r1")
	if err != nil || active != 1 || ev.Name != "end" || ended == nil || ended.Status != server.RunSuccess ||
		next == nil || next.ID != "r2" || next.Status != server.RunRunning || next.Worker != "w" || next.Attempt != 1 ||
		th == nil || th.ID != "t1" || string(th.Values) != `{"v":"r1"}` {
		t.Fatalf("FinishClaimNextLocked: active %d, event %+v, ended %+v, next %+v, thread %+v, %v; want r1 ended, r2 claimed with the thread r1 left",
			active, ev, ended, next, th, err)
	}
	if s, r, x := after.Statements-before.Statements, after.Trips-before.Trips, after.Txs-before.Txs; s != 3 || r != 1 || x != 1 {
		t.Errorf("FinishClaimNextLocked sent %d statements in %d round trips, %d transactions; want 3, 1, 1", s, r, x)
	}
	if r, err := other.Run(ctx, "r2"); err != nil || r.Status != server.RunRunning || r.Worker != "w" || r.LeaseUntil.IsZero() {
		t.Fatalf("r2 as stored: %+v, %v; want running under w's lease", r, err)
	}
	active, _, next, th, err = st.FinishClaimNextLocked(ctx, end("r2"), "w", time.Minute)
	ended, _ = other.Run(ctx, "r2")
	if err != nil || active != 0 || ended == nil || ended.Status != server.RunSuccess || next != nil || th != nil {
		t.Fatalf("FinishClaimNextLocked of the last run: active %d, ended %+v, next %+v, thread %+v, %v; want r2 ended, nothing claimed", active, ended, next, th, err)
	}
	if _, _, _, _, err := st.FinishClaimNextLocked(ctx, end("r2"), "w", 0); err == nil || !strings.Contains(err.Error(), "lease") {
		t.Errorf("FinishClaimNextLocked with no lease: %v; want an error naming the lease", err)
	}
}

// TestStatementsPerQueuedRun counts what the Store sends PostgreSQL for
// runs enqueued (multitask_strategy enqueue) behind a running one on the
// same thread, from the running one's release to the last one's end,
// their creations left out: each is claimed by the batch that ends the
// run before it (server.NextClaimer), so a queued run costs its start,
// its values event and its end: 3 round trips, 5 statements (the end's
// batch: the lock's take, the end, the next run's claim) and 3
// transactions. The window also holds the running run's values event
// and end, and may hold the worker's last claim, which finds nothing
// (one round trip of two statements).
func TestStatementsPerQueuedRun(t *testing.T) {
	base, schema := postgrestest.Schema(t, "agentserver_count_")
	count := &postgrestest.Counter{Apart: isNotify}
	st, err := postgres.New(t.Context(), postgres.Config{Pool: postgrestest.TracedPool(t, count, nil), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	probe, err := postgres.New(t.Context(), postgres.Config{Pool: base, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string // the names the node ran for, in order
	b := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{}), ran: func(name string) {
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
	}}
	url := serveGraph(t, st, base, schema, b)
	tid := newThreadAt(t, url)
	post := func(body string) string {
		t.Helper()
		resp, err := http.Post(url+"/threads/"+tid+"/runs", "application/json", strings.NewReader(body))
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
	ids := []string{post(`{"assistant_id":"block","input":{"name":"block"},"stream_mode":["values"]}`)}
	<-b.entered
	const queued = 4
	want := []string{"block"}
	for i := range queued {
		name := fmt.Sprintf("q%d", i)
		want = append(want, name)
		ids = append(ids, post(`{"assistant_id":"block","input":{"name":"`+name+`"},"stream_mode":["values"],"multitask_strategy":"enqueue"}`))
	}
	c0 := count.Snapshot()
	close(b.release)
	for _, id := range ids {
		waitFor(t, "run "+id+" ended", func() bool {
			r, err := probe.Run(t.Context(), id)
			return err == nil && finishedStatus(r.Status)
		})
		if r, err := probe.Run(t.Context(), id); err != nil || r.Status != server.RunSuccess || r.Attempt != 1 {
			t.Fatalf("run %s: %+v, %v; want success at attempt 1", id, r, err)
		}
	}
	c1 := count.Snapshot()
	mu.Lock()
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("the runs ran out of their order (-want +got):\n%s", diff)
	}
	mu.Unlock()
	trips, stmts, txs := c1.Trips-c0.Trips, c1.Statements-c0.Statements, c1.Txs-c0.Txs
	t.Logf("%d queued runs and the end of the run before them: %d round trips, %d statements, %d transactions", queued, trips, stmts, txs)
	for k, v := range c1.SQL {
		if d := v - c0.SQL[k]; d > 0 {
			t.Logf("  %3d  %s", d, k)
		}
	}
	// The running run's values event (1 trip, 1 statement, 1
	// transaction) and end (1 trip, 3 statements, 1 transaction), and
	// the queued runs' start, values and end (3 trips, 5 statements, 3
	// transactions), but for the last end, which claims nothing (2
	// statements): no claim that finds nothing.
	if max := 2 + 3*queued; trips > max {
		t.Errorf("%d round trips; want at most %d", trips, max)
	}
	if max := 4 + 5*queued - 1; stmts > max {
		t.Errorf("%d statements; want at most %d", stmts, max)
	}
	if max := 2 + 3*queued; txs > max {
		t.Errorf("%d transactions; want at most %d", txs, max)
	}
}
