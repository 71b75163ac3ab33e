package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
)

// endResult is what a FinishRunLocked call returned.
type endResult struct {
	ev    server.Event
	ended *server.Run
	err   error
}

// finishAsync calls st.FinishRunLocked(e) on a goroutine of its own and
// returns the channel its result is sent on.
func finishAsync(st *postgres.Store, e server.RunEnd) <-chan endResult {
	ch := make(chan endResult, 1)
	go func() {
		_, ev, ended, err := st.FinishRunLocked(context.Background(), e)
		ch <- endResult{ev, ended, err}
	}()
	return ch
}

// waitEnds waits until st sends a batch of runs' ends and n wait for it.
func waitEnds(t *testing.T, st *postgres.Store, n int) {
	t.Helper()
	waitFor(t, "the runs' ends to wait", func() bool {
		sending, waiting := postgres.EndsState(st)
		return sending && waiting == n
	})
}

// TestEndsShareCommit: the runs' ends made while another end is being
// sent wait for it and are then sent together, in one transaction (their
// runs' rows have one xmin), each with its own result; and when one end
// of such a group fails in PostgreSQL (an error message with a NUL
// character, which a text column refuses), the others are recorded all
// the same (each is sent again alone), and that end alone fails.
func TestEndsShareCommit(t *testing.T) {
	stores, pool, schema := twoStores(t)
	st := stores[0]
	runs := map[string]*server.Run{}
	for _, tid := range []string{"ta", "tb", "tc", "td", "te", "tf"} {
		runs[tid] = leaseFixture(t, st, tid)
	}
	threads := pgx.Identifier{schema, "agentserver_threads"}.Sanitize()
	xmin := func(r *server.Run) string {
		t.Helper()
		var x string
		if err := pool.QueryRow(t.Context(), `SELECT xmin::text FROM `+pgx.Identifier{schema, "agentserver_runs"}.Sanitize()+` WHERE id = $1`, r.ID).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	// group holds the end of the run of thread first on its thread's
	// row (the end, which names its worker, locks the row first), ends
	// the runs of the threads of rest meanwhile, releases the row, and
	// returns the results.
	group := func(first string, rest []server.RunEnd) (endResult, []endResult) {
		t.Helper()
		tx, err := pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(t.Context(), `SELECT 1 FROM `+threads+` WHERE id = $1 FOR UPDATE`, first); err != nil {
			t.Fatal(err)
		}
		held := finishAsync(st, leaseEnd(runs[first], "w1", 1, `{"v":1}`))
		waitEnds(t, st, 0)
		var chs []<-chan endResult
		for i, e := range rest {
			chs = append(chs, finishAsync(st, e))
			waitEnds(t, st, i+1)
		}
		if err := tx.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
		var out []endResult
		for _, ch := range append([]<-chan endResult{held}, chs...) {
			select {
			case r := <-ch:
				out = append(out, r)
			case <-time.After(30 * time.Second):
				t.Fatal("an end did not return")
			}
		}
		return out[0], out[1:]
	}

	first, rest := group("ta", []server.RunEnd{leaseEnd(runs["tb"], "w1", 1, `{"v":"b"}`), leaseEnd(runs["tc"], "w1", 1, `{"v":"c"}`)})
	for i, r := range append([]endResult{first}, rest...) {
		if r.err != nil || r.ended == nil || r.ended.Status != server.RunSuccess || r.ev.Name != "end" || r.ev.ID != 0 {
			t.Fatalf("end %d: %+v, %+v, %v; want the run ended with its end event 0", i, r.ended, r.ev, r.err)
		}
	}
	if rest[0].ended.ID != runs["tb"].ID || rest[1].ended.ID != runs["tc"].ID {
		t.Fatalf("the grouped ends returned the runs %s and %s; want %s and %s", rest[0].ended.ID, rest[1].ended.ID, runs["tb"].ID, runs["tc"].ID)
	}
	if xb, xc, xa := xmin(runs["tb"]), xmin(runs["tc"]), xmin(runs["ta"]); xb != xc || xb == xa {
		t.Errorf("xmin of the runs ended: %s (held), %s and %s (waiting); want the waiting ends in one transaction, apart from the held one", xa, xb, xc)
	}
	for tid, v := range map[string]string{"tb": `{"v":"b"}`, "tc": `{"v":"c"}`} {
		th, err := stores[1].Thread(t.Context(), tid)
		if err != nil || string(th.Values) != v || th.Status != server.ThreadIdle {
			t.Errorf("thread %s after its run's grouped end: %+v, %v; want idle with %s", tid, th, err, v)
		}
	}

	bad := leaseEnd(runs["td"], "w1", 1, `{"v":"d"}`)
	bad.Status, bad.Error = server.RunError, "bad\x00byte"
	_, rest = group("tf", []server.RunEnd{bad, leaseEnd(runs["te"], "w1", 1, `{"v":"e"}`)})
	if rest[0].err == nil || errors.Is(rest[0].err, server.ErrLeaseLost) || rest[0].ended != nil {
		t.Errorf("the end PostgreSQL refuses: %+v, %v; want its error", rest[0].ended, rest[0].err)
	}
	if r := rest[1]; r.err != nil || r.ended == nil || r.ended.ID != runs["te"].ID || r.ended.Status != server.RunSuccess {
		t.Errorf("the end grouped with one PostgreSQL refuses: %+v, %v; want its run ended", r.ended, r.err)
	}
	got, err := stores[1].Run(t.Context(), runs["td"].ID)
	if err != nil || got.Status != server.RunRunning {
		t.Errorf("the run whose end failed: %+v, %v; want it still running", got, err)
	}
}
