// Package servertest checks that a [server.Store] keeps the contract the
// server relies on: records round-trip with their hidden fields, runs of a
// thread are claimed one at a time in order, a lease that expired is taken
// over, due runs are found across threads, event logs are bounded and
// replayed from any id, finished runs are pruned, and a run's end with its
// last event is its worker's alone to record (EventEnder).
//
// A backend's tests call [Run] with a function that opens an empty store:
//
//	func TestStore(t *testing.T) {
//		servertest.Run(t, func(t *testing.T) server.Store { return open(t) })
//	}
package servertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/internal/heaptest"
)

// Run runs the conformance tests, each on a store open returns. open may
// skip the test (for a database that is not reachable). The tests of an
// optional interface (RunStarter, OwnerCounter, EventEnder, ByteCounter,
// AssistantStore) run for a store that implements it.
func Run(t *testing.T, open func(t *testing.T) server.Store) {
	probe := open(t)
	_, starter := probe.(server.RunStarter)
	_, counter := probe.(server.OwnerCounter)
	_, ender := probe.(server.EventEnder)
	_, last := probe.(server.LastEventReader)
	_, lastID := probe.(server.LastEventIDReader)
	_, bytes := probe.(server.ByteCounter)
	_, assistants := probe.(server.AssistantStore)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, server.Store)
	}{
		{"Threads", testThreads},
		{"SearchValues", testSearchValues},
		{"SortTimes", testSortTimes},
		{"SearchPage", testSearchPage},
		{"RunPage", testRunPage},
		{"ClaimOrder", testClaimOrder},
		{"ClaimDue", testClaimDue},
		{"ClaimConcurrent", testClaimConcurrent},
		{"Events", testEvents},
		{"Prune", testPrune},
		{"PruneKeep", testPruneKeep},
		{"Delete", testDelete},
		{"ActiveRuns", testActiveRuns},
		{"RunStarter", testRunStarter},
		{"OwnerCounter", testOwnerCounter},
		{"EventEnder", testEventEnder},
		{"LastEventReader", testLastEvent},
		{"LastEventIDReader", testLastEventID},
		{"ByteCounter", testByteCounter},
		{"AssistantStore", testAssistants},
	} {
		if c.name == "RunStarter" && !starter || c.name == "OwnerCounter" && !counter || c.name == "EventEnder" && !ender || c.name == "LastEventReader" && !last || c.name == "LastEventIDReader" && !lastID || c.name == "ByteCounter" && !bytes || c.name == "AssistantStore" && !assistants {
			continue
		}
		t.Run(c.name, func(t *testing.T) { c.fn(t, open(t)) })
	}
}

func thread(id, owner string) *server.Thread {
	now := time.Now().UTC()
	return &server.Thread{ID: id, Owner: owner, CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle, Metadata: map[string]any{"k": "v"}}
}

func run(id, tid string, created time.Time) *server.Run {
	return &server.Run{ID: id, ThreadID: tid, CreatedAt: created, UpdatedAt: created, Status: server.RunPending,
		Kwargs: json.RawMessage(`{"assistant_id":"g"}`), Owner: "alice", Metadata: map[string]any{"m": json.Number(bigInt)}}
}

// bigInt is an integer beyond 2^53: a store that reads metadata numbers
// as float64 rounds it to 9007199254740992.
const bigInt = "9007199254740993"

// metadataJSON returns m as JSON, for comparing metadata whatever Go type
// a store reads its numbers back as.
func metadataJSON(m map[string]any) string {
	b, err := json.Marshal(m)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func mustRun(t *testing.T, st server.Store, r *server.Run) {
	t.Helper()
	if err := st.CreateRun(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

func testThreads(t *testing.T, st server.Store) {
	ctx := t.Context()
	th := thread("t1", "alice")
	th.GraphID, th.Head, th.Rolled = "g", "cp", true
	th.Values = json.RawMessage(`{"a":1}`)
	th.Interrupts = map[string][]server.Interrupt{"task": {{ID: "i1", Value: json.RawMessage(`"q"`)}}}
	if err := st.CreateThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateThread(ctx, th); !errors.Is(err, server.ErrExists) {
		t.Fatalf("second CreateThread: %v; want ErrExists", err)
	}
	got, err := st.Thread(ctx, "t1")
	if err != nil || got.Owner != "alice" || got.GraphID != "g" || got.Head != "cp" || !got.Rolled || got.Metadata["k"] != "v" ||
		string(got.Values) != `{"a":1}` || len(got.Interrupts["task"]) != 1 || got.Interrupts["task"][0].ID != "i1" {
		t.Fatalf("Thread: %+v, %v", got, err)
	}
	if _, err := st.Thread(ctx, "nope"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Thread(nope): %v; want ErrNotFound", err)
	}
	stop := errors.New("stop")
	if _, err := st.UpdateThread(ctx, "t1", func(t *server.Thread) error { t.Status = server.ThreadError; return stop }); !errors.Is(err, stop) {
		t.Fatalf("UpdateThread with an error: %v", err)
	}
	if _, err := st.UpdateThread(ctx, "t1", func(t *server.Thread) error { t.Status = server.ThreadBusy; t.ID = "other"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Thread(ctx, "t1"); got == nil || got.Status != server.ThreadBusy {
		t.Fatalf("after UpdateThread: %+v; want busy (and the error aborts the first update)", got)
	}
	for i := range 3 {
		th := thread(fmt.Sprintf("t%d", i+2), "alice")
		th.CreatedAt = th.CreatedAt.Add(time.Duration(i+1) * time.Millisecond)
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	found, total, err := st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", Status: server.ThreadBusy, Metadata: map[string]any{"k": "v"}, Limit: 10})
	if err != nil || total != 1 || len(found) != 1 || found[0].ID != "t1" {
		t.Fatalf("SearchThreads busy: %d %d %v", len(found), total, err)
	}
	found, total, err = st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", Limit: 2, Offset: 1, SortDesc: true})
	if err != nil || total != 4 || len(found) != 2 || found[0].ID != "t3" || found[1].ID != "t2" {
		t.Fatalf("SearchThreads page: %v %d %v; want t3, t2 of 4", ids(found), total, err)
	}
	if found, _, _ := st.SearchThreads(ctx, server.ThreadQuery{Owner: "bob", Limit: 10}); len(found) != 0 {
		t.Fatalf("bob finds %d threads", len(found))
	}
}

// testSortTimes checks that SearchThreads sorts by created_at and
// updated_at as instants for times within one second, whose RFC 3339
// text (trailing zeros dropped) sorts otherwise: "05Z" after "05.5Z",
// "05.1Z" after "05.12Z". Thread ids run against the times, so that
// the order by id cannot pass for it.
func testSortTimes(t *testing.T, st server.Store) {
	ctx := t.Context()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	offsets := []time.Duration{0, 100 * time.Millisecond, 120 * time.Millisecond, 500 * time.Millisecond, 550 * time.Millisecond}
	var want []string
	for i, d := range offsets {
		th := thread(fmt.Sprintf("t%d", len(offsets)-i), "alice")
		th.CreatedAt, th.UpdatedAt = base.Add(d), base.Add(d)
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
		want = append(want, th.ID)
	}
	desc := slices.Clone(want)
	slices.Reverse(desc)
	for _, by := range []string{"", "created_at", "updated_at"} {
		found, _, err := st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", SortBy: by, Limit: 10})
		if err != nil || !slices.Equal(ids(found), want) {
			t.Errorf("SearchThreads sorted by %q: %v, %v; want %v (oldest first)", by, ids(found), err, want)
		}
		found, _, err = st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", SortBy: by, SortDesc: true, Limit: 10})
		if err != nil || !slices.Equal(ids(found), desc) {
			t.Errorf("SearchThreads sorted by %q descending: %v, %v; want %v", by, ids(found), err, desc)
		}
	}
}

// testSearchValues checks the Values filter of SearchThreads, alone and
// with the other filters, and the count it returns whatever the page.
func testSearchValues(t *testing.T, st server.Store) {
	ctx := t.Context()
	// v5's values hold a "\u0000", which JSON allows and PostgreSQL's jsonb
	// does not: the filter must still read them.
	for i, vals := range []string{`{"topic":"go","n":1,"tags":["a","b"]}`, `{"topic":"go","n":2}`, `{"topic":"rust","n":1}`, ``, `[1,2]`, `{"topic":"nul\u0000","n":3}`} {
		th := thread(fmt.Sprintf("v%d", i), "alice")
		if vals != "" {
			th.Values = json.RawMessage(vals)
		}
		if i == 1 {
			th.Metadata = map[string]any{"k": "other"}
		}
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	other := thread("bob1", "bob")
	other.Values = json.RawMessage(`{"topic":"go","n":1}`)
	if err := st.CreateThread(ctx, other); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    server.ThreadQuery
		want []string
	}{
		{server.ThreadQuery{Values: map[string]any{"topic": "go"}}, []string{"v0", "v1"}},
		{server.ThreadQuery{Values: map[string]any{"topic": "go", "n": 1}}, []string{"v0"}},
		{server.ThreadQuery{Values: map[string]any{"n": 1.0}}, []string{"v0", "v2"}},
		{server.ThreadQuery{Values: map[string]any{"tags": []any{"a", "b"}}}, []string{"v0"}},
		// Containment, as jsonb @>: an array matches one with more
		// elements, in any order; an element it lacks does not.
		{server.ThreadQuery{Values: map[string]any{"tags": []any{"a"}}}, []string{"v0"}},
		{server.ThreadQuery{Values: map[string]any{"tags": []any{"b", "a"}}}, []string{"v0"}},
		{server.ThreadQuery{Values: map[string]any{"tags": []any{"c"}}}, nil},
		{server.ThreadQuery{Values: map[string]any{"tags": "a"}}, nil},
		{server.ThreadQuery{Values: map[string]any{"topic": "go"}, Metadata: map[string]any{"k": "v"}}, []string{"v0"}},
		{server.ThreadQuery{Values: map[string]any{"missing": nil}}, nil},
		{server.ThreadQuery{Values: map[string]any{"topic": "nul\x00"}}, []string{"v5"}},
		{server.ThreadQuery{Values: map[string]any{"n": 3}}, []string{"v5"}},
	} {
		c.q.Owner, c.q.SortBy = "alice", "thread_id"
		c.q.Limit = 1 // the count is of every thread selected, not of the page
		found, total, err := st.SearchThreads(ctx, c.q)
		if err != nil {
			t.Fatalf("SearchThreads %+v: %v", c.q.Values, err)
		}
		if total != len(c.want) || len(c.want) > 0 && (len(found) != 1 || found[0].ID != c.want[0]) {
			t.Errorf("SearchThreads values %v metadata %v: %v of %d; want %v", c.q.Values, c.q.Metadata, ids(found), total, c.want)
		}
	}
	found, total, err := st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", SortBy: "thread_id", Values: map[string]any{"topic": "go"}, Offset: 1, Limit: 1})
	if err != nil || total != 2 || len(found) != 1 || found[0].ID != "v1" {
		t.Errorf("SearchThreads values topic go, offset 1: %v of %d, %v; want [v1] of 2", ids(found), total, err)
	}
}

func ids(ts []*server.Thread) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func testClaimOrder(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	mustRun(t, st, run("r1", "t1", now.Add(-time.Second)))
	mustRun(t, st, run("r2", "t1", now.Add(-time.Second+time.Millisecond)))
	if err := st.CreateRun(ctx, run("r1", "t1", now)); !errors.Is(err, server.ErrExists) {
		t.Fatalf("second CreateRun: %v; want ErrExists", err)
	}
	c, err := st.Claim(ctx, "t1", "w1", time.Minute)
	if err != nil || c == nil || c.ID != "r1" || c.Status != server.RunRunning || c.Worker != "w1" || c.Attempt != 1 || metadataJSON(c.Metadata) != `{"m":`+bigInt+`}` {
		t.Fatalf("Claim: %+v, %v; want r1 running for w1, attempt 1, metadata {\"m\":%s} (the number as sent)", c, err, bigInt)
	}
	if c, err := st.Claim(ctx, "t1", "w2", time.Minute); err != nil || c != nil {
		t.Fatalf("Claim while r1 runs: %+v, %v; want nothing", c, err)
	}
	if err := st.Renew(ctx, "r1", "w2", time.Minute); err == nil {
		t.Fatal("w2 renewed w1's lease")
	}
	if err := st.Renew(ctx, "r1", "w1", time.Minute); err != nil {
		t.Fatalf("w1 renews its lease: %v", err)
	}
	// A lease that expired is taken over, as a new attempt.
	if _, err := st.UpdateRun(ctx, "r1", func(r *server.Run) error {
		r.LeaseUntil, r.Started, r.Start, r.Cancel = time.Now().Add(-time.Second), true, "cp1", "interrupt"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c, err = st.Claim(ctx, "t1", "w2", time.Minute)
	if err != nil || c == nil || c.ID != "r1" || c.Worker != "w2" || c.Attempt != 2 || !c.Started || c.Start != "cp1" || c.Cancel != "interrupt" {
		t.Fatalf("Claim after the lease expired: %+v, %v; want r1 for w2, attempt 2, with Started, Start and Cancel kept", c, err)
	}
	if _, err := st.UpdateRun(ctx, "r1", func(r *server.Run) error { r.Status, r.Error = server.RunError, "boom"; return nil }); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Run(ctx, "r1"); err != nil || r.Error != "boom" || r.Status != server.RunError || r.Owner != "alice" {
		t.Fatalf("Run r1: %+v, %v", r, err)
	}
	if c, _ := st.Claim(ctx, "t1", "w1", time.Minute); c == nil || c.ID != "r2" {
		t.Fatalf("next claim: %+v; want r2", c)
	}
	// A delayed run waits for its time.
	mustRun(t, st, run("r3", "t1", now.Add(time.Hour)))
	if _, err := st.UpdateRun(ctx, "r2", func(r *server.Run) error { r.Status = server.RunSuccess; return nil }); err != nil {
		t.Fatal(err)
	}
	if c, _ := st.Claim(ctx, "t1", "w1", time.Minute); c != nil {
		t.Fatalf("claimed %s, a run delayed by an hour", c.ID)
	}
	runs, err := st.Runs(ctx, server.RunQuery{ThreadID: "t1"})
	if err != nil || len(runs) != 3 || runs[0].ID != "r1" || runs[2].ID != "r3" {
		t.Fatalf("Runs: %v, %v", runs, err)
	}
	if runs, _ := st.Runs(ctx, server.RunQuery{ThreadID: "t1", Status: server.RunSuccess}); len(runs) != 1 || runs[0].ID != "r2" {
		t.Fatalf("Runs(success): %v", runs)
	}
}

func testClaimDue(t *testing.T, st server.Store) {
	ctx := t.Context()
	now := time.Now().UTC()
	if c, err := st.ClaimDue(ctx, "w", time.Minute); c != nil || err != nil {
		t.Fatalf("ClaimDue on an empty store: %+v, %v", c, err)
	}
	for _, tid := range []string{"ta", "tb", "tc"} {
		if err := st.CreateThread(ctx, thread(tid, "alice")); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, st, run("a1", "ta", now.Add(-3*time.Second)))
	mustRun(t, st, run("a2", "ta", now.Add(-2*time.Second)))
	mustRun(t, st, run("b1", "tb", now.Add(-time.Second)))
	mustRun(t, st, run("c1", "tc", now.Add(time.Hour))) // delayed
	got := map[string]bool{}
	for {
		c, err := st.ClaimDue(ctx, "w", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			break
		}
		if got[c.ID] || len(got) > 3 {
			t.Fatalf("ClaimDue claimed %s again (claimed %v)", c.ID, got)
		}
		got[c.ID] = true
	}
	// One run per thread: a2 waits for a1, c1 for its time.
	if len(got) != 2 || !got["a1"] || !got["b1"] {
		t.Fatalf("ClaimDue claimed %v; want a1 and b1", got)
	}
	if _, err := st.UpdateRun(ctx, "a1", func(r *server.Run) error { r.LeaseUntil = time.Now().Add(-time.Second); return nil }); err != nil {
		t.Fatal(err)
	}
	if c, err := st.ClaimDue(ctx, "w2", time.Minute); err != nil || c == nil || c.ID != "a1" || c.Attempt != 2 || c.Worker != "w2" {
		t.Fatalf("ClaimDue after a1's lease expired: %+v, %v; want a1, attempt 2", c, err)
	}
	if _, err := st.UpdateRun(ctx, "a1", func(r *server.Run) error { r.Status = server.RunSuccess; return nil }); err != nil {
		t.Fatal(err)
	}
	if c, err := st.ClaimDue(ctx, "w2", time.Minute); err != nil || c == nil || c.ID != "a2" {
		t.Fatalf("ClaimDue after a1 ended: %+v, %v; want a2", c, err)
	}
}

// testClaimConcurrent claims one thread's runs from many goroutines at
// once: each run is claimed once, and never two of the thread at a time.
func testClaimConcurrent(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	const runs = 8
	now := time.Now().UTC()
	for i := range runs {
		mustRun(t, st, run(fmt.Sprintf("r%d", i), "t1", now.Add(-time.Minute+time.Duration(i)*time.Millisecond)))
	}
	var mu sync.Mutex
	var order []string
	outstanding := "" // the run claimed and not yet ended
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w%d", w)
			for range 200 {
				var c *server.Run
				var err error
				if w%2 == 0 {
					c, err = st.Claim(ctx, "t1", worker, time.Minute)
				} else {
					c, err = st.ClaimDue(ctx, worker, time.Minute)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if c == nil {
					mu.Lock()
					done := len(order) == runs
					mu.Unlock()
					if done {
						return
					}
					continue
				}
				mu.Lock()
				order = append(order, c.ID)
				if outstanding != "" {
					t.Errorf("%s claimed %s while %s of the same thread was running", worker, c.ID, outstanding)
				}
				outstanding = c.ID
				mu.Unlock()
				// The run stops being outstanding before the store records
				// its end, so a claim of the next one cannot come first.
				if _, err := st.UpdateRun(ctx, c.ID, func(r *server.Run) error {
					mu.Lock()
					if outstanding == c.ID {
						outstanding = ""
					}
					mu.Unlock()
					r.Status = server.RunSuccess
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(order) != runs {
		t.Fatalf("claimed %v; want each of %d runs once", order, runs)
	}
	for i, id := range order {
		if id != fmt.Sprintf("r%d", i) {
			t.Fatalf("claimed in the order %v; want r0..r%d", order, runs-1)
		}
	}
}

func testEvents(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, st, run("r1", "t1", time.Now().UTC()))
	if evs, first, err := st.Events(ctx, "r1", -1, 0); err != nil || len(evs) != 0 || first != 0 {
		t.Fatalf("Events of an empty log: %v first %d, %v", evs, first, err)
	}
	for i := range 5 {
		ev, err := st.AppendEvent(ctx, "r1", "values", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), 3)
		if err != nil || ev.ID != int64(i) || ev.Name != "values" {
			t.Fatalf("AppendEvent %d: %+v, %v", i, ev, err)
		}
	}
	evs, first, err := st.Events(ctx, "r1", -1, 0)
	if err != nil || first != 2 || len(evs) != 3 || evs[0].ID != 2 || string(evs[2].Data) != `{"i":4}` || evs[2].Name != "values" {
		t.Fatalf("Events: %+v first %d, %v; want the last 3 of 5", evs, first, err)
	}
	if evs, _, _ := st.Events(ctx, "r1", 3, 1); len(evs) != 1 || evs[0].ID != 4 {
		t.Fatalf("Events after 3: %+v", evs)
	}
	if evs, _, _ := st.Events(ctx, "r1", 2, 10); len(evs) != 2 || evs[0].ID != 3 {
		t.Fatalf("Events after 2: %+v", evs)
	}
	if evs, _, _ := st.Events(ctx, "r1", 4, 10); len(evs) != 0 {
		t.Fatalf("Events after the last: %+v", evs)
	}
	if _, err := st.AppendEvent(ctx, "nope", "x", json.RawMessage(`1`), 3); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("AppendEvent to a missing run: %v", err)
	}
	if _, _, err := st.Events(ctx, "nope", -1, 0); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Events of a missing run: %v", err)
	}
	// An unbounded log keeps everything.
	mustRun(t, st, run("r2", "t1", time.Now().UTC()))
	for range 50 {
		if _, err := st.AppendEvent(ctx, "r2", "custom", json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	if evs, first, _ := st.Events(ctx, "r2", -1, 0); len(evs) != 50 || first != 0 || evs[49].ID != 49 {
		t.Fatalf("unbounded log: %d events, first %d", len(evs), first)
	}
}

// testLastEvent checks LastEventReader: no event for a run without one
// (or no run) or without one of the name asked, then the newest of the
// name in a log, bounded or not, when events of other names follow it.
// testLastEventID: LastEventID answers the id of the log's last event,
// as Events reads it, past the events the log dropped (max), and none
// for a run without events or no run.
func testLastEventID(t *testing.T, st server.Store) {
	ctx := t.Context()
	lr := st.(server.LastEventIDReader)
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, st, run("r1", "t1", time.Now().UTC()))
	for _, id := range []string{"r1", "nope"} {
		if last, found, err := lr.LastEventID(ctx, id); err != nil || found {
			t.Fatalf("LastEventID of %s, without events: %d %v, %v; want none", id, last, found, err)
		}
	}
	for i := range 5 {
		name := "values"
		if i%2 == 1 {
			name = "custom"
		}
		if _, err := st.AppendEvent(ctx, "r1", name, json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), 3); err != nil {
			t.Fatal(err)
		}
		last, found, err := lr.LastEventID(ctx, "r1")
		evs, _, eerr := st.Events(ctx, "r1", -1, 0)
		if err != nil || eerr != nil || !found || last != int64(i) || len(evs) == 0 || evs[len(evs)-1].ID != last {
			t.Fatalf("LastEventID after %d appends: %d %v, %v (events %+v, %v); want %d, the last event's", i+1, last, found, err, evs, eerr, i)
		}
	}
}

func testLastEvent(t *testing.T, st server.Store) {
	ctx := t.Context()
	lr := st.(server.LastEventReader)
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, st, run("r1", "t1", time.Now().UTC()))
	for _, id := range []string{"r1", "nope"} {
		if ev, found, err := lr.LastEvent(ctx, id, "values"); err != nil || found {
			t.Fatalf("LastEvent of %s, without events: %+v %v, %v; want none", id, ev, found, err)
		}
	}
	for i := range 5 {
		if _, err := st.AppendEvent(ctx, "r1", "values", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), 3); err != nil {
			t.Fatal(err)
		}
		ev, found, err := lr.LastEvent(ctx, "r1", "values")
		if err != nil || !found || ev.ID != int64(i) || ev.Name != "values" || string(ev.Data) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("LastEvent after %d appends: %+v %v, %v; want event %d", i+1, ev, found, err, i)
		}
	}
	if ev, found, err := lr.LastEvent(ctx, "r1", "error"); err != nil || found {
		t.Fatalf("LastEvent of a name no event has: %+v %v, %v; want none", ev, found, err)
	}
	// An error event, then events of other names after it (as an
	// execution that lost the run's lease may append): the error event
	// is still the newest of its name.
	if _, err := st.AppendEvent(ctx, "r1", "error", json.RawMessage(`{"error":"NodeError"}`), 3); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 7; i++ {
		if _, err := st.AppendEvent(ctx, "r1", "values", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), 3); err != nil {
			t.Fatal(err)
		}
	}
	ev, found, err := lr.LastEvent(ctx, "r1", "error")
	if err != nil || !found || ev.ID != 5 || ev.Name != "error" || string(ev.Data) != `{"error":"NodeError"}` {
		t.Fatalf("LastEvent of the error followed by other events: %+v %v, %v; want event 5", ev, found, err)
	}
	if ev, _, err := lr.LastEvent(ctx, "r1", "values"); err != nil || ev.ID != 7 {
		t.Fatalf("LastEvent of the values read again: %+v, %v; want event 7", ev, err)
	}
}

func testPrune(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().UTC().Add(-time.Hour)
	for _, id := range []string{"done", "recent", "running"} {
		mustRun(t, st, run(id, "t1", old))
		if _, err := st.AppendEvent(ctx, id, "values", json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	set := func(id, status string, at time.Time) {
		if _, err := st.UpdateRun(ctx, id, func(r *server.Run) error { r.Status, r.UpdatedAt = status, at; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	set("done", server.RunSuccess, old)
	set("recent", server.RunSuccess, time.Now().UTC())
	set("running", server.RunRunning, old)
	n, err := st.Prune(ctx, time.Now().Add(-time.Minute), 0)
	if err != nil || n != 1 {
		t.Fatalf("Prune: %d, %v; want 1 run pruned", n, err)
	}
	r, err := st.Run(ctx, "done")
	if err != nil || r.Status != server.RunSuccess || len(r.Kwargs) != 0 && string(r.Kwargs) != "null" {
		t.Fatalf("pruned run: %+v, %v; want its record without kwargs", r, err)
	}
	if evs, _, err := st.Events(ctx, "done", -1, 0); err != nil || len(evs) != 0 {
		t.Fatalf("pruned run's events: %v, %v; want none", evs, err)
	}
	for _, id := range []string{"recent", "running"} {
		if evs, _, _ := st.Events(ctx, id, -1, 0); len(evs) != 1 {
			t.Fatalf("run %s lost its events to Prune", id)
		}
	}
	if n, err := st.Prune(ctx, time.Now().Add(-time.Minute), 0); err != nil || n != 0 {
		t.Fatalf("second Prune: %d, %v; want 0", n, err)
	}
}

// testPruneKeep: Prune with keep deletes each thread's oldest ended
// runs past its keep newest, records and event logs, and leaves
// pending and running runs, other threads and the event logs of the
// runs it keeps.
func testPruneKeep(t *testing.T, st server.Store) {
	ctx := t.Context()
	for _, id := range []string{"t1", "t2"} {
		if err := st.CreateThread(ctx, thread(id, "alice")); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().UTC().Add(-time.Hour)
	// t1, oldest first; t2 holds two ended runs, within keep.
	runs := []struct{ id, thread, status string }{
		{"a1", "t1", server.RunSuccess}, {"b1", "t2", server.RunSuccess}, {"a2", "t1", server.RunPending},
		{"a3", "t1", server.RunError}, {"a4", "t1", server.RunSuccess}, {"b2", "t2", server.RunError},
		{"a5", "t1", server.RunRunning}, {"a6", "t1", server.RunSuccess},
	}
	for i, r := range runs {
		at := start.Add(time.Duration(i) * time.Minute)
		mustRun(t, st, run(r.id, r.thread, at))
		if _, err := st.AppendEvent(ctx, r.id, "values", json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateRun(ctx, r.id, func(x *server.Run) error { x.Status = r.status; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.Prune(ctx, time.Time{}, 2)
	if err != nil || n != 2 {
		t.Fatalf("Prune(keep 2): %d, %v; want 2 runs deleted (a1, a3)", n, err)
	}
	for _, id := range []string{"a1", "a3"} {
		if r, err := st.Run(ctx, id); !errors.Is(err, server.ErrNotFound) {
			t.Errorf("run %s past keep: %+v, %v; want ErrNotFound", id, r, err)
		}
		if evs, _, err := st.Events(ctx, id, -1, 0); len(evs) != 0 || !errors.Is(err, server.ErrNotFound) {
			t.Errorf("events of deleted run %s: %v, %v; want ErrNotFound", id, evs, err)
		}
	}
	for _, th := range []struct {
		id   string
		want []string
	}{{"t1", []string{"a2", "a4", "a5", "a6"}}, {"t2", []string{"b1", "b2"}}} {
		rs, err := st.Runs(ctx, server.RunQuery{ThreadID: th.id})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.ID)
			// A zero endedBefore prunes nothing by age: every kept run
			// keeps its log and kwargs.
			if evs, _, err := st.Events(ctx, r.ID, -1, 0); err != nil || len(evs) != 1 {
				t.Errorf("kept run %s: events %v, %v; want its 1 event", r.ID, evs, err)
			}
			if len(r.Kwargs) == 0 || string(r.Kwargs) == "null" {
				t.Errorf("kept run %s lost its kwargs", r.ID)
			}
		}
		if !slices.Equal(got, th.want) {
			t.Errorf("thread %s runs after Prune(keep 2): %v; want %v", th.id, got, th.want)
		}
	}
	if n, err := st.Prune(ctx, time.Time{}, 2); err != nil || n != 0 {
		t.Fatalf("second Prune(keep 2): %d, %v; want 0", n, err)
	}
	// A run that ends makes a third ended run on t1: the oldest goes.
	if _, err := st.UpdateRun(ctx, "a5", func(x *server.Run) error { x.Status = server.RunSuccess; return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Prune(ctx, time.Time{}, 2); err != nil || n != 1 {
		t.Fatalf("Prune after a5 ended: %d, %v; want 1 (a4)", n, err)
	}
	if _, err := st.Run(ctx, "a4"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("run a4 after a5 ended: %v; want ErrNotFound", err)
	}
	if _, err := st.Run(ctx, "a2"); err != nil {
		t.Errorf("pending run a2: %v; want kept", err)
	}
}

func testDelete(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, st, run("r1", "t1", time.Now().UTC()))
	mustRun(t, st, run("r2", "t1", time.Now().UTC()))
	if _, err := st.AppendEvent(ctx, "r2", "values", json.RawMessage(`{}`), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRun(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Run(ctx, "r1"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("a deleted run: %v", err)
	}
	if err := st.DeleteRun(ctx, "r1"); err != nil {
		t.Fatalf("deleting a missing run: %v", err)
	}
	if err := st.DeleteThread(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteThread(ctx, "t1"); err != nil {
		t.Fatalf("deleting a missing thread: %v", err)
	}
	if _, err := st.Run(ctx, "r2"); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("a deleted thread's run: %v", err)
	}
	if _, _, err := st.Events(ctx, "r2", -1, 0); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("a deleted thread's events: %v", err)
	}
	if c, err := st.ClaimDue(ctx, "w", time.Minute); c != nil || err != nil {
		t.Fatalf("ClaimDue after the thread was deleted: %+v, %v", c, err)
	}
}

// testActiveRuns checks Runs with status pending and running as runs
// start, end, come back (a released claim) and are deleted, and
// ActiveRuns when the store is a server.ActiveRunLister: running runs
// first, then pending ones, each oldest first.
func testActiveRuns(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, id := range []string{"a", "b", "c", "d"} {
		mustRun(t, st, run(id, "t1", now.Add(time.Duration(i-10)*time.Millisecond)))
	}
	set := func(id, status string) {
		t.Helper()
		if _, err := st.UpdateRun(ctx, id, func(r *server.Run) error { r.Status = status; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, running, pending, active []string) {
		t.Helper()
		got := func(status string) []string {
			rs, err := st.Runs(ctx, server.RunQuery{ThreadID: "t1", Status: status})
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		if g := got(server.RunRunning); !slices.Equal(g, running) {
			t.Errorf("%s: running runs %v; want %v", when, g, running)
		}
		if g := got(server.RunPending); !slices.Equal(g, pending) {
			t.Errorf("%s: pending runs %v; want %v", when, g, pending)
		}
		if l, ok := st.(server.ActiveRunLister); ok {
			rs, err := l.ActiveRuns(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			g := []string{}
			for _, r := range rs {
				g = append(g, r.ID)
			}
			if !slices.Equal(g, active) {
				t.Errorf("%s: ActiveRuns %v; want %v", when, g, active)
			}
		}
	}
	check("created", []string{}, []string{"a", "b", "c", "d"}, []string{"a", "b", "c", "d"})
	set("c", server.RunRunning)
	set("a", server.RunSuccess)
	check("a ended, c runs", []string{"c"}, []string{"b", "d"}, []string{"c", "b", "d"})
	set("a", server.RunPending) // a run given back comes back in its place
	check("a back", []string{"c"}, []string{"a", "b", "d"}, []string{"c", "a", "b", "d"})
	if err := st.DeleteRun(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	set("c", server.RunInterrupted)
	check("b deleted, c ended", []string{}, []string{"a", "d"}, []string{"a", "d"})
}

// testRunStarter checks a [server.RunStarter]'s StartRunEvent: the run
// marked started with its start, the run's Cancel returned, the event
// appended after the run's others, capped as AppendEvent caps; a second
// start keeps the first's start; a missing run is ErrNotFound.
func testRunStarter(t *testing.T, st server.Store) {
	rs, ok := st.(server.RunStarter)
	if !ok {
		t.Fatal("the store is no server.RunStarter")
	}
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, st, run("r1", "t1", time.Now().UTC()))
	for i := range 2 {
		if _, err := st.AppendEvent(ctx, "r1", "values", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), 2); err != nil {
			t.Fatal(err)
		}
	}
	// A cancellation asked of the run before its start (another
	// instance's askCancel) is what the start returns.
	if _, err := st.UpdateRun(ctx, "r1", func(r *server.Run) error { r.Cancel = "interrupt"; return nil }); err != nil {
		t.Fatal(err)
	}
	cancel, ev, err := rs.StartRunEvent(ctx, "r1", "cp1", "metadata", json.RawMessage(`{"run_id":"r1"}`), 2)
	if err != nil || cancel != "interrupt" {
		t.Fatalf("StartRunEvent: cancel %q, %v; want the run's Cancel %q", cancel, err, "interrupt")
	}
	if ev.ID != 2 || ev.Name != "metadata" || string(ev.Data) != `{"run_id":"r1"}` {
		t.Fatalf("StartRunEvent's event: %+v; want metadata at 2", ev)
	}
	evs, first, err := st.Events(ctx, "r1", -1, 0)
	if err != nil || first != 1 || len(evs) != 2 || evs[1].ID != 2 || evs[1].Name != "metadata" || string(evs[1].Data) != `{"run_id":"r1"}` {
		t.Fatalf("Events: %+v first %d, %v; want the 2 last of 3, the metadata event last", evs, first, err)
	}
	if got, err := st.Run(ctx, "r1"); err != nil || !got.Started || got.Start != "cp1" {
		t.Fatalf("Run after StartRunEvent: %+v, %v; want started at cp1", got, err)
	}
	if _, err := st.UpdateRun(ctx, "r1", func(r *server.Run) error { r.Cancel = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	cancel, ev, err = rs.StartRunEvent(ctx, "r1", "cp2", "metadata", json.RawMessage(`{}`), 0)
	if err != nil || cancel != "" || ev.ID != 3 {
		t.Fatalf("a second StartRunEvent: cancel %q, %+v, %v; want no cancellation and the event at 3", cancel, ev, err)
	}
	if got, err := st.Run(ctx, "r1"); err != nil || !got.Started || got.Start != "cp1" {
		t.Fatalf("Run after a second StartRunEvent: %+v, %v; want the start cp1 kept", got, err)
	}
	if _, _, err := rs.StartRunEvent(ctx, "nope", "cp1", "metadata", json.RawMessage(`{}`), 0); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("StartRunEvent of a missing run: %v; want ErrNotFound", err)
	}
	if _, _, err := st.Events(ctx, "nope", -1, 0); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Events of the missing run after StartRunEvent: %v; want ErrNotFound (nothing written)", err)
	}
}

// testOwnerCounter checks a [server.OwnerCounter]: each owner's threads,
// and its pending and running runs on all its threads, not another's and
// not those that ended; a deleted thread's runs no longer count.
func testOwnerCounter(t *testing.T, st server.Store) {
	ctx := t.Context()
	c := st.(server.OwnerCounter)
	for _, th := range []*server.Thread{thread("t1", "alice"), thread("t2", "alice"), thread("t3", "bob")} {
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	for i, r := range []struct{ id, tid, owner, status string }{
		{"a", "t1", "alice", server.RunRunning}, {"b", "t1", "alice", server.RunPending}, {"c", "t2", "alice", server.RunPending},
		{"d", "t2", "alice", server.RunSuccess}, {"e", "t3", "bob", server.RunPending},
	} {
		x := run(r.id, r.tid, now.Add(time.Duration(i)*time.Millisecond))
		x.Owner, x.Status = r.owner, r.status
		mustRun(t, st, x)
	}
	check := func(when, owner string, threads, active int) {
		t.Helper()
		if n, err := c.CountThreads(ctx, owner); err != nil || n != threads {
			t.Errorf("%s: CountThreads(%q) = %d, %v; want %d", when, owner, n, err, threads)
		}
		if n, err := c.CountActiveRuns(ctx, owner); err != nil || n != active {
			t.Errorf("%s: CountActiveRuns(%q) = %d, %v; want %d", when, owner, n, err, active)
		}
	}
	check("created", "alice", 2, 3)
	check("created", "bob", 1, 1)
	check("created", "carol", 0, 0)
	if _, err := st.UpdateRun(ctx, "a", func(r *server.Run) error { r.Status = server.RunSuccess; return nil }); err != nil {
		t.Fatal(err)
	}
	check("a ended", "alice", 2, 2)
	if err := st.DeleteThread(ctx, "t2"); err != nil {
		t.Fatal(err)
	}
	check("t2 deleted", "alice", 1, 1)
	check("t2 deleted", "bob", 1, 1)
}

// testEventEnder checks a [server.EventEnder]'s EndRunEvent: an end that
// names a worker and attempt the run is not running under (another
// worker, another attempt, or the run already ended) is ErrLeaseLost and
// writes nothing, neither the event nor the end; a missing run is
// ErrNotFound, with no log created; the run's worker's end records the
// run ended (its worker cleared, its time kept) and appends the event
// after the run's others; an end that names no worker is recorded
// whoever runs the run.
func testEventEnder(t *testing.T, st server.Store) {
	ee, ok := st.(server.EventEnder)
	if !ok {
		t.Fatal("the store is no server.EventEnder")
	}
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, id := range []string{"r1", "r2"} {
		r := run(id, "t1", now)
		r.Status, r.Worker, r.Attempt, r.LeaseUntil, r.Started = server.RunRunning, "w", 1, now.Add(time.Hour), true
		mustRun(t, st, r)
		if _, err := st.AppendEvent(ctx, id, "values", json.RawMessage(`{"i":0}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	at := now.Add(time.Second)
	end := func(runID, worker string, attempt int) server.RunEnd {
		return server.RunEnd{RunID: runID, ThreadID: "t1", EventName: "end", EventData: json.RawMessage(`{"status":"success"}`),
			Status: server.RunSuccess, At: at, Worker: worker, Attempt: attempt}
	}
	unchanged := func(what string) {
		t.Helper()
		if r, err := st.Run(ctx, "r1"); err != nil || r.Status != server.RunRunning || r.Worker != "w" || r.Attempt != 1 {
			t.Fatalf("r1 after %s: %+v, %v; want it running under w, attempt 1", what, r, err)
		}
		if evs, _, err := st.Events(ctx, "r1", -1, 0); err != nil || len(evs) != 1 {
			t.Fatalf("r1's events after %s: %+v, %v; want its one event", what, evs, err)
		}
	}
	for _, stale := range []struct {
		worker  string
		attempt int
	}{{"w2", 1}, {"w", 2}} {
		if r, _, err := ee.EndRunEvent(ctx, end("r1", stale.worker, stale.attempt)); !errors.Is(err, server.ErrLeaseLost) || r != nil {
			t.Fatalf("EndRunEvent by worker %s attempt %d of r1, running under w attempt 1: %+v, %v; want ErrLeaseLost", stale.worker, stale.attempt, r, err)
		}
		unchanged(fmt.Sprintf("the end by worker %s attempt %d", stale.worker, stale.attempt))
	}
	if _, _, err := ee.EndRunEvent(ctx, end("nope", "w", 1)); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("EndRunEvent of a missing run: %v; want ErrNotFound", err)
	}
	if _, _, err := st.Events(ctx, "nope", -1, 0); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("Events of the missing run after EndRunEvent: %v; want ErrNotFound (nothing written)", err)
	}
	r, ev, err := ee.EndRunEvent(ctx, end("r1", "w", 1))
	if err != nil || r == nil || r.ID != "r1" || r.Status != server.RunSuccess || r.Worker != "" || !r.UpdatedAt.Equal(at) {
		t.Fatalf("EndRunEvent by the run's worker: %+v, %v; want r1 ended success at %v, no worker", r, err, at)
	}
	if ev.ID != 1 || ev.Name != "end" || string(ev.Data) != `{"status":"success"}` {
		t.Fatalf("EndRunEvent's event: %+v; want end at 1", ev)
	}
	if got, err := st.Run(ctx, "r1"); err != nil || got.Status != server.RunSuccess || got.Worker != "" || !got.UpdatedAt.Equal(at) {
		t.Fatalf("r1 read after its end: %+v, %v; want success at %v, no worker", got, err, at)
	}
	evs, _, err := st.Events(ctx, "r1", -1, 0)
	if err != nil || len(evs) != 2 || evs[1].ID != 1 || evs[1].Name != "end" {
		t.Fatalf("r1's events after its end: %+v, %v; want the end event at 1, after the run's other", evs, err)
	}
	if r, _, err := ee.EndRunEvent(ctx, end("r1", "w", 1)); !errors.Is(err, server.ErrLeaseLost) || r != nil {
		t.Fatalf("a second EndRunEvent by the worker of r1, ended: %+v, %v; want ErrLeaseLost", r, err)
	}
	if evs, _, err := st.Events(ctx, "r1", -1, 0); err != nil || len(evs) != 2 {
		t.Fatalf("r1's events after a second end: %+v, %v; want the 2 it had", evs, err)
	}
	if r, ev, err := ee.EndRunEvent(ctx, end("r2", "", 0)); err != nil || r == nil || r.Status != server.RunSuccess || ev.ID != 1 {
		t.Fatalf("EndRunEvent naming no worker: %+v %+v, %v; want r2 ended, its event at 1", r, ev, err)
	}
}

// testRunPage checks Runs' page: the order (oldest or newest first), the
// status filter, Offset and Limit, and MaxBytes, at which a store may
// stop only after the run that takes the page past it; and that a page
// of a thread of many large runs is read alone, not with the rest of
// the thread's runs.
func testRunPage(t *testing.T, st server.Store) {
	ctx := t.Context()
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	const n, pad = 40, 100 << 10
	kwargs := json.RawMessage(`{"input":"` + strings.Repeat("x", pad) + `"}`)
	base := time.Now().UTC()
	var all []string // oldest first
	for i := range n {
		r := run(fmt.Sprintf("r%02d", i), "t1", base.Add(time.Duration(i)*time.Millisecond))
		r.Kwargs = kwargs
		if i%3 == 0 {
			r.Status = server.RunSuccess
		}
		mustRun(t, st, r)
		all = append(all, r.ID)
	}
	newest := slices.Clone(all)
	slices.Reverse(newest)
	runIDs := func(rs []*server.Run) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, c := range []struct {
		q    server.RunQuery
		want []string
	}{
		{server.RunQuery{ThreadID: "t1", Limit: 3}, all[:3]},
		{server.RunQuery{ThreadID: "t1", Newest: true, Limit: 3}, newest[:3]},
		{server.RunQuery{ThreadID: "t1", Newest: true, Offset: 38, Limit: 3}, newest[38:]},
		{server.RunQuery{ThreadID: "t1", Newest: true, Offset: 40, Limit: 3}, []string{}},
		{server.RunQuery{ThreadID: "t1", Status: server.RunSuccess, Newest: true, Offset: 1, Limit: 2}, []string{"r36", "r33"}},
		{server.RunQuery{ThreadID: "t1", Status: server.RunPending, Offset: 1, Limit: 2}, []string{"r02", "r04"}},
		{server.RunQuery{ThreadID: "t2", Limit: 2}, []string{}},
	} {
		got, err := st.Runs(ctx, c.q)
		if err != nil || !slices.Equal(runIDs(got), c.want) {
			t.Errorf("Runs(%+v) = %v, %v; want %v", c.q, runIDs(got), err, c.want)
		}
	}
	// MaxBytes: the page is a prefix of the order that holds every run
	// up to the one past the bound.
	for _, max := range []int{1, 2*pad + pad/2} {
		q := server.RunQuery{ThreadID: "t1", Newest: true, Limit: 10, MaxBytes: max}
		got, err := st.Runs(ctx, q)
		if err != nil || len(got) == 0 || !slices.Equal(runIDs(got), newest[:len(got)]) {
			t.Fatalf("Runs(%+v) = %v, %v; want a prefix of %v", q, runIDs(got), err, newest[:10])
		}
		size := 0
		for i, r := range got {
			if i > 0 && size > max {
				t.Fatalf("Runs(MaxBytes %d) returned %v: runs after the one past the bound", max, runIDs(got))
			}
			size += r.Size()
		}
		if len(got) < 10 && size <= max {
			t.Fatalf("Runs(MaxBytes %d) returned %v, %d bytes: stopped before the bound", max, runIDs(got), size)
		}
	}
	// A page of two runs, or one bounded by bytes, is read alone: the
	// thread's other runs (4 MB) are not, nor copied.
	for _, q := range []server.RunQuery{
		{ThreadID: "t1", Newest: true, Limit: 2},
		{ThreadID: "t1", MaxBytes: pad + pad/2},
	} {
		var got []*server.Run
		var err error
		a := heaptest.Allocated(allocTries, func() { got, err = st.Runs(ctx, q) })
		if err != nil || len(got) != 2 {
			t.Fatalf("Runs(%+v) = %v, %v; want 2 runs", q, runIDs(got), err)
		}
		if a > n*pad/2 {
			t.Errorf("Runs(%+v) of a thread of %d runs of %d KiB allocated %d KiB; want the page's alone, under %d KiB", q, n, pad>>10, a>>10, n*pad/2>>10)
		}
	}
}

// allocTries is how many times a store call whose allocations a test
// bounds is measured (heaptest.Allocated): the fewest counts, so that
// other goroutines of the process do not fail the test.
const allocTries = 5

// testSearchPage checks that SearchThreads reads its page alone, by
// each sort and with a metadata filter, when the owner has many large
// threads: the page is right, and the other threads' values (4 MB) are
// not read whole.
func testSearchPage(t *testing.T, st server.Store) {
	ctx := t.Context()
	const n, pad = 40, 100 << 10
	values := json.RawMessage(`{"pad":"` + strings.Repeat("x", pad) + `"}`)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var byCreated []string
	for i := range n {
		th := thread(fmt.Sprintf("t%02d", n-1-i), "alice") // ids run against the times
		th.CreatedAt, th.UpdatedAt = base.Add(time.Duration(i)*time.Millisecond), base.Add(time.Duration(n-i)*time.Second)
		th.Values = values
		th.Metadata = map[string]any{"k": "v", "even": json.Number(fmt.Sprint(i % 2))}
		if i%2 == 0 {
			th.Metadata["big"] = json.Number(bigInt)
		}
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
		byCreated = append(byCreated, th.ID)
	}
	byID := slices.Sorted(slices.Values(byCreated))
	byUpdated := slices.Clone(byCreated)
	slices.Reverse(byUpdated)
	var evens []string
	for i, id := range byCreated {
		if i%2 == 0 {
			evens = append(evens, id)
		}
	}
	for _, c := range []struct {
		q     server.ThreadQuery
		want  []string
		total int
	}{
		{server.ThreadQuery{Owner: "alice", Limit: 2, Offset: 3}, byCreated[3:5], n},
		{server.ThreadQuery{Owner: "alice", Limit: 2, SortBy: "thread_id"}, byID[:2], n},
		{server.ThreadQuery{Owner: "alice", Limit: 2, SortBy: "updated_at", SortDesc: true}, []string{byUpdated[n-1], byUpdated[n-2]}, n},
		{server.ThreadQuery{Owner: "alice", Limit: 2, SortBy: "status", Offset: 1}, byID[1:3], n},
		{server.ThreadQuery{Owner: "alice", Limit: 2, Offset: 3, Metadata: map[string]any{"big": json.Number(bigInt)}}, evens[3:5], n / 2},
		{server.ThreadQuery{Owner: "alice", Limit: 2, Offset: 19, Metadata: map[string]any{"even": 0}}, evens[19:], n / 2},
		{server.ThreadQuery{Owner: "alice", Limit: 2, Metadata: map[string]any{"big": json.Number("9007199254740992")}}, []string{}, 0},
	} {
		var got []*server.Thread
		var total int
		var err error
		a := heaptest.Allocated(allocTries, func() { got, total, err = st.SearchThreads(ctx, c.q) })
		if err != nil || !slices.Equal(ids(got), c.want) || total != c.total {
			t.Errorf("SearchThreads(%+v) = %v of %d, %v; want %v of %d", c.q, ids(got), total, err, c.want, c.total)
		}
		if a > n*pad/2 {
			t.Errorf("SearchThreads(%+v) of %d threads of %d KiB allocated %d KiB; want the page's alone, under %d KiB", c.q, n, pad>>10, a>>10, n*pad/2>>10)
		}
	}
	// MaxBytes: the page stops at the thread past the bound, returned
	// too (the convention of RunQuery.MaxBytes).
	first, _, err := st.SearchThreads(ctx, server.ThreadQuery{Owner: "alice", Limit: 1})
	if err != nil || len(first) != 1 {
		t.Fatalf("SearchThreads(limit 1) = %d threads, %v", len(first), err)
	}
	q := server.ThreadQuery{Owner: "alice", Limit: 10, MaxBytes: first[0].Size() + 1}
	got, total, err := st.SearchThreads(ctx, q)
	if err != nil || !slices.Equal(ids(got), byCreated[:2]) || total != n {
		t.Errorf("SearchThreads(MaxBytes %d, the first thread's size + 1) = %v of %d, %v; want %v (the one past the bound too) of %d", q.MaxBytes, ids(got), total, err, byCreated[:2], n)
	}
}

// testByteCounter checks a [server.ByteCounter]: a thread counts no
// bytes until SetThreadBytes records them; the sum is by owner, of the
// threads' own bytes and their subgraphs'; a negative subgraphBytes
// leaves the stored one; a missing thread is not an error; a deleted
// thread's bytes no longer count. A [server.RunRecorder] records a
// Sized refresh's bytes with RefreshThread, and leaves them as they are
// for a refresh that is not Sized.
func testByteCounter(t *testing.T, st server.Store) {
	ctx := t.Context()
	c := st.(server.ByteCounter)
	for _, th := range []*server.Thread{thread("t1", "alice"), thread("t2", "alice"), thread("t3", "bob")} {
		if err := st.CreateThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when, owner string, want int64) {
		t.Helper()
		if n, err := c.CountBytes(ctx, owner); err != nil || n != want {
			t.Errorf("%s: CountBytes(%q) = %d, %v; want %d", when, owner, n, err, want)
		}
	}
	check("created", "alice", 0)
	set := func(id string, own, sub int64) {
		t.Helper()
		if err := c.SetThreadBytes(ctx, id, own, sub); err != nil {
			t.Fatal(err)
		}
	}
	set("t1", 100, 10)
	set("t2", 1000, -1)
	set("t3", 7, 0)
	set("missing", 5, 5)
	check("set", "alice", 1110)
	check("set", "bob", 7)
	check("set", "carol", 0)
	set("t1", 50, -1) // the subgraphs' 10 stay
	check("t1's own changed", "alice", 1060)
	set("t1", 50, 0)
	check("t1's subgraphs gone", "alice", 1050)
	if rr, ok := st.(server.RunRecorder); ok {
		at := time.Now().UTC()
		if _, err := rr.RefreshThread(ctx, "t2", server.ThreadRefresh{At: at, Sized: true, Bytes: 300, SubgraphBytes: 20}); err != nil {
			t.Fatal(err)
		}
		check("t2 refreshed sized", "alice", 370)
		if _, err := rr.RefreshThread(ctx, "t2", server.ThreadRefresh{At: at, Sized: true, Bytes: 200, SubgraphBytes: -1}); err != nil {
			t.Fatal(err)
		}
		check("t2 refreshed, its subgraphs left", "alice", 270)
		if _, err := rr.RefreshThread(ctx, "t2", server.ThreadRefresh{At: at}); err != nil {
			t.Fatal(err)
		}
		check("t2 refreshed unsized", "alice", 270)
	}
	if err := st.DeleteThread(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateThread(ctx, thread("t1", "alice")); err != nil {
		t.Fatal(err)
	}
	want := int64(1000)
	if _, ok := st.(server.RunRecorder); ok {
		want = 220
	}
	check("t1 deleted and created again", "alice", want)
	check("t1 deleted and created again", "bob", 7)
}
