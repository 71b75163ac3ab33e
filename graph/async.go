package graph

import (
	"context"
	"errors"
	"fmt"
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
type writer struct {
	saver  checkpoint.Saver
	lazy   *noSync // the saver is a checkpoint.Syncer: saves wait for no flush
	thread string
	ctx    context.Context // the run's context, not cancelled
	jobs   chan wjob
	wg     sync.WaitGroup // jobs queued and not done
	done   chan struct{}  // the goroutine has returned
	// saved calls the run's Saved hooks; nil without any.
	saved func(ctx context.Context, s SaveInfo, start time.Time, err error)

	mu  sync.Mutex
	err error
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
}

func newWriter(ctx context.Context, saver checkpoint.Saver, thread string) *writer {
	w := &writer{saver: saver, thread: thread, ctx: context.WithoutCancel(ctx), jobs: make(chan wjob, asyncQueue), done: make(chan struct{})}
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
	for j := range w.jobs {
		if w.failed() == nil {
			var err error
			var start time.Time
			if w.saved != nil {
				start = time.Now()
			}
			if j.cp != nil {
				err = w.saver.Put(w.ctx, j.expect, j.cp, j.blobs, j.writes)
			} else {
				err = w.saver.PutWrites(w.ctx, w.thread, j.id, j.writes)
			}
			if w.saved != nil {
				s := SaveInfo{Thread: w.thread, Checkpoint: j.id, Step: j.step, Writes: j.cp == nil, Bytes: saveSize(j.blobs, j.writes)}
				if j.cp != nil {
					s.Checkpoint = j.cp.ID
				}
				w.saved(w.ctx, s, start, err)
			}
			if err != nil {
				w.mu.Lock()
				w.err = fmt.Errorf("graph: saving %s of thread %q: %w", j.what, w.thread, err)
				w.mu.Unlock()
			}
		}
		w.wg.Done()
	}
}

// failed returns the error of the first failed save, if any.
func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// enqueue queues a save, waiting while asyncQueue saves are queued. It may
// be called from parallel tasks.
func (w *writer) enqueue(j wjob) {
	w.wg.Add(1)
	w.jobs <- j
}

// flush waits until every queued save is done and durable, and returns
// the first failure.
func (w *writer) flush() error {
	if err := w.wait(); err != nil {
		return err
	}
	if w.lazy == nil || !w.lazy.dirty.Swap(false) {
		return nil
	}
	if err := w.lazy.sy.Sync(w.ctx); err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = fmt.Errorf("graph: syncing the saves of thread %q: %w", w.thread, err)
		}
		err = w.err
		w.mu.Unlock()
		return err
	}
	return nil
}

// wait waits until every queued save is done, durable or not, and returns
// the first failure. A synchronous Put after it makes them durable (see
// [checkpoint.Syncer]).
func (w *writer) wait() error {
	w.wg.Wait()
	return w.failed()
}

// close flushes and stops the goroutine.
func (w *writer) close() error {
	err := w.flush()
	close(w.jobs)
	<-w.done
	return err
}

// putAsync queues the checkpoint of the run as it is between steps. The
// checkpoint gets its id now, so the next one can name it as its parent
// before it is saved; its data is copied, as the run reuses its buffers.
func (r *run[S]) putAsync(ran []string, meta map[string]string) error {
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
	for ch, cr := range d.chans {
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
	blobs := append([]checkpoint.Blob(nil), d.blobs...)
	// cp belongs to the writer from here on (a Saver sets its fields).
	d.w.enqueue(wjob{expect: d.latest, cp: cp, blobs: blobs, step: r.step, what: "step " + itoa(r.step)})
	d.latest, d.parent = id, id
	return nil
}

// closeWriter waits for the run's async saves, stops its writer and joins
// the failure of a save, if any, to err.
func (d *drun[S]) closeWriter(err error) error {
	if d.w == nil {
		return err
	}
	werr := d.w.close()
	d.w = nil
	if werr != nil && !errors.Is(err, werr) {
		return errors.Join(err, werr)
	}
	return err
}
