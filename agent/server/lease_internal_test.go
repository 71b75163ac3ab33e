package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// claimingStore is a MemoryStore on which another instance's sweeper
// (worker "w2") runs ClaimDue once, armed, right after the first Run or
// RenewAttempt call: between finishLocked's ownership check and its
// writes.
type claimingStore struct {
	*MemoryStore
	armed   bool
	claimed *Run
}

func (c *claimingStore) sweep(ctx context.Context) {
	if c.armed {
		c.armed = false
		r, err := c.MemoryStore.ClaimDue(ctx, "w2", time.Hour)
		if err != nil {
			panic(err)
		}
		c.claimed = r
	}
}

func (c *claimingStore) Run(ctx context.Context, id string) (*Run, error) {
	r, err := c.MemoryStore.Run(ctx, id)
	c.sweep(ctx)
	return r, err
}

func (c *claimingStore) RenewAttempt(ctx context.Context, runID, worker string, attempt int, lease time.Duration) error {
	err := c.MemoryStore.RenewAttempt(ctx, runID, worker, attempt, lease)
	c.sweep(ctx)
	return err
}

// TestFinishLockedHoldsLease: finishLocked of a run whose lease expired,
// still running under this worker and attempt, renews the lease as its
// check, so that another instance's sweep during the end claims nothing
// and the end is this worker's; with a check that only read the run, the
// sweep took the run over and the stale end wrote its thread refresh and
// last event into the new owner's run.
func TestFinishLockedHoldsLease(t *testing.T) {
	ctx := t.Context()
	st := &claimingStore{MemoryStore: NewMemoryStore()}
	at := time.Now().UTC().Add(-time.Minute)
	if err := st.CreateThread(ctx, &Thread{ID: "t1", Owner: "o", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, GraphID: "g",
		Values: json.RawMessage(`{"v":0}`)}); err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning, Owner: "o",
		Worker: "w1", Attempt: 1, LeaseUntil: at, Started: true, // expired
		Metadata: map[string]any{}, Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Worker: "w1", SweepInterval: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	st.armed = true
	ended, _, err := s.finishLocked(ctx, run, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, now(), nil)
	if st.claimed != nil {
		t.Fatalf("another instance claimed the run during its end: %+v", st.claimed)
	}
	if err != nil || ended == nil || ended.Status != RunSuccess || ended.Attempt != 1 {
		t.Fatalf("finishLocked: %+v, %v; want the run ended, attempt 1", ended, err)
	}
}

// TestRenewAttempt: RenewAttempt extends the lease of the run running
// under the worker and attempt given, expired or not, and refuses with
// ErrNotFound another attempt of the same worker (this instance's own
// sweeper took the run over) or another worker.
func TestRenewAttempt(t *testing.T) {
	for name, open := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			ar, ok := st.(AttemptRenewer)
			if !ok {
				t.Fatalf("%T is no AttemptRenewer", st)
			}
			at := time.Now().UTC().Add(-time.Minute)
			if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if err := st.CreateRun(ctx, &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning,
				Worker: "w1", Attempt: 2, LeaseUntil: at, Metadata: map[string]any{},
				Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				worker  string
				attempt int
			}{{"w1", 1}, {"w2", 2}} {
				if err := ar.RenewAttempt(ctx, "r1", c.worker, c.attempt, time.Hour); !errors.Is(err, ErrNotFound) {
					t.Errorf("RenewAttempt by %s attempt %d: %v; want ErrNotFound", c.worker, c.attempt, err)
				}
			}
			if r, err := st.Run(ctx, "r1"); err != nil || r.LeaseUntil.After(time.Now()) {
				t.Fatalf("after the refused renewals: %+v, %v; want the lease still expired", r, err)
			}
			if err := ar.RenewAttempt(ctx, "r1", "w1", 2, time.Hour); err != nil {
				t.Fatalf("RenewAttempt by the holder: %v", err)
			}
			if r, err := st.Run(ctx, "r1"); err != nil || !r.LeaseUntil.After(time.Now()) {
				t.Fatalf("after the holder's renewal: %+v, %v; want the lease in the future", r, err)
			}
		})
	}
}

func testStores(t *testing.T) map[string]func(*testing.T) Store {
	return map[string]func(*testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemoryStore() },
		"sqlite": func(t *testing.T) Store {
			st, err := OpenSQLite(t.Context(), t.TempDir()+"/s.db")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// TestRenewLeaseOwnTakeover: when this instance's own sweep took over
// its run (same worker, attempt 2), the renewals of the stale execution
// (attempt 1) are refused and it is cancelled with errLeaseLost; Renew,
// which checks only the worker, kept renewing it and the graph ran twice.
func TestRenewLeaseOwnTakeover(t *testing.T) {
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now().UTC()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning,
		Worker: "w1", Attempt: 2, LeaseUntil: at.Add(time.Hour), Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Worker: "w1", Lease: 30 * time.Millisecond, SweepInterval: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	rctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := s.renewLease("r1", 1, rctx, cancel)
	defer stop()
	select {
	case <-rctx.Done():
	case <-time.After(10 * time.Second): // a failure bound only, far above the 10ms renewal period
		t.Fatal("the stale attempt's execution was not cancelled: its renewals were accepted")
	}
	if cause := context.Cause(rctx); !errors.Is(cause, errLeaseLost) {
		t.Fatalf("cause %v; want %v", cause, errLeaseLost)
	}
}

// TestStaleExecuteKeepsNewRegistration: the execution of a run that this
// instance's own sweeper took over (same worker, attempt 2, registered
// anew by adopt) removes at its end only its own registration, not the
// new execution's cancel function.
func TestStaleExecuteKeepsNewRegistration(t *testing.T) {
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now().UTC()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	cur := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning,
		Worker: "w1", Attempt: 2, LeaseUntil: at.Add(time.Hour), Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{}`), MultitaskStrategy: "enqueue"} // unreadable: execute ends at once
	if err := st.CreateRun(ctx, cur); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Worker: "w1", SweepInterval: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	newCtx, newCancel := context.WithCancelCause(context.Background())
	defer newCancel(nil)
	staleCtx, staleCancel := context.WithCancelCause(context.Background())
	defer staleCancel(nil)
	mine := &runCancel{ctx: newCtx, cancel: newCancel}
	s.mu.Lock()
	s.cancel["r1"] = mine // adopt's registration of attempt 2
	s.mu.Unlock()
	stale := *cur
	stale.Attempt = 1
	s.execute(staleCtx, staleCancel, &stale, nil, nil, nil)
	s.mu.Lock()
	got := s.cancel["r1"]
	delete(s.cancel, "r1")
	s.mu.Unlock()
	if got != mine {
		t.Fatalf("the new execution's registration after the stale execution's end: %+v; want kept", got)
	}
	if r, err := st.Run(ctx, "r1"); err != nil || r.Status != RunRunning || r.Attempt != 2 {
		t.Fatalf("run after the stale execution: %+v, %v; want running, attempt 2", r, err)
	}
}

// lostReplyStore is a LockingRecorder on a MemoryStore whose
// FinishRunLocked fails as a lost reply does, after commit runs (what
// the store did meanwhile).
type lostReplyStore struct {
	*MemoryStore
	commit func(e RunEnd)
}

var (
	errUnused                 = errors.New("unused in the test")
	_         LockingRecorder = (*lostReplyStore)(nil)
)

func (l *lostReplyStore) FinishRunLocked(_ context.Context, e RunEnd) (int, Event, error) {
	l.commit(e)
	return 0, Event{}, errors.New("reply lost")
}
func (l *lostReplyStore) LockThread(context.Context, string) (func(), error) { return func() {}, nil }
func (l *lostReplyStore) ThreadActive(context.Context, string) (*Thread, []*Run, error) {
	return nil, nil, errUnused
}
func (l *lostReplyStore) ClaimThread(context.Context, string, string, time.Duration) (*Run, *Thread, error) {
	return nil, nil, errUnused
}
func (l *lostReplyStore) CreateRunBusy(context.Context, *Run, string, map[string]any) error {
	return errUnused
}
func (l *lostReplyStore) StartRun(context.Context, string, string) (*Run, error) {
	return nil, errUnused
}
func (l *lostReplyStore) EndRun(context.Context, string, string, string, time.Time) (*Run, error) {
	return nil, errUnused
}
func (l *lostReplyStore) RefreshThread(context.Context, string, ThreadRefresh) (int, error) {
	return 0, errUnused
}
func (l *lostReplyStore) CreateRunLocked(context.Context, string, func(*Thread, []*Run) (*Run, string, map[string]any, error)) (bool, error) {
	return false, errUnused
}
func (l *lostReplyStore) ClaimThreadLocked(context.Context, string, string, time.Duration) (*Run, *Thread, error) {
	return nil, nil, errUnused
}

// TestFoldedLostReplyOtherEnd: a folded end whose reply was lost, and
// whose read-back finds the run ended by another owner (the end was
// refused, the run's lease lost), does not take that end for its own
// (its webhook would be sent twice): ErrLeaseLost. The end it wrote
// itself (its status, error and time) is its own.
func TestFoldedLostReplyOtherEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ours    bool
		wantErr error
	}{{"other", false, ErrLeaseLost}, {"ours", true, nil}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			ms, run := leasedRun(t, `{"assistant_id":"a"}`)
			st := &lostReplyStore{MemoryStore: ms, commit: func(e RunEnd) {
				if _, err := ms.UpdateRun(ctx, "r1", func(r *Run) error {
					if tc.ours {
						r.Status, r.Error, r.UpdatedAt, r.Worker = e.Status, e.Error, e.At, ""
					} else { // taken over by w2 and ended there
						r.Status, r.Error, r.UpdatedAt, r.Worker, r.Attempt = RunSuccess, "", time.Now().UTC(), "", 2
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}}
			s, err := New(Config{Store: st, Worker: "w1", SweepInterval: time.Hour, Heartbeat: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			folded, ended, _, _, err := s.finishFolded(ctx, run, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, nil,
				now().Truncate(time.Microsecond), nil)
			if !folded || !errors.Is(err, tc.wantErr) || (tc.ours != (ended != nil)) {
				t.Fatalf("finishFolded: folded %v, %+v, %v; want folded, ours %v, error %v", folded, ended, err, tc.ours, tc.wantErr)
			}
		})
	}
}

// leasedRun makes a memory store with thread t1 (busy) and its run r1 of
// request kwargs, running on worker w1 (attempt 1), its lease an hour
// from its start a minute ago.
func leasedRun(t *testing.T, kwargs string) (*MemoryStore, *Run) {
	t.Helper()
	ms := NewMemoryStore()
	at := time.Now().UTC().Add(-time.Minute)
	if err := ms.CreateThread(t.Context(), &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning,
		Worker: "w1", Attempt: 1, LeaseUntil: at.Add(time.Hour), Metadata: map[string]any{},
		Kwargs: json.RawMessage(kwargs), MultitaskStrategy: "enqueue"}
	if err := ms.CreateRun(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	return ms, run
}

// endingStore is a LockingRecorder on a MemoryStore whose
// FinishRunLocked records the end and succeeds.
type endingStore struct{ lostReplyStore }

func (e *endingStore) FinishRunLocked(_ context.Context, end RunEnd) (int, Event, error) {
	e.commit(end)
	return 0, Event{}, nil
}

// TestFoldedEndOfDetachedRun: the record of a folded end (what the run's
// webhook sends) has the run's request as stored: without attached when
// the server's Close detached the run while it ran.
func TestFoldedEndOfDetachedRun(t *testing.T) {
	ctx := t.Context()
	ms, run := leasedRun(t, `{"assistant_id":"a","attached":true}`)
	st := &endingStore{lostReplyStore{MemoryStore: ms, commit: func(e RunEnd) {
		if _, err := ms.UpdateRun(ctx, "r1", func(r *Run) error {
			r.Status, r.Error, r.UpdatedAt, r.Worker = e.Status, e.Error, e.At, ""
			return nil
		}); err != nil {
			t.Error(err)
		}
	}}}
	s, err := New(Config{Store: st, Worker: "w1", SweepInterval: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	s.shut.Store(true) // as Close does before it detaches
	s.detach(run)
	stored, err := ms.Run(ctx, "r1")
	if err != nil || strings.Contains(string(stored.Kwargs), "attached") {
		t.Fatalf("the run's request after detach: %+v, %v; want no attached", stored, err)
	}
	folded, ended, _, _, err := s.finishFolded(ctx, run, nil, RunSuccess, "", "", false, nil, "end", endEvent{RunID: "r1", Status: RunSuccess}, nil,
		now().Truncate(time.Microsecond), nil)
	if !folded || err != nil || ended == nil {
		t.Fatalf("finishFolded: folded %v, %+v, %v; want folded", folded, ended, err)
	}
	if string(ended.Kwargs) != string(stored.Kwargs) {
		t.Errorf("the ended record's kwargs %s; want the stored %s", ended.Kwargs, stored.Kwargs)
	}
}
