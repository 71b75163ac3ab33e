package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fix7Store makes a memory store with thread t1 and run r1 of status
// status and worker worker on it.
func fix7Store(t *testing.T, status, worker string) Store {
	t.Helper()
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: status,
		Worker: worker, Attempt: 1, Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestUnmakeRunClaimedElsewhere: a run refused in Close's window that
// another instance claimed before unmakeRun took the lock is reported not
// removed, with no error, and is left in the store; a pending unclaimed
// one is removed. Before, both answered errClosing, and newRun answered
// 503 (and deleted a stateless run's thread) for a run running elsewhere.
func TestUnmakeRunClaimedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		status, worker string
		removed        bool
	}{
		{RunRunning, "other", false},
		{RunPending, "other", false},
		{RunPending, "", true},
	} {
		st := fix7Store(t, tc.status, tc.worker)
		s, err := New(Config{Store: st, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		removed, err := s.unmakeRun(&Run{ID: "r1", ThreadID: "t1"})
		s.Close(context.Background())
		if err != nil || removed != tc.removed {
			t.Errorf("%s run of worker %q: unmakeRun = %v, %v; want %v, nil", tc.status, tc.worker, removed, err, tc.removed)
		}
		_, err = st.Run(t.Context(), "r1")
		if exists := err == nil; exists == tc.removed {
			t.Errorf("%s run of worker %q: in the store after unmakeRun: %v; want %v", tc.status, tc.worker, exists, !tc.removed)
		}
	}
}

// TestCancelEndsNotPending: cancelEnds given a run read pending that is
// no longer pending in the store (claimed or ended since it was read)
// reports it not ended here; a pending one it interrupts is ended.
func TestCancelEndsNotPending(t *testing.T) {
	for _, tc := range []struct {
		status string
		ended  bool
	}{
		{RunSuccess, false},
		{RunPending, true},
	} {
		st := fix7Store(t, tc.status, "")
		s, err := New(Config{Store: st, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		stale := &Run{ID: "r1", ThreadID: "t1", Status: RunPending, Kwargs: json.RawMessage(`{}`)}
		ended, err := s.cancelEnds(t.Context(), stale, "interrupt")
		s.Close(context.Background())
		if err != nil || ended != tc.ended {
			t.Errorf("run %s in the store: cancelEnds = %v, %v; want %v, nil", tc.status, ended, err, tc.ended)
		}
	}
}

// watchedStore is a memory store that says it is shared by several
// instances (a RunWatcher that reports nothing).
type watchedStore struct{ *MemoryStore }

func (watchedStore) WatchRuns(ctx context.Context, fn func(string)) error {
	<-ctx.Done()
	return nil
}

// TestAbandonedSharedStore: a wait on a pending run a closed server will
// not start ends, with a store shared by several instances, with an error
// that names the run and tells the client to join it (another instance or
// the next start runs it: a client told to retry would create it again);
// with a store of one instance, with errClosing.
func TestAbandonedSharedStore(t *testing.T) {
	for _, shared := range []bool{false, true} {
		var st Store = fix7Store(t, RunPending, "")
		if shared {
			st = watchedStore{st.(*MemoryStore)}
		}
		s, err := New(Config{Store: st, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.waitDone(t.Context(), httptest.NewRecorder(), &Run{ID: "r1", ThreadID: "t1"}, false)
		if !shared {
			if err != errClosing {
				t.Errorf("one instance's store: waitDone error %v; want errClosing", err)
			}
			continue
		}
		if err == nil || err == errClosing || !strings.Contains(err.Error(), "r1") || !strings.Contains(err.Error(), "/threads/t1/runs/r1/join") {
			t.Errorf("shared store: waitDone error %v; want one naming run r1 and its /join", err)
		}
	}
}

// TestRollbackOfRunTakenOver: a rollback that gets its thread's lock
// after another owner took the run over (a store outage longer than the
// lease) leaves the run and its thread to that owner, and records the
// rollback on the run for it; before, it deleted the run another
// instance runs and reset its thread's head.
func TestRollbackOfRunTakenOver(t *testing.T) {
	ctx := t.Context()
	st := fix7Store(t, RunRunning, "other")
	if _, err := st.UpdateThread(ctx, "t1", func(th *Thread) error { th.Head = "h1"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateRun(ctx, "r1", func(r *Run) error { r.Attempt = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	s.rollback(&Run{ID: "r1", ThreadID: "t1", Worker: s.cfg.Worker, Attempt: 1, Status: RunRunning}, "")
	r, err := st.Run(ctx, "r1")
	if err != nil {
		t.Fatalf("the run taken over was deleted by the rollback of its former owner: %v", err)
	}
	if r.Cancel != "rollback" {
		t.Errorf("run's Cancel %q; want rollback, recorded for its new owner", r.Cancel)
	}
	if th, err := st.Thread(ctx, "t1"); err != nil || th.Head != "h1" {
		t.Errorf("thread after the former owner's rollback: %+v, %v; want its head h1 kept", th, err)
	}
}
