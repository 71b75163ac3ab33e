package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// TestCheckCancelDeletedRun: a run executing here whose record is gone
// (its thread was deleted on another instance) is stopped.
func TestCheckCancelDeletedRun(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	s.mu.Lock()
	s.cancel["gone"] = &runCancel{ctx: ctx, cancel: cancel}
	s.mu.Unlock()
	s.checkCancel("gone")
	s.mu.Lock()
	delete(s.cancel, "gone")
	s.mu.Unlock()
	if cause := context.Cause(ctx); !errors.Is(cause, errRunDeleted) {
		t.Fatalf("cause %v; want %v", cause, errRunDeleted)
	}
}

// TestRemoveThreadWaitsForRemoteRun deletes a thread whose run executes on
// another instance: the deletion asks that instance to cancel the run and
// waits for the run's end before it deletes the thread.
func TestRemoveThreadWaitsForRemoteRun(t *testing.T) {
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning,
		Worker: "other", LeaseUntil: at.Add(time.Hour), Attempt: 1, Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.removeThread(ctx, "t1") }()
	for {
		r, err := st.Run(ctx, "r1")
		if err != nil {
			t.Fatalf("the run was deleted before it was asked to cancel: %v", err)
		}
		if r.Cancel != "" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The other instance ends the run, under the thread's lock.
	unlock, err := s.locks.Lock(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Thread(ctx, "t1"); err != nil {
		unlock()
		t.Fatalf("the thread was deleted while its run still ran on another instance: %v", err)
	}
	if _, err := st.UpdateRun(ctx, "r1", func(r *Run) error { r.Status, r.Worker = RunInterrupted, ""; return nil }); err != nil {
		t.Fatal(err)
	}
	unlock()
	s.hub.notify("r1")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := st.Thread(ctx, "t1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the run ended, the thread: %v; want deleted", err)
	}
}

// TestLostLeaseIsNotExecuting: once a run's lease is found lost, the
// instance no longer counts as executing it (its streams poll the store
// for the new holder's events), even while its graph has not returned.
func TestLostLeaseIsNotExecuting(t *testing.T) {
	s, err := New(Config{Lease: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	s.mu.Lock()
	s.cancel["taken"] = &runCancel{ctx: ctx, cancel: cancel} // a graph that has not returned yet
	s.mu.Unlock()
	if !s.executing("taken") {
		t.Fatal("executing before the lease was lost: false; want true")
	}
	// The memory store holds no such run: the renewal finds the lease gone.
	stop := s.renewLease("taken", 1, ctx, cancel)
	defer stop()
	<-ctx.Done()
	if cause := context.Cause(ctx); !errors.Is(cause, errLeaseLost) {
		t.Fatalf("cause %v; want %v", cause, errLeaseLost)
	}
	if s.executing("taken") {
		t.Fatal("executing after the lease was lost, with the graph still running: true; want false")
	}
}

// TestOwnTakeoverIsExecuting: when this instance's own sweeper took a
// run over (adopt registered a new execution) and the old execution's
// renewal then finds its lease gone, the instance still counts as
// executing the run: the new execution publishes its events to the hub
// here, so its streams need not poll the store. The lost mark was kept
// by run id, so it held for the new execution until the run ended.
func TestOwnTakeoverIsExecuting(t *testing.T) {
	s, err := New(Config{Lease: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	oldCtx, oldCancel := context.WithCancelCause(context.Background())
	defer oldCancel(nil)
	newCtx, newCancel := context.WithCancelCause(context.Background())
	defer newCancel(nil)
	s.mu.Lock()
	s.cancel["taken"] = &runCancel{ctx: newCtx, cancel: newCancel} // adopt's registration of the new attempt
	s.mu.Unlock()
	// The old execution's renewal: the memory store holds no such run,
	// so it finds its lease gone.
	stop := s.renewLease("taken", 1, oldCtx, oldCancel)
	defer stop()
	<-oldCtx.Done()
	if cause := context.Cause(oldCtx); !errors.Is(cause, errLeaseLost) {
		t.Fatalf("cause %v; want %v", cause, errLeaseLost)
	}
	if !s.executing("taken") {
		t.Fatal("executing after the old execution lost its lease to this instance's own takeover: false; want true (the new execution runs here)")
	}
	if err := context.Cause(newCtx); err != nil {
		t.Fatalf("the new execution was cancelled: %v", err)
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
		st := storeWithRun(t, tc.status, "")
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

// TestRollbackOfRunTakenOver: a rollback that gets its thread's lock
// after another owner took the run over (a store outage longer than the
// lease) leaves the run and its thread to that owner, and records the
// rollback on the run for it; before, it deleted the run another
// instance runs and reset its thread's head.
func TestRollbackOfRunTakenOver(t *testing.T) {
	ctx := t.Context()
	st := storeWithRun(t, RunRunning, "other")
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
