package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Metadata key and values a checkpoint's source is recorded under.
const (
	// MetaSource is the metadata key naming what made a checkpoint:
	// "input" (a run started or a thread took new input), "loop" (a
	// super-step completed), "interrupt" (a step paused), "update"
	// (Thread.Update) or "fork" (the first checkpoint of a run started from a
	// past checkpoint).
	MetaSource = "source"
	// MetaDroppedInterrupts is the metadata key of the first checkpoint
	// of a [FromCheckpoint] run with new input whose checkpoint had
	// interrupts raised by [Interrupt] pending: their IDs, as a JSON
	// array of strings. The run drops them with their step.
	MetaDroppedInterrupts = "dropped_interrupts"
)

var (
	metaInput     = map[string]string{MetaSource: "input"}
	metaLoop      = map[string]string{MetaSource: "loop"}
	metaInterrupt = map[string]string{MetaSource: "interrupt"}
	metaUpdate    = map[string]string{MetaSource: "update"}
	metaFork      = map[string]string{MetaSource: "fork"}
)

// drun is the durable part of one run on a thread.
type drun[S any] struct {
	dur    *durable[S]
	thread string
	w      *writer // DurabilityAsync: the run's saves
	latest string  // the thread's latest checkpoint, as this run knows it
	parent string  // the checkpoint the next one derives from
	source map[string]string
	// labels are WithCheckpointMetadata's, and labeled the metadata saved
	// with them, by source (built once per run and source: a saver may
	// keep a checkpoint's metadata map, but never modifies it).
	labels  map[string]string
	labeled map[string]map[string]string

	chans []chanRun // per channel of dur.chans
	blobs []checkpoint.Blob
	vers  map[string]uint64
	// scratch holds, per delta channel, a *[]T the appended items are
	// marshalled through.
	scratch []reflect.Value
	cp      checkpoint.Checkpoint // the checkpoint being put

	// saved calls the run's Saved hooks; nil when none has one.
	saved func(ctx context.Context, s SaveInfo, start time.Time, err error)

	resume     map[string][]byte // interrupt id -> encoded resume value
	interrupts []checkpoint.Interrupt
	// The first step continues a checkpoint that paused at it: passed
	// lists the tasks that went past their breakpoints before the pause,
	// those it paused before at a breakpoint, or, for a pause inside the
	// step (a node's Interrupt), the tasks that raised and those that
	// finished. Other breakpoints before the step still stop it: a task
	// Thread.Update routed to, or one whose writes it dropped. carry is
	// what a pause before that step keeps of the checkpoint continued:
	// its finished tasks' writes and the resume values, the run's own
	// included.
	passed []string
	carry  []checkpoint.Write
	// resumed holds the writes of the tasks of the paused step given
	// resume values by this run, while they are not saved (see
	// saveResume); resumedAt is that step.
	resumed   []checkpoint.Write
	resumedAt int
	before    []bool
	after     []bool

	mu    sync.Mutex // guards saveErr between parallel tasks
	tasks []itask    // per task of the current step

	// DurabilityExit: what the run has not saved yet.
	exit    bool
	unsaved bool     // the run has progress since its last Put
	forked  bool     // d.source is metaFork: keep it for the first Put
	lastRan []string // the nodes of the last completed step
	started bool     // r.step counts a step that has not completed
	merged  bool     // r.state and r.trig are past the step's start
	prev    S        // r.state at the start of the step, when merged
	prevTrg []bool   // r.trig at the start of the step, when merged
	// prevFired is r.fired at the start of the step, when merged.
	prevFired []bool
}

// newDrun returns the bookkeeping of a durable run on thread, reusing the
// buffers of the previous durable run of r (runs are pooled).
func (r *run[S]) newDrun(dur *durable[S], thread string) *drun[S] {
	d := r.dfree
	if d == nil || d.dur != dur {
		return &drun[S]{dur: dur, thread: thread, chans: make([]chanRun, len(dur.chans))}
	}
	r.dfree = nil
	clear(d.chans)
	clear(d.blobs[:cap(d.blobs)])
	clear(d.tasks[:cap(d.tasks)])
	*d = drun[S]{dur: dur, thread: thread, chans: d.chans, blobs: d.blobs[:0], vers: d.vers, tasks: d.tasks[:0],
		scratch: d.scratch, prevTrg: d.prevTrg, prevFired: d.prevFired}
	return d
}

// freeDrun keeps r.d's buffers for r's next durable run.
func (r *run[S]) freeDrun() {
	if d := r.d; d != nil {
		d.resume, d.interrupts, d.source, d.saved = nil, nil, nil, nil
		d.passed, d.carry, d.resumed = nil, nil, nil
		d.labels, d.labeled = nil, nil
		d.cp = checkpoint.Checkpoint{}
		var zero S
		d.prev, d.lastRan = zero, nil
		clear(d.tasks[:cap(d.tasks)]) // drop the run's contexts
		clear(d.blobs[:cap(d.blobs)]) // and its encoded data
		for i := range d.chans {
			d.chans[i].prev = nil // and the last checkpoint's encoded values
		}
		r.dfree = d
	}
	r.d = nil
}

// put saves a checkpoint of the run as it is between steps, with writes
// as its pending writes in the same atomic Put.
func (r *run[S]) put(ctx context.Context, ran []string, meta map[string]string, interrupts []checkpoint.Interrupt, writes []checkpoint.Write) (*checkpoint.Checkpoint, error) {
	d := r.d
	if d.w != nil {
		// A save that waits for none: after every queued one.
		if err := d.w.wait(ctx); err != nil {
			return nil, err
		}
	}
	d.unsaved = false // a failed Put is not tried again at the run's exit
	d.resumed = nil   // a pause holds them; after the step they are used
	if err := d.encode(&r.state); err != nil {
		return nil, err
	}
	next, err := r.nextTasks(r.step + 1)
	if err != nil {
		return nil, err
	}
	// d.cp is reused: a Saver keeps the checkpoint's maps and slices, not
	// the struct.
	d.cp = checkpoint.Checkpoint{ThreadID: d.thread, ParentID: d.parent, Step: r.step, Versions: d.versionMap(),
		Ran: ran, Next: next, Interrupts: interrupts, Metadata: meta}
	cp := &d.cp
	if d.source != nil {
		cp.Metadata, d.source = d.source, nil
	}
	if d.labels != nil {
		cp.Metadata = d.label(cp.Metadata)
	}
	var start time.Time
	if d.saved != nil {
		start = time.Now()
	}
	saver := d.dur.saver
	if d.w != nil {
		// The writer's saver: with a checkpoint.Syncer, a PutNoSync
		// that the Sync the run makes as it returns makes durable with
		// the saves before it (a pause is one flush, and synced even
		// when it is the run's only save).
		saver = d.w.saver
	}
	err = saver.Put(ctx, d.latest, cp, d.blobs, writes)
	if d.saved != nil {
		d.saved(ctx, SaveInfo{Thread: d.thread, Checkpoint: cp.ID, Step: cp.Step, Bytes: saveSize(d.blobs, writes)}, start, err)
	}
	if err != nil {
		return nil, &CheckpointError{Op: "save", Thread: d.thread, msg: fmt.Sprintf("graph: saving step %d of thread %q", r.step, d.thread), Err: err}
	}
	d.latest, d.parent = cp.ID, cp.ID
	return cp, nil
}

// label returns meta, one of the run's metadata maps by source, with the
// run's labels added.
func (d *drun[S]) label(meta map[string]string) map[string]string {
	src := meta[MetaSource]
	if m, ok := d.labeled[src]; ok {
		return m
	}
	m := make(map[string]string, len(d.labels)+len(meta))
	for k, v := range d.labels {
		m[k] = v
	}
	for k, v := range meta {
		m[k] = v
	}
	if d.labeled == nil {
		d.labeled = make(map[string]map[string]string, 4)
	}
	d.labeled[src] = m
	return m
}

// saveTask records a finished task's writes as pending writes against the
// checkpoint its step started from.
func (r *run[S]) saveTask(ctx context.Context, i int) error {
	d := r.d
	t := &r.cur[i]
	ws, err := d.encodeWrites(r.c, taskID(r.step, t.n.name, i), t)
	if err != nil {
		return err
	}
	return r.saveWrites(ctx, ws, fmt.Sprintf("the writes of %q at step %d", t.n.name, r.step))
}

// saveWrites records ws as pending writes against the checkpoint the
// current step started from; what names them in an error.
func (r *run[S]) saveWrites(ctx context.Context, ws []checkpoint.Write, what string) error {
	d := r.d
	if d.w != nil {
		return d.w.enqueue(ctx, wjob{id: d.parent, writes: ws, step: r.step, what: what})
	}
	var start time.Time
	if d.saved != nil {
		start = time.Now()
	}
	err := d.dur.saver.PutWrites(ctx, d.thread, d.parent, ws)
	if d.saved != nil {
		d.saved(ctx, SaveInfo{Thread: d.thread, Checkpoint: d.parent, Step: r.step, Writes: true, Bytes: saveSize(nil, ws)}, start, err)
	}
	if err != nil {
		return &CheckpointError{Op: "save", Thread: d.thread, msg: fmt.Sprintf("graph: saving %s", what), Err: err}
	}
	return nil
}

// saveResume saves the resume values given to a run that continues the
// pause of the thread's latest checkpoint, with the other writes of the
// tasks they answer, as pending writes of that checkpoint before its step
// runs again (as LangGraph does): a run that stops while a resumed node
// runs (a crash, a cancellation, a failure) leaves them saved, and running
// the thread again with a zero input gives the node its value instead of
// pausing it again. They are saved on the channel wGiven, which only a run
// from the thread's latest checkpoint reads: once the thread has moved on,
// the checkpoint is again as it was when saved (see restore). With
// [DurabilityExit] they are saved when the run leaves, if the step did not
// complete (see saveExitResume).
func (r *run[S]) saveResume(ctx context.Context) error {
	d := r.d
	if d.resumed == nil || d.exit {
		return nil
	}
	ws := d.resumed
	d.resumed = nil
	return r.saveWrites(ctx, ws, fmt.Sprintf("the resume values of step %d", d.resumedAt))
}

// saveExitResume saves, for a run in [DurabilityExit] that stopped with
// err in the step it resumed, the resume values saveResume did not save.
// A run whose context is done still makes the save, for at most the grace
// of its saves (see stopContext). A failure to save is joined to err.
func (r *run[S]) saveExitResume(ctx context.Context, err error) error {
	d := r.d
	sctx, cancel := stopContext(ctx, d.dur.grace)
	defer cancel()
	ws := d.resumed
	d.resumed = nil
	if serr := r.saveWrites(sctx, ws, fmt.Sprintf("the resume values of step %d", d.resumedAt)); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

// stopContext returns the context of a save a stopping run makes: it
// keeps ctx's values and is not cancelled with ctx, but grace after ctx is
// done it is, so that a Saver that hangs cannot keep a cancelled run from
// returning. cancel releases it.
func stopContext(ctx context.Context, grace time.Duration) (sctx context.Context, cancel func()) {
	c, cancelCause := context.WithCancelCause(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var t *time.Timer
	released := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !released {
			t = time.AfterFunc(grace, func() {
				cancelCause(fmt.Errorf("graph: the run was stopped and its save took more than %v: %w", grace, context.Cause(ctx)))
			})
		}
	})
	return c, func() {
		stop()
		mu.Lock()
		released = true
		if t != nil {
			t.Stop()
		}
		mu.Unlock()
		cancelCause(context.Canceled)
	}
}

// execDurable runs the graph on a thread: it loads the thread's checkpoint,
// merges the input or resumes the paused step, runs, and checkpoints every
// step.
func (c *Compiled[S]) execDurable(ctx context.Context, thread string, input S, set settings, out sink, typed *streamSink[S], ns []string) (S, error) {
	r := c.pool.Get().(*run[S])
	r.set, r.out, r.typed, r.ns = set, out, typed, ns
	r.modes = modesOf(out)
	r.observed = out != nil || len(set.hooks) > 0
	r.nodeHook = hasNodeHook(set.hooks)
	d := r.newDrun(c.dur, thread)
	d.before = c.breakSet(set.before)
	d.after = c.breakSet(set.after)
	d.exit = set.durability == DurabilityExit
	d.labels = set.labels
	r.d = d
	for _, h := range set.hooks {
		if h.Saved != nil {
			d.saved = r.savedHook(set.hooks)
			break
		}
	}
	var err error
	if len(set.hooks) == 0 {
		err = r.runDurable(ctx, input)
	} else {
		err = r.hooked(ctx, RunInfo{Graph: set.name, Namespace: ns, Thread: thread, Resume: set.hasResume, FromCheckpoint: set.fromID},
			func(ctx context.Context) error { return r.runDurable(ctx, input) })
	}
	s := r.state
	r.freeDrun()
	r.release()
	c.pool.Put(r)
	return s, err
}

// runDurable runs r, prepared by execDurable, on its thread.
func (r *run[S]) runDurable(ctx context.Context, input S) error {
	d := r.d
	if r.set.durability == DurabilityAsync {
		d.w = newWriter(ctx, d.dur.saver, d.thread, d.dur.grace)
		d.w.saved = d.saved
		defer func() {
			// A panic escaping the steps (a hook's, a serializer's)
			// must not leave the writer's goroutine behind.
			if d.w != nil {
				d.w.abandon()
				d.w = nil
			}
		}()
	}
	err := r.c.checkThreadRoom(d.thread)
	if err != nil {
		err = loadError(d.thread, err)
	} else {
		err = r.startDurable(ctx, input)
	}
	if err == nil {
		r.base = r.step // the step limit counts this run's steps only
		err = r.steps(ctx)
		if d.unsaved {
			err = r.saveExit(ctx, err)
		} else if d.resumed != nil && err != nil {
			// DurabilityExit: the resumed step did not complete.
			err = r.saveExitResume(ctx, err)
		}
	}
	// The run returns once its saves are done: a pause or an end the
	// caller sees is on disk.
	return d.closeWriter(ctx, err)
}

// savedHook returns the function that calls the run's Saved hooks.
func (r *run[S]) savedHook(hooks []Hooks) func(ctx context.Context, s SaveInfo, start time.Time, err error) {
	ns, d := r.ns, r.d
	backend := strings.TrimPrefix(fmt.Sprintf("%T", d.dur.saver), "*")
	return func(ctx context.Context, s SaveInfo, start time.Time, err error) {
		elapsed := time.Since(start)
		s.Namespace, s.Backend = ns, backend
		for _, h := range hooks {
			if h.Saved != nil {
				h.Saved(ctx, s, elapsed, err)
			}
		}
	}
}

// saveSize is the number of encoded bytes a save writes.
func saveSize(blobs []checkpoint.Blob, writes []checkpoint.Write) int {
	n := 0
	for _, b := range blobs {
		n += len(b.Data)
	}
	for _, w := range writes {
		n += len(w.Value)
	}
	return n
}

// startDurable prepares r to run its first step: a fresh thread starts from
// input, a finished thread merges input into its state, a paused or crashed
// one resumes its pending step.
func (r *run[S]) startDurable(ctx context.Context, input S) error {
	d, c, set := r.d, r.c, &r.set
	if !set.durability.valid() {
		return fmt.Errorf("graph: unknown durability mode %d; use graph.DurabilityStep, graph.DurabilityAsync or graph.DurabilityExit", int(set.durability))
	}
	if err := c.checkBreaks(set.before); err != nil {
		return err
	}
	if err := c.checkBreaks(set.after); err != nil {
		return err
	}
	var snap *checkpoint.Snapshot
	var err error
	if set.continued {
		if snap, err = r.continued(); err != nil {
			return err
		}
	} else {
		snap, err = d.dur.saver.Get(ctx, d.thread, set.fromID)
	}
	if errors.Is(err, checkpoint.ErrNotFound) && set.fromID == "" {
		if set.hasResume {
			return fmt.Errorf("%w: thread %q has no checkpoint to resume", ErrNothingToResume, d.thread)
		}
		// The input merges into the zero state through the reducers, as
		// a finished thread's input merges into its state: a reducer that
		// normalises (model.Messages assigns ids) sees the first input too.
		var zero S
		r.state = zero
		r.mergeInput(&input)
		for ch := range d.chans {
			if d.chans[ch].dirty {
				d.chans[ch].full = true
			}
		}
		d.source = metaInput
		return r.begin(ctx)
	}
	if err != nil {
		return loadError(d.thread, err)
	}
	if err := d.dur.decodeState(snap, &r.state, d); err != nil {
		return err
	}
	r.step = snap.Step
	d.latest, d.parent = snap.ID, snap.ID
	if set.fromID != "" {
		latest, err := d.dur.saver.List(ctx, d.thread, checkpoint.ListOptions{Limit: 1})
		if err != nil {
			return loadError(d.thread, err)
		}
		if len(latest) > 0 {
			d.latest = latest[0].ID
		}
		if d.latest != snap.ID {
			d.source, d.forked = metaFork, true
		}
	}
	pending := false
	for _, t := range snap.Next {
		pending = pending || t.ID != ""
	}
	if !pending {
		if set.hasResume {
			if set.fromID != "" {
				return fmt.Errorf("%w: checkpoint %s of thread %q is not paused; run from it without graph.Resume or graph.ResumeByID", ErrNothingToResume, snap.ID, d.thread)
			}
			return fmt.Errorf("%w: thread %q is not paused; run it without graph.Resume or graph.ResumeByID", ErrNothingToResume, d.thread)
		}
		r.mergeInput(&input)
		if d.source == nil {
			d.source = metaInput
		}
		return r.begin(ctx)
	}
	if !reflect.ValueOf(&input).Elem().IsZero() {
		if set.fromID != "" && !set.hasResume {
			// New input from a checkpoint with a pending step supersedes
			// the step: the input merges into the checkpoint's state and
			// the run starts from START, as on a finished thread.
			r.mergeInput(&input)
			if d.source == nil {
				d.source = metaInput
			}
			var dropped []string
			for _, x := range snap.Interrupts {
				if kindOf(x.ID) == InterruptRaised {
					dropped = append(dropped, x.ID)
				}
			}
			if dropped != nil {
				ids, _ := json.Marshal(dropped)
				d.source = map[string]string{MetaSource: d.source[MetaSource], MetaDroppedInterrupts: string(ids)}
			}
			return r.begin(ctx)
		}
		return r.pendingError(snap)
	}
	// Only a run that continues the thread's latest checkpoint reads and
	// saves the resume values given to it (wGiven): one from an earlier
	// checkpoint (a fork) leaves that checkpoint as it was. A run given
	// ContinueFrom starts from the snapshot Thread.State read as latest.
	head := set.fromID == "" || d.latest == snap.ID
	if err := r.restore(snap, head); err != nil {
		return err
	}
	return r.saveResume(ctx)
}

// pendingError is the error of a run given new input on a thread whose
// latest checkpoint snap has a pending step; it names what works in the
// thread's situation.
func (r *run[S]) pendingError(snap *checkpoint.Snapshot) error {
	d, set := r.d, &r.set
	next := nextNames(snap.Next)
	if set.hasResume {
		return fmt.Errorf("%w: thread %q was given both new input and graph.Resume or graph.ResumeByID; a resume goes on with the pending step (next: %v) and takes no input: give a zero input with it, after Thread.Update if the state needs the input's values",
			ErrThreadPaused, d.thread, next)
	}
	var raised, breaks []string
	for _, x := range snap.Interrupts {
		if kindOf(x.ID) == InterruptRaised {
			raised = append(raised, x.ID)
		} else {
			breaks = append(breaks, x.Node)
		}
	}
	drop := fmt.Sprintf("drop the step by giving the input with graph.FromCheckpoint(%q), or by ending it first with Thread.Update(ctx, update, graph.AsNode(graph.END))", snap.ID)
	switch {
	case raised != nil:
		return fmt.Errorf("%w: thread %q is paused on interrupt(s) %v (next: %v) and takes no new input; resume it with graph.Resume or graph.ResumeByID and a zero input, or %s",
			ErrThreadPaused, d.thread, raised, next, drop)
	case breaks != nil:
		return fmt.Errorf("%w: thread %q is paused at breakpoint(s) on nodes %v (next: %v) and takes no new input; go on with a zero input (the breakpoint takes no resume value), or %s",
			ErrThreadPaused, d.thread, breaks, next, drop)
	}
	return &pendingStepError{msg: fmt.Sprintf("graph: thread %q has a step in progress or stopped mid-way (next: %v): another run may be running it, or a run failed or was cancelled in it; "+
		"retry the input once the other run has finished; if no run is on the thread, run the step again with a zero input, or %s",
		d.thread, next, drop)}
}

// pendingStepError is the error of new input given to a thread whose
// latest checkpoint has a pending step and no pause: a run in progress,
// or one that stopped mid-way. It matches [ErrThreadPaused] and
// [checkpoint.ErrConflict] (see [Thread]).
type pendingStepError struct{ msg string }

func (e *pendingStepError) Error() string { return e.msg }

func (e *pendingStepError) Is(target error) bool {
	return target == ErrThreadPaused || target == checkpoint.ErrConflict
}

// continued returns the checkpoint a run given ContinueFrom starts from,
// or why the run cannot start from it.
func (r *run[S]) continued() (*checkpoint.Snapshot, error) {
	d, set := r.d, &r.set
	snap := set.contRead
	switch {
	case set.fromID != "":
		return nil, fmt.Errorf("%w: the run was given both graph.ContinueFrom and graph.FromCheckpoint(%q); give one of them", ErrBadSnapshot, set.fromID)
	case snap == nil:
		return nil, fmt.Errorf("%w: graph.ContinueFrom was given a snapshot that Thread.State did not return (a zero one, or one of Thread.StateAt or Thread.History); pass Thread.State's, or run from the checkpoint with graph.FromCheckpoint", ErrBadSnapshot)
	case set.contFrom != any(d.dur):
		return nil, fmt.Errorf("%w: graph.ContinueFrom was given a snapshot that another compiled graph read; pass the one Thread.State of this graph returns", ErrBadSnapshot)
	case snap.ThreadID != d.thread:
		return nil, fmt.Errorf("%w: graph.ContinueFrom was given a snapshot of thread %q to run thread %q; pass the state of the thread the run is on", ErrBadSnapshot, snap.ThreadID, d.thread)
	}
	return snap, nil
}

// interruptNodes lists the nodes of xs.
func interruptNodes(xs []checkpoint.Interrupt) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.Node
	}
	return out
}

// nextNames lists the nodes of the pending tasks of ts.
func nextNames(ts []checkpoint.Task) []string {
	var out []string
	for _, t := range ts {
		if t.ID != "" {
			out = append(out, t.Node)
		}
	}
	return out
}

// begin routes from START and saves the input checkpoint.
func (r *run[S]) begin(ctx context.Context) error {
	if err := r.routeFrom(ctx, r.c.start); err != nil {
		return err
	}
	r.schedule()
	if r.d.exit {
		r.d.unsaved = true // d.source stays for the first Put
		return nil
	}
	if r.d.w != nil {
		return r.putAsync(ctx, nil, metaInput)
	}
	_, err := r.put(ctx, nil, metaInput, nil, nil)
	return err
}

// mergeInput merges a thread's new input into its state through the
// reducers: each non-zero top-level field is applied with the graph's
// handle on it ([Graph.Handles], else the field's default; a plain replace
// when it has none).
func (r *run[S]) mergeInput(in *S) {
	d := r.d
	slots := r.c.sch.list()
	for ch := range d.dur.chans {
		c := &d.dur.chans[ch]
		if d.dur.value(in, ch).IsZero() {
			continue
		}
		if n, s := lookup(slots, c.offset, c.typ); s != nil {
			h := r.c.handleOf(n)
			h.apply(&r.state, in)
			d.mark(h)
			continue
		}
		d.dur.value(&r.state, ch).Set(d.dur.value(in, ch))
		d.chans[ch].dirty, d.chans[ch].full = true, true
	}
}

// restore rebuilds the paused step of snap as r.cur, with the tasks that
// finished marked done and the resume values the run was given. head says
// that snap is the thread's latest checkpoint: only then are the resume
// values given to it before (wGiven) used, and those given to this run
// kept in d.resumed for saveResume.
func (r *run[S]) restore(snap *checkpoint.Snapshot, head bool) error {
	d, c := r.d, r.c
	step := snap.Step + 1
	for _, t := range snap.Next {
		i, ok := c.index[t.Node]
		if !ok {
			return fmt.Errorf("graph: checkpoint %s of thread %q schedules node %q, which this graph does not have", snap.ID, d.thread, t.Node)
		}
		nd := c.nodes[i]
		if t.ID == "" {
			if err := r.held(i, t.Input); err != nil {
				return err
			}
			continue
		}
		tk := task[S]{n: nd}
		if t.Input != nil {
			arg, err := r.decodeArg(nd, t.Input)
			if err != nil {
				return err
			}
			tk.arg, tk.push = arg, true
		}
		r.cur = append(r.cur, tk)
	}
	// given lists the interrupts given a resume value at the thread's
	// latest checkpoint, before this run (wGiven) or by it: saveResume
	// saves those on wGiven again, the others as they were.
	var given []string
	d.carry = snap.Writes
	if slices.ContainsFunc(snap.Writes, func(w checkpoint.Write) bool { return w.Channel == wGiven }) {
		d.carry = make([]checkpoint.Write, 0, len(snap.Writes))
		for _, w := range snap.Writes {
			if w.Channel == wGiven {
				if !head {
					continue // given to the checkpoint when it was the latest
				}
				var rw resumeWire
				if json.Unmarshal(w.Value, &rw) == nil {
					given = append(given, rw.ID)
				}
				w.Channel = wResume
			}
			d.carry = append(d.carry, w)
		}
	}
	byTask := map[string][]checkpoint.Write{}
	d.resume = map[string][]byte{}
	for _, w := range d.carry {
		byTask[w.TaskID] = append(byTask[w.TaskID], w)
		if w.Channel == wResume {
			var rw resumeWire
			if err := json.Unmarshal(w.Value, &rw); err == nil {
				d.resume[rw.ID] = rw.Value
			}
		}
	}
	for i := range r.cur {
		t := &r.cur[i]
		id := taskID(step, t.n.name, i)
		ws := byTask[id]
		if !slices.ContainsFunc(ws, func(w checkpoint.Write) bool { return w.Channel == wDone }) {
			continue
		}
		u, err := r.decodeWrites(ws)
		if err != nil {
			return err
		}
		t.upd, t.done = u, true
		d.passed = append(d.passed, id) // it ran past its breakpoint
	}
	// Resume values given to this run.
	open := map[string]*checkpoint.Interrupt{}
	var ids []string
	for i, x := range snap.Interrupts {
		if kindOf(x.ID) == InterruptRaised {
			open[x.ID] = &snap.Interrupts[i]
			ids = append(ids, x.ID)
		}
	}
	// give keeps a resume value of this run for a pause before the step,
	// and for saveResume.
	var resumed []string
	// A value given again (the run it was first given to stopped) replaces
	// the saved one.
	give := func(id string, data []byte) {
		d.resume[id] = data
		x := open[id]
		rw, _ := json.Marshal(resumeWire{ID: id, Value: data})
		d.carry = slices.DeleteFunc(slices.Clone(d.carry), func(w checkpoint.Write) bool {
			var old resumeWire
			return w.Channel == wResume && w.TaskID == x.TaskID && json.Unmarshal(w.Value, &old) == nil && old.ID == id
		})
		d.carry = append(d.carry, checkpoint.Write{TaskID: x.TaskID, Node: x.Node, Channel: wResume, Value: rw})
		if !slices.Contains(resumed, x.TaskID) {
			resumed = append(resumed, x.TaskID)
		}
		if !slices.Contains(given, id) {
			given = append(given, id)
		}
	}
	set := &r.set
	if set.hasResume && len(ids) == 0 {
		if len(snap.Interrupts) > 0 {
			return fmt.Errorf("%w: thread %q is paused at breakpoint(s) on nodes %v, which take no resume value; go on with a zero input and without graph.Resume or graph.ResumeByID", ErrNothingToResume, d.thread, interruptNodes(snap.Interrupts))
		}
		return fmt.Errorf("%w: thread %q has no pending interrupt: its step (next: %v) is in progress in another run or stopped mid-way; to run it again, give a zero input without graph.Resume or graph.ResumeByID", ErrNothingToResume, d.thread, nextNames(snap.Next))
	}
	if set.hasResume && set.resumeByID == nil {
		if len(ids) != 1 {
			return fmt.Errorf("%w: graph.Resume needs exactly one pending interrupt, thread %q has %d %v; use graph.ResumeByID", ErrNothingToResume, d.thread, len(ids), ids)
		}
		data, err := d.dur.ser.Marshal(set.resumeValue)
		if err != nil {
			return fmt.Errorf("graph: encoding the resume value: %w", err)
		}
		give(ids[0], data)
	}
	for id, v := range set.resumeByID {
		if open[id] == nil {
			return fmt.Errorf("%w: thread %q has no pending interrupt %q (pending: %v)", ErrNothingToResume, d.thread, id, ids)
		}
		data, err := d.dur.ser.Marshal(v)
		if err != nil {
			return fmt.Errorf("graph: encoding the resume value for %s: %w", id, err)
		}
		give(id, data)
	}
	if head {
		// The tasks' writes replace theirs on the checkpoint: all of
		// them, the given values on wGiven.
		for _, w := range d.carry {
			if !slices.Contains(resumed, w.TaskID) {
				continue
			}
			if w.Channel == wResume {
				var rw resumeWire
				if json.Unmarshal(w.Value, &rw) == nil && slices.Contains(given, rw.ID) {
					w.Channel = wGiven
				}
			}
			d.resumed = append(d.resumed, w)
		}
		d.resumedAt = step
	}
	for _, x := range snap.Interrupts {
		// A task that raised went past its breakpoints; one paused
		// before at a breakpoint continues the pause.
		if k := kindOf(x.ID); k == InterruptRaised || k == BreakpointBefore {
			d.passed = append(d.passed, x.TaskID)
		}
	}
	d.interrupts = snap.Interrupts
	return nil
}

// prepareStep gives every task of the step its interrupt scope.
func (d *drun[S]) prepareStep(r *run[S]) {
	if cap(d.tasks) < len(r.cur) {
		d.tasks = make([]itask, len(r.cur))
	}
	d.tasks = d.tasks[:len(r.cur)]
	for i := range r.cur {
		it := &d.tasks[i]
		*it = itask{d: d, step: r.step, index: i, node: r.cur[i].n.name, ctx: it.ctx, parent: it.parent}
	}
}

// afterStep saves the checkpoint of a completed step and stops at a
// breakpoint after it.
func (r *run[S]) afterStep(ctx context.Context, ran []string) error {
	d := r.d
	var hits []checkpoint.Interrupt
	if d.after != nil && len(r.cur) > 0 {
		for _, name := range ran {
			if i := r.c.index[name]; d.after[i] {
				id := taskID(r.step, name, 0)
				hits = append(hits, checkpoint.Interrupt{ID: id + suffixAfter, Node: name, TaskID: id})
			}
		}
	}
	d.resume, d.interrupts, d.resumed = nil, nil, nil
	if d.exit && hits == nil {
		// Saved when the run exits; the checkpoint it would have been
		// is the one a failure of the next step saves.
		d.unsaved, d.started, d.merged, d.lastRan = true, false, false, ran
		if !d.forked {
			d.source = nil // only the first checkpoint of a run says "input"
		}
		return nil
	}
	if d.w != nil && hits == nil {
		return r.putAsync(ctx, ran, metaLoop)
	}
	cp, err := r.put(ctx, ran, metaLoop, hits, nil)
	if err != nil {
		return err
	}
	if hits != nil {
		return &InterruptError{Thread: d.thread, CheckpointID: cp.ID, Interrupts: toInterrupts(hits, d.dur.ser)}
	}
	return nil
}

// ranNodes lists the nodes of the step's tasks, once each.
func (r *run[S]) ranNodes() []string {
	if len(r.cur) == 1 {
		return r.cur[0].n.ran // shared: a Saver copies or encodes Ran, never modifies it
	}
	out := make([]string, 0, len(r.cur))
	for i := range r.cur {
		if name := r.cur[i].n.name; !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// saveExit saves, for a run in [DurabilityExit] that has progress it has
// not saved, the checkpoint step-by-step durability would have left as the
// thread's latest when the run stopped with err (nil when it finished): the
// state after its last completed step, with the step that failed (or was
// not started) as the next one and, for a parallel step, the writes of its
// tasks that finished. A failure to save is joined to err. A run that
// stopped with its context done is saved too (that is what lets it be
// resumed), for at most the grace of its saves (see stopContext).
func (r *run[S]) saveExit(ctx context.Context, err error) error {
	d := r.d
	if err != nil {
		sctx, cancel := stopContext(ctx, d.dur.grace)
		defer cancel()
		ctx = sctx
	}
	var writes []checkpoint.Write
	if d.started && len(r.cur) > 1 {
		for i := range r.cur {
			t := &r.cur[i]
			if t.err != nil {
				continue
			}
			ws, werr := d.encodeWrites(r.c, taskID(r.step, t.n.name, i), t)
			if werr != nil {
				return errors.Join(err, werr)
			}
			writes = append(writes, ws...)
		}
	}
	state := r.state
	if d.merged {
		r.state = d.prev
		copy(r.trig, d.prevTrg)
		copy(r.fired, d.prevFired)
	}
	if d.started {
		r.step--
	}
	_, perr := r.put(ctx, d.lastRan, metaLoop, d.interrupts, writes)
	if d.started {
		r.step++
	}
	r.state = state
	if perr != nil {
		return errors.Join(err, perr)
	}
	return err
}
