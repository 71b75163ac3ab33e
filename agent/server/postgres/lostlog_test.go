package postgres_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/agent/server"
	evpg "github.com/agentgraph/agentgraph/event/postgres"
)

// TestLostLogNumbersAbove: a run's event log lost while its attempt runs
// (its rows deleted, as a database crash empties the UNLOGGED tables) is
// created again by the attempt's next append, or by its end, from the
// epoch after the highest id the execution was given, not from 0, and
// at least one epoch above the attempt's base (2^40 × the attempt from
// the second); with no id given, from the attempt's base. A log that exists goes on. EndRunEvent writes nothing for a
// run that is no longer its worker's, or that is missing.
func TestLostLogNumbersAbove(t *testing.T) {
	stores, pool, schema := twoStores(t)
	st := stores[0]
	_, running := foldFixture(t, st, "t1")
	e := evpg.EpochSize
	lose := func(runID string) {
		t.Helper()
		for _, tbl := range []string{"agentserver_log_events", "agentserver_log_keys"} {
			if _, err := pool.Exec(t.Context(), `DELETE FROM `+pgx.Identifier{schema, tbl}.Sanitize()+` WHERE key = $1`, runID); err != nil {
				t.Fatal(err)
			}
		}
	}
	data := json.RawMessage(`{}`)
	_, ev, err := st.StartRunEvent(t.Context(), running.ID, "", "metadata", data, 0)
	if err != nil || ev.ID != 0 {
		t.Fatalf("start: %+v, %v; want event 0", ev, err)
	}
	lose(running.ID)
	if ev, err := st.AppendEventAfter(t.Context(), running.ID, 1, 0, "values", data, 0); err != nil || ev.ID != e {
		t.Errorf("append after 0 to a lost log: %+v, %v; want id %d", ev, err, e)
	}
	if ev, err := st.AppendEventAfter(t.Context(), running.ID, 1, e, "values", data, 0); err != nil || ev.ID != e+1 {
		t.Errorf("append to the log again: %+v, %v; want id %d (the log goes on)", ev, err, e+1)
	}
	lose(running.ID)
	if ev, err := st.AppendEventAfter(t.Context(), running.ID, 3, -1, "values", data, 0); err != nil || ev.ID != 3<<40 {
		t.Errorf("append of attempt 3, no id given, to a lost log: %+v, %v; want id %d", ev, err, int64(3)<<40)
	}
	// Attempt 2 went on in attempt 1's log (its metadata event id 60):
	// the log its loss makes starts above the attempt's base, which only
	// a log holding every event of the attempt starts at (a client
	// joining from -1 is told of the events lost).
	lose(running.ID)
	if ev, err := st.AppendEventAfter(t.Context(), running.ID, 2, 60, "values", data, 0); err != nil || ev.ID != 2<<40+e {
		t.Errorf("append of attempt 2, given ids up to 60, to a lost log: %+v, %v; want id %d (one epoch above the attempt's base)", ev, err, int64(2)<<40+e)
	}
	if _, err := st.AppendEventAfter(t.Context(), "missing", 1, 0, "values", data, 0); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("append to a missing run: %v; want ErrNotFound", err)
	}
	// The end, in one transaction (FinishRunLocked) and step by step
	// (EndRunEvent), of a run whose log was lost.
	lose(running.ID)
	end := server.RunEnd{RunID: running.ID, ThreadID: "t1", Refresh: server.ThreadRefresh{Exclude: []string{running.ID}, At: running.UpdatedAt},
		EventName: "end", EventData: data, Status: server.RunSuccess, At: running.UpdatedAt, Worker: "w", Attempt: 1, Next: 2*e + 5}
	if _, ev, err := st.FinishRunLocked(t.Context(), end); err != nil || ev.ID != 3*e {
		t.Errorf("FinishRunLocked of a run given ids below %d whose log was lost: event %+v, %v; want id %d", 2*e+5, ev, err, 3*e)
	}
	_, running2 := foldFixture(t, st, "t2")
	end.RunID, end.ThreadID, end.Refresh.Exclude = running2.ID, "t2", []string{running2.ID}
	if _, _, err := st.EndRunEvent(t.Context(), server.RunEnd{RunID: running2.ID, EventName: "end", EventData: data, Status: server.RunSuccess,
		At: running2.UpdatedAt, Worker: "other", Attempt: 1}); !errors.Is(err, server.ErrLeaseLost) {
		t.Errorf("EndRunEvent by another worker: %v; want ErrLeaseLost", err)
	}
	if evs, _, err := st.Events(t.Context(), running2.ID, -1, 0); err != nil || len(evs) != 0 {
		t.Errorf("events after a refused EndRunEvent: %v, %v; want none", evs, err)
	}
	ended, ev, err := st.EndRunEvent(t.Context(), end)
	if err != nil || ended == nil || ended.Status != server.RunSuccess || ended.Worker != "" || ev.ID != 3*e || ev.Name != "end" {
		t.Errorf("EndRunEvent of a run given ids below %d whose log is missing: %+v, event %+v, %v; want it ended, event id %d", 2*e+5, ended, ev, err, 3*e)
	}
	if r, err := stores[1].Run(t.Context(), running2.ID); err != nil || r.Status != server.RunSuccess {
		t.Errorf("the run as another instance reads it: %+v, %v; want it ended", r, err)
	}
	if _, _, err := st.EndRunEvent(t.Context(), server.RunEnd{RunID: "missing", EventName: "end", EventData: data, Status: server.RunSuccess}); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("EndRunEvent of a missing run: %v; want ErrNotFound", err)
	}
}

// TestEndRunEventLostReply: when EndRunEvent's commit happens but its
// reply is lost (the connection cut after the COMMIT), it reads the run
// back and returns the end it committed, with the event, instead of an
// error that left the end unnotified and the server logging a failed
// end. The end's time is compared as PostgreSQL keeps it (microseconds).
func TestEndRunEventLostReply(t *testing.T) {
	direct, st, cutter := cutStores(t)
	_, running := foldFixture(t, direct, "t1")
	at := time.Date(2026, 3, 4, 5, 7, 0, 123456789, time.UTC)
	cutter.armed.Store(true)
	ended, ev, err := st.EndRunEvent(t.Context(), server.RunEnd{RunID: running.ID, ThreadID: "t1", EventName: "end", EventData: json.RawMessage(`{}`),
		Status: server.RunSuccess, At: at, Worker: "w", Attempt: 1})
	if n := cutter.cuts.Load(); n != 1 {
		t.Fatalf("the proxy cut %d replies; want 1", n)
	}
	if err != nil || ended == nil || ended.ID != running.ID || ended.Status != server.RunSuccess || ended.Worker != "" || ev.ID != 0 || ev.Name != "end" {
		t.Fatalf("EndRunEvent with its commit's reply lost: %+v, event %+v, %v; want the run ended, event 0", ended, ev, err)
	}
	if evs, _, err := direct.Events(t.Context(), running.ID, -1, 0); err != nil || len(evs) != 1 || evs[0].Name != "end" {
		t.Fatalf("the run's events: %+v, %v; want the end event", evs, err)
	}
}

// TestLostReplyAppendCountsEpoch: an append whose reply is lost (the
// connection cut after its commit) to a lost log returns an
// UnknownAppendError whose MaxID is at least the id it stored, so that
// the execution's next append, passing it as given, numbers a log lost
// again above that id instead of giving it a second time.
func TestLostReplyAppendCountsEpoch(t *testing.T) {
	direct, st, cutter, pool, schema := cutStoresPool(t)
	_, running := foldFixture(t, direct, "t1")
	data := json.RawMessage(`{}`)
	cutter.single.Store(true) // the log's write is one statement
	cutter.armed.Store(true)
	_, err := st.AppendEventAfter(t.Context(), running.ID, 1, 60, "values", data, 0)
	if n := cutter.cuts.Load(); n != 1 {
		t.Fatalf("the proxy cut %d replies; want 1 (append: %v)", n, err)
	}
	var ue *server.UnknownAppendError
	if !errors.As(err, &ue) {
		t.Fatalf("append with its reply lost: %v; want an UnknownAppendError", err)
	}
	evs, _, err := direct.Events(t.Context(), running.ID, -1, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("the run's events: %+v, %v; want the one whose reply was lost", evs, err)
	}
	if ue.MaxID < evs[0].ID {
		t.Fatalf("UnknownAppendError.MaxID %d; want at least %d, the id the append stored", ue.MaxID, evs[0].ID)
	}
	// A second loss: the next append, given up to MaxID, numbers above.
	for _, tbl := range []string{"agentserver_log_events", "agentserver_log_keys"} {
		if _, err := pool.Exec(t.Context(), `DELETE FROM `+pgx.Identifier{schema, tbl}.Sanitize()+` WHERE key = $1`, running.ID); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := direct.AppendEventAfter(t.Context(), running.ID, 1, ue.MaxID, "values", data, 0)
	if err != nil || ev.ID <= evs[0].ID {
		t.Fatalf("append after a second loss: %+v, %v; want an id above %d", ev, err, evs[0].ID)
	}
}
