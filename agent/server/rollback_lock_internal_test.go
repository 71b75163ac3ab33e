package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// lockOutage is a Store and ThreadLocker in an outage: every LockThread
// fails (counted) and, when failRecord is set, so does every UpdateRun.
type lockOutage struct {
	Store
	fails      atomic.Int64
	failRecord bool
}

func (l *lockOutage) LockThread(context.Context, string) (func(), error) {
	l.fails.Add(1)
	return nil, errors.New("lockOutage: transient error")
}

func (l *lockOutage) UpdateRun(ctx context.Context, id string, f func(*Run) error) (*Run, error) {
	if l.failRecord {
		return nil, errors.New("lockOutage: cannot record")
	}
	return l.Store.UpdateRun(ctx, id, f)
}

// TestLockRollbackLogsDuringOutage: a rollback whose thread lock keeps
// failing warns again every rollbackLogEvery tries (it warned once only,
// however long the outage), and its give-up error says whether the
// rollback was recorded on the run: it said so when recording it failed
// too (issue #21).
func TestLockRollbackLogsDuringOutage(t *testing.T) {
	for _, failRecord := range []bool{false, true} {
		st := &lockOutage{Store: NewMemoryStore(), failRecord: failRecord}
		core, logs := observer.New(zapcore.WarnLevel)
		s, err := New(Config{Store: st, Logger: zap.New(core), SweepInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		s.rollbackLogEvery = 2
		run := &Run{ID: "r1", ThreadID: "t1"}
		if err := st.Store.CreateRun(t.Context(), run); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.lockRollback(run)
			done <- err
		}()
		for st.fails.Load() < 5 {
			time.Sleep(5 * time.Millisecond) // polls the count; decides nothing
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		err = <-done
		n := int(st.fails.Load())
		warned := 0
		for _, e := range logs.All() {
			if e.Level == zapcore.WarnLevel && strings.Contains(e.Message, "trying again") {
				warned++
			}
		}
		// Tries 0, 2, 4, ... warn; the last one may have seen the
		// server closed first.
		if lo, hi := (n-2)/2+1, (n-1)/2+1; warned < lo || warned > hi {
			t.Errorf("failRecord %v: %d warnings after %d failed locks; want %d to %d (one every 2 tries)", failRecord, warned, n, lo, hi)
		}
		recorded := strings.Contains(err.Error(), "is recorded on the run")
		if recorded == failRecord || failRecord && !strings.Contains(err.Error(), "cannot record") {
			t.Errorf("failRecord %v: give-up error %q", failRecord, err)
		}
	}
}
