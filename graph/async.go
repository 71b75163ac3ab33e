package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// asyncQueue is how many saves a run in [DurabilityAsync] may have waiting
// before it waits for the oldest: the bound on what a crash can lose.
const asyncQueue = 8

// writer saves the checkpoints and pending writes of one run in
// [DurabilityAsync], in the order the run made them, on a goroutine of its
// own, so that a step's save overlaps the next step. After a failed save
// it saves nothing more (a later checkpoint would derive from one that is
// not there) and the run fails with the error at its next boundary.
//
// The run waits for its saves at a pause and at its end; once its context
// is done, for a bounded time only, so that a Saver that hangs (a stuck
// database connection) cannot keep the run from returning: up to grace
// (abandonGrace) for the saves still queued, then up to grace again for
// the save under way once it is cancelled, plus, with a
// [checkpoint.Syncer], up to syncGrace for the Sync that makes them
// durable. The run then abandons the writer (see abandon) and its error
// names the saves that may not have completed. A run whose saves all
// complete in that time loses nothing, and its error is its own: a run
// that finished returns no error.
type writer struct {
	saver  checkpoint.Saver
	lazy   *noSync // the saver is a checkpoint.Syncer: saves wait for no flush
	thread string
	grace  time.Duration   // abandonGrace, unless tests change it
	ctx    context.Context // the saves' context: the run's values, cancelled by abandon
	cancel context.CancelFunc
	run    context.Context // the run's context: no wait outlasts it
	jobs   chan wjob
	stop   chan struct{} // closed by close or abandon: the goroutine returns
	done   chan struct{} // the goroutine has returned
	// saved calls the run's Saved hooks; nil without any.
	saved func(ctx context.Context, s SaveInfo, start time.Time, err error)

	mu      sync.Mutex
	err     error
	seq     uint64
	pending []pendingSave // queued or running, oldest first
	change  chan struct{} // closed and replaced when a save finishes
	stopped bool
	// unsynced: the Sync after the saves failed, so they may not be durable.
	unsynced bool
}

// pendingSave is a save that is queued or running, for waiting and for the
// error of an abandoned run.
type pendingSave struct {
	seq  uint64
	what string
}

// wjob is one save: a checkpoint Put (cp non-nil) or the pending writes of
// a task (PutWrites against checkpoint id).
type wjob struct {
	expect string
	cp     *checkpoint.Checkpoint
	blobs  []checkpoint.Blob
	writes []checkpoint.Write
	id     string
	step   int    // the step saved (see SaveInfo.Step)
	what   string // for the error: "step 3" or `the writes of "a" at step 3`
	seq    uint64
}

func newWriter(ctx context.Context, saver checkpoint.Saver, thread string, grace time.Duration) *writer {
	w := &writer{saver: saver, thread: thread, grace: grace, run: ctx, jobs: make(chan wjob, asyncQueue),
		stop: make(chan struct{}), done: make(chan struct{}), change: make(chan struct{})}
	// The saves outlive a cancellation only until the run gives up on
	// them: abandon cancels them, so a Saver that honours its context
	// returns and the goroutine ends.
	w.ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if sy, ok := saver.(checkpoint.Syncer); ok {
		w.lazy = &noSync{Saver: saver, sy: sy}
		w.saver = w.lazy
	}
	go w.loop()
	return w
}

// noSync makes a writer's saves with a [checkpoint.Syncer]'s NoSync
// methods and notes that a Sync is due.
type noSync struct {
	checkpoint.Saver
	sy    checkpoint.Syncer
	dirty atomic.Bool // a save was made since the last Sync
}

func (n *noSync) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	n.dirty.Store(true)
	return n.sy.PutNoSync(ctx, expect, cp, blobs, writes)
}

func (n *noSync) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	n.dirty.Store(true)
	return n.sy.PutWritesNoSync(ctx, thread, id, writes)
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case j := <-w.jobs:
			w.save(j)
		}
	}
}

// save makes one save, unless an earlier one failed or the run gave up.
func (w *writer) save(j wjob) {
	w.mu.Lock()
	skip := w.err != nil || w.stopped
	w.mu.Unlock()
	var err error
	if !skip {
		var start time.Time
		if w.saved != nil {
			start = time.Now()
		}
		if j.cp != nil {
			err = w.saver.Put(w.ctx, j.expect, j.cp, j.blobs, j.writes)
		} else {
			err = w.saver.PutWrites(w.ctx, w.thread, j.id, j.writes)
		}
		if w.saved != nil && w.ctx.Err() == nil {
			s := SaveInfo{Thread: w.thread, Checkpoint: j.id, Step: j.step, Writes: j.cp == nil, Bytes: saveSize(j.blobs, j.writes)}
			if j.cp != nil {
				s.Checkpoint = j.cp.ID
			}
			w.saved(w.ctx, s, start, err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.err == nil {
		w.err = &CheckpointError{Op: "save", Thread: w.thread, msg: fmt.Sprintf("graph: saving %s of thread %q", j.what, w.thread), Err: err}
	}
	if skip || err != nil && w.stopped {
		return // still pending: close reports it as possibly missing
	}
	for i, p := range w.pending {
		if p.seq == j.seq {
			w.pending = append(w.pending[:i], w.pending[i+1:]...)
			break
		}
	}
	close(w.change)
	w.change = make(chan struct{})
}

// failed returns the error of the first failed save, if any.
func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// enqueue queues a save, waiting while asyncQueue saves are queued, until
// ctx or the run's context is done. It may be called from parallel tasks.
func (w *writer) enqueue(ctx context.Context, j wjob) error {
	w.mu.Lock()
	w.seq++
	j.seq = w.seq
	w.pending = append(w.pending, pendingSave{seq: j.seq, what: j.what})
	w.mu.Unlock()
	// A queue with room takes the save even when the run is cancelled:
	// close gives the queued saves their grace.
	select {
	case w.jobs <- j:
		return nil
	default:
	}
	select {
	case w.jobs <- j:
		return nil
	case <-ctx.Done():
	case <-w.run.Done():
		ctx = w.run
	case <-w.stop:
	}
	w.mu.Lock()
	for i, p := range w.pending {
		if p.seq == j.seq {
			w.pending = append(w.pending[:i], w.pending[i+1:]...)
			break
		}
	}
	w.mu.Unlock()
	cause := context.Cause(ctx)
	if cause == nil {
		cause = errors.New("graph: the run's saves were stopped")
	}
	return fmt.Errorf("graph: %s of thread %q was not saved: %w", j.what, w.thread, cause)
}

// flush waits until every queued save is done and durable, and returns
// the first failure, or ctx's error if ctx is done first.
func (w *writer) flush(ctx context.Context) error {
	if err := w.wait(ctx); err != nil {
		return err
	}
	if w.lazy == nil || !w.lazy.dirty.Swap(false) {
		return nil
	}
	// The saves are made; only making them durable is left. A run whose
	// context is done still gets that, on the writer's context for at most
	// syncGrace: without it they could be lost with no error.
	err := errors.New("graph: the run's context was done")
	if ctx.Err() == nil {
		err = w.lazy.sy.Sync(ctx)
	}
	if err != nil && ctx.Err() != nil {
		gctx, cancel := context.WithTimeout(w.ctx, syncGrace)
		err = w.lazy.sy.Sync(gctx)
		cancel()
	}
	if err != nil {
		w.mu.Lock()
		w.unsynced = true
		if w.err == nil {
			w.err = &CheckpointError{Op: "save", Thread: w.thread, msg: fmt.Sprintf("graph: syncing the saves of thread %q", w.thread), Err: err}
		}
		err = w.err
		w.mu.Unlock()
		return err
	}
	return nil
}

// abandonGrace bounds the wait of a cancelled run for its queued saves,
// and then for the save its writer was making when it was abandoned; in
// [DurabilityExit], the save a cancelled run makes as it stops.
const abandonGrace = time.Second

// syncGrace bounds the Sync that makes the saves of a run durable once the
// run's context is done.
const syncGrace = 5 * time.Second

// wait waits until every queued save is done, durable or not, and returns
// the first failure, or ctx's error if ctx is done first. A synchronous
// Put after it makes them durable (see [checkpoint.Syncer]).
func (w *writer) wait(ctx context.Context) error {
	for {
		w.mu.Lock()
		n, ch, err := len(w.pending), w.change, w.err
		w.mu.Unlock()
		if n == 0 || err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// close flushes and stops the goroutine. If ctx is done first, it gives
// the queued saves their grace and abandons the writer: lost then names
// the saves that may not have completed, or says that the saves may not be
// durable if their Sync failed (nil if neither). When every save completed
// (and was synced), err is nil although ctx is done: nothing of the run
// was lost.
func (w *writer) close(ctx context.Context) (err, lost error) {
	err = w.flush(ctx)
	if ctx.Err() == nil {
		w.shut()
		<-w.done
		return err, nil
	}
	// The run's context is done: the saves queued (a finished task's
	// writes, the step before it) still get w.grace to complete, so
	// that a Saver that answers loses none of them; one that hangs is
	// abandoned.
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.grace)
	_ = w.wait(gctx) // what is still pending after it is named by lost
	cancel()
	if ferr := w.failed(); ferr != nil {
		err = ferr
	}
	w.abandon()
	// The save under way was cancelled: a Saver that honours its context
	// returns soon, and the run returns after it, for at most
	// w.grace, so that a caller acting on the run's end (deleting
	// the thread's checkpoints, say) does not race a save still landing.
	// A Saver that hangs is left behind.
	t := time.NewTimer(w.grace)
	select {
	case <-w.done:
	case <-t.C:
	}
	t.Stop()
	// What is still pending now may be missing; a save that completed
	// while the run stopped is not, but it still needs its Sync, which
	// flush did not reach if it gave up waiting for the save.
	if lost = w.lost(); lost != nil {
		return err, lost
	}
	if serr := w.syncAbandoned(); serr != nil {
		err = serr // err was ctx's, which the run's error already says
	}
	w.mu.Lock()
	unsynced := w.unsynced
	w.mu.Unlock()
	if unsynced {
		// err, joined to lost by closeWriter, holds the Sync's failure:
		// lost does not repeat its text (a database's, which a
		// *CheckpointError marks as not for clients).
		lost = fmt.Errorf("graph: the run of thread %q stopped before its saves were made durable (their sync failed); a crash of the storage may lose them, and the thread then goes on from the last checkpoint kept",
			w.thread)
		return err, lost
	}
	if w.failed() == nil {
		// Every save completed and is durable: err was only ctx's,
		// which the run's own error says if the run did not finish.
		err = nil
	}
	return err, lost
}

// syncAbandoned makes the saves of an abandoned writer durable if they all
// completed and none has been synced since, on a context of its own for at
// most syncGrace. It returns the Sync's failure as the writer's error.
func (w *writer) syncAbandoned() error {
	w.mu.Lock()
	failed := w.err != nil
	w.mu.Unlock()
	if failed || w.lazy == nil || !w.lazy.dirty.Swap(false) {
		return nil
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(w.run), syncGrace)
	err := w.lazy.sy.Sync(gctx)
	cancel()
	if err == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unsynced = true
	if w.err == nil {
		w.err = &CheckpointError{Op: "save", Thread: w.thread, msg: fmt.Sprintf("graph: syncing the saves of thread %q", w.thread), Err: err}
	}
	return w.err
}

// abandon stops the writer without waiting for it: the save under way is
// cancelled and the queued ones are dropped. The goroutine returns once
// the Saver returns from the save under way.
func (w *writer) abandon() {
	w.shut()
	w.cancel()
}

// lost returns an error naming the saves that are still pending, which may
// not have completed, or nil if none is.
func (w *writer) lost() error {
	w.mu.Lock()
	lost := make([]string, len(w.pending))
	for i, p := range w.pending {
		lost[i] = p.what
	}
	w.mu.Unlock()
	if len(lost) == 0 {
		return nil
	}
	return fmt.Errorf("graph: the run of thread %q stopped before %d saves completed (%s); they may be missing, and the thread goes on from the last checkpoint saved before them",
		w.thread, len(lost), strings.Join(lost, ", "))
}

// shut tells the goroutine to return once it finishes the save under way.
func (w *writer) shut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.stopped = true
		close(w.stop)
	}
}

// putAsync queues the checkpoint of the run as it is between steps. The
// checkpoint gets its id now, so the next one can name it as its parent
// before it is saved; its data is copied, as the run reuses its buffers.
func (r *run[S]) putAsync(ctx context.Context, ran []string, meta map[string]string) error {
	d := r.d
	if err := d.w.failed(); err != nil {
		return err
	}
	d.unsaved = false
	if err := d.encode(&r.state); err != nil {
		return err
	}
	next, err := r.nextTasks(r.step + 1)
	if err != nil {
		return err
	}
	vers := make(map[string]uint64, len(d.chans))
	for ch := range d.chans {
		cr := &d.chans[ch]
		if cr.version > 0 {
			vers[d.dur.chans[ch].name] = cr.version
		}
	}
	id := checkpoint.NewID()
	cp := &checkpoint.Checkpoint{ID: id, ThreadID: d.thread, ParentID: d.parent, Step: r.step,
		Versions: vers, Ran: ran, Next: next, Metadata: meta}
	if d.source != nil {
		cp.Metadata, d.source = d.source, nil
	}
	if d.labels != nil {
		cp.Metadata = d.label(cp.Metadata)
	}
	blobs := append([]checkpoint.Blob(nil), d.blobs...)
	// cp belongs to the writer from here on (a Saver sets its fields).
	if err := d.w.enqueue(ctx, wjob{expect: d.latest, cp: cp, blobs: blobs, step: r.step, what: "step " + itoa(r.step)}); err != nil {
		return err
	}
	d.latest, d.parent = id, id
	return nil
}

// closeWriter waits for the run's async saves, stops its writer and joins
// the failure of a save, if any, to err. It waits until ctx is done, no
// longer: then the saves still pending are abandoned, and the error says
// which.
func (d *drun[S]) closeWriter(ctx context.Context, err error) error {
	if d.w == nil {
		return err
	}
	werr, lost := d.w.close(ctx)
	d.w = nil
	switch {
	case werr == nil, err != nil && errors.Is(err, werr):
	case err != nil && ctx.Err() != nil && errors.Is(werr, ctx.Err()):
		// The run's error already says that it was cancelled.
	case err == nil:
		err = werr
	default:
		err = errors.Join(err, werr)
	}
	if lost != nil {
		err = errors.Join(err, lost)
	}
	return err
}
