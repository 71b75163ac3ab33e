package server

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestFinishLockedLeaseLost: on the stores without a one-transaction end
// (memory, SQLite), finishLocked of a run that another worker took over
// (running under w2, attempt 2) writes nothing and returns ErrLeaseLost:
// the thread keeps its values and status, the run's log gets no event,
// the run stays the new owner's; endRun alone refuses the same (the
// check in UpdateRun's change). The new owner's end is recorded.
func TestFinishLockedLeaseLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) Store
	}{
		{"memory", func(*testing.T) Store { return NewMemoryStore() }},
		{"sqlite", func(t *testing.T) Store {
			st, err := OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			st := tc.open(t)
			at := time.Now().UTC().Add(-time.Minute)
			if err := st.CreateThread(ctx, &Thread{ID: "t1", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, GraphID: "g",
				Values: json.RawMessage(`{"v":0}`)}); err != nil {
				t.Fatal(err)
			}
			owner := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning, Owner: "o",
				Worker: "w2", Attempt: 2, LeaseUntil: at.Add(time.Hour), Started: true}
			if err := st.CreateRun(ctx, owner); err != nil {
				t.Fatal(err)
			}
			s, err := New(Config{Store: st, SweepInterval: time.Hour, Heartbeat: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			for _, w := range []struct {
				worker  string
				attempt int
			}{{"w1", 1}, {"w2", 1}} {
				stale := *owner
				stale.Worker, stale.Attempt = w.worker, w.attempt
				if ended, _, err := s.finishLocked(ctx, &stale, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, now(), nil); !errors.Is(err, ErrLeaseLost) || ended != nil {
					t.Errorf("finishLocked by %s attempt %d: %+v, %v; want ErrLeaseLost", w.worker, w.attempt, ended, err)
				}
				if ended, err := s.endRun(ctx, &stale, RunError, "stale", now()); !errors.Is(err, ErrLeaseLost) {
					t.Errorf("endRun by %s attempt %d: %+v, %v; want ErrLeaseLost", w.worker, w.attempt, ended, err)
				}
			}
			r, err := st.Run(ctx, "r1")
			if err != nil || r.Status != RunRunning || r.Worker != "w2" || r.Attempt != 2 {
				t.Fatalf("run after the stale ends: %+v, %v; want running under w2, attempt 2", r, err)
			}
			th, err := st.Thread(ctx, "t1")
			if err != nil || string(th.Values) != `{"v":0}` || th.Status != ThreadBusy {
				t.Fatalf("thread after the stale ends: %+v, %v; want busy, its values unchanged", th, err)
			}
			if evs, _, err := st.Events(ctx, "r1", -1, 0); err != nil || len(evs) != 0 {
				t.Fatalf("events after the stale ends: %+v, %v; want none", evs, err)
			}
			ended, _, err := s.finishLocked(ctx, owner, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, now(), nil)
			if err != nil || ended == nil || ended.Status != RunSuccess {
				t.Fatalf("finishLocked by the owner: %+v, %v; want the run ended", ended, err)
			}
		})
	}
}
