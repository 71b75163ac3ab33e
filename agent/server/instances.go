package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/internal/keyedmutex"
)

// This file holds what lets several instances share one Store: the sweeper
// that picks up runs no instance executes, the watch that carries wake-ups
// and cancellations between instances, the takeover of a run whose
// instance died, the retention of ended runs and the bounds on queued runs
// and threads.

// errLeaseLost is the cause of a run stopped because its lease was not
// renewed in time and another instance claimed it.
var errLeaseLost = errors.New("the run's lease expired and another instance took the run over")

// errRunDeleted is the cause of a run stopped because its record is gone:
// another instance deleted its thread.
var errRunDeleted = errors.New("the run was deleted with its thread")

// threadLocks locks a thread in this process and, when the store is a
// ThreadLocker, across the instances sharing it. The run path (createRun,
// claim, finishWith) takes local alone around a LockingRecorder's call,
// which takes the store's lock itself, and store only when that call
// finds it held.
type threadLocks struct {
	local keyedmutex.Mutex
	store ThreadLocker
}

// Lock locks the thread and returns the function that unlocks it.
func (l *threadLocks) Lock(ctx context.Context, threadID string) (func(), error) {
	unlock, err := l.local.Lock(ctx, threadID)
	if err != nil || l.store == nil {
		return unlock, err
	}
	unlockStore, err := l.store.LockThread(ctx, threadID)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { unlockStore(); unlock() }, nil
}

// sweepBatch bounds the runs one sweep claims, so that an instance that
// comes back to a long queue does not take all of it at once.
const sweepBatch = 16

// startBackground starts the sweeper and, when the store is a RunWatcher,
// the watch; both end with s.base.
func (s *Server) startBackground() {
	s.wg.Add(1)
	go s.sweeper()
	if w, ok := s.store.(RunWatcher); ok {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := w.WatchRuns(s.base, s.remoteChange); err != nil {
				s.log.Error("watching the runs of other instances", zapError(err))
			}
		}()
	}
}

// sweeper claims due runs every Config.SweepInterval (pending runs no
// instance has started, delayed runs whose time came, runs whose lease
// expired) and prunes ended runs past Config.RunRetention and Config.MaxRunRecords.
func (s *Server) sweeper() {
	defer s.wg.Done()
	tk := time.NewTicker(s.cfg.SweepInterval)
	defer tk.Stop()
	var pruned time.Time
	for {
		select {
		case <-s.base.Done():
			return
		case <-tk.C:
		}
		s.sweep()
		if s.prunes() && time.Since(pruned) >= s.pruneEvery() {
			pruned = time.Now()
			var endedBefore time.Time
			if s.cfg.RunRetention > 0 {
				endedBefore = pruned.Add(-s.cfg.RunRetention)
			}
			n, err := s.store.Prune(s.base, endedBefore, max(s.cfg.MaxRunRecords, 0))
			if err != nil && s.base.Err() == nil {
				s.log.Warn("pruning ended runs", zapError(err))
			} else if n > 0 {
				s.log.Debug("pruned ended runs", zapInt("runs", n))
			}
		}
	}
}

// prunes reports whether the sweeper prunes: Config.RunRetention or
// Config.MaxRunRecords bounds ended runs.
func (s *Server) prunes() bool { return s.cfg.RunRetention > 0 || s.cfg.MaxRunRecords > 0 }

// pruneEvery is how long the sweeper waits between prunes: a tenth of
// Config.RunRetention (plus a second), at most an hour.
func (s *Server) pruneEvery() time.Duration {
	if s.cfg.RunRetention <= 0 {
		return time.Hour
	}
	return min(s.cfg.RunRetention/10+time.Second, time.Hour)
}

// sweep claims up to sweepBatch due runs and executes each, then the rest
// of its thread's queue; it claims none while the instance executes
// Config.MaxSweptRuns runs.
func (s *Server) sweep() {
	for range sweepBatch {
		s.mu.Lock()
		closed, busy := s.closed, len(s.cancel) >= s.cfg.MaxSweptRuns
		s.mu.Unlock()
		if closed || busy {
			return
		}
		run, err := s.store.ClaimDue(s.base, s.cfg.Worker, s.cfg.Lease)
		if err != nil {
			if s.base.Err() == nil {
				s.log.Warn("claiming due runs", zapError(err))
			}
			return
		}
		if run == nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.release(run, errors.New("server closing"), 0)
			return
		}
		s.wg.Add(1)
		s.mu.Unlock()
		ctx, cancel, err := s.adopt(run)
		if err != nil {
			s.wg.Done()
			s.release(run, err, 0)
			return
		}
		go func() {
			defer s.wg.Done()
			if ran, idle := s.execute(ctx, cancel, run, nil, nil, nil); ran && !idle {
				s.kick(run.ThreadID)
			}
		}()
	}
}

// maxReleases is how many times one instance gives back a run whose graph
// it does not serve before it fails the run: by then no instance has
// claimed it in the release delays (see unserved).
const maxReleases = 10

// maxTracked bounds Server.released; past it the oldest counts are lost
// (those runs may be released a few more times before they fail).
const maxTracked = 4096

// unserved handles a claimed run whose assistant is not registered here:
// it gives the run back not before a delay that doubles with each release
// from Config.SweepInterval up to a minute, so that an instance serving
// the graph claims it meanwhile, and fails it, naming the assistant,
// after maxReleases releases.
func (s *Server) unserved(run *Run, kw runCreate, why error) {
	s.mu.Lock()
	n := s.released[run.ID]
	if n >= maxReleases {
		delete(s.released, run.ID)
	} else {
		if _, ok := s.released[run.ID]; !ok && len(s.released) >= maxTracked {
			for id := range s.released {
				delete(s.released, id)
				break
			}
		}
		s.released[run.ID] = n + 1
	}
	s.mu.Unlock()
	if n >= maxReleases {
		s.finish(run, kw, RunError, fmt.Sprintf("no instance serves assistant %q; register its graph on an instance that shares this store", kw.AssistantID))
		return
	}
	s.release(run, why, min(s.cfg.SweepInterval<<n, time.Minute))
}

// release gives back a claimed run this instance cannot execute, for
// another instance or a later sweep; a positive after moves the run's
// creation time that far ahead, so that no instance claims it before.
func (s *Server) release(run *Run, why error, after time.Duration) {
	s.log.Warn("releasing a claimed run", zapString("run", run.ID), zapError(why))
	_, err := s.store.UpdateRun(s.bg, run.ID, func(r *Run) error {
		if r.Status == RunRunning && r.Worker == s.cfg.Worker {
			r.Status, r.Worker, r.LeaseUntil = RunPending, "", time.Time{}
			r.Attempt = max(r.Attempt-1, 0)
			if after > 0 {
				r.CreatedAt = time.Now().Add(after)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Error("releasing a claimed run", zapString("run", run.ID), zapError(err))
	}
}

// remoteChange is called with a run another instance changed: it wakes
// the streams and waits on the run here and, when this instance executes
// the run, acts on a cancellation asked of it.
func (s *Server) remoteChange(runID string) {
	s.hub.notify(runID)
	s.mu.Lock()
	running := s.cancel[runID] != nil
	s.mu.Unlock()
	if running {
		s.checkCancel(runID)
	}
}

// checkCancel cancels the run executing here when its record asks it, or
// when its record is gone (its thread was deleted on another instance).
func (s *Server) checkCancel(runID string) {
	r, err := s.store.Run(s.bg, runID)
	var cause error
	switch {
	case errors.Is(err, ErrNotFound):
		cause = errRunDeleted
	case err != nil || r.Cancel == "":
		return
	default:
		cause = errCancelled{action: r.Cancel}
	}
	s.mu.Lock()
	rc := s.cancel[runID]
	s.mu.Unlock()
	if rc != nil {
		rc.cancel(cause)
	}
}

// askCancel records on a running run that another instance is to cancel
// it; it reports false when the run is not running (it is pending, or
// ended).
func (s *Server) askCancel(ctx context.Context, runID, action string) (bool, error) {
	asked := false
	_, err := s.store.UpdateRun(ctx, runID, func(r *Run) error {
		if r.Status == RunRunning {
			r.Cancel, asked = action, true
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	return asked, err
}

// takeover records where a run starts, on its first start: the thread's
// checkpoint start. A run started before, by an instance that died,
// resumes (true) when its graph saved steps of it: the thread's latest
// checkpoint st is then past the recorded start, and is not only the
// run's drop or copy made from it or from own, the checkpoint the run's
// request names (droppedFrom). It also reports a
// cancellation asked of the run before this instance registered it. With
// a RunStarter it appends the run's metadata event meta in the same call
// (execute left it to takeover).
func (s *Server) takeover(ctx context.Context, run *Run, g runner, start, own string, meta metadataEvent, rl *runLog) (resume bool, st *threadState, cancel string, err error) {
	var asked string // the run's Cancel, as its start read it
	if rs, ok := s.store.(RunStarter); ok {
		var data json.RawMessage
		if data, err = encodeEvent("metadata", meta); err == nil {
			var ev Event
			if asked, ev, err = rs.StartRunEvent(ctx, run.ID, start, "metadata", data, s.cfg.MaxRunEvents); err == nil {
				rl.given(ev.ID)
				s.hub.publish(run.ID, ev)
			}
		}
		if err != nil {
			// The run ends with an error event: the stream still
			// begins with the metadata event, as without a RunStarter.
			_ = rl.emit(ctx, "metadata", meta)
		}
	} else {
		var cur *Run
		if rr, ok := s.store.(RunRecorder); ok {
			cur, err = rr.StartRun(ctx, run.ID, start)
		} else {
			cur, err = s.store.UpdateRun(ctx, run.ID, func(r *Run) error {
				if !r.Started {
					r.Started, r.Start = true, start
				}
				return nil
			})
		}
		if err == nil {
			asked = cur.Cancel
		}
	}
	if err != nil {
		return false, nil, "", err
	}
	if !run.Started {
		return false, nil, asked, nil
	}
	resume, st, err = progress(ctx, g, run.ThreadID, run.Start, own)
	if err != nil {
		return false, nil, "", fmt.Errorf("reading the state of a run taken over: %w", err)
	}
	return resume, st, asked, nil
}

// progress reads the latest checkpoint st of thread threadID and reports
// whether the graph saved steps of a run that started at checkpoint
// start: st is past start, and is not only the run's drop or copy made
// from it or from own, the checkpoint the run's request names ("" for
// none; droppedFrom). A run resumes from st then, and starts
// again from its input otherwise (a thread with no checkpoint left
// included): after a takeover, and after a save of the run that its
// checkpoint database lost (Server.execute).
func progress(ctx context.Context, g runner, threadID, start, own string) (bool, *threadState, error) {
	st, err := g.state(ctx, threadID, "")
	if err != nil {
		return false, nil, err
	}
	if st == nil || st.Checkpoint == nil {
		// No checkpoint left (the thread's were deleted or lost): there
		// is nothing to resume from.
		return false, st, nil
	}
	return st.Checkpoint.CheckpointID != start && !droppedFrom(st, start, own), st, nil
}

// droppedFrom reports whether st, a thread's latest checkpoint, is a run's
// drop or copy made from checkpoint start, or from own, the checkpoint
// the run's request names (see adapter.execute): an update whose parent
// is start or own. A run with input drops start's pending step (an
// update with no next task) when start has one, and always when start
// is a rollback's head (an empty update then); a run from a head without
// input (a resume, or none) copies the head (an empty update that keeps
// its next tasks, interrupts and pending writes); a run with input from
// own drops own's pending tasks when it has some; a run from own on a
// thread with a head otherwise copies own; a run resuming a step of several tasks
// at start copies start (adapter.copyStart). The head's are made before
// the run clears the head. No one else updates a thread
// while it has a run (POST /threads/{id}/state is refused then), so a
// run taken over finds one only when its first attempt made it and saved
// no step of its graph since; the run then starts again from its input
// (or resume), on the drop or copy, as if it had not started.
func droppedFrom(st *threadState, start, own string) bool {
	if st == nil || st.ParentCheckpoint == nil || st.Metadata[graph.MetaSource] != "update" {
		return false
	}
	parent := st.ParentCheckpoint.CheckpointID
	return (start != "" && parent == start) || (own != "" && parent == own)
}

// checkQueue refuses to enqueue a run behind Config.MaxQueuedRuns
// pending runs of the thread (active are its pending and running runs).
func (s *Server) checkQueue(tid string, active []*Run) error {
	n := 0
	for _, r := range active {
		if r.Status == RunPending {
			n++
		}
	}
	if n >= s.cfg.MaxQueuedRuns {
		return &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: thread %s has %d runs queued (Config.MaxQueuedRuns); wait for them, or use multitask_strategy interrupt or rollback", ErrLimit, tid, n)}
	}
	return nil
}

// saveThread saves a new thread for its owner unless the owner has
// Config.MaxThreads threads. The count and the creation are made under a
// lock of the owner's (across instances when the store is a
// ThreadLocker), so that concurrent creations cannot pass the bound
// together.
func (s *Server) saveThread(ctx context.Context, t *Thread) error {
	unlock, err := s.locks.Lock(ctx, "principal:"+t.Owner)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.checkThreads(ctx, t.Owner); err != nil {
		return err
	}
	return s.store.CreateThread(ctx, t)
}

// checkThreads refuses a new thread to a principal that owns
// Config.MaxThreads threads.
func (s *Server) checkThreads(ctx context.Context, who string) error {
	var n int
	var err error
	if c, ok := s.store.(OwnerCounter); ok {
		n, err = c.CountThreads(ctx, who)
	} else {
		_, n, err = s.store.SearchThreads(ctx, ThreadQuery{Owner: who, Limit: 1})
	}
	if err != nil {
		return err
	}
	if n >= s.cfg.MaxThreads {
		return &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: %d threads exist for this principal (Config.MaxThreads); delete some before creating more", ErrLimit, n)}
	}
	return nil
}

// adopt registers the cancel function of a run the sweeper claimed, under
// the thread's lock as claim does, so that whoever cancels the run under
// that lock finds it cancellable.
func (s *Server) adopt(run *Run) (context.Context, context.CancelCauseFunc, error) {
	unlock, err := s.locks.Lock(s.base, run.ThreadID)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	ctx, cancel := context.WithCancelCause(s.base)
	s.mu.Lock()
	s.cancel[run.ID] = &runCancel{ctx: ctx, cancel: cancel}
	s.mu.Unlock()
	return ctx, cancel, nil
}
