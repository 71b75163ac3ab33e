package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// unknownAppender is a MemoryStore that is a LostLogAppender whose first
// append stores its event but fails as a lost reply does (an
// UnknownAppendError up to maxID); it records the after of each append.
type unknownAppender struct {
	*MemoryStore
	maxID  int64
	afters []int64
}

func (u *unknownAppender) AppendEventAfter(ctx context.Context, runID string, attempt int, after int64, name string, data json.RawMessage, max int) (Event, error) {
	u.afters = append(u.afters, after)
	ev, err := u.MemoryStore.AppendEvent(ctx, runID, name, data, max)
	if err == nil && len(u.afters) == 1 {
		return Event{}, &UnknownAppendError{MaxID: u.maxID, Err: errors.New("connection reset")}
	}
	return ev, err
}

// TestRunLogCountsUnknownAppend: an execution's append that fails with
// its outcome unknown counts the ids it may have given (MaxID) as given:
// the next append passes them as after, so that a log the store
// recreates after another loss numbers its events above them.
func TestRunLogCountsUnknownAppend(t *testing.T) {
	ctx := t.Context()
	st := &unknownAppender{MemoryStore: NewMemoryStore(), maxID: 2<<32 - 1}
	at := time.Now().UTC()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, GraphID: "g"}); err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning, Owner: "o", Attempt: 1,
		Metadata: map[string]any{}, Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, SweepInterval: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	l := s.runLog(run)
	var ue *UnknownAppendError
	if err := l.emit(ctx, "values", map[string]int{"v": 1}); !errors.As(err, &ue) {
		t.Fatalf("first append: %v; want its UnknownAppendError", err)
	}
	if err := l.emit(ctx, "values", map[string]int{"v": 2}); err != nil {
		t.Fatal(err)
	}
	if len(st.afters) != 2 || st.afters[0] != -1 || st.afters[1] != st.maxID {
		t.Fatalf("the appends' after: %v; want [-1 %d] (the ids the unknown append may have given counted)", st.afters, st.maxID)
	}
}
