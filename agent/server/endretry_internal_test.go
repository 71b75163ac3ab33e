package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// failingEnder is a MemoryStore whose first EndRunEvent fails: without
// writing anything (a transient failure, SQLite busy), or, with
// committed, after recording the end (a reply lost, the read-back
// failed too). It counts the calls.
type failingEnder struct {
	*MemoryStore
	committed bool
	calls     int
}

func (f *failingEnder) EndRunEvent(ctx context.Context, e RunEnd) (*Run, Event, error) {
	f.calls++
	if f.calls > 1 {
		return f.MemoryStore.EndRunEvent(ctx, e)
	}
	if !f.committed {
		return nil, Event{}, errors.New("database is locked")
	}
	_, ev, err := f.MemoryStore.EndRunEvent(ctx, e)
	if err != nil {
		return nil, Event{}, err
	}
	return nil, Event{}, &UnknownAppendError{MaxID: ev.ID, Err: errors.New("connection reset")}
}

// endFixture is a server on st (worker w1) and its run r1 running under
// w1, attempt 1.
func endFixture(t *testing.T, st *failingEnder) (*Server, *Run) {
	t.Helper()
	ctx := t.Context()
	at := time.Now().UTC()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, GraphID: "g"}); err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning, Owner: "o",
		Worker: "w1", Attempt: 1, LeaseUntil: at.Add(time.Hour), Started: true,
		Metadata: map[string]any{}, Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Worker: "w1", SweepInterval: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, run
}

// TestFinishLockedRetriesEnd: an EndRunEvent that fails (recording
// nothing) is tried once more, and the run ends with its last event,
// instead of staying running, its streams open, until a takeover.
func TestFinishLockedRetriesEnd(t *testing.T) {
	st := &failingEnder{MemoryStore: NewMemoryStore()}
	s, run := endFixture(t, st)
	ended, _, err := s.finishLocked(t.Context(), run, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, now().Truncate(time.Microsecond), nil)
	if err != nil || ended == nil || ended.Status != RunSuccess || st.calls != 2 {
		t.Fatalf("finishLocked after a failed EndRunEvent: %+v, %v, %d calls; want the run ended at the second", ended, err, st.calls)
	}
	if evs, _, err := st.Events(t.Context(), "r1", -1, 0); err != nil || len(evs) != 1 || evs[0].Name != "end" {
		t.Fatalf("the run's events: %+v, %v; want its end event", evs, err)
	}
}

// TestFinishLockedOwnEndFound: an EndRunEvent that recorded the end but
// failed (its reply lost) is tried again, refused (ErrLeaseLost: the run
// ended), and the run's record bears finishWith's time, by which
// finishWith tells the end as its own (endedAs), not another owner's.
func TestFinishLockedOwnEndFound(t *testing.T) {
	st := &failingEnder{MemoryStore: NewMemoryStore(), committed: true}
	s, run := endFixture(t, st)
	at := now().Truncate(time.Microsecond)
	_, _, err := s.finishLocked(t.Context(), run, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, at, nil)
	if !errors.Is(err, ErrLeaseLost) || st.calls != 2 {
		t.Fatalf("finishLocked after an end whose reply was lost: %v, %d calls; want ErrLeaseLost at the second", err, st.calls)
	}
	r, err := st.Run(t.Context(), "r1")
	if err != nil || !endedAs(run, r, RunSuccess, "", at) {
		t.Fatalf("the run as ended: %+v, %v; want the end finishWith recognises, at %v", r, err, at)
	}
	if evs, _, err := st.Events(t.Context(), "r1", -1, 0); err != nil || len(evs) != 1 {
		t.Fatalf("the run's events: %+v, %v; want its one end event", evs, err)
	}
}
