package graph

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
)

// StreamMode selects a kind of event of [Compiled.Stream].
type StreamMode uint8

// Stream modes.
const (
	// StreamValues yields the whole state after each super-step.
	StreamValues StreamMode = iota
	// StreamUpdates yields each task's update: in a step of one task after
	// the step merged, in a parallel step as soon as the task finishes.
	StreamUpdates
	// StreamCustom yields the payloads nodes write with [Emit].
	StreamCustom
	// StreamDebug yields the start and end of every task attempt, with
	// step numbers and durations.
	StreamDebug
	// StreamInterrupt is the last event of a durable run that paused (see
	// [Interrupt]): Interrupts lists what it waits for and Payload holds
	// the [*InterruptError]. It is yielded whatever the modes chosen.
	StreamInterrupt
)

// String returns the mode's name: "values", "updates", "custom", "debug",
// "interrupt" or "messages".
func (m StreamMode) String() string {
	switch m {
	case StreamValues:
		return "values"
	case StreamUpdates:
		return "updates"
	case StreamCustom:
		return "custom"
	case StreamDebug:
		return "debug"
	case StreamInterrupt:
		return "interrupt"
	case StreamMessages:
		return "messages"
	}
	return "mode(" + itoa(int(m)) + ")"
}

type modeSet uint8

const defaultModes = modeSet(1<<StreamValues | 1<<StreamUpdates | 1<<StreamCustom)

func (s modeSet) has(m StreamMode) bool { return s&(1<<m) != 0 }

// Event is one item of a stream. Which fields are set depends on Mode:
//
//   - StreamValues: Step and State, the state after the step.
//   - StreamUpdates: Step, Node, Task and Update, one task's update.
//   - StreamCustom: Step, Node, Task and Payload, what the node emitted.
//   - StreamDebug: Step, Node, Task and Debug.
//   - StreamMessages: Step, Node and Task; the model chunk is read with
//     [Event.Chunk] (Payload is nil).
//
// Events of a subgraph carry the path of subgraph nodes in Namespace. Their
// values and updates events are of the subgraph's own state type, so they
// come whole in Payload (an Event of that type); custom payloads and debug
// records come as they are.
type Event[S any] struct {
	Mode      StreamMode
	Namespace []string
	Step      int
	Node      string
	Task      TaskInfo
	State     S
	Update    Update[S]
	Payload   any
	Debug     *Debug
	// Interrupts is set on StreamInterrupt events.
	Interrupts []InterruptInfo

	// chunk is the model chunk of a StreamMessages event, kept as a
	// value rather than boxed in Payload: a streamed reply has an event
	// per token, and boxing each chunk would allocate each time.
	chunk model.Chunk
}

// DebugKind tells a task's start from its end.
type DebugKind uint8

// Debug event kinds.
const (
	TaskStart DebugKind = iota + 1
	TaskEnd
)

// String returns "task start" or "task end".
func (k DebugKind) String() string {
	switch k {
	case TaskStart:
		return "task start"
	case TaskEnd:
		return "task end"
	}
	return "debug(" + itoa(int(k)) + ")"
}

// Debug describes one attempt of a task, for [StreamDebug].
type Debug struct {
	Kind    DebugKind
	Attempt int
	Elapsed time.Duration // TaskEnd only
	Err     error         // TaskEnd only: the attempt's error, if it failed
}

// rawEvent is an event on its way to the root stream, without the root's
// state type.
type rawEvent struct {
	mode    StreamMode
	info    TaskInfo
	payload any
	debug   *Debug
	chunk   model.Chunk // StreamMessages only
}

// sink receives the events of a streamed run and of its subgraphs.
type sink interface {
	// streamModes returns the modes wanted, which do not change: a run
	// asks once (run.modes).
	streamModes() modeSet
	send(ctx context.Context, e rawEvent) error
	// sendTask sends an event of the task of scope sc, with ctx: the
	// scope's own context when own is set (see scopeOf).
	sendTask(ctx context.Context, sc *scope, own bool, mode StreamMode, payload any, c model.Chunk) error
	// onLoop reports whether ctx runs on the goroutine of the loop over
	// the stream; offLoop returns the parent of the context of a parallel
	// step's tasks when the step runs in ctx: ctx marked as not on the
	// loop, or one that the run's cancellation reaches through serve's
	// cancel only (see [streamSink.offLoop]).
	onLoop(ctx context.Context) bool
	offLoop(ctx context.Context) context.Context
	// serve calls start, which starts the goroutines of a parallel
	// step, and yields the events they send until done. cancel cancels
	// the step's context: serve calls it when the stream stops while it
	// serves (or has stopped before).
	serve(start func(), done <-chan struct{}, cancel context.CancelFunc)
}

// scope is what a node's context carries in an observed run (one with
// hooks or a stream).
type scope struct {
	sink  sink // nil when the run is not streamed
	info  TaskInfo
	hooks []Hooks // the run's hooks, for the runs of its subgraphs
	// gen is the state of the first streamed model call of the task
	// (see streamGenerate), allocated with the scope; genTaken says it
	// is taken. Later calls allocate their own, so that a model that
	// goes on after its call ended cannot reach another call's state.
	// It holds the call's response only until the call returns: a node
	// keeping its task's context keeps the scopes allocated with it,
	// which must not keep their calls' responses.
	gen      generation
	genTaken atomic.Bool
	// modes are the stream's modes, zero when the run is not streamed.
	modes modeSet
	// loop says whether the scope's own context is the loop's (see
	// [streamSink.onLoop]): loopUnknown until its first event finds out.
	// A context's ancestors never change, so neither does the answer.
	loop atomic.Uint32
}

// The values of scope.loop.
const (
	loopUnknown uint32 = iota
	loopOn
	loopOff
)

type scopeKey struct{}

// scopeOf returns the scope ctx carries, or nil, and whether ctx is the
// scope's own context (not one a node or hook derived from it), whose
// place on or off the loop the scope keeps.
func scopeOf(ctx context.Context) (*scope, bool) {
	if c, ok := ctx.(*scopeContext); ok {
		return &c.sc, true
	}
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	return sc, false
}

// scopeContext is a task's context carrying its scope under scopeKey: the
// value and the context in one allocation, where context.WithValue would
// take two.
type scopeContext struct {
	context.Context
	sc scope
}

// String names the context as context.WithValue would, without printing
// the scope (which the run writes while the task runs).
func (c *scopeContext) String() string { return contextName(c.Context) + ".WithValue(graph.scope)" }

// Value returns the task's scope for scopeKey, and asks the parent
// otherwise.
func (c *scopeContext) Value(key any) any {
	if _, ok := key.(scopeKey); ok {
		return &c.sc
	}
	return c.Context.Value(key)
}

// Emit writes payload to the stream of the run that ctx belongs to, as a
// [StreamCustom] event naming the node: progress, partial results, LLM token
// chunks. Outside a streamed run (in Invoke, or a stream that does not want
// custom events) it does nothing and returns nil. It blocks until the
// consumer takes the event (in a step's only task, until the loop body has
// handled it: see [Compiled.Stream]); when the run has stopped (cancelled,
// or the consumer broke out of the loop) it returns the context's error, so
// a producer knows to stop.
func Emit(ctx context.Context, payload any) error {
	sc, own := scopeOf(ctx)
	if sc == nil || sc.sink == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !sc.modes.has(StreamCustom) {
		return nil
	}
	return sc.sink.sendTask(ctx, sc, own, StreamCustom, payload, model.Chunk{})
}

// TaskFrom returns the task a node's context belongs to, in a streamed or
// observed run (one with hooks or a stream).
func TaskFrom(ctx context.Context) (TaskInfo, bool) {
	if sc, ok := ctx.Value(scopeKey{}).(*scope); ok {
		return sc.info, true
	}
	return TaskInfo{}, false
}

// streamSink is the root sink of a Stream: it hands events to the consumer.
//
// The run goes on the goroutine of the loop over Stream, so an event sent
// from there (the run loop's own events, those of a step's only task, of
// the subgraphs it runs inline) is yielded directly: no channel, no
// goroutine switch. The tasks of a parallel step run on goroutines of
// their own (their contexts carry offLoop), which hand their events over
// ch to the loop's goroutine; that goroutine waits for the step by
// yielding them (serve). An event sent with such a context while no step
// is served (from a goroutine a parallel task started and left running)
// is yielded on its sender's goroutine, as are those of any other
// goroutine. Yields are serialised by mu, so that a node's own goroutines
// may emit too.
type streamSink[S any] struct {
	ch    chan Event[S] // made by the first serve
	modes modeSet
	yield func(Event[S], error) bool

	// serving says a step is served. idle, made by the step's first
	// sender, is closed when the serving ends: a sender waiting on ch
	// then yields its event itself. Both are guarded by hmu.
	hmu     sync.Mutex
	serving bool
	idle    chan struct{}

	mu       sync.Mutex
	stopped  bool // the consumer broke out of the loop, panicked or exited: yield no more
	panicked bool // the loop body panicked with panicV: Stream panics with it
	panicV   any

	// runc is the run's context, a child of the iterator's that the
	// stream cancels when it stops (and the run when it ends): a
	// stepContext, which costs no allocation of its own, where
	// context.WithCancel makes two per run.
	runc stepContext
	// runCtx is the run's context (&runc) once the run has started, nil
	// before: offLoop takes a context for the run's own only then.
	// stepParent is the parent of the contexts of the run's own parallel
	// steps, marked offLoop (see offLoop): the context the iterator was
	// made with when it cannot be cancelled, the run's context otherwise.
	// Held in the sink, it costs no allocation per step. Both are set
	// before the run starts and kept after it (the run's context is a
	// child of the iterator's, which the iterator keeps anyway), so that
	// a goroutine a node left running reads them without a race.
	runCtx     context.Context
	stepParent offLoopContext[S]
	// step cancels the context of the parallel step being served, which
	// the run's own cancellation may not reach (see offLoop); nil when no
	// step is served. Guarded by mu.
	step context.CancelFunc
}

// offLoopContext is a context marked offLoop for its sink, as
// context.WithValue(ctx, offLoop[S]{sink}, true) would make it, held by
// value in the sink (stepParent).
type offLoopContext[S any] struct {
	context.Context
	sink *streamSink[S]
}

// String names the context as context.WithValue would.
func (c *offLoopContext[S]) String() string {
	return contextName(c.Context) + ".WithValue(graph.offLoop)"
}

// Value returns true for the sink's offLoop key and asks the parent
// otherwise.
func (c *offLoopContext[S]) Value(key any) any {
	if k, ok := key.(offLoop[S]); ok && k.sink == c.sink {
		return true
	}
	return c.Context.Value(key)
}

// offLoop is the context key that marks the contexts of a parallel step's
// tasks in a run streamed to sink: their events go over the sink's channel.
// It holds the sink's pointer alone, so that making it an interface value
// does not allocate.
type offLoop[S any] struct{ sink *streamSink[S] }

func (s *streamSink[S]) streamModes() modeSet { return s.modes }

// onLoop reports whether ctx is the context of the run loop or of a task
// running on its goroutine, where events are yielded directly. The run's
// own context is known without asking it (the sink marks only contexts
// made from it); any other context, a parallel task's or one a hook
// derived, is still asked.
func (s *streamSink[S]) onLoop(ctx context.Context) bool {
	// A type assertion and a pointer comparison: comparing the
	// interfaces would call the runtime.
	if c, ok := ctx.(*stepContext); ok && c == &s.runc {
		return true
	}
	return ctx.Value(offLoop[S]{s}) == nil
}

// offLoop returns the parent of the context of a parallel step run in
// ctx, whose tasks run off the loop's goroutine: ctx marked as such. When
// ctx is the run's own context, it is the one held in the sink
// (stepParent). When the iterator's context cannot be cancelled, that is
// the iterator's context marked: the run's context adds only its
// cancellation to it, which reaches the step through serve's cancel
// (stop), so that each step costs no registration with the run's context
// (a map of children and a done channel per run). A cancellable
// iterator's context may be shared by many streams, and a context.Context
// of a type of its own has its children watched by a goroutine each: a
// step then registers with the run's context, as any other child.
func (s *streamSink[S]) offLoop(ctx context.Context) context.Context {
	if c, ok := ctx.(*stepContext); ok && c == &s.runc && s.runCtx != nil {
		return &s.stepParent
	}
	return context.WithValue(ctx, offLoop[S]{s}, true)
}

// outEvent is an event on its way to the loop body, held as what it is
// made of: the Event (several hundred bytes) is built once, in the call to
// the loop body. An Event built first and handed on by pointer was copied
// twice more on that call: into a temporary, then into the call's
// arguments. What it holds is copied into the Event, never kept.
type outEvent[S any] struct {
	kind  outKind
	raw   rawEvent   // outRaw: an event of a node or a task attempt
	info  TaskInfo   // outUpdate: the task
	upd   *Update[S] // outUpdate: the task's update
	state *S         // outValues: the state after step step
	ns    []string   // outValues: the run's namespace
	step  int        // outValues
}

// outKind says what an outEvent is made of.
type outKind uint8

const (
	outRaw outKind = iota
	outValues
	outUpdate
)

// build returns the Event o describes. deliver builds the same events in
// its call to the loop body (so that they are not copied twice): a field
// added to Event is filled in both.
func (o *outEvent[S]) build() Event[S] {
	switch o.kind {
	case outValues:
		return Event[S]{Mode: StreamValues, Namespace: o.ns, Step: o.step, State: *o.state}
	case outUpdate:
		return Event[S]{Mode: StreamUpdates, Namespace: o.info.Namespace, Step: o.info.Step, Node: o.info.Node, Task: o.info, Update: *o.upd}
	}
	e := &o.raw
	return Event[S]{Mode: e.mode, Namespace: e.info.Namespace, Step: e.info.Step, Node: e.info.Node, Task: e.info, Payload: e.payload, Debug: e.debug, chunk: e.chunk}
}

// event hands the event o describes to the consumer: directly on the
// loop's goroutine, over the channel from a parallel step's task. What o
// points to must not change until event returns.
func (s *streamSink[S]) event(ctx context.Context, o *outEvent[S]) error {
	if s.onLoop(ctx) {
		return s.deliver(o, nil)
	}
	return s.eventOff(ctx, o)
}

// eventOff is event for a context that is not the loop's.
func (s *streamSink[S]) eventOff(ctx context.Context, o *outEvent[S]) error {
	var idle chan struct{}
	s.hmu.Lock()
	if s.serving {
		if s.idle == nil {
			s.idle = make(chan struct{})
		}
		idle = s.idle
	}
	s.hmu.Unlock()
	if idle != nil {
		// A node's own event gives up when its context ends, so
		// that the producer stops. The run's events (updates,
		// values, debug) are not dropped when a sibling's failure
		// cancels the step: serve takes them until the step's
		// tasks have returned, and idle is closed after that.
		var stop <-chan struct{}
		if o.kind == outRaw && (o.raw.mode == StreamCustom || o.raw.mode == StreamMessages) {
			stop = ctx.Done()
		}
		select {
		case s.ch <- o.build():
			return nil
		case <-idle:
			// The step's serving ended before it took the event.
		case <-stop:
			return ctx.Err()
		}
	}
	return s.deliver(o, nil)
}

// deliver yields to the loop body the event o describes, or whole when it
// is not nil. When the body breaks out of the loop, panics or exits its
// goroutine (runtime.Goexit, as t.FailNow does), the run is cancelled and
// nothing more is yielded; a panic is kept for Stream to raise again once
// the run has returned, so that no node reads it as its own.
//
// Each kind of event is built in a call of its own to the loop body, as
// the call's argument, so that it is written once (see outEvent).
func (s *streamSink[S]) deliver(o *outEvent[S], whole *Event[S]) (err error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return context.Canceled
	}
	done := false
	defer s.yielded(&done, &err)
	var ok bool
	// The events as build makes them, in the call itself (see build).
	switch {
	case whole != nil:
		ok = s.yield(*whole, nil)
	case o.kind == outValues:
		ok = s.yield(Event[S]{Mode: StreamValues, Namespace: o.ns, Step: o.step, State: *o.state}, nil)
	case o.kind == outUpdate:
		ok = s.yield(Event[S]{Mode: StreamUpdates, Namespace: o.info.Namespace, Step: o.info.Step, Node: o.info.Node, Task: o.info, Update: *o.upd}, nil)
	default:
		e := &o.raw
		ok = s.yield(Event[S]{Mode: e.mode, Namespace: e.info.Namespace, Step: e.info.Step, Node: e.info.Node, Task: e.info, Payload: e.payload, Debug: e.debug, chunk: e.chunk}, nil)
	}
	done = true
	if !ok {
		s.stop()
		return context.Canceled
	}
	return nil
}

// deliverTask is deliver for the event of a task's node on the loop's
// goroutine (see sendTask), from what it is made of: the task in its
// scope, the chunk in the sender's frame.
func (s *streamSink[S]) deliverTask(mode StreamMode, info *TaskInfo, payload any, c *model.Chunk) (err error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return context.Canceled
	}
	done := false
	defer s.yielded(&done, &err)
	ok := s.yield(Event[S]{Mode: mode, Namespace: info.Namespace, Step: info.Step, Node: info.Node, Task: *info, Payload: payload, chunk: *c}, nil)
	done = true
	if !ok {
		s.stop()
		return context.Canceled
	}
	return nil
}

// yielded ends a call to the loop body, deferred by its caller (deliver,
// deliverTask) once it holds mu: unless the call returned (done), the
// body panicked or exited its goroutine, and the run stops with err
// context.Canceled, keeping the panic's value for Stream.
func (s *streamSink[S]) yielded(done *bool, err *error) {
	if !*done {
		if v := recover(); v != nil {
			s.panicked, s.panicV = true, v
		}
		s.stop()
		*err = context.Canceled
	}
	s.mu.Unlock()
}

// stop stops the stream, with mu held: nothing more is yielded, and the
// run and the step it serves, if any, are cancelled.
func (s *streamSink[S]) stop() {
	s.stopped = true
	s.runc.cancel()
	if s.step != nil {
		s.step()
	}
}

// serve calls start, which starts the tasks of a parallel step, and yields
// the events they send from their goroutines until the step's last task
// signals done. Once it returns (or its goroutine exits from the loop
// body), events sent with the step's contexts are yielded on their
// senders' goroutines.
func (s *streamSink[S]) serve(start func(), done <-chan struct{}, cancel context.CancelFunc) {
	if s.ch == nil {
		// Made at the first parallel step, which a run may not have.
		// Senders read ch only once they have seen serving, set below.
		s.ch = make(chan Event[S])
	}
	// The step's context may not be the run's child (see offLoop): a
	// stop from now on cancels it, and one before (from a goroutine a
	// node left running) cancels it at once.
	s.mu.Lock()
	if s.stopped {
		cancel()
	} else {
		s.step = cancel
	}
	s.mu.Unlock()
	s.hmu.Lock()
	s.serving = true
	s.hmu.Unlock()
	start() // after serving is set: the tasks' events go to this goroutine
	defer func() {
		s.mu.Lock()
		s.step = nil
		s.mu.Unlock()
		s.hmu.Lock()
		idle := s.idle
		s.serving, s.idle = false, nil
		s.hmu.Unlock()
		if idle != nil {
			close(idle)
		}
	}()
	for {
		select {
		case ev := <-s.ch:
			_ = s.deliver(nil, &ev)
		case <-done:
			return
		}
	}
}

func (s *streamSink[S]) send(ctx context.Context, e rawEvent) error {
	if !s.modes.has(e.mode) {
		return nil
	}
	return s.event(ctx, &outEvent[S]{raw: e})
}

// sendTask sends an event of a task's node. Whether the scope's own
// context is the loop's is asked once and kept in the scope, and an event
// on the loop is yielded from the scope's task and the sender's chunk.
func (s *streamSink[S]) sendTask(ctx context.Context, sc *scope, own bool, mode StreamMode, payload any, c model.Chunk) error {
	var on bool
	switch l := sc.loop.Load(); {
	case own && l == loopOn:
		on = true
	case own && l == loopOff:
	default:
		on = s.onLoop(ctx)
		if own {
			l = loopOff
			if on {
				l = loopOn
			}
			sc.loop.Store(l)
		}
	}
	if on {
		return s.deliverTask(mode, &sc.info, payload, &c)
	}
	return s.eventOff(ctx, &outEvent[S]{raw: rawEvent{mode: mode, info: sc.info, payload: payload, chunk: c}})
}

// emitStep sends the step's updates and values events. The tasks of a
// parallel step that ran sent their updates when they finished (emitTask);
// those restored from a checkpoint's pending writes are sent here.
func (r *run[S]) emitStep(ctx context.Context) error {
	if r.modes.has(StreamUpdates) {
		for i := range r.cur {
			if len(r.cur) > 1 && !r.cur[i].done {
				continue
			}
			if err := r.emitUpdate(ctx, i); err != nil {
				return err
			}
		}
	}
	if r.modes.has(StreamValues) {
		if r.typed != nil {
			return r.typed.event(ctx, &outEvent[S]{kind: outValues, state: &r.state, ns: r.ns, step: r.step})
		}
		// The raw event's task info carries the namespace and step too:
		// the root sink builds its Event from them, and a subgraph's
		// values event without them would pass for the root's own.
		return r.out.send(ctx, rawEvent{mode: StreamValues, info: TaskInfo{Namespace: r.ns, Step: r.step}, payload: Event[S]{Mode: StreamValues, Namespace: r.ns, Step: r.step, State: r.state}})
	}
	return nil
}

// emitUpdate sends the updates event of task i.
func (r *run[S]) emitUpdate(ctx context.Context, i int) error {
	t := &r.cur[i]
	info := TaskInfo{Namespace: r.ns, Step: r.step, Node: t.n.name, Index: i, Attempt: t.tries}
	if r.typed != nil {
		return r.typed.event(ctx, &outEvent[S]{kind: outUpdate, info: info, upd: &t.upd})
	}
	return r.out.send(ctx, rawEvent{mode: StreamUpdates, info: info, payload: Event[S]{Mode: StreamUpdates, Namespace: r.ns, Step: r.step, Node: t.n.name, Task: info, Update: t.upd}})
}

// emitTask sends the update of task i of a parallel step as soon as the
// task finished, from the goroutine that ran it. If the consumer is gone
// the run's context is cancelled and the step ends at its boundary.
func (r *run[S]) emitTask(ctx context.Context, i int) {
	_ = r.emitUpdate(ctx, i)
}

// Stream runs the graph like [Compiled.Invoke] and yields its events as
// they happen (see [WithModes]; values, updates and custom events by
// default). The run starts when the loop starts and stops when it ends:
// breaking out of the loop cancels the run and waits for its nodes to
// return, so no node outlives the loop. If the run fails, the last
// pair yielded carries the error. The final state is the State of the last
// StreamValues event.
//
// The run goes on the goroutine of the loop, and the run waits while the
// loop body handles an event: the run loop's own events and those of a
// step's only task (and of the subgraphs it runs) are yielded directly,
// before the Emit that sent them returns. The tasks of a parallel step
// still run concurrently, each on a goroutine of its own, and the loop's
// goroutine yields their events as they come. A node's event sent from a
// goroutine the node started itself is yielded on that goroutine (while
// the node's parallel step runs, on the loop's), also after the node's
// step ended; yields never overlap. Emit after the run ended returns
// context.Canceled. So a loop body must not wait for the run to go on (such
// as for a node to read a channel the body writes). A panic in the loop
// body stops the run and, once its nodes have returned, goes on from the
// loop with its value.
//
//	for ev, err := range g.Stream(ctx, input) {
//		if err != nil { return err }
//		fmt.Println(ev.Node, ev.Update)
//	}
func (c *Compiled[S]) Stream(ctx context.Context, input S, opts ...RunOption) iter.Seq2[Event[S], error] {
	return c.stream(ctx, "", input, opts)
}

// stream runs a streamed run: on thread when it is not empty, on the
// thread named in ctx for a durable graph otherwise.
func (c *Compiled[S]) stream(ctx context.Context, thread string, input S, opts []RunOption) iter.Seq2[Event[S], error] {
	sc := &streamCall[S]{c: c, ctx: ctx, thread: thread, input: input, set: c.set}
	if len(opts) > 0 {
		sc.set.hooks = slices.Clip(sc.set.hooks)
		sc.set.runOpts(opts)
	}
	return sc.run
}

// streamCall is what a Stream's iterator runs, in one allocation with the
// sink of its first run: a function literal would move its input and
// settings to the heap one by one.
type streamCall[S any] struct {
	c      *Compiled[S]
	ctx    context.Context
	thread string
	input  S
	set    settings
	used   atomic.Bool // first is taken
	first  streamSink[S]
}

// run runs the graph once, yielding its events. An iterator may be
// called again (or concurrently): each run has a sink of its own, the
// first run the one allocated with sc.
func (sc *streamCall[S]) run(yield func(Event[S], error) bool) {
	var s *streamSink[S]
	if sc.used.CompareAndSwap(false, true) {
		s = &sc.first
	} else {
		s = new(streamSink[S])
	}
	s.runc.Context = sc.ctx
	ctx := context.Context(&s.runc)
	defer s.runc.cancel()
	s.modes, s.yield = sc.set.modes, yield
	s.runCtx = ctx
	s.stepParent = offLoopContext[S]{Context: ctx, sink: s}
	if sc.ctx.Done() == nil {
		s.stepParent.Context = sc.ctx
	}
	c := sc.c
	var runErr error
	switch {
	case sc.thread != "":
		_, runErr = c.execDurable(ctx, sc.thread, sc.input, sc.set, s, s, nil)
	case c.dur != nil || sc.set.durableOpts:
		_, runErr = c.invokeDurable(ctx, sc.input, sc.set, s, s)
	default:
		// sc.set and sc.input are only read, also by a concurrent
		// run of the same iterator.
		_, runErr = c.exec(ctx, sc.input, &sc.set, s, s, nil)
	}
	// A goroutine a node left behind yields nothing more; and the sink,
	// which the iterator keeps for its first run, lets go of the loop
	// body, so that an iterator kept to run again does not keep it (and
	// what it uses) reachable. The sink keeps runCtx and stepParent,
	// which such a goroutine may still be using: the run's context, a
	// cancelled child of the context the iterator was made with, and that
	// context, both of which the iterator holds anyway.
	s.mu.Lock()
	stopped, panicked, v := s.stopped, s.panicked, s.panicV
	s.stopped = true
	s.yield, s.panicV = nil, nil
	s.mu.Unlock()
	if panicked {
		panic(v)
	}
	if stopped {
		return
	}
	if runErr != nil {
		streamEnd(runErr, yield)
	}
}

// streamEnd yields the last event of a stream whose run failed with
// runErr: the interrupt event of a paused run, or the error. A pause
// joined with a failure (a [DurabilityAsync] run whose saves failed, or
// could not be made durable, as it paused) ends with the error, as
// Invoke's: the pause may not be kept. It is apart from the stream's
// function so that the variable errors.As fills, which escapes, is
// allocated only when a run fails.
func streamEnd[S any](runErr error, yield func(Event[S], error) bool) {
	var ie *InterruptError
	if errors.As(runErr, &ie) && pauseAlone(runErr) {
		yield(Event[S]{Mode: StreamInterrupt, Interrupts: ie.Interrupts, Payload: ie}, nil)
		return
	}
	yield(Event[S]{}, runErr)
}

// pauseAlone reports whether err is an *InterruptError, or wraps one, with
// no other error joined to it.
func pauseAlone(err error) bool {
	for err != nil {
		switch e := err.(type) {
		case *InterruptError:
			return true
		case interface{ Unwrap() []error }:
			var only error
			for _, m := range e.Unwrap() {
				if m == nil {
					continue
				}
				if only != nil {
					return false
				}
				only = m
			}
			err = only
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			return false
		}
	}
	return false
}
