package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// startCall is one StartRunEvent call of startConcurrently and its result.
type startCall struct {
	run, start, name string
	data             json.RawMessage

	got *server.Run
	ev  server.Event
	err error
}

// startConcurrently makes calls[0] first, holds its write until every
// other call, made one after the other, waits in the collecting batch,
// then lets the writes go; it
// returns the number of starts of each write, and the statements the
// Store sent from the first write on.
func startConcurrently(t *testing.T, st *Store, c *postgrestest.Counter, calls []*startCall) (writes []int, statements int) {
	t.Helper()
	release := make(chan struct{})
	var mu sync.Mutex
	st.starts.hook = func(n int) {
		mu.Lock()
		first := len(writes) == 0
		writes = append(writes, n)
		mu.Unlock()
		if first {
			<-release
		}
	}
	defer func() { st.starts.hook = nil }()
	c.Take()
	var wg sync.WaitGroup
	call := func(k *startCall) {
		defer wg.Done()
		k.got, k.ev, k.err = st.StartRunEvent(t.Context(), k.run, k.start, k.name, k.data, 0)
	}
	wg.Add(1)
	go call(calls[0])
	// The first call leads: wait until its write is held in the hook.
	for {
		mu.Lock()
		n := len(writes)
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The others join the collecting batch one after the other, in
	// their order.
	for i, k := range calls[1:] {
		wg.Add(1)
		go call(k)
		for {
			st.starts.mu.Lock()
			n := 0
			if st.starts.next != nil {
				n = len(st.starts.next.reqs)
			}
			st.starts.mu.Unlock()
			if n == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(release)
	wg.Wait()
	return writes, c.Take().Statements
}

// newStartStore returns a Store on a counted pool, and a thread with the
// running runs of ids.
func newStartStore(t *testing.T, shared bool, ids ...string) (*Store, *postgrestest.Counter) {
	t.Helper()
	_, schema := postgrestest.Schema(t, "agentserver_startbatch_")
	c := &postgrestest.Counter{}
	st, err := New(t.Context(), Config{Pool: postgrestest.TracedPool(t, c, nil), Schema: schema, SharedCheckpoints: shared})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	now := time.Now().UTC()
	if err := st.CreateThread(t.Context(), &server.Thread{ID: "t", Owner: "o", Status: server.ThreadBusy, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if err := st.CreateRun(t.Context(), &server.Run{ID: id, ThreadID: "t", AssistantID: "a", CreatedAt: now, UpdatedAt: now,
			Status: server.RunRunning, MultitaskStrategy: "reject", Owner: "o", Worker: "w", Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	return st, c
}

// TestStartRunEventBatched: the starts made while one is being written
// are written together, in one statement for any number of runs, and
// each call gets its own run's record and event: a second start of a run
// in the same batch is written after the first (its event next in the
// run's log, the run's start left as the first set it), and a missing
// run fails alone with ErrNotFound.
func TestStartRunEventBatched(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("SharedCheckpoints=%v", shared), func(t *testing.T) {
			ids := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}
			st, c := newStartStore(t, shared, ids...)
			var calls []*startCall
			for _, id := range ids {
				calls = append(calls, &startCall{run: id, start: "cp-" + id, name: "metadata", data: json.RawMessage(`{"run_id":"` + id + `"}`)})
			}
			missing := &startCall{run: "nope", start: "cp", name: "metadata", data: json.RawMessage(`{}`)}
			again := &startCall{run: "r1", start: "cp-again", name: "metadata", data: json.RawMessage(`{"again":true}`)}
			calls = append(calls, missing, again)
			writes, statements := startConcurrently(t, st, c, calls)
			// r0 alone, then r1–r7 and the missing run in one statement,
			// then r1's second start.
			if fmt.Sprint(writes) != "[1 8 1]" {
				t.Errorf("writes of %v starts; want [1 8 1]", writes)
			}
			if statements != 3 {
				t.Errorf("%d statements for %d starts; want 3", statements, len(calls))
			}
			for _, k := range calls[:len(ids)] {
				if k.err != nil {
					t.Fatalf("start %s: %v", k.run, k.err)
				}
				if k.got.ID != k.run || !k.got.Started || k.got.Start != "cp-"+k.run {
					t.Errorf("start %s returned run %s started %v from %q; want its own, started from %q", k.run, k.got.ID, k.got.Started, k.got.Start, "cp-"+k.run)
				}
				if k.ev.ID != 0 || k.ev.Name != "metadata" || string(k.ev.Data) != string(k.data) {
					t.Errorf("start %s returned event %+v; want its own at 0", k.run, k.ev)
				}
			}
			if !errors.Is(missing.err, server.ErrNotFound) {
				t.Errorf("start of a missing run: %v; want ErrNotFound", missing.err)
			}
			if again.err != nil || again.ev.ID != 1 || again.got.Start != "cp-r1" {
				t.Errorf("second start of r1: event %+v, start %v, %v; want event 1, start cp-r1", again.ev, again.got, again.err)
			}
			for _, id := range ids {
				evs, _, err := st.Events(t.Context(), id, -1, 10)
				if err != nil {
					t.Fatal(err)
				}
				want := `[{"run_id":"` + id + `"}]`
				if id == "r1" {
					want = `[{"run_id":"r1"} {"again":true}]`
				}
				var got []string
				for i, e := range evs {
					if e.ID != int64(i) {
						t.Errorf("run %s: event %d has id %d", id, i, e.ID)
					}
					got = append(got, string(e.Data))
				}
				if fmt.Sprint(got) != want {
					t.Errorf("run %s's log holds %v; want %s", id, got, want)
				}
			}
		})
	}
}

// TestStartRunEventBatchRefused: when PostgreSQL refuses a statement of
// several starts (one event's name holds a NUL byte), the starts are
// written again one by one: the refused one fails alone, each other is
// written once.
func TestStartRunEventBatchRefused(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	st, c := newStartStore(t, false, ids...)
	var calls []*startCall
	for _, id := range ids {
		calls = append(calls, &startCall{run: id, start: "cp", name: "metadata", data: json.RawMessage(`{}`)})
	}
	calls[2].name = "bad\x00name"
	writes, _ := startConcurrently(t, st, c, calls)
	if fmt.Sprint(writes) != "[1 3]" {
		t.Errorf("writes of %v starts; want [1 3]", writes)
	}
	for i, k := range calls {
		if (k.err != nil) != (i == 2) {
			t.Errorf("start %s: %v", k.run, k.err)
		}
		evs, _, err := st.Events(t.Context(), k.run, -1, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if i == 2 {
			want = 0
		}
		if len(evs) != want {
			t.Errorf("run %s's log holds %d events; want %d", k.run, len(evs), want)
		}
	}
}

// TestStartRunEventAfterClose: a start made after Close fails, naming
// the cause.
func TestStartRunEventAfterClose(t *testing.T) {
	st, _ := newStartStore(t, false, "r")
	st.Close()
	if _, _, err := st.StartRunEvent(t.Context(), "r", "cp", "metadata", json.RawMessage(`{}`), 0); !errors.Is(err, errStoreClosed) {
		t.Errorf("start after Close: %v; want errStoreClosed", err)
	}
}

// TestStartRunEventsReadNoHistory: the statement of a batch of starts
// finds the runs and their logs through their keys, whatever its plan:
// beside 1,200 other runs, each with a log of 20 events, it reads about
// as many buffers as beside 300 (a scan of either table would read
// hundreds more), with a generic plan and with a plan
// made for its parameters (the tables hold no statistics, as before
// their first ANALYZE).
func TestStartRunEventsReadNoHistory(t *testing.T) {
	st, _ := newStartStore(t, false, "a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1", "e2", "f1", "f2")
	q := st.q
	if !strings.Contains(q.startRunEventsAsync, "set_config('synchronous_commit', 'off', true)") {
		t.Fatalf("startRunEventsAsync does not turn synchronous_commit off:\n%s", q.startRunEventsAsync)
	}
	args := func(p string) []string {
		return []string{"{" + p + "1," + p + "2}", "{cp,cp}", "w", "{metadata,metadata}", "{x,x}", "{5,5}", "agentserver_test_chan", "{p,p}"}
	}
	history := func(from, to int) {
		t.Helper()
		now := time.Now().UTC()
		for _, s := range []string{
			`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, metadata, kwargs, multitask, owner, worker, attempt, started, start, cancel, error)
				SELECT 'old' || i, 't', 'a', $3, $3, 'success', '{"k":"v"}', convert_to(repeat('x', 300), 'UTF8'), 'reject', '', '', 1, true, '', '', '' FROM generate_series($1::int, $2::int) i`,
			`INSERT INTO ` + pgdb.Table(st.schema, logName+"_keys") + ` (key, writer, next, ended, updated) SELECT 'old' || i, 'w', 20, true, $3 FROM generate_series($1::int, $2::int) i`,
			`INSERT INTO ` + pgdb.Table(st.schema, logName+"_events") + ` (key, pos, seq, name, data)
				SELECT 'old' || i, j, 0, 'values', convert_to(repeat('y', 200), 'UTF8') FROM generate_series($1::int, $2::int) i, generate_series(0, 19) j WHERE $3::timestamptz IS NOT NULL`,
		} {
			if _, err := st.pool.Exec(t.Context(), s, from, to, now); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	// custom is the buffers read by the statement planned for its
	// parameters (EXPLAIN of a statement with parameters plans it for
	// their values).
	custom := func(sql string, p string) int {
		t.Helper()
		a := args(p)
		var out []byte
		if err := st.pool.QueryRow(t.Context(), `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+sql,
			a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]).Scan(&out); err != nil {
			t.Fatal(err)
		}
		n, err := postgrestest.ExplainBuffers(out)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	history(1, 300)
	short := postgrestest.Buffers(t, st.pool, q.startRunEvents, args("a")...)
	shortAsync := postgrestest.Buffers(t, st.pool, q.startRunEventsAsync, args("b")...)
	shortCustom := custom(q.startRunEvents, "e")
	history(301, 1200)
	long := postgrestest.Buffers(t, st.pool, q.startRunEvents, args("c")...)
	longAsync := postgrestest.Buffers(t, st.pool, q.startRunEventsAsync, args("d")...)
	longCustom := custom(q.startRunEvents, "f")
	if long > short+20 || longAsync > shortAsync+20 || longCustom > shortCustom+20 {
		t.Errorf("a batch of two starts read %d (%d with SharedCheckpoints, %d planned for its parameters) buffers beside 1,200 runs with logs of 20 events, %d (%d, %d) beside 300; want about as many",
			long, longAsync, longCustom, short, shortAsync, shortCustom)
	}
	t.Logf("a batch of two starts: %d buffers (%d with SharedCheckpoints, %d planned for its parameters) beside 300 runs, %d (%d, %d) beside 1,200",
		short, shortAsync, shortCustom, long, longAsync, longCustom)
}

// TestStartRunEventWithdrawn: a start whose caller gives up while it
// waits for the write in flight is not written (written later, its event
// could follow the run's end, which the caller records next).
func TestStartRunEventWithdrawn(t *testing.T) {
	st, _ := newStartStore(t, false, "first", "gone")
	release, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.starts.hook = func(int) {
		once.Do(func() {
			close(held)
			<-release
		})
	}
	first := make(chan error, 1)
	go func() {
		_, _, err := st.StartRunEvent(t.Context(), "first", "cp", "metadata", json.RawMessage(`{}`), 0)
		first <- err
	}()
	<-held
	ctx, cancel := context.WithCancel(t.Context())
	gone := make(chan error, 1)
	go func() {
		_, _, err := st.StartRunEvent(ctx, "gone", "cp", "metadata", json.RawMessage(`{}`), 0)
		gone <- err
	}()
	for {
		st.starts.mu.Lock()
		n := 0
		if st.starts.next != nil {
			n = len(st.starts.next.reqs)
		}
		st.starts.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("start given up: %v; want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// Wait for the writing to stop: a withdrawn start would be written by now.
	for {
		st.starts.mu.Lock()
		running := st.starts.running
		st.starts.mu.Unlock()
		if !running {
			break
		}
		time.Sleep(time.Millisecond)
	}
	r, err := st.Run(t.Context(), "gone")
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := st.Events(t.Context(), "gone", -1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.Started || len(evs) != 0 {
		t.Errorf("the start given up before its write was written: started %v, %d events", r.Started, len(evs))
	}
}
