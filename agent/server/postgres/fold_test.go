package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// foldFixture saves thread tid with one pending run (tid-p) and one
// running run (tid-r), and returns the runs.
func foldFixture(t *testing.T, st *postgres.Store, tid string) (pending, running *server.Run) {
	t.Helper()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := st.CreateThread(t.Context(), &server.Thread{ID: tid, Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy, GraphID: "g"}); err != nil {
		t.Fatal(err)
	}
	running = &server.Run{ID: tid + "-r", ThreadID: tid, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunRunning,
		Owner: "o", Worker: "w", LeaseUntil: at.Add(time.Hour), Attempt: 1}
	pending = &server.Run{ID: tid + "-p", ThreadID: tid, AssistantID: "a", CreatedAt: at.Add(time.Second), UpdatedAt: at, Status: server.RunPending, Owner: "o"}
	for _, r := range []*server.Run{running, pending} {
		if err := st.CreateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	return pending, running
}

// lockRows counts the rows of the thread locks' table.
func lockRows(t *testing.T, pool *pgxpool.Pool, schema string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{schema, "agentserver_locks"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLockedRecorderRefusesHeldLock: while one Store (instance) holds a
// thread's lock, another Store's LockingRecorder methods change nothing
// and return ErrThreadLocked (CreateRunLocked without calling its plan);
// once the lock is released they do their work, and leave the lock free
// (no row behind, another Store takes it at once).
func TestLockedRecorderRefusesHeldLock(t *testing.T) {
	stores, pool, schema := twoStores(t)
	pending, running := foldFixture(t, stores[0], "t1")
	unlock, err := stores[0].LockThread(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	planned := false
	plan := func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
		planned = true
		at := time.Now().UTC()
		return &server.Run{ID: "t1-new", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"},
			"g", map[string]any{"graph_id": "g"}, nil
	}
	end := server.RunEnd{RunID: running.ID, ThreadID: "t1", Refresh: server.ThreadRefresh{State: true, Values: json.RawMessage(`{"v":1}`),
		Exclude: []string{running.ID}, At: time.Now().UTC()}, EventName: "end", EventData: json.RawMessage(`{"status":"success"}`),
		Status: server.RunSuccess, At: time.Now().UTC()}

	created, err := stores[1].CreateRunLocked(t.Context(), "t1", plan)
	if created || !errors.Is(err, server.ErrThreadLocked) || planned {
		t.Fatalf("CreateRunLocked under another Store's lock: created %v, %v, plan called %v; want ErrThreadLocked, no plan", created, err, planned)
	}
	if r, th, err := stores[1].ClaimThreadLocked(t.Context(), "t1", "w2", time.Minute); !errors.Is(err, server.ErrThreadLocked) || r != nil || th != nil {
		t.Fatalf("ClaimThreadLocked under another Store's lock: %v, %v, %v; want ErrThreadLocked", r, th, err)
	}
	if _, _, err := stores[1].FinishRunLocked(t.Context(), end); !errors.Is(err, server.ErrThreadLocked) {
		t.Fatalf("FinishRunLocked under another Store's lock: %v; want ErrThreadLocked", err)
	}
	if _, err := stores[1].Run(t.Context(), "t1-new"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("a refused CreateRunLocked created its run: %v", err)
	}
	if r, err := stores[1].Run(t.Context(), running.ID); err != nil || r.Status != server.RunRunning {
		t.Errorf("a refused FinishRunLocked: run %+v, %v; want it running still", r, err)
	}
	if evs, _, err := stores[1].Events(t.Context(), running.ID, -1, 0); err != nil || len(evs) != 0 {
		t.Errorf("a refused FinishRunLocked: events %v, %v; want none", evs, err)
	}
	if th, err := stores[1].Thread(t.Context(), "t1"); err != nil || th.Values != nil || th.Status != server.ThreadBusy {
		t.Errorf("a refused FinishRunLocked: thread %+v, %v; want it unchanged", th, err)
	}
	if r, err := stores[1].Run(t.Context(), pending.ID); err != nil || r.Status != server.RunPending || r.Attempt != 0 {
		t.Errorf("a refused ClaimThreadLocked: run %+v, %v; want it pending, unclaimed", r, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	if u, err := stores[1].LockThread(ctx, "t1"); err == nil {
		u()
		t.Fatal("the refusals released the first Store's lock")
	}
	cancel()
	unlock()

	// Released: the same calls do their work.
	if created, err := stores[1].CreateRunLocked(t.Context(), "t1", plan); !created || err != nil {
		t.Fatalf("CreateRunLocked on a free lock: %v, %v", created, err)
	}
	active, ev, err := stores[1].FinishRunLocked(t.Context(), end)
	ended, _ := stores[0].Run(t.Context(), end.RunID)
	if err != nil || ended == nil || ended.Status != server.RunSuccess || ended.Worker != "" || !ended.LeaseUntil.IsZero() || ev.ID != 0 || ev.Name != "end" || active != 2 {
		t.Fatalf("FinishRunLocked on a free lock: active %d, event %+v, run %+v, %v; want 2 active, event 0, the run ended", active, ev, ended, err)
	}
	r, th, err := stores[1].ClaimThreadLocked(t.Context(), "t1", "w2", time.Minute)
	if err != nil || r == nil || r.ID != pending.ID || r.Worker != "w2" || th == nil || th.ID != "t1" || string(th.Values) != `{"v":1}` {
		t.Fatalf("ClaimThreadLocked on a free lock: %+v, %+v, %v; want %s claimed with its thread", r, th, err, pending.ID)
	}
	if n := lockRows(t, pool, schema); n != 0 {
		t.Errorf("%d lock rows after the LockingRecorder calls; want none (each releases its lock)", n)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	u, err := stores[0].LockThread(ctx, "t1")
	if err != nil {
		t.Fatalf("the lock after the LockingRecorder calls: %v", err)
	}
	u()
}

// TestFinishRunLocked: FinishRunLocked has the effect of RefreshThread,
// AppendEvent and EndRun: the thread takes the state and status, the
// event is numbered after the run's earlier ones (appended through the
// event log) within the log's cap, the run ends; a missing run is
// ErrNotFound. ClaimThreadLocked with nothing to claim returns no
// thread.
func TestFinishRunLocked(t *testing.T) {
	stores, _, _ := twoStores(t)
	st := stores[0]
	pending, running := foldFixture(t, st, "t2")
	for _, name := range []string{"metadata", "values"} {
		if _, err := st.AppendEvent(t.Context(), running.ID, name, json.RawMessage(`{}`), 2); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 3, 4, 6, 0, 0, 0, time.UTC)
	active, ev, err := st.FinishRunLocked(t.Context(), server.RunEnd{RunID: running.ID, ThreadID: "t2",
		Refresh:   server.ThreadRefresh{State: true, Values: json.RawMessage(`{"v":2}`), Next: true, Exclude: []string{running.ID}, At: at},
		EventName: "end", EventData: json.RawMessage(`{"status":"success"}`), MaxEvents: 2, Status: server.RunError, Error: "boom", At: at})
	ended, _ := st.Run(t.Context(), running.ID)
	if err != nil || active != 1 || ev.ID != 2 || ended == nil || ended.Status != server.RunError || ended.Error != "boom" || !ended.UpdatedAt.Equal(at) {
		t.Fatalf("FinishRunLocked: active %d, event %+v, run %+v, %v; want 1 active, event 2, the run ended in error", active, ev, ended, err)
	}
	evs, first, err := st.Events(t.Context(), running.ID, -1, 0)
	if err != nil || first != 1 || len(evs) != 2 || evs[0].Name != "values" || evs[1].Name != "end" || string(evs[1].Data) != `{"status":"success"}` {
		t.Fatalf("events after FinishRunLocked: %+v from %d, %v; want values and end, from 1 (cap 2)", evs, first, err)
	}
	th, err := st.Thread(t.Context(), "t2")
	if err != nil || th.Status != server.ThreadInterrupted || string(th.Values) != `{"v":2}` || !th.UpdatedAt.Equal(at) {
		t.Fatalf("thread after FinishRunLocked: %+v, %v; want interrupted with the new values", th, err)
	}
	if _, _, err := st.FinishRunLocked(t.Context(), server.RunEnd{RunID: "nope", ThreadID: "t2", EventName: "end",
		EventData: json.RawMessage(`{}`), Status: server.RunSuccess, At: at}); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("FinishRunLocked of a missing run: %v; want ErrNotFound", err)
	}
	if _, err := st.UpdateRun(t.Context(), pending.ID, func(r *server.Run) error { r.Status = server.RunSuccess; return nil }); err != nil {
		t.Fatal(err)
	}
	if r, th, err := st.ClaimThreadLocked(t.Context(), "t2", "w", time.Minute); r != nil || th != nil || err != nil {
		t.Fatalf("ClaimThreadLocked with nothing to claim: %+v, %+v, %v; want nothing", r, th, err)
	}
	if r, th, err := st.ClaimThread(t.Context(), "t2", "w", time.Minute); r != nil || th != nil || err != nil {
		t.Fatalf("ClaimThread with nothing to claim: %+v, %+v, %v; want nothing", r, th, err)
	}
}

// TestCreateRunLockedHoldsLock: CreateRunLocked holds the thread's lock
// from its read to its commit: another Store that asks for the lock
// meanwhile waits (in PostgreSQL, on the lock's advisory lock), is woken by the
// commit that releases it, and then finds the run created.
func TestCreateRunLockedHoldsLock(t *testing.T) {
	stores, pool, schema := twoStores(t)
	foldFixture(t, stores[0], "t3")
	type result struct {
		runs []*server.Run
		err  error
	}
	got := make(chan result, 1)
	created, err := stores[0].CreateRunLocked(t.Context(), "t3", func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
		if th == nil || len(active) != 2 {
			return nil, "", nil, errors.New("the plan did not get the thread and its two active runs")
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // failure guard only
			defer cancel()
			u, err := stores[1].LockThread(ctx, "t3")
			if err != nil {
				got <- result{err: err}
				return
			}
			runs, err := stores[1].Runs(ctx, server.RunQuery{ThreadID: "t3"})
			u()
			got <- result{runs, err}
		}()
		waitFor(t, "the other Store waiting on the lock", func() bool {
			var n int
			err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
				AND query LIKE '%' || $1 || '%agentserver_locks%'`, schema).Scan(&n)
			return err == nil && n == 1
		})
		at := time.Now().UTC()
		return &server.Run{ID: "t3-new", ThreadID: "t3", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"},
			"g", map[string]any{"graph_id": "g"}, nil
	})
	if !created || err != nil {
		t.Fatalf("CreateRunLocked: %v, %v", created, err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("the waiter's lock: %v", r.err)
	}
	ids := []string{}
	for _, run := range r.runs {
		ids = append(ids, run.ID)
	}
	if !strings.Contains(strings.Join(ids, " "), "t3-new") {
		t.Fatalf("the waiter, once it held the lock, found runs %v; want t3-new among them (it got the lock before the commit)", ids)
	}
	if n := lockRows(t, pool, schema); n != 0 {
		t.Errorf("%d lock rows left; want none", n)
	}
}

// blocking is a one-node graph whose node waits for release.
type blocking struct {
	entered chan struct{}
	release chan struct{}
	ran     func(name string) // when set, called as the node starts, with its input's name
}

// serveBlocking serves the graph "block" on a server over st (see
// serveGraph), and returns its URL and a thread it created.
func serveBlocking(t *testing.T, st *postgres.Store, pool *pgxpool.Pool, schema string, b *blocking) (string, string) {
	t.Helper()
	url := serveGraph(t, st, pool, schema, b)
	return url, newThreadAt(t, url)
}

// newThreadAt creates a thread on the server at url and returns its id.
func newThreadAt(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url+"/threads", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var th createdThread
	if err := jsonDecode(resp, &th); err != nil {
		t.Fatal(err)
	}
	return th.ID
}

// serveGraph serves, on a server over st until the test ends, the graph
// "block", whose node waits for b.release when its input's name is
// "block" (after sending on b.entered), and returns the server's URL.
func serveGraph(t *testing.T, st server.Store, pool *pgxpool.Pool, schema string, b *blocking) string {
	t.Helper()
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	hs := serveGreet(t, server.Config{Store: st, Checkpointer: saver, SweepInterval: time.Hour}, "block",
		func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
			if b.ran != nil {
				b.ran(s.Name)
			}
			if s.Name == "block" {
				b.entered <- struct{}{}
				select {
				case <-b.release:
				case <-ctx.Done():
					return graph.Update[greeting]{}, ctx.Err()
				}
			}
			return greetingReply.Set("hi " + s.Name), nil
		})
	return hs.URL
}

// TestServerWaitsForHeldLock: while another instance holds a thread's
// lock, a server with a LockingRecorder does not create a run on it,
// nor record a run's end, behind the holder's back: its folded calls are
// refused and it waits for the lock (flagging it, as a waiter does),
// then does both once the lock is released.
func TestServerWaitsForHeldLock(t *testing.T) {
	stores, pool, schema := twoStores(t)
	b := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{})}
	url, tid := serveBlocking(t, stores[1], pool, schema, b)
	locks := pgx.Identifier{schema, "agentserver_locks"}.Sanitize()
	waited := func() bool {
		var w bool
		err := pool.QueryRow(t.Context(), "SELECT waited FROM "+locks+" WHERE thread_id = $1", tid).Scan(&w)
		return err == nil && w
	}
	runs := func() []*server.Run {
		rs, err := stores[0].Runs(t.Context(), server.RunQuery{ThreadID: tid})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	post := func() <-chan string {
		out := make(chan string, 1)
		go func() {
			resp, err := http.Post(url+"/threads/"+tid+"/runs", "application/json", strings.NewReader(`{"assistant_id":"block","input":{"name":"block"}}`))
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			var r struct {
				ID string `json:"run_id"`
			}
			if err := jsonDecode(resp, &r); err != nil || resp.StatusCode != 200 {
				out <- "error: " + resp.Status
				return
			}
			out <- r.ID
		}()
		return out
	}

	// The run's creation waits for the lock.
	unlock, err := stores[0].LockThread(t.Context(), tid)
	if err != nil {
		t.Fatal(err)
	}
	created := post()
	waitFor(t, "the server waiting for the thread's lock", waited)
	if rs := runs(); len(rs) != 0 {
		t.Fatalf("the server created run %s while another instance held the thread's lock", rs[0].ID)
	}
	unlock()
	rid := <-created
	if strings.HasPrefix(rid, "error") {
		t.Fatal(rid)
	}

	// The run's end waits for the lock.
	<-b.entered
	unlock, err = stores[0].LockThread(t.Context(), tid)
	if err != nil {
		t.Fatal(err)
	}
	close(b.release)
	waitFor(t, "the server waiting for the thread's lock to end the run", waited)
	if r, err := stores[0].Run(t.Context(), rid); err != nil || r.Status != server.RunRunning {
		t.Fatalf("run %+v, %v while another instance holds the thread's lock; want it running", r, err)
	}
	if th, err := stores[0].Thread(t.Context(), tid); err != nil || th.Status != server.ThreadBusy {
		t.Fatalf("thread %+v, %v while another instance holds the lock; want it busy still", th, err)
	}
	unlock()
	waitFor(t, "the run's end", func() bool {
		r, err := stores[0].Run(t.Context(), rid)
		return err == nil && r.Status == server.RunSuccess
	})
	if th, err := stores[0].Thread(t.Context(), tid); err != nil || th.Status != server.ThreadIdle || !strings.Contains(string(th.Values), "hi block") {
		t.Fatalf("thread %+v, %v after the run; want it idle with the run's values", th, err)
	}
	evs, _, err := stores[0].Events(t.Context(), rid, -1, 0)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Name != "end" {
		t.Fatalf("events %+v, %v; want the end event last", evs, err)
	}
}

// TestDoubleTextingTwoInstances applies the double-texting strategies
// across two servers on one schema (two Stores): a run blocks on the
// first; on the second, reject is refused while it runs, enqueue queues
// a run behind it, and interrupt cancels both (the running one through
// the first instance) and runs its own; the thread ends idle.
func TestDoubleTextingTwoInstances(t *testing.T) {
	stores, pool, schema := twoStores(t)
	b := &blocking{entered: make(chan struct{}, 4), release: make(chan struct{})}
	url0, tid := serveBlocking(t, stores[0], pool, schema, b)
	url1 := serveGraph(t, stores[1], pool, schema, b)
	post := func(url, strategy, name string) (int, string) {
		t.Helper()
		resp, err := http.Post(url+"/threads/"+tid+"/runs", "application/json",
			strings.NewReader(`{"assistant_id":"block","input":{"name":"`+name+`"},"multitask_strategy":"`+strategy+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID string `json:"run_id"`
		}
		_ = jsonDecode(resp, &r)
		return resp.StatusCode, r.ID
	}
	status := func(rid string) string {
		r, err := stores[0].Run(t.Context(), rid)
		if err != nil {
			return err.Error()
		}
		return r.Status
	}
	code, first := post(url0, "reject", "block")
	if code != 200 {
		t.Fatalf("first run: %d", code)
	}
	<-b.entered
	if code, _ := post(url1, "reject", "x"); code != http.StatusConflict {
		t.Fatalf("reject on the other instance while a run runs: %d; want 409", code)
	}
	code, queued := post(url1, "enqueue", "x")
	if code != 200 || status(queued) != server.RunPending {
		t.Fatalf("enqueue on the other instance: %d, %s; want 200, pending", code, status(queued))
	}
	code, last := post(url1, "interrupt", "x")
	if code != 200 {
		t.Fatalf("interrupt on the other instance: %d", code)
	}
	waitFor(t, "the interrupting run's end", func() bool { return status(last) == server.RunSuccess })
	if s := status(first); s != server.RunInterrupted {
		t.Errorf("the first run: %s; want interrupted", s)
	}
	if s := status(queued); s != server.RunInterrupted {
		t.Errorf("the queued run: %s; want interrupted", s)
	}
	waitFor(t, "the thread idle", func() bool {
		th, err := stores[0].Thread(t.Context(), tid)
		return err == nil && th.Status == server.ThreadIdle
	})
	if code, _ := post(url0, "reject", "x"); code != 200 {
		t.Fatalf("reject on an idle thread: %d; want 200", code)
	}
}

// failingFinish is a Store whose FinishRunLocked fails, without writing,
// the first fails times it is called.
type failingFinish struct {
	*postgres.Store
	fails, calls atomic.Int32
}

func (f *failingFinish) FinishRunLocked(ctx context.Context, e server.RunEnd) (int, server.Event, error) {
	f.calls.Add(1)
	if f.fails.Add(-1) >= 0 {
		return 0, server.Event{}, errors.New("connection reset by peer")
	}
	return f.Store.FinishRunLocked(ctx, e)
}

// When the store's one-transaction end of a run fails (and wrote
// nothing), the server records the end step by step: the run ends
// successful, with its end event, and its thread is idle, instead of
// the run staying running until its lease expires and another instance
// runs it again.
func TestFinishFallsBackAfterFailure(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	store := &failingFinish{Store: st}
	store.fails.Store(1)
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	hs, th := serveTrivial(t, server.Config{Store: store, Checkpointer: saver, SweepInterval: time.Hour, Heartbeat: time.Hour})
	wait, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(wait, http.MethodPost, hs.URL+"/threads/"+th.ID+"/runs/stream",
		strings.NewReader(`{"assistant_id":"trivial","input":{"name":"x"},"stream_mode":["values"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("stream: %v after %q; want its end event within a minute", err, b)
	}
	if s := string(b); !strings.Contains(s, "event: end") {
		t.Fatalf("stream: %s; want its end event", s)
	}
	if n := store.calls.Load(); n != 1 {
		t.Fatalf("FinishRunLocked called %d times; want 1 (the failure, then the plain calls)", n)
	}
	// The stream's end event is saved before the run's end (finishWith's
	// order when recorded step by step): wait for the end.
	var runs []*server.Run
	for {
		runs, err = st.Runs(t.Context(), server.RunQuery{ThreadID: th.ID})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs = %v, %v; want one", runs, err)
		}
		if runs[0].Status != server.RunRunning {
			break
		}
		select {
		case <-wait.Done():
			t.Fatal("the run is still running a minute after its stream ended")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if runs[0].Status != server.RunSuccess {
		t.Errorf("run status %q; want %q", runs[0].Status, server.RunSuccess)
	}
	got, err := st.Thread(t.Context(), th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != server.ThreadIdle {
		t.Errorf("thread status %q; want %q", got.Status, server.ThreadIdle)
	}
}

// TestLockedRecorderWritesNoLockRow: the LockingRecorder methods hold
// the thread's lock without a row of the locks' table (a
// transaction-level advisory lock): a run's creation, claim and end
// write none, where LockThread's take and release write its row.
func TestLockedRecorderWritesNoLockRow(t *testing.T) {
	stores, pool, schema := twoStores(t)
	st := stores[0]
	locks := pgx.Identifier{schema, "agentserver_locks"}.Sanitize()
	writes := pgx.Identifier{schema, "lock_writes"}.Sanitize()
	count := pgx.Identifier{schema, "count_lock_writes"}.Sanitize()
	for _, sql := range []string{
		`CREATE TABLE ` + writes + ` (n int NOT NULL)`,
		`CREATE FUNCTION ` + count + `() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ` + writes + ` VALUES (1); RETURN NULL; END $$`,
		`CREATE TRIGGER count_lock_writes AFTER INSERT OR UPDATE OR DELETE ON ` + locks + ` FOR EACH ROW EXECUTE FUNCTION ` + count + `()`,
	} {
		if _, err := pool.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	written := func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM `+writes).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	at := time.Now().UTC()
	if err := st.CreateThread(t.Context(), &server.Thread{ID: "t9", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadIdle}); err != nil {
		t.Fatal(err)
	}
	created, err := st.CreateRunLocked(t.Context(), "t9", func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
		return &server.Run{ID: "t9-r", ThreadID: "t9", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"}, "g", map[string]any{"graph_id": "g"}, nil
	})
	if err != nil || !created {
		t.Fatalf("CreateRunLocked: %v, %v", created, err)
	}
	if r, _, err := st.ClaimThreadLocked(t.Context(), "t9", "w", time.Minute); err != nil || r == nil || r.ID != "t9-r" {
		t.Fatalf("ClaimThreadLocked: %+v, %v; want t9-r", r, err)
	}
	if _, _, err := st.FinishRunLocked(t.Context(), server.RunEnd{RunID: "t9-r", ThreadID: "t9", Refresh: server.ThreadRefresh{Exclude: []string{"t9-r"}, At: at},
		EventName: "end", EventData: json.RawMessage(`{}`), Status: server.RunSuccess, At: at}); err != nil {
		t.Fatal(err)
	}
	if n := written(); n != 0 {
		t.Fatalf("a run's creation, claim and end under the LockingRecorder wrote %d rows of the locks' table; want none", n)
	}
	unlock, err := st.LockThread(t.Context(), "t9")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	waitFor(t, "LockThread's row written and deleted", func() bool { return written() >= 2 })
}

// TestLockedCallDropsExpiredLease: a LockThread lease that expired does
// not stop the locked calls, and the first of them deletes its row, so
// that the holder that let it expire finds it gone (and logs so) instead
// of renewing it while another instance works on the thread.
func TestLockedCallDropsExpiredLease(t *testing.T) {
	stores, pool, schema := twoStores(t)
	_, running := foldFixture(t, stores[0], "t1")
	unlock, err := stores[0].LockThread(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	locks := pgx.Identifier{schema, "agentserver_locks"}.Sanitize()
	if _, err := pool.Exec(t.Context(), "UPDATE "+locks+" SET until = clock_timestamp() - interval '1 second' WHERE thread_id = 't1'"); err != nil {
		t.Fatal(err)
	}
	end := server.RunEnd{RunID: running.ID, ThreadID: "t1", Refresh: server.ThreadRefresh{Exclude: []string{running.ID}, At: time.Now().UTC()},
		EventName: "end", EventData: json.RawMessage(`{"status":"success"}`), Status: server.RunSuccess, At: time.Now().UTC()}
	if _, _, err := stores[1].FinishRunLocked(t.Context(), end); err != nil {
		t.Fatalf("FinishRunLocked past an expired lease: %v; want the run ended", err)
	}
	if ended, err := stores[1].Run(t.Context(), end.RunID); err != nil || ended.Status != server.RunSuccess {
		t.Fatalf("FinishRunLocked past an expired lease: %+v, %v; want the run ended", ended, err)
	}
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM "+locks+" WHERE thread_id = 't1'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the expired lease's row is still there after FinishRunLocked (%d rows); want it deleted", n)
	}
}

// TestCreateRunLockedPlanReads: CreateRunLocked's plan (and
// CreateRunClaimedCountActive's) is passed, from the one read, of the
// thread its ID, Owner, Metadata, GraphID, Head and Rolled, and of each
// active run its ID, ThreadID and Status, in ActiveRuns' order (running,
// then pending, each oldest first): what the server reads there. A
// thread with no active run gets none, and a missing thread is nil.
func TestCreateRunLockedPlanReads(t *testing.T) {
	stores, _, _ := twoStores(t)
	st := stores[0]
	ctx := t.Context()
	foldFixture(t, st, "t1")
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for i, id := range []string{"t1-p2", "t1-p3"} {
		if err := st.CreateRun(ctx, &server.Run{ID: id, ThreadID: "t1", AssistantID: "a", CreatedAt: at.Add(time.Duration(i+2) * time.Second),
			UpdatedAt: at, Status: server.RunPending, Owner: "o", Metadata: map[string]any{"n": float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.UpdateThread(ctx, "t1", func(th *server.Thread) error {
		th.Values, th.Metadata, th.Head, th.Rolled = json.RawMessage(`{"v":"kept"}`), map[string]any{"k": "v"}, "cp-head", true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateThread(ctx, &server.Thread{ID: "t2", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadIdle, GraphID: "g"}); err != nil {
		t.Fatal(err)
	}
	for _, tid := range []string{"t1", "t2", "missing"} {
		var wantThread *server.Thread
		if th, err := st.Thread(ctx, tid); err == nil {
			wantThread = &server.Thread{ID: th.ID, Owner: th.Owner, Metadata: th.Metadata, GraphID: th.GraphID, Head: th.Head, Rolled: th.Rolled}
		} else if !errors.Is(err, server.ErrNotFound) {
			t.Fatal(err)
		}
		runs, err := st.ActiveRuns(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		var wantActive []*server.Run
		for _, r := range runs {
			wantActive = append(wantActive, &server.Run{ID: r.ID, ThreadID: r.ThreadID, Status: r.Status})
		}
		check := func(name string, th *server.Thread, active []*server.Run) {
			t.Helper()
			if diff := cmp.Diff(wantThread, th); diff != "" {
				t.Errorf("%s: thread %s as plan got it (-want +plan):\n%s", name, tid, diff)
			}
			if diff := cmp.Diff(wantActive, active, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: active runs of %s as plan got them (-want +plan):\n%s", name, tid, diff)
			}
		}
		created, err := st.CreateRunLocked(ctx, tid, func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
			check("CreateRunLocked", th, active)
			return nil, "", nil, nil
		})
		if created || err != nil {
			t.Fatalf("CreateRunLocked(%s) with a plan that creates nothing: %v, %v; want false, nil", tid, created, err)
		}
		if _, err := st.CreateRunClaimedCountActive(ctx, tid, "o", time.Minute, func(th *server.Thread, active []*server.Run, n int) (*server.Run, string, map[string]any, error) {
			check("CreateRunClaimedCountActive", th, active)
			if n != 4 {
				t.Errorf("CreateRunClaimedCountActive(%s): %d active runs of the owner; want 4", tid, n)
			}
			return nil, "", nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		if tid == "t1" && (len(wantActive) != 4 || wantThread == nil || wantThread.Head != "cp-head" || !wantThread.Rolled) {
			t.Errorf("t1: thread %+v, %d active runs; want the fixture's head, rolled, and 4 runs", wantThread, len(wantActive))
		}
	}
}
