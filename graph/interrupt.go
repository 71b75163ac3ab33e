package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// itask is what a node's context carries in a durable run, for Interrupt.
type itask struct {
	mu     sync.Mutex // parallel nodes of a subgraph share their parent's task
	d      interruptHost
	step   int
	index  int
	node   string
	n      int                   // Interrupt calls so far in this attempt
	used   map[string][]byte     // resume values consumed
	raised *checkpoint.Interrupt // the interrupt this attempt raised

	// ctx is parent with this task attached, kept from step to step: the
	// task at index i of every step is the same itask, so while the parent
	// stays the same the context does too.
	ctx, parent context.Context
}

// context returns parent with the task attached.
func (it *itask) context(parent context.Context) context.Context {
	if it.ctx == nil || it.parent != parent {
		it.ctx, it.parent = context.WithValue(parent, itaskKey{}, it), parent
	}
	return it.ctx
}

type interruptHost interface {
	resumeValue(id string) ([]byte, bool)
	serializer() checkpoint.Serializer
	threadID() string
}

func (d *drun[S]) resumeValue(id string) ([]byte, bool) {
	v, ok := d.resume[id]
	return v, ok
}

func (d *drun[S]) serializer() checkpoint.Serializer { return d.dur.ser }

func (d *drun[S]) threadID() string { return d.thread }

type itaskKey struct{}

// errInterrupt marks a node's return caused by Interrupt.
var errInterrupt = errors.New("graph: interrupted")

type interruptSignal struct{ id string }

func (e *interruptSignal) Error() string {
	return "graph: node paused on interrupt " + e.id + "; return this error from the node unchanged"
}

func (e *interruptSignal) Is(target error) bool { return target == errInterrupt }

// IsInterrupt reports whether err is, or wraps, the signal [Interrupt]
// returns to pause a run. Code that runs work inside a node and turns its
// errors into values, such as a tool runner that reports a failed tool to
// the model, must return such an error from the node instead, or the run
// cannot pause.
func IsInterrupt(err error) bool { return errors.Is(err, errInterrupt) }

// Interrupt pauses the run for a human (or any outside party): the first
// time a node calls it, it returns an error the node must return
// unchanged; the run saves its state and returns an [*InterruptError]
// carrying payload (Invoke) or yields a [StreamInterrupt] event (Stream).
// Running the thread again with [Resume] or [ResumeByID] runs the node
// again from its beginning, and this time Interrupt returns the resume
// value, decoded into T, and a nil error.
//
// Code before Interrupt therefore runs once more on resume: keep it free of
// side effects, or make them idempotent, or move them after Interrupt or
// into a node of their own. A node may call Interrupt several times; the
// calls are matched to resume values by their order in the node, so the
// order must not depend on anything but the state.
//
// Interrupt needs a graph compiled with [WithCheckpointer] run on a thread;
// elsewhere it returns an error wrapping [ErrNoCheckpointer].
func Interrupt[T any](ctx context.Context, payload any) (T, error) {
	var zero T
	it, _ := ctx.Value(itaskKey{}).(*itask)
	if it == nil {
		return zero, fmt.Errorf("%w: graph.Interrupt needs a graph compiled with graph.WithCheckpointer, run on a thread (Compiled.Thread)", ErrNoCheckpointer)
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	id := taskID(it.step, it.node, it.index) + "#" + itoa(it.n)
	it.n++
	return interruptAs[T](it, id, payload)
}

// CanInterrupt reports whether [Interrupt] can pause the run ctx belongs
// to: whether the node runs in a graph compiled with [WithCheckpointer],
// or as a subgraph of one, run on a thread. A node that will pause can
// check it before work that is costly to redo, and fail with an error
// naming the fix.
func CanInterrupt(ctx context.Context) bool {
	it, _ := ctx.Value(itaskKey{}).(*itask)
	return it != nil
}

// ResumesInPlace reports whether a resume of a pause [Interrupt] makes in
// the node ctx belongs to runs that node again with the steps before it
// kept: whether the node runs in a graph compiled with [WithCheckpointer]
// run on a thread, or in a subgraph of one compiled with a checkpointer of
// its own (see [AddSubgraph]). It is false where [CanInterrupt] is, and in
// a subgraph without a checkpointer of its own (or a graph run with Invoke
// inside a node): there the pause is the enclosing node's, whose resume
// runs the whole subgraph again from its input. A node whose work before
// a pause is costly or not the same when done again, such as a model
// call, can check it and fail with an error naming the fix.
func ResumesInPlace(ctx context.Context) bool {
	it, _ := ctx.Value(itaskKey{}).(*itask)
	return it != nil && ctx.Value(nestedKey{}) != it
}

// interruptAs is Interrupt with the interrupt's id given; it.mu is held.
func interruptAs[T any](it *itask, id string, payload any) (T, error) {
	var zero T
	task := taskID(it.step, it.node, it.index)
	ser := it.d.serializer()
	if raw, ok := it.d.resumeValue(id); ok {
		if it.used == nil {
			it.used = map[string][]byte{}
		}
		it.used[id] = raw
		v, err := checkpoint.Decode[T](ser, raw)
		if err != nil {
			return zero, fmt.Errorf("graph: resume value for interrupt %s: %w", id, err)
		}
		return v, nil
	}
	data, err := ser.Marshal(payload)
	if err != nil {
		return zero, fmt.Errorf("graph: encoding the payload of interrupt %s: %w", id, err)
	}
	it.raised = &checkpoint.Interrupt{ID: id, Node: it.node, TaskID: task, Payload: data}
	return zero, &interruptSignal{id: id}
}

// InterruptKind says what paused a durable run.
type InterruptKind uint8

// Interrupt kinds.
const (
	// InterruptRaised is a node's call to [Interrupt]; resume it with
	// [Resume] or [ResumeByID].
	InterruptRaised InterruptKind = iota
	// BreakpointBefore is a static breakpoint before a node
	// ([InterruptBefore]); a zero input goes on.
	BreakpointBefore
	// BreakpointAfter is a static breakpoint after a node
	// ([InterruptAfter]); a zero input goes on.
	BreakpointAfter
)

// String returns "interrupt", "breakpoint before" or "breakpoint after".
func (k InterruptKind) String() string {
	switch k {
	case InterruptRaised:
		return "interrupt"
	case BreakpointBefore:
		return "breakpoint before"
	case BreakpointAfter:
		return "breakpoint after"
	}
	return "InterruptKind(" + itoa(int(k)) + ")"
}

// Suffixes of the ids of static breakpoints. A checkpoint stores an
// interrupt's id, not its kind; kindOf is the one place that reads it.
const (
	suffixBefore = "#before"
	suffixAfter  = "#after"
)

// kindOf returns the kind of the stored interrupt with id id.
func kindOf(id string) InterruptKind {
	switch {
	case strings.HasSuffix(id, suffixBefore):
		return BreakpointBefore
	case strings.HasSuffix(id, suffixAfter):
		return BreakpointAfter
	}
	return InterruptRaised
}

// InterruptInfo is a pause of a durable run, waiting for a value to resume
// with.
type InterruptInfo struct {
	// ID identifies the interrupt within its thread; pass it to
	// [ResumeByID]. It is opaque: tell breakpoints from interrupts by
	// Kind.
	ID string
	// Kind says whether a node called [Interrupt] or a static breakpoint
	// was reached.
	Kind InterruptKind
	// Node is the node that paused.
	Node string
	// Payload is the encoded value the node passed to Interrupt (nil for a
	// breakpoint). Decode it with Decode.
	Payload []byte

	ser checkpoint.Serializer
}

// Decode decodes the payload into the value v points to.
func (i InterruptInfo) Decode(v any) error {
	ser := i.ser
	if ser == nil {
		ser = checkpoint.JSON
	}
	return ser.Unmarshal(i.Payload, v)
}

func toInterrupts(in []checkpoint.Interrupt, ser checkpoint.Serializer) []InterruptInfo {
	out := make([]InterruptInfo, len(in))
	for i, x := range in {
		out[i] = InterruptInfo{ID: x.ID, Kind: kindOf(x.ID), Node: x.Node, Payload: x.Payload, ser: ser}
	}
	return out
}

// InterruptError is returned by Invoke when the run paused: a node called
// [Interrupt] or a breakpoint was reached. The state was saved; run the
// thread again with [Resume] or [ResumeByID] (or, for breakpoints, with
// no input) to go on. It matches [ErrInterrupted].
type InterruptError struct {
	Thread       string          // the thread that paused
	CheckpointID string          // the checkpoint holding the pause
	Interrupts   []InterruptInfo // what the run waits for, in task order
}

// Error lists the interrupts.
func (e *InterruptError) Error() string {
	ids := make([]string, len(e.Interrupts))
	breaks := true
	for i, x := range e.Interrupts {
		ids[i] = x.ID
		breaks = breaks && x.Kind != InterruptRaised
	}
	if breaks && len(ids) > 0 {
		return fmt.Sprintf("graph: thread %q paused at %d breakpoint(s) [%s]; go on with a zero input (a breakpoint takes no resume value)",
			e.Thread, len(ids), strings.Join(ids, ", "))
	}
	return fmt.Sprintf("graph: thread %q paused on %d interrupt(s) [%s]; resume it with graph.Resume or graph.ResumeByID",
		e.Thread, len(ids), strings.Join(ids, ", "))
}

// Is matches [ErrInterrupted].
func (e *InterruptError) Is(target error) bool { return target == ErrInterrupted }

func (c *Compiled[S]) breakSet(names []string) []bool {
	if len(names) == 0 {
		return nil
	}
	b := make([]bool, len(c.nodes))
	for _, name := range names {
		if name == "*" {
			for i := range b {
				b[i] = true
			}
			continue
		}
		if i, ok := c.index[name]; ok {
			b[i] = true
		}
	}
	return b
}

func (c *Compiled[S]) checkBreaks(names []string) error {
	for _, name := range names {
		if _, ok := c.index[name]; !ok && name != "*" {
			return fmt.Errorf("graph: breakpoint on unknown node %q", name)
		}
	}
	return nil
}

type resumeWire struct {
	ID    string `json:"id"`
	Value []byte `json:"value"`
}

// beforeStep stops the run at a breakpoint before the step's tasks.
func (r *run[S]) beforeStep(ctx context.Context) error {
	d := r.d
	passed, carry := d.passed, d.carry
	d.passed, d.carry = nil, nil // for the first step only
	if d.before == nil {
		return nil
	}
	var hits []checkpoint.Interrupt
	stop := false
	for i := range r.cur {
		if nd := r.cur[i].n; d.before[nd.idx] {
			id := taskID(r.step, nd.name, i)
			hits = append(hits, checkpoint.Interrupt{ID: id + suffixBefore, Node: nd.name, TaskID: id})
			// A task passes only the breakpoint the run continues
			// from: one its checkpoint paused at.
			stop = stop || !slices.Contains(passed, id)
		}
	}
	if !stop {
		return nil
	}
	r.step--
	// The pause keeps the continued checkpoint's finished tasks and
	// resume values (same step, same task ids): approving it loses
	// neither.
	cp, err := r.put(ctx, nil, metaInterrupt, hits, carry)
	if err != nil {
		return err
	}
	return &InterruptError{Thread: d.thread, CheckpointID: cp.ID, Interrupts: toInterrupts(hits, d.dur.ser)}
}

// paused handles a step in which some tasks called Interrupt: it saves a
// checkpoint of the step's start listing the interrupts, with the writes
// of the tasks that finished and the resume values consumed, and returns
// the *InterruptError. It returns nil when no task was interrupted.
func (r *run[S]) paused(ctx context.Context) error {
	d := r.d
	interrupted := false
	for i := range r.cur {
		if d.tasks[i].raised != nil && r.cur[i].err != nil {
			interrupted = true
		}
	}
	if !interrupted {
		return nil
	}
	var hits []checkpoint.Interrupt
	var ws []checkpoint.Write
	for i := range r.cur {
		t := &r.cur[i]
		it := &d.tasks[i]
		id := taskID(r.step, t.n.name, i)
		for rid, v := range it.used {
			data, _ := json.Marshal(resumeWire{ID: rid, Value: v})
			ws = append(ws, checkpoint.Write{TaskID: id, Node: t.n.name, Channel: wResume, Value: data})
		}
		if t.err != nil && errors.Is(t.err, errInterrupt) && it.raised != nil {
			hits = append(hits, *it.raised)
			continue
		}
		if t.err == nil {
			w, err := d.encodeWrites(r.c, id, t)
			if err != nil {
				return err
			}
			ws = append(ws, w...)
		}
	}
	if hits == nil {
		return nil
	}
	for i := range r.cur {
		if t := &r.cur[i]; t.err != nil && !errors.Is(t.err, errInterrupt) {
			return nil // a real failure wins
		}
	}
	r.step--
	// The checkpoint and the writes are saved in one atomic Put: a crash
	// cannot keep the pause and lose the finished siblings' writes.
	cp, err := r.put(ctx, nil, metaInterrupt, hits, ws)
	r.step++
	if err != nil {
		return err
	}
	return &InterruptError{Thread: d.thread, CheckpointID: cp.ID, Interrupts: toInterrupts(hits, d.dur.ser)}
}
