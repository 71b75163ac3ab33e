package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// task is one execution of a node in a super-step: a pull task (the node was
// triggered by an edge or a route; it reads the state) or a push task (a
// Send; it reads arg).
type task[S any] struct {
	n     *node[S]
	arg   any
	push  bool
	done  bool // upd is already known (a restored pending write): do not run
	upd   Update[S]
	err   error
	tries int
}

// run is the mutable state of one run. Runs are pooled per compiled graph so
// a run allocates nothing of its own on the sequential path.
type run[S any] struct {
	c        *Compiled[S]
	set      settings
	observed bool           // hooks or a stream: build TaskInfo (attempts are timed only for node hooks and StreamDebug)
	nodeHook bool           // a hook has NodeStart, NodeEnd or NodeError: attempts go through attempt
	out      sink           // nil when not streamed
	modes    modeSet        // out's modes, asked once per run; zero when not streamed
	typed    *streamSink[S] // the root stream of this graph, if any
	ns       []string

	state  S
	step   int
	cur    []task[S] // tasks of the current super-step, in merge order
	pushes []task[S] // Sends collected for the next step
	spare  []task[S]
	trig   []bool // pending triggers per node
	ntrig  int
	fired  []bool   // per incoming edge of a node that can wait (node.in): it triggered the node since the node last ran; nil when no node can wait
	ran    []bool   // nodes that ran in this step (routing dedup)
	base   int      // step the run started from (a thread's last step)
	d      *drun[S] // durable runs only
	dfree  *drun[S] // the last durable run's bookkeeping, for the next one
	cand   []uint64 // nodes with tasks in the next step (join deferral)
	writer []int32  // per field number: 1 + the task that wrote it this step
	wrepl  []bool   // per field number: a replace handle wrote it this step

	// scopes is room for the scopes of the run's task attempts, handed
	// out by takeScopes; tscope holds the current step's, one per task,
	// for the tasks' first attempts (see scopeFor). nscope is the size
	// of the last room made, tscopes the number of scopes taken.
	scopes  []scopeContext
	tscope  []scopeContext
	nscope  int
	tscopes int

	// parallel execution of one step (see execute)
	sctx   context.Context
	cancel context.CancelFunc
	// stepc is the context of a parallel step, sctx then, and
	// cancelStep cancels it, made once per run: r.cancel then.
	stepc      *stepContext
	cancelStep func()

	gen     uint32        // the generation of the last parallel step
	claim   atomic.Uint64 // the step's generation (high half) and its next unclaimed task (low half)
	tickets atomic.Uint64 // the step's generation (high half) and the helpers that may still join it (low half)
	ntasks  atomic.Int64  // the step's number of tasks
	left    atomic.Int64  // the step's tasks not finished
	waiting atomic.Int64  // helpers started (go) that have not yet run
	// stepDone takes the signal of a helper that finished a step's last
	// task; made at the first parallel step.
	stepDone chan struct{}
	help     func() // made once by helperFunc
	start    func() // startServed, made once
	nhelp    int    // the number of helpers startServed makes available
}

func (c *Compiled[S]) newRun() *run[S] {
	n := len(c.nodes)
	r := &run[S]{
		c:    c,
		trig: make([]bool, n),
		ran:  make([]bool, n),
		cand: make([]uint64, (n+63)/64),
	}
	if len(c.inFrom) > 0 {
		r.fired = make([]bool, len(c.inFrom))
	}
	r.help = helperFunc(r)
	r.start = r.startServed
	r.cancelStep = func() { r.stepc.cancel() }
	return r
}

// exec runs the graph from input to the end.
//
// set is read, not kept: the run takes a copy (a pointer, so that the
// settings are copied once, not also into the call's arguments).
func (c *Compiled[S]) exec(ctx context.Context, input S, set *settings, out sink, typed *streamSink[S], ns []string) (S, error) {
	r := c.pool.Get().(*run[S])
	r.set, r.out, r.typed, r.ns = *set, out, typed, ns
	r.modes = modesOf(out)
	r.observed = out != nil || len(set.hooks) > 0
	r.nodeHook = hasNodeHook(set.hooks)
	r.state = input
	var err error
	if len(set.hooks) == 0 {
		err = r.loop(ctx)
	} else {
		err = r.hooked(ctx, RunInfo{Graph: set.name, Namespace: ns}, r.loop)
	}
	s := r.state
	r.release()
	c.pool.Put(r)
	return s, err
}

func (r *run[S]) release() {
	var zero S
	r.state = zero
	r.step, r.base = 0, 0
	clear(r.cur[:cap(r.cur)])
	clear(r.pushes[:cap(r.pushes)])
	clear(r.spare[:cap(r.spare)])
	r.cur, r.pushes, r.spare = r.cur[:0], r.pushes[:0], r.spare[:0]
	clear(r.trig)
	clear(r.fired)
	clear(r.ran) // a failed route leaves flags behind
	r.ntrig = 0
	r.out, r.typed, r.ns, r.modes = nil, nil, nil, 0
	r.set = settings{}
	// The room left is not kept for the next run: it would keep the
	// scopes handed out (and what they hold) reachable. The number
	// taken sizes the next run's first room.
	if r.tscopes > 0 {
		r.c.scopes.Store(int32(min(r.tscopes, maxScopes)))
	}
	r.scopes, r.tscope, r.nscope, r.tscopes = nil, nil, 0, 0
}

// maxScopes bounds the room for scopes a run makes at once.
const maxScopes = 16

// takeScopes returns n scopes of the run's room, zero and never handed
// out before, making room when too little is left: at first for as many
// as the graph's last observed run took, then twice as many as the last
// room each time, up to maxScopes. A scope is a task attempt's context,
// which a node may keep (in a goroutine it started, say), so none is ever
// used twice; taken from a room made for several, the scopes of a run's
// tasks cost an allocation per run, or per few tasks, not one per task.
// A kept scope keeps its whole room reachable (up to maxScopes scopes),
// so a scope keeps nothing of its task's work once the work returned: a
// streamed model call's response leaves the scope's generation when the
// call returns (see streamGenerate).
func (r *run[S]) takeScopes(n int) []scopeContext {
	if len(r.scopes) < n {
		if r.nscope == 0 {
			r.nscope = max(int(r.c.scopes.Load()), 1)
		} else {
			r.nscope = min(2*r.nscope, maxScopes)
		}
		r.scopes = make([]scopeContext, max(n, r.nscope))
	}
	r.tscopes += n
	sc := r.scopes[:n:n]
	r.scopes = r.scopes[n:]
	return sc
}

// scopeFor returns the scope of attempt number attempt of the current
// step's task i: the one takeScopes gave the task for its first attempt,
// a new one for a retry.
func (r *run[S]) scopeFor(i, attempt int) *scopeContext {
	if attempt == 1 && i < len(r.tscope) {
		return &r.tscope[i]
	}
	return new(scopeContext)
}

// modesOf returns the modes out wants, none when out is nil.
func modesOf(out sink) modeSet {
	if out == nil {
		return 0
	}
	return out.streamModes()
}

// hooked runs body, the whole of a run, between the run's RunStart and
// RunEnd hooks.
func (r *run[S]) hooked(ctx context.Context, info RunInfo, body func(context.Context) error) error {
	for _, h := range r.set.hooks {
		if h.RunStart != nil {
			if c := h.RunStart(ctx, info); c != nil {
				ctx = c
			}
		}
	}
	start := time.Now()
	err := body(ctx)
	res := RunResult{Steps: r.step - r.base, Elapsed: time.Since(start), Err: err}
	for _, h := range r.set.hooks {
		if h.RunEnd != nil {
			h.RunEnd(ctx, info, res)
		}
	}
	return err
}

// loop runs a fresh run: START's edges pick the first step's tasks, then
// steps runs super-steps to the end.
func (r *run[S]) loop(ctx context.Context) error {
	if err := r.routeFrom(ctx, r.c.start); err != nil {
		return err
	}
	r.schedule()
	return r.steps(ctx)
}

// steps runs super-steps until no task is left. Each step has three phases
// with a boundary after them: execute the tasks of r.cur (tasks marked done
// are not run again), merge their updates into r.state in task order, and
// route to build the next r.cur. Between two steps, r.state, r.step, r.cur
// and the pending triggers are the whole of the run's state, which is what
// a checkpoint needs to save and a resumed run needs to start from.
func (r *run[S]) steps(ctx context.Context) error {
	limit := r.set.stepLimit
	if limit <= 0 {
		limit = DefaultStepLimit
	}
	for len(r.cur) > 0 {
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		if r.step-r.base >= limit {
			return &StepLimitError{Limit: limit}
		}
		r.step++
		var err error
		if len(r.set.hooks) == 0 {
			err = r.superStep(ctx)
		} else {
			err = r.hookedStep(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// superStep runs the step r.step: execute, merge, route, and the durable
// run's breakpoints and saves.
func (r *run[S]) superStep(ctx context.Context) error {
	if r.d != nil {
		r.d.started = true
		if err := r.beforeStep(ctx); err != nil {
			return err
		}
		r.d.prepareStep(r)
	}
	r.execute(ctx)
	if r.d != nil {
		if err := r.paused(ctx); err != nil {
			return err
		}
	}
	if err := r.failure(ctx); err != nil {
		return err
	}
	if d := r.d; d != nil && d.exit {
		// Keep the step's start for a save at the run's exit: the
		// reducers build new values, so a shallow copy is enough.
		d.prev = r.state
		d.prevTrg = append(d.prevTrg[:0], r.trig...)
		d.prevFired = append(d.prevFired[:0], r.fired...)
		d.merged = true
	}
	if err := r.mergeSafe(); err != nil {
		return err
	}
	var ran []string
	if r.d != nil {
		ran = r.ranNodes()
		for i := range r.cur {
			r.d.markSet(&r.cur[i].upd)
		}
	}
	if r.out != nil {
		if err := r.emitStep(ctx); err != nil {
			return r.stopped(ctx)
		}
	}
	if err := r.route(ctx); err != nil {
		return err
	}
	r.schedule()
	if r.d != nil {
		if err := r.afterStep(ctx, ran); err != nil {
			return err
		}
	}
	return nil
}

// hookedStep runs the step r.step between its StepStart and StepEnd hooks.
func (r *run[S]) hookedStep(ctx context.Context) error {
	info := StepInfo{Namespace: r.ns, Step: r.step, Nodes: make([]string, len(r.cur))}
	for i := range r.cur {
		info.Nodes[i] = r.cur[i].n.name
	}
	for _, h := range r.set.hooks {
		if h.StepStart != nil {
			if c := h.StepStart(ctx, info); c != nil {
				ctx = c
			}
		}
	}
	err := r.superStep(ctx)
	for _, h := range r.set.hooks {
		if h.StepEnd != nil {
			h.StepEnd(ctx, info, err)
		}
	}
	return err
}

func (r *run[S]) stopped(ctx context.Context) error {
	return fmt.Errorf("graph: run stopped at step %d: %w", r.step, context.Cause(ctx))
}

// execute runs the step's tasks: a lone task inline, several in parallel.
//
// A parallel step is a generation: its tasks are claimed one by one, by
// index, through r.claim, which names the step's generation beside the
// next index. The goroutine running the step works on them too, except in
// a streamed run on the loop's goroutine, and helpers started on
// goroutines of their own join it. A helper holds a ticket of the step
// (r.tickets), of which there are as many as the concurrency allows, and
// claims tasks only of the generation of its ticket. The step ends when
// its last task has finished (r.left), not when its helpers have
// returned: a helper that found no task left returns without touching the
// run's tasks, and is not waited for. Whoever finishes the last task of
// the step ends it: a helper signals r.stepDone. A helper the scheduler
// has not run yet when its step ends (the goroutine running the step did
// the work) joins the next parallel step of the run, which starts only the
// helpers it needs beyond those waiting (r.waiting): so helpers do not
// pile up on a busy machine, and a step that one goroutine runs through
// starts none.
func (r *run[S]) execute(ctx context.Context) {
	n := len(r.cur)
	if r.observed {
		// The tasks' scopes, taken here, on the goroutine running the
		// step, before any task runs (r.tscope is read only in an
		// observed run, where each step sets it). A step of more tasks
		// than a room holds allocates a scope per task: a scope kept
		// by a node keeps its whole room reachable (see takeScopes).
		r.tscope = nil
		if n <= maxScopes {
			r.tscope = r.takeScopes(n)
		}
	}
	if n == 1 || r.set.concurrency == 1 {
		for i := range r.cur {
			r.runTask(ctx, i)
			if err := r.cur[i].err; err != nil && (r.d == nil || !errors.Is(err, errInterrupt)) {
				break
			}
		}
		return
	}
	workers := n
	if c := r.set.concurrency; c > 0 && c < n {
		workers = c
	}
	if r.stepDone == nil {
		r.stepDone = make(chan struct{}, 1)
	}
	// The step's context is a child of ctx, marked offLoop when the
	// step is served: the mark goes under the cancellation, so that the
	// marked parent the sink holds for the run's own context serves
	// every step (the run's context, or its parent when that cannot be
	// cancelled, the run's cancellation then reaching the step through
	// serve: see streamSink.offLoop).
	//
	// It is a stepContext, one allocation where context.WithCancel
	// makes two, and which its tasks may never ask for a channel: the
	// tasks of a served step ask for one only to send a node's own
	// event (see streamSink.eventOff).
	served := r.out != nil && r.out.onLoop(ctx)
	parent := ctx
	if served {
		parent = r.out.offLoop(ctx)
	}
	r.stepc = &stepContext{Context: parent}
	r.sctx, r.cancel = r.stepc, r.cancelStep
	r.gen++
	gen := uint64(r.gen) << 32
	// The new generation goes into claim before the step's counts: a
	// claimer of an earlier step that read the old claim then fails its
	// swap, whatever count it reads (were the counts stored first, it
	// could read this step's count and still swap the old claim, taking
	// a task of this step with its own generation).
	r.claim.Store(gen)
	r.ntasks.Store(int64(n))
	r.left.Store(int64(n))
	if served {
		// A streamed run on the goroutine of the loop over the stream:
		// the tasks run on goroutines of their own, and this one yields
		// their events as they come, so that each task's events reach
		// the consumer while its siblings still run. The step's tickets
		// are given out by startServed, once the stream serves: a helper
		// waiting from an earlier step must not run a task (and emit its
		// events on its own goroutine) before.
		r.serveStep(workers)
	} else {
		r.tickets.Store(gen | uint64(workers-1))
		r.startHelpers(workers - 1)
		r.workStep()
	}
	// The step's tickets left go with it: a helper the scheduler runs
	// now returns at once, or joins the run's next parallel step.
	r.tickets.Store(gen)
	r.cancel()
	r.sctx, r.cancel, r.stepc = nil, nil, nil
}

// serveStep yields the events of a parallel step's tasks until the last
// of them has finished. If the loop body exits the goroutine instead
// (runtime.Goexit, as t.FailNow does), the step is cancelled and its tasks
// are waited for on the way out, so that none outlives the loop.
func (r *run[S]) serveStep(helpers int) {
	served := false
	defer func() {
		if !served {
			r.cancel()
			<-r.stepDone
		}
	}()
	r.nhelp = helpers
	r.out.serve(r.start, r.stepDone, r.cancel)
	served = true
}

// workStep works on the tasks of a parallel step that is not served,
// beside its helpers, and waits for the step's last task. If a task exits
// the goroutine (runtime.Goexit, as t.FailNow does), the step is cancelled
// and its other tasks are waited for on the way out, as in a served step,
// so that none outlives the run; a new helper takes the exited worker's
// place for the tasks still unclaimed.
func (r *run[S]) workStep() {
	returned := false
	defer func() {
		if returned {
			return
		}
		r.cancel()
		if r.left.Add(-1) != 0 {
			go r.helpStep(r.gen, false)
			<-r.stepDone
		}
	}()
	last := r.work(r.gen, false) // this goroutine works too
	returned = true
	if !last {
		<-r.stepDone
	}
}

// startServed gives out the r.nhelp tickets of a served step and starts
// its helpers; the stream calls it once it serves the step's events.
func (r *run[S]) startServed() {
	r.tickets.Store(uint64(r.gen)<<32 | uint64(r.nhelp))
	r.startHelpers(r.nhelp)
}

// startHelpers makes n helpers available to the current step: those
// already started that have not run yet, and new ones for the rest.
func (r *run[S]) startHelpers(n int) {
	for k := n - int(r.waiting.Load()); k > 0; k-- {
		r.waiting.Add(1)
		go r.help()
	}
}

// helping is a run as the function of its helpers' go statements sees it
// (see helperFunc).
type helping interface {
	// join joins the current parallel step if a ticket of it is left
	// and a task of it is still unclaimed, reporting the step's
	// generation and whether a node of the graph is marked deep.
	join() (gen uint32, grown, ok bool)
	helpStep(gen uint32, grown bool)
}

// helperFunc returns the function of a run's helpers' go statements
// (r.help), made once per run: it joins the current parallel step (see
// join) and works on its tasks; the one that finishes the step's last
// task signals the goroutine running the step. It is the go statement's
// function itself, not a method value calling a method, so that the room
// it makes for a deep node costs the copy of one frame fewer.
//
// It is a function literal of this function, not of the run's generic
// methods: the runtime reads the name of a goroutine's function when it
// starts the goroutine and when the goroutine ends (to tell its own
// goroutines apart), scanning the name for its end, and a generic
// function's name spells out its state type, hundreds of bytes for a
// struct with field tags. A literal of a generic function has such a name,
// and so would this one inlined into one.
//
//go:noinline
func helperFunc(h helping) func() {
	return func() {
		gen, grown, ok := h.join()
		if !ok {
			return
		}
		if grown {
			// Room made here, with only this frame on the stack,
			// costs the least to copy (see work).
			reserveStack()
		}
		h.helpStep(gen, grown)
	}
}

// join takes a ticket of the current parallel step for a helper that
// starts (see helping).
func (r *run[S]) join() (gen uint32, grown, ok bool) {
	r.waiting.Add(-1)
	for {
		v := r.tickets.Load()
		if uint32(v) == 0 || !r.unclaimed(uint32(v>>32)) {
			// A helper of an earlier step, one too many, or one
			// that the scheduler ran once the step's tasks were
			// all claimed: it would grow its stack for nothing.
			return 0, false, false
		}
		if r.tickets.CompareAndSwap(v, v-1) {
			return uint32(v >> 32), r.c.deep.Load(), true
		}
	}
}

// unclaimed reports whether the parallel step of generation gen has a
// task left to claim. It is a hint: next decides.
func (r *run[S]) unclaimed(gen uint32) bool {
	v := r.claim.Load()
	return uint32(v>>32) == gen && int64(uint32(v)) < r.ntasks.Load()
}

// helpStep works on the tasks of the step of generation gen. A task that
// exits its goroutine (runtime.Goexit, as t.FailNow does) counts as
// finished, so that the step still ends; a new goroutine takes the exited
// helper's place for the tasks still unclaimed (in a served step, or one
// bounded by max concurrency, nobody else may be left to run them).
func (r *run[S]) helpStep(gen uint32, grown bool) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if r.left.Add(-1) == 0 {
			r.stepDone <- struct{}{}
		} else {
			go r.helpStep(gen, false)
		}
	}()
	last := r.work(gen, grown)
	returned = true
	if last {
		r.stepDone <- struct{}{}
	}
}

// next claims the next task of the parallel step of generation gen,
// reporting false when none is left or the step has ended.
func (r *run[S]) next(gen uint32) (int, bool) {
	for {
		v := r.claim.Load()
		// The count may be a later step's when that step has started
		// since v was read: then v's generation is not gen, or the swap
		// below fails.
		if uint32(v>>32) != gen || int64(uint32(v)) >= r.ntasks.Load() {
			return 0, false
		}
		if r.claim.CompareAndSwap(v, v+1) {
			return int(uint32(v)), true
		}
	}
}

// work runs tasks of the parallel step of generation gen until none is
// left to claim, and reports whether it finished the step's last task.
// Once a task is finished its results belong to the goroutine running
// the step: work reads nothing of the run's tasks but through a claim.
//
// A worker usually starts on a fresh goroutine, whose small stack the
// runtime doubles, copying it, whenever a call needs more. A copy walks and
// adjusts every frame on the stack, so growing in the middle of a deep
// call (a tool decoding JSON, a client making a request) costs far more
// than growing at the top. So the worker notes whether a task's call moved
// its stack, marks the task's node deep when it did, and makes room at
// once (reserveStack), with only its own frames on the stack, before it
// runs a task of a node marked deep. A helper does so as it joins the step
// once a node of the graph is marked deep, with fewer frames on its stack
// still, and says so in grown.
func (r *run[S]) work(gen uint32, grown bool) bool {
	for {
		i, ok := r.next(gen)
		if !ok {
			return false
		}
		nd := r.cur[i].n
		if !grown && nd.deep.Load() {
			reserveStack()
			grown = true
		}
		var probe byte
		at := stackAt(&probe)
		r.runTask(r.sctx, i)
		if !grown && stackAt(&probe) != at {
			grown = true
			nd.deep.Store(true)
			r.c.deep.Store(true)
		}
		if err := r.cur[i].err; err != nil && (r.d == nil || !errors.Is(err, errInterrupt)) {
			r.cancel() // stop the siblings: the step fails
		}
		if r.left.Add(-1) == 0 {
			return true
		}
	}
}

// stackAt returns the address of a variable on the goroutine's stack. The
// runtime moves the stack when it grows it, so a different address for the
// same variable after a call says the call grew the stack.
func stackAt(v *byte) uintptr { return uintptr(unsafe.Pointer(v)) }

// reservedStack is the room, in bytes, a worker makes on its stack before
// a task of a deep node: the runtime then grows the stack to 16 KiB in one
// copy.
const reservedStack = 12 << 10

// reserveStack makes room for reservedStack bytes on the goroutine's stack:
// its frame is that big, so that calling it grows the stack at once. The
// room is declared in a branch that never runs (see touchReserved), so the
// frame is only reserved, never cleared: on a stack already that big a
// call costs a stack check.
//
//go:noinline
func reserveStack() {
	if touchReserved {
		var room [reservedStack]byte
		keep(room[:])
	}
}

// touchReserved is always false. reserveStack tests it so that the
// compiler keeps the room in the frame (it cannot know the branch is dead)
// while the clearing, which is in the branch, never runs.
var touchReserved bool

// keep is a use of b the compiler cannot remove, so that reserveStack's
// frame keeps its size.
//
//go:noinline
func keep(b []byte) {}

// runTask runs task i with its retry policy; the result is left in the
// task.
func (r *run[S]) runTask(ctx context.Context, i int) {
	t := &r.cur[i]
	if t.done {
		return
	}
	pol := t.n.retry
	max := pol.attempts()
	var it *itask
	if r.d != nil {
		it = &r.d.tasks[i]
		ctx = it.context(ctx)
	}
	for attempt := 1; ; attempt++ {
		var err error
		if it != nil {
			it.n, it.raised, it.used = 0, nil, nil
		}
		switch {
		case t.n.timeout != 0:
			err = r.attempt(ctx, t, i, attempt)
		case !r.observed:
			err = r.call(ctx, t)
		case !r.nodeHook && !r.modes.has(StreamDebug):
			// Observed without node hooks or debug events: the
			// attempt needs only its scope.
			err = r.call(r.scope(ctx, i, attempt), t)
		default:
			err = r.attempt(ctx, t, i, attempt)
		}
		t.tries = attempt
		if err == nil {
			t.err = nil
			if r.d != nil && len(r.cur) > 1 && !r.d.exit {
				// The task's work is done: save it even when a
				// sibling's failure has cancelled the step meanwhile,
				// so that a resumed run does not do it again.
				t.err = r.saveTask(context.WithoutCancel(ctx), i)
			}
			if t.err == nil && len(r.cur) > 1 && r.modes.has(StreamUpdates) {
				r.emitTask(ctx, i)
			}
			return
		}
		if attempt >= max || ctx.Err() != nil || (it != nil && errors.Is(err, errInterrupt)) || !pol.retryable(err) {
			t.err = err
			return
		}
		if !r.retryWait(ctx, t, attempt, err) {
			t.err = err
			return
		}
	}
}

// retryWait logs the failed attempt of t and waits before the next one,
// reporting false when ctx ends first. It is apart from runTask so that
// runTask's stack frame stays small: a parallel task runs on a fresh
// goroutine, whose stack grows by copying.
//
//go:noinline
func (r *run[S]) retryWait(ctx context.Context, t *task[S], attempt int, err error) bool {
	wait := t.n.retry.wait(attempt)
	r.set.logger.Debug("graph: retrying node", zap.String("node", t.n.name), zap.Int("step", r.step),
		zap.Int("attempt", attempt), zap.Duration("wait", wait), zap.Error(err))
	timer := time.NewTimer(wait)
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		timer.Stop()
		return false
	}
}

// attempt runs one attempt of a task with its timeout, hooks and debug
// events. A panic in a hook fails the attempt like one in the node.
func (r *run[S]) attempt(ctx context.Context, t *task[S], i, attempt int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			t.upd = Update[S]{}
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	nd := t.n
	tctx := ctx
	var cancel context.CancelFunc
	if nd.timeout > 0 {
		tctx, cancel = context.WithTimeout(ctx, nd.timeout)
		defer cancel()
	}
	if !r.observed {
		return timedOut(ctx, tctx, r.call(tctx, t), nd.timeout)
	}
	sctx := r.scope(tctx, i, attempt)
	info := sctx.sc.info
	var actx context.Context = sctx
	if r.out != nil {
		if r.modes.has(StreamDebug) {
			_ = r.out.send(ctx, rawEvent{mode: StreamDebug, info: info, debug: &Debug{Kind: TaskStart, Attempt: attempt}})
		}
	}
	for _, h := range r.set.hooks {
		if h.NodeStart != nil {
			if c := h.NodeStart(actx, info); c != nil {
				actx = c
			}
		}
	}
	// The attempt is timed for node hooks and debug events only: a run
	// without them reads no clock.
	timed := r.nodeHook || r.modes.has(StreamDebug)
	var start time.Time
	if timed {
		start = time.Now()
	}
	err = r.call(actx, t)
	var elapsed time.Duration
	if timed {
		elapsed = time.Since(start)
	}
	if cancel != nil {
		err = timedOut(ctx, tctx, err, nd.timeout)
	}
	for _, h := range r.set.hooks {
		if err == nil && h.NodeEnd != nil {
			h.NodeEnd(actx, info, elapsed)
		}
		if err != nil && h.NodeError != nil {
			h.NodeError(actx, info, elapsed, err)
		}
	}
	if r.modes.has(StreamDebug) {
		_ = r.out.send(ctx, rawEvent{mode: StreamDebug, info: info,
			debug: &Debug{Kind: TaskEnd, Attempt: attempt, Elapsed: elapsed, Err: err}})
	}
	return err
}

// scope returns the context of attempt number attempt of the current
// step's task i, a child of ctx carrying the task's scope.
func (r *run[S]) scope(ctx context.Context, i, attempt int) *scopeContext {
	sctx := r.scopeFor(i, attempt)
	sctx.Context = ctx
	sctx.sc.sink, sctx.sc.hooks, sctx.sc.modes = r.out, r.set.hooks, r.modes
	sctx.sc.info = TaskInfo{Namespace: r.ns, Step: r.step, Node: r.cur[i].n.name, Index: i, Attempt: attempt}
	return sctx
}

// timedOut turns the failure of an attempt whose own deadline passed (while
// the run went on) into a *TimeoutError.
func timedOut(ctx, tctx context.Context, err error, d time.Duration) error {
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Timeout: d}
	}
	return err
}

// call runs the node function and leaves its update in t, turning a panic
// into a *PanicError. The update of a call that fails or does not return
// (a panic, or runtime.Goexit) is discarded: a node writing its update in
// place may have written part of it by then.
func (r *run[S]) call(ctx context.Context, t *task[S]) (err error) {
	returned := false
	defer func() {
		// recover is asked only when the node did not return: a
		// panic, or runtime.Goexit (where it returns nil).
		if !returned {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: debug.Stack()}
				r.set.logger.Warn("graph: node panicked", zap.String("node", t.n.name), zap.Int("step", r.step), zap.Any("panic", v))
			}
		}
		if err != nil || !returned {
			t.upd = Update[S]{}
		}
	}()
	switch {
	case t.push:
		err = t.n.task(ctx, t.arg, &t.upd)
	case t.n.into != nil:
		err = t.n.into(ctx, &r.state, &t.upd)
	default:
		t.upd, err = t.n.fn(ctx, r.state)
	}
	returned = true
	return err
}

// failure returns the step's error: the first failed task in task order,
// skipping tasks that only saw the cancellation caused by that failure.
func (r *run[S]) failure(ctx context.Context) error {
	var first *task[S]
	idx := -1
	for i := range r.cur {
		t := &r.cur[i]
		if t.err == nil {
			continue
		}
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		if first == nil || (secondary(first.err) && !secondary(t.err)) {
			first, idx = t, i
		}
	}
	if first == nil {
		return nil
	}
	return &NodeError{Node: first.n.name, Step: r.step, Task: idx, Attempts: first.tries, Err: first.err}
}

// secondary reports an error that another task's failure explains or
// outranks: the cancellation it caused, or a pause (Interrupt).
func secondary(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, errInterrupt)
}

// merge applies the step's updates to the state through the reducers, in
// task order. A conflict is found before anything is applied, so a failed
// step leaves the state as the previous step left it.
func (r *run[S]) merge() error {
	if r.d != nil {
		for i := range r.cur {
			if err := r.c.checkReduce(r.cur[i].n.name, &r.cur[i].upd); err != nil {
				return err
			}
		}
	}
	if len(r.cur) > 1 {
		if err := r.conflicts(); err != nil {
			return err
		}
	}
	for i := range r.cur {
		t := &r.cur[i]
		for j, n := 0, t.upd.set.count(); j < n; j++ {
			t.upd.ops.at(j).apply(&r.state, &t.upd.val)
		}
	}
	return nil
}

// mergeSafe merges, turning a panic in a user reducer (a Reduce function or
// a Merge method) into an error of the run.
func (r *run[S]) mergeSafe() (err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if v := recover(); v != nil {
			err = fmt.Errorf("graph: a reducer panicked while merging step %d: %w", r.step, &PanicError{Value: v, Stack: debug.Stack()})
		}
	}()
	err = r.merge()
	returned = true
	return err
}

// conflicts reports two tasks of the step writing one field whose reducer
// replaces (through any of the field's handles).
func (r *run[S]) conflicts() error {
	if n := len(r.c.sch.list()); len(r.writer) < n {
		r.writer, r.wrepl = make([]int32, n), make([]bool, n)
	}
	clear(r.writer)
	clear(r.wrepl)
	for i := range r.cur {
		t := &r.cur[i]
		for j, n := 0, t.upd.set.count(); j < n; j++ {
			f := t.upd.ops.at(j)
			s := f.slot
			if prev := r.writer[s]; prev != 0 && (f.replace || r.wrepl[s]) {
				return &ConflictError{Field: f.name, Nodes: [2]string{r.cur[prev-1].n.name, t.n.name}, Step: r.step}
			}
			r.writer[s] = int32(i + 1)
			r.wrepl[s] = r.wrepl[s] || f.replace
		}
	}
	return nil
}

// route collects the next step's triggers and Sends: for each node that ran,
// in task order, its static edges and routers (once per step), then each
// task's own routing.
func (r *run[S]) route(ctx context.Context) error {
	for i := range r.cur {
		t := &r.cur[i]
		nd := t.n
		if !r.ran[nd.idx] {
			r.ran[nd.idx] = true
			if err := r.routeFrom(ctx, nd); err != nil {
				return err
			}
		}
		if !t.upd.route.IsZero() {
			if err := r.follow(nd, false, t.upd.route, nd.targets, nd.targetIdx); err != nil {
				return err
			}
		}
	}
	for i := range r.cur {
		r.ran[r.cur[i].n.idx] = false
	}
	return nil
}

// who names the origin of a route in errors: the node or its router.
func (n *node[S]) who(router bool) string {
	name := `"` + n.name + `"`
	if n.idx < 0 {
		name = "START"
	}
	if router {
		return "the router of " + name
	}
	return "node " + name
}

// routeFrom follows nd's static edges and runs its routers.
func (r *run[S]) routeFrom(ctx context.Context, nd *node[S]) error {
	for _, t := range nd.next {
		r.trigger(t)
		if r.fired != nil {
			r.fire(nd, t)
		}
	}
	for _, b := range nd.branches {
		rt, err := r.callRouter(ctx, b)
		if err != nil {
			return &NodeError{Node: nd.name, Step: r.step, Err: fmt.Errorf("router of its conditional edge: %w", err)}
		}
		if err := r.follow(nd, true, rt, b.targets, b.idx); err != nil {
			return err
		}
	}
	return nil
}

func (r *run[S]) callRouter(ctx context.Context, b *branch[S]) (rt Route, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return b.router(ctx, r.state)
}

func (r *run[S]) trigger(i int) {
	if i < len(r.trig) && !r.trig[i] {
		r.trig[i] = true
		r.ntrig++
	}
}

// fire notes that node from triggered node i, for a node that can wait
// (see waits); the caller triggers i.
func (r *run[S]) fire(from *node[S], i int) {
	if i >= len(r.c.nodes) || from.idx < 0 {
		return
	}
	if nd := r.c.nodes[i]; nd.nin > 0 {
		if k, ok := slices.BinarySearch(r.c.inFrom[nd.in:nd.in+nd.nin], int32(from.idx)); ok {
			r.fired[int(nd.in)+k] = true
		}
	}
}

// follow applies a route from who, checking it against the declared targets.
func (r *run[S]) follow(nd *node[S], router bool, rt Route, names []string, idx []int) error {
	if rt.hasTo {
		if err := r.goTo(nd, router, rt.to, names, idx); err != nil {
			return err
		}
	}
	for _, name := range rt.more {
		if err := r.goTo(nd, router, name, names, idx); err != nil {
			return err
		}
	}
	for _, s := range rt.sends {
		if s.def == nil {
			return fmt.Errorf("%w: %s sent an empty Send; make Sends with a task node's Send method", ErrBadRoute, nd.who(router))
		}
		i := s.def.idx
		if i < 0 || i >= len(r.c.nodes) || r.c.nodes[i].def != s.def {
			return fmt.Errorf("%w: %s sent a task to %q, a task node of another graph", ErrBadRoute, nd.who(router), s.def.name)
		}
		if !slices.Contains(idx, i) {
			return fmt.Errorf("%w: %s sent a task to %q, which is not among its declared targets %q", ErrBadRoute, nd.who(router), s.def.name, names)
		}
		var t *task[S]
		r.pushes, t = addTask(r.pushes, r.c.nodes[i])
		t.arg, t.push = s.arg, true
	}
	return nil
}

func (r *run[S]) goTo(nd *node[S], router bool, name string, names []string, idx []int) error {
	for k, n := range names {
		if n == name {
			i := idx[k]
			if i < len(r.c.nodes) && r.c.nodes[i].task != nil {
				return fmt.Errorf("%w: %s routed to task node %q, which takes its input from Send; return %s.Send(x) instead", ErrBadRoute, nd.who(router), name, name)
			}
			r.trigger(i)
			if r.fired != nil {
				r.fire(nd, i)
			}
			return nil
		}
	}
	if name == "" {
		return fmt.Errorf("%w: %s routed to an empty target name; return graph.To(graph.END) to stop", ErrBadRoute, nd.who(router))
	}
	if _, ok := r.c.index[name]; ok || name == END {
		return fmt.Errorf("%w: %s routed to %q, which is not among its declared targets %q", ErrBadRoute, nd.who(router), name, names)
	}
	return fmt.Errorf("%w: %s routed to unknown node %q", ErrBadRoute, nd.who(router), name)
}

// schedule builds the next step's tasks: triggered nodes in the order they
// were added to the graph, then Sends in the order they were sent. A
// triggered node waits (keeps its trigger) while a task can still reach it
// through an edge that has not triggered it (see waits): that is how a join
// waits for its slower branches.
func (r *run[S]) schedule() {
	next := r.spare[:0]
	if r.ntrig > 0 {
		multi := r.ntrig+len(r.pushes) > 1
		if multi {
			clear(r.cand)
			for i, on := range r.trig {
				if on {
					r.cand[i/64] |= 1 << (i % 64)
				}
			}
			for i := range r.pushes {
				k := r.pushes[i].n.idx
				r.cand[k/64] |= 1 << (k % 64)
			}
		}
		waiting := 0 // deferred nodes kept back
		for i, on := range r.trig {
			if !on {
				continue
			}
			nd := r.c.nodes[i]
			if multi && nd.hasUp && intersects(nd.upstream, r.cand) && r.waits(nd) {
				continue
			}
			if nd.deferred && multi {
				waiting++
				continue
			}
			r.take(i, nd)
			next, _ = addTask(next, nd)
		}
		// Deferred nodes run when nothing else would: together, in node
		// order.
		if waiting > 0 && len(next) == 0 && len(r.pushes) == 0 {
			for i, on := range r.trig {
				if nd := r.c.nodes[i]; on && nd.deferred && !(nd.hasUp && intersects(nd.upstream, r.cand) && r.waits(nd)) {
					r.take(i, nd)
					next, _ = addTask(next, nd)
				}
			}
		}
	}
	if len(next) == 0 {
		// Sends alone (a map step, a tool call turn): the Sends are
		// the next step as they stand, not copied task by task; the
		// buffer left collects the next step's Sends.
		next, r.pushes = r.pushes, next
	} else {
		next = append(next, r.pushes...)
		clear(r.pushes)
		r.pushes = r.pushes[:0]
	}
	// The finished step's tasks are overwritten by the step after next;
	// release clears whatever is left when the run ends.
	r.spare = r.cur[:0]
	r.cur = next
}

// waits reports whether triggered node nd, which a node with a task in the
// next step (r.cand) is strictly upstream of, keeps its trigger for a later
// step: one of those can reach it through an incoming edge that has not
// triggered it since it last ran. A node fed by a loop thus runs each time
// the loop triggers it; a join waits for its slower branches. Only nodes
// strictly upstream count, so that some candidate never waits and the run
// goes on.
func (r *run[S]) waits(nd *node[S]) bool {
	for k := nd.in; k < nd.in+nd.nin; k++ {
		if w := r.c.inWait[k]; w != nil && !r.fired[k] && intersects(w, r.cand) {
			return true
		}
	}
	return false
}

// take removes the trigger of nd, node i, which becomes a task of the next
// step.
func (r *run[S]) take(i int, nd *node[S]) {
	r.trig[i] = false
	r.ntrig--
	if nd.nin > 0 {
		clear(r.fired[nd.in : nd.in+nd.nin])
	}
}

// addTask appends to ts a task of node nd, zero but for its node, and
// returns ts and the task. The task is zeroed in place: appending a task
// literal would build it on the stack first and copy it in, and a task
// holds an Update of some hundreds of bytes.
func addTask[S any](ts []task[S], nd *node[S]) ([]task[S], *task[S]) {
	ts = append(ts, task[S]{})
	t := &ts[len(ts)-1]
	t.n = nd
	return ts, t
}

func intersects(a, b []uint64) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// Invoke runs the graph from input until no node is left to run and returns
// the final state. Each super-step runs its triggered nodes (in parallel
// when there are several), merges their updates in task order, then follows
// edges and routes. On failure Invoke returns the state as of the last
// completed step together with the error: a [*NodeError] for a failing
// node, a [*StepLimitError], a [*ConflictError], an [ErrBadRoute] error, or
// the context's error when ctx is cancelled.
//
// A graph compiled with [WithCheckpointer] runs on a thread: use
// [Compiled.Thread], c.Thread(id).Invoke(ctx, input). Invoke on such a
// graph runs on the thread named by RunConfig.ThreadID in ctx (see
// [WithConfig]), for code that receives its run through a context, such as
// a layer that runs graphs on its caller's behalf; without one it fails
// with [ErrNoThread].
//
// A graph invoked inside a node of another run (rather than added to it
// with [AddSubgraph]) runs on its own: its nodes' events ([Emit],
// [EmitMessage], [Generate]'s chunks) and its subgraphs' events do not go
// to the enclosing run's stream. A node that wants them there forwards
// them itself, or streams the graph with [Compiled.Stream]. Inside a node
// of a durable run, such a graph (run without a thread) is part of that
// node: [Interrupt] in its nodes, or in its subgraphs', pauses the
// enclosing run, and resuming it runs the node, and so the graph, again;
// its subgraph nodes run as they do in a graph without a checkpointer,
// even those compiled with one. A graph run on a thread of its own
// ([Thread.Invoke]) pauses on that thread instead.
func (c *Compiled[S]) Invoke(ctx context.Context, input S, opts ...RunOption) (S, error) {
	ctx = detached(ctx)
	if len(opts) == 0 {
		if c.dur != nil {
			return c.invokeDurable(ctx, input, c.set, nil, nil)
		}
		return c.exec(ctx, input, &c.set, nil, nil, nil)
	}
	set := c.set
	set.hooks = slices.Clip(set.hooks)
	set.runOpts(opts)
	if c.dur != nil || set.durableOpts {
		return c.invokeDurable(ctx, input, set, nil, nil)
	}
	return c.exec(ctx, input, &set, nil, nil, nil)
}

// invokeDurable runs a graph compiled with a checkpointer on the thread
// named in ctx.
func (c *Compiled[S]) invokeDurable(ctx context.Context, input S, set settings, out sink, typed *streamSink[S]) (S, error) {
	if c.dur == nil {
		return input, fmt.Errorf("%w: graph.Resume, graph.ResumeByID, graph.FromCheckpoint and breakpoints need a graph compiled with graph.WithCheckpointer", ErrNoCheckpointer)
	}
	thread := ConfigFrom(ctx).ThreadID
	if thread == "" {
		return input, fmt.Errorf("%w: run the graph on a thread with c.Thread(id).Invoke (or set RunConfig.ThreadID with graph.WithConfig)", ErrNoThread)
	}
	return c.execDurable(ctx, thread, input, set, out, typed, nil)
}

// runChild runs c as the subgraph node named node of a parent run. A child
// compiled with a checkpointer whose parent run is durable runs durably,
// on a thread of its own (see runDurableChild).
func (c *Compiled[C]) runChild(ctx context.Context, in C, node string) (C, error) {
	var out sink
	var ns []string
	set := c.set
	if sc, _ := ctx.Value(scopeKey{}).(*scope); sc != nil {
		// Observed parent: the child's tasks know where they are nested,
		// when the parent is streamed the child streams into the same
		// sink, and a child without hooks of its own has the parent's.
		out, ns = sc.sink, append(slices.Clip(sc.info.Namespace), node)
		if len(set.hooks) == 0 {
			set.hooks = sc.hooks
		}
	}
	it, _ := ctx.Value(itaskKey{}).(*itask)
	if it != nil && ctx.Value(nestedKey{}) != it {
		// it is the parent's own task.
		if c.dur != nil {
			return c.runDurableChild(ctx, it, in, set.hooks, out, ns)
		}
		// The child's tasks share it, for Interrupt; its subgraphs are
		// not the durable run's children.
		ctx = context.WithValue(ctx, nestedKey{}, it)
	}
	return c.exec(ctx, in, &set, out, nil, ns)
}

// detached returns ctx for a graph run with Invoke inside a node of another
// run (not added as its subgraph node), which is a run of its own:
//
//   - without the task scope of the enclosing run, if ctx carries one, so
//     that neither its nodes' events nor its subgraphs' stream into the
//     enclosing run, whose stream would otherwise take them for its own
//     node's events or, for values events, for states of its own type;
//   - with the enclosing durable run's task (itaskKey), if ctx carries one,
//     marked as nested (nestedKey), so that the run's subgraph nodes
//     compiled with a checkpointer run inside it as a graph without one
//     runs them, not as durable children of the enclosing run's node, all
//     on the one thread that node names. [Interrupt] in its nodes still
//     pauses the enclosing run's node.
//
// A context with neither is returned as it is.
func detached(ctx context.Context) context.Context {
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	it, _ := ctx.Value(itaskKey{}).(*itask)
	if it != nil && ctx.Value(nestedKey{}) == it {
		it = nil // marked already
	}
	if sc == nil && it == nil {
		return ctx
	}
	return detachedContext{ctx, it, sc != nil}
}

// detachedContext hides the task scope of its parent and marks its durable
// task as nested (see detached).
type detachedContext struct {
	context.Context
	nested *itask // the enclosing run's task, or nil
	hide   bool   // hide the parent's scope
}

// String names the context as context.WithValue would.
func (c detachedContext) String() string {
	return contextName(c.Context) + ".WithValue(graph.detached)"
}

// Value returns nil for scopeKey when the scope is hidden, the enclosing
// task for nestedKey when it marks one, and asks the parent otherwise.
func (c detachedContext) Value(key any) any {
	switch key.(type) {
	case scopeKey:
		if c.hide {
			return nil
		}
	case nestedKey:
		if c.nested != nil {
			return c.nested
		}
	}
	return c.Context.Value(key)
}

// nestedKey marks a context whose task (itaskKey) belongs to a durable run
// further up than the graph running under it.
type nestedKey struct{}

// runDurableChild runs c, compiled with a checkpointer, as the subgraph
// node of the durable parent task it: on the thread SubgraphThread names,
// in c's saver. A fresh node starts the thread from in. A node that runs
// again because the parent's step stopped inside it (a crash, a
// cancellation, a pause) finds the thread stopped in a step and goes on
// from there: the child's steps that finished are not run again. A
// finished thread (the parent's step stopped after the child ended) takes
// in as new input, as any thread does. The child's interrupts become the
// parent's: each pending one is raised in the parent's task, with the
// child's payload, under an id naming the child's interrupt, and the
// parent's resume values resume the child.
func (c *Compiled[C]) runDurableChild(ctx context.Context, it *itask, in C, hooks []Hooks, out sink, ns []string) (C, error) {
	thread := SubgraphThread(it.d.threadID(), TaskInfo{Step: it.step, Node: it.node, Index: it.index})
	var zero C
	for {
		snap, err := c.dur.saver.Get(ctx, thread, "")
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return zero, &CheckpointError{Op: "load", Thread: thread, msg: fmt.Sprintf("graph: loading the thread %.64q of subgraph %q", thread, it.node), Err: err}
		}
		input, set := in, c.set
		set.hooks = hooks
		if err == nil && slices.ContainsFunc(snap.Next, func(t checkpoint.Task) bool { return t.ID != "" }) {
			input = zero
			vals := map[string]any{}
			for _, x := range snap.Interrupts {
				if kindOf(x.ID) != InterruptRaised {
					continue // a breakpoint: a zero input goes on
				}
				it.mu.Lock()
				v, err := interruptAs[rawValue](it, taskID(it.step, it.node, it.index)+"#"+x.ID, rawValue(x.Payload))
				it.mu.Unlock()
				if err != nil {
					return zero, err
				}
				vals[x.ID] = v
			}
			if len(vals) > 0 {
				set.hooks = slices.Clip(set.hooks)
				set.runOpts([]RunOption{ResumeByID(vals)})
			}
		}
		s, err := c.execDurable(ctx, thread, input, set, out, nil, ns)
		var ie *InterruptError
		if !errors.As(err, &ie) || ie.Thread != thread {
			return s, err
		}
		// The child paused: raise its interrupts in the parent.
	}
}

// rawValue is an encoded value passed through unchanged, between a child's
// interrupt and its parent's, by serializers that know json.RawMessage
// (checkpoint.JSON does).
type rawValue = json.RawMessage

// SubgraphThread returns the thread a subgraph compiled with a
// checkpointer runs on when the task t of a durable run on thread parent
// runs it: "parent|step:node:index". The child's Thread(id).State and History read
// it.
func SubgraphThread(parent string, t TaskInfo) string {
	return parent + "|" + taskID(t.Step, t.Node, t.Index)
}

// Nodes returns the names of the graph's nodes in the order they were added.
func (c *Compiled[S]) Nodes() []string {
	names := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		names[i] = n.name
	}
	return names
}
