package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Metadata key and values a checkpoint's source is recorded under.
const (
	// MetaSource is the metadata key naming what made a checkpoint:
	// "input" (a run started or a thread took new input), "loop" (a
	// super-step completed), "interrupt" (a step paused), "update"
	// (UpdateState) or "fork" (the first checkpoint of a run started from a
	// past checkpoint).
	MetaSource = "source"
)

var (
	metaInput     = map[string]string{MetaSource: "input"}
	metaLoop      = map[string]string{MetaSource: "loop"}
	metaInterrupt = map[string]string{MetaSource: "interrupt"}
	metaUpdate    = map[string]string{MetaSource: "update"}
	metaFork      = map[string]string{MetaSource: "fork"}
)

// Names of the pending-write channels that are not state fields.
const (
	wDone      = "~done"      // the task finished; its writes follow
	wRoute     = "~route"     // the task's own routing
	wInterrupt = "~interrupt" // the task paused on an interrupt
	wResume    = "~resume"    // a resume value the task has consumed
)

// channel is one top-level field of the state: the unit a checkpoint
// versions and stores.
type channel struct {
	name   string
	typ    reflect.Type
	offset uintptr
	slice  bool // a slice: eligible for delta blobs
}

// durable is what a graph compiled with a checkpointer knows about storing
// its state.
type durable[S any] struct {
	saver checkpoint.Saver
	ser   checkpoint.Serializer
	chans []channel
	byKey map[string]int // channel name -> index
}

func newDurable[S any](saver checkpoint.Saver, ser checkpoint.Serializer) (*durable[S], error) {
	if ser == nil {
		ser = checkpoint.JSON
	}
	t := reflect.TypeFor[S]()
	d := &durable[S]{saver: saver, ser: ser, byKey: map[string]int{}}
	if t.Kind() != reflect.Struct {
		return d, nil // Compile reports it
	}
	var errs []error
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		if err := checkpoint.CheckType(ser, f.Type); err != nil {
			errs = append(errs, invalid("state field %s.%s (%s) cannot be checkpointed: %v", t.Name(), f.Name, f.Type, err))
			continue
		}
		d.byKey[f.Name] = len(d.chans)
		d.chans = append(d.chans, channel{name: f.Name, typ: f.Type, offset: f.Offset, slice: f.Type.Kind() == reflect.Slice})
	}
	return d, errors.Join(errs...)
}

// chanOf returns the channel holding the byte at offset off of S, or -1.
func (d *durable[S]) chanOf(off uintptr) int {
	i := sort.Search(len(d.chans), func(i int) bool { return d.chans[i].offset+d.chans[i].typ.Size() > off })
	if i < len(d.chans) && d.chans[i].offset <= off {
		return i
	}
	return -1
}

func (d *durable[S]) value(s *S, ch int) reflect.Value {
	c := &d.chans[ch]
	return reflect.NewAt(c.typ, unsafe.Add(unsafe.Pointer(s), c.offset)).Elem()
}

// drun is the durable part of one run on a thread.
type drun[S any] struct {
	dur    *durable[S]
	thread string
	latest string // the thread's latest checkpoint, as this run knows it
	parent string // the checkpoint the next one derives from
	source map[string]string

	chans []chanRun // per channel of dur.chans
	blobs []checkpoint.Blob
	vers  map[string]uint64
	// scratch holds, per delta channel, a *[]T the appended items are
	// marshalled through.
	scratch []reflect.Value
	cp      checkpoint.Checkpoint // the checkpoint being put

	resume     map[string][]byte // interrupt id -> encoded resume value
	interrupts []checkpoint.Interrupt
	skipBefore bool // the first step resumes a paused one: do not break before it
	before     []bool
	after      []bool

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
}

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
		return zero, fmt.Errorf("%w: graph.Interrupt needs a graph compiled with graph.WithCheckpointer, run with a thread id (graph.WithConfig)", ErrNoCheckpointer)
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	id := taskID(it.step, it.node, it.index) + "#" + itoa(it.n)
	it.n++
	return interruptAs[T](it, id, payload)
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

// InterruptInfo is a pause of a durable run, waiting for a value to resume
// with.
type InterruptInfo struct {
	// ID identifies the interrupt within its thread; pass it to
	// [ResumeByID]. Interrupts raised with [Interrupt] have ids of the form
	// "step:node:task#n"; static breakpoints "step:node:task#before" and
	// "step:node:task#after".
	ID string
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

// Breakpoint reports whether the interrupt is a static breakpoint
// ([InterruptBefore], [InterruptAfter]) rather than a call to Interrupt.
func (i InterruptInfo) Breakpoint() bool {
	return strings.HasSuffix(i.ID, "#before") || strings.HasSuffix(i.ID, "#after")
}

func toInterrupts(in []checkpoint.Interrupt, ser checkpoint.Serializer) []InterruptInfo {
	out := make([]InterruptInfo, len(in))
	for i, x := range in {
		out[i] = InterruptInfo{ID: x.ID, Node: x.Node, Payload: x.Payload, ser: ser}
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
	for i, x := range e.Interrupts {
		ids[i] = x.ID
	}
	return fmt.Sprintf("graph: thread %q paused on %d interrupt(s) [%s]; resume it with graph.Resume or graph.ResumeByID",
		e.Thread, len(ids), strings.Join(ids, ", "))
}

// Is matches [ErrInterrupted].
func (e *InterruptError) Is(target error) bool { return target == ErrInterrupted }

// StateSnapshot is a thread's state at one checkpoint.
type StateSnapshot[S any] struct {
	Values       S                 // the state
	Next         []string          // nodes of the tasks that run next; empty when the run finished
	Interrupts   []InterruptInfo   // interrupts the thread waits on
	Ran          []string          // nodes that ran in the step that made the checkpoint
	Step         int               // the super-step that made the checkpoint (0 for the first input)
	CheckpointID string            // the checkpoint; pass it to FromCheckpoint to run from here
	ParentID     string            // the checkpoint it derives from
	Metadata     map[string]string // includes MetaSource
	CreatedAt    time.Time
}

func (c *Compiled[S]) durableOrErr() (*durable[S], error) {
	if c.dur == nil {
		return nil, fmt.Errorf("%w: compile the graph with graph.WithCheckpointer", ErrNoCheckpointer)
	}
	return c.dur, nil
}

// GetState returns the latest state of a thread: its values, the next
// nodes, pending interrupts and metadata. A thread with no checkpoint gives
// an error wrapping [checkpoint.ErrNotFound].
func (c *Compiled[S]) GetState(ctx context.Context, thread string) (StateSnapshot[S], error) {
	return c.StateAt(ctx, thread, "")
}

// StateAt returns the state of a thread at checkpoint id ("" for the
// latest).
func (c *Compiled[S]) StateAt(ctx context.Context, thread, id string) (StateSnapshot[S], error) {
	var out StateSnapshot[S]
	d, err := c.durableOrErr()
	if err != nil {
		return out, err
	}
	snap, err := d.saver.Get(ctx, thread, id)
	if err != nil {
		return out, fmt.Errorf("graph: loading thread %q: %w", thread, err)
	}
	return d.stateOf(snap)
}

// stateOf decodes a loaded checkpoint.
func (d *durable[S]) stateOf(snap *checkpoint.Snapshot) (StateSnapshot[S], error) {
	var out StateSnapshot[S]
	if err := d.decodeState(snap, &out.Values, nil); err != nil {
		return out, err
	}
	cp := &snap.Checkpoint
	for _, t := range cp.Next {
		if t.ID != "" {
			out.Next = append(out.Next, t.Node)
		}
	}
	out.Interrupts = toInterrupts(cp.Interrupts, d.ser)
	out.Ran, out.Step, out.CheckpointID, out.ParentID = cp.Ran, cp.Step, cp.ID, cp.ParentID
	out.Metadata, out.CreatedAt = cp.Metadata, cp.CreatedAt
	return out, nil
}

// History iterates over a thread's checkpoints, newest first, reading them
// page by page (opts.Limit per page, checkpoint.DefaultPageSize when zero;
// opts.Before and opts.Metadata select as for [checkpoint.Saver.List]). A
// Saver that implements [checkpoint.SnapshotLister] (the memory, SQLite and
// PostgreSQL ones do) is read with one call per page; others with one List
// per page and one Get per checkpoint. An error is yielded once and ends the
// iteration.
func (c *Compiled[S]) History(ctx context.Context, thread string, opts checkpoint.ListOptions) iter.Seq2[StateSnapshot[S], error] {
	return func(yield func(StateSnapshot[S], error) bool) {
		d, err := c.durableOrErr()
		if err != nil {
			yield(StateSnapshot[S]{}, err)
			return
		}
		for snap, err := range checkpoint.AllSnapshots(ctx, d.saver, thread, opts) {
			if err != nil {
				yield(StateSnapshot[S]{}, fmt.Errorf("graph: reading the history of thread %q: %w", thread, err))
				return
			}
			s, err := d.stateOf(snap)
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// decodeState rebuilds the state held by snap. When d.lens/chains are
// given (r non-nil) it also primes the run's bookkeeping.
func (d *durable[S]) decodeState(snap *checkpoint.Snapshot, s *S, r *drun[S]) error {
	for name, ver := range snap.Versions {
		ch, ok := d.byKey[name]
		if !ok {
			return fmt.Errorf("graph: checkpoint %s of thread %q holds field %q, which the state type %s does not have", snap.ID, snap.ThreadID, name, reflect.TypeFor[S]())
		}
		data := snap.Channels[name]
		v := d.value(s, ch)
		if data.Base != nil {
			if err := d.ser.Unmarshal(data.Base, v.Addr().Interface()); err != nil {
				return fmt.Errorf("graph: decoding field %s of checkpoint %s: %w", name, snap.ID, err)
			}
		}
		if len(data.Deltas) > 0 && !d.chans[ch].slice {
			return fmt.Errorf("graph: checkpoint %s stores deltas for field %s, which is not a slice", snap.ID, name)
		}
		for _, delta := range data.Deltas {
			tmp := reflect.New(d.chans[ch].typ)
			if err := d.ser.Unmarshal(delta, tmp.Interface()); err != nil {
				return fmt.Errorf("graph: decoding a delta of field %s of checkpoint %s: %w", name, snap.ID, err)
			}
			v.Set(reflect.AppendSlice(v, tmp.Elem()))
		}
		if r != nil {
			cr := &r.chans[ch]
			cr.version, cr.chain = ver, data.Stats()
			if d.chans[ch].slice {
				cr.len = v.Len()
			}
		}
	}
	return nil
}

// mark records that handle f wrote its field.
func (d *drun[S]) mark(f *fieldOps[S]) {
	ch := d.dur.chanOf(f.offset)
	if ch < 0 {
		return // an unexported field: not checkpointed
	}
	d.chans[ch].dirty = true
	c := &d.dur.chans[ch]
	if !(f.reducer == "append" && f.offset == c.offset && f.typ == c.typ) {
		d.chans[ch].full = true
	}
}

func (d *drun[S]) markSet(fields []*fieldOps[S], set fieldSet) {
	set.each(func(bit int) { d.mark(fields[bit]) })
}

// sliceHeader is the layout of a slice value.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// chanRun is a run's bookkeeping for one channel.
type chanRun struct {
	version uint64
	chain   checkpoint.ChainStats
	len     int  // length of a slice channel at the last checkpoint
	dirty   bool // written since the last checkpoint
	full    bool // written other than by appending: store a full value
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
		scratch: d.scratch, prevTrg: d.prevTrg}
	return d
}

// freeDrun keeps r.d's buffers for r's next durable run.
func (r *run[S]) freeDrun() {
	if d := r.d; d != nil {
		d.resume, d.interrupts, d.source = nil, nil, nil
		d.cp = checkpoint.Checkpoint{}
		var zero S
		d.prev, d.lastRan = zero, nil
		clear(d.tasks[:cap(d.tasks)]) // drop the run's contexts
		clear(d.blobs[:cap(d.blobs)]) // and its encoded data
		r.dfree = d
	}
	r.d = nil
}

// encode encodes the dirty channels into d.blobs and bumps their versions.
// d.blobs is reused from checkpoint to checkpoint: a Saver keeps the blobs'
// data, not the slice.
func (d *drun[S]) encode(s *S) error {
	d.blobs = d.blobs[:0]
	for ch := range d.chans {
		cr := &d.chans[ch]
		if !cr.dirty {
			continue
		}
		full := cr.full
		cr.dirty, cr.full = false, false
		c := &d.dur.chans[ch]
		v := d.dur.value(s, ch)
		n := 0
		if c.slice {
			n = v.Len()
		}
		kind := checkpoint.Full
		var (
			x  any
			sc reflect.Value
		)
		if c.slice && !full && cr.version > 0 && n >= cr.len && !cr.chain.NeedsFull() {
			if n == cr.len {
				continue // appended nothing
			}
			kind = checkpoint.Delta
			// Marshal the appended items through a pointer to a scratch
			// slice, which spares a copy of the slice header to the heap.
			if d.scratch == nil {
				d.scratch = make([]reflect.Value, len(d.chans))
			}
			if !d.scratch[ch].IsValid() {
				d.scratch[ch] = reflect.New(c.typ)
			}
			sc = d.scratch[ch]
			// *sc = (*v)[cr.len:n], without reflect.Value.Slice's heap
			// copy of the header.
			src := (*sliceHeader)(v.Addr().UnsafePointer())
			dst := (*sliceHeader)(sc.UnsafePointer())
			off := uintptr(cr.len) * c.typ.Elem().Size()
			*dst = sliceHeader{data: unsafe.Add(src.data, off), len: n - cr.len, cap: src.cap - cr.len}
			x = sc.Interface()
		} else {
			x = v.Addr().Interface() // a pointer into the state: no copy to the heap
		}
		data, err := d.dur.ser.Marshal(x)
		if sc.IsValid() {
			sc.Elem().SetZero() // keep no reference to the state
		}
		if err != nil {
			return fmt.Errorf("graph: encoding field %s: %w", c.name, err)
		}
		cr.version++
		cr.chain.Add(kind, len(data))
		cr.len = n
		d.blobs = append(d.blobs, checkpoint.Blob{Channel: c.name, Kind: kind, Data: data})
	}
	return nil
}

func (d *drun[S]) versionMap() map[string]uint64 {
	// The map is reused from checkpoint to checkpoint: a Saver does not keep
	// Checkpoint.Versions.
	m := d.vers
	if m == nil {
		m = make(map[string]uint64, len(d.chans))
		d.vers = m
	}
	clear(m)
	for ch, cr := range d.chans {
		if cr.version > 0 {
			m[d.dur.chans[ch].name] = cr.version
		}
	}
	return m
}

// nextTasks describes r.cur (the tasks of step r.step+1) and the waiting
// triggers (tasks with an empty ID).
func (r *run[S]) nextTasks(step int) ([]checkpoint.Task, error) {
	var out []checkpoint.Task
	for i := range r.cur {
		t := &r.cur[i]
		ct := checkpoint.Task{ID: taskID(step, t.n.name, i), Node: t.n.name}
		if t.push {
			data, err := r.d.dur.ser.Marshal(t.arg)
			if err != nil {
				return nil, fmt.Errorf("graph: encoding the input of a task of %q: %w", t.n.name, err)
			}
			ct.Input = data
		}
		out = append(out, ct)
	}
	for i, on := range r.trig {
		if on {
			out = append(out, checkpoint.Task{Node: r.c.nodes[i].name})
		}
	}
	return out, nil
}

func taskID(step int, node string, i int) string {
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], int64(step), 10)
	b = append(b, ':')
	b = append(b, node...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(i), 10)
	return string(b) // one allocation
}

// put saves a checkpoint of the run as it is between steps, with writes
// as its pending writes in the same atomic Put.
func (r *run[S]) put(ctx context.Context, ran []string, meta map[string]string, interrupts []checkpoint.Interrupt, writes []checkpoint.Write) (*checkpoint.Checkpoint, error) {
	d := r.d
	d.unsaved = false // a failed Put is not tried again at the run's exit
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
	if err := d.dur.saver.Put(ctx, d.latest, cp, d.blobs, writes); err != nil {
		return nil, fmt.Errorf("graph: saving step %d of thread %q: %w", r.step, d.thread, err)
	}
	d.latest, d.parent = cp.ID, cp.ID
	return cp, nil
}

// encodeWrites turns a finished task's update into pending writes.
func (d *drun[S]) encodeWrites(c *Compiled[S], id string, t *task[S]) ([]checkpoint.Write, error) {
	ws := []checkpoint.Write{{TaskID: id, Node: t.n.name, Channel: wDone}}
	fields := c.sch.list()
	var err error
	t.upd.set.each(func(bit int) {
		if err != nil {
			return
		}
		f := fields[bit]
		v := reflect.NewAt(f.typ, unsafe.Add(unsafe.Pointer(&t.upd.val), f.offset)).Elem()
		data, e := d.dur.ser.Marshal(v.Interface())
		if e != nil {
			err = fmt.Errorf("graph: encoding the write of %q to field %s: %w", t.n.name, f.name, e)
			return
		}
		ws = append(ws, checkpoint.Write{TaskID: id, Node: t.n.name, Channel: f.name + "|" + f.reducer, Value: data})
	})
	if err != nil {
		return nil, err
	}
	if !t.upd.route.IsZero() {
		rw := routeWire{To: t.upd.route.Targets()}
		for _, s := range t.upd.route.sends {
			data, e := d.dur.ser.Marshal(s.arg)
			if e != nil {
				return nil, fmt.Errorf("graph: encoding a Send of %q: %w", t.n.name, e)
			}
			rw.Sends = append(rw.Sends, sendWire{Node: s.Node(), Input: data})
		}
		data, _ := json.Marshal(rw)
		ws = append(ws, checkpoint.Write{TaskID: id, Node: t.n.name, Channel: wRoute, Value: data})
	}
	return ws, nil
}

type routeWire struct {
	To    []string   `json:"to,omitempty"`
	Sends []sendWire `json:"sends,omitempty"`
}

type sendWire struct {
	Node  string `json:"node"`
	Input []byte `json:"input"`
}

// decodeWrites rebuilds a finished task's update from its pending writes.
func (r *run[S]) decodeWrites(ws []checkpoint.Write) (Update[S], error) {
	u := Update[S]{sch: r.c.sch}
	fields := r.c.sch.list()
	for _, w := range ws {
		switch w.Channel {
		case wDone, wInterrupt, wResume:
			continue
		case wRoute:
			var rw routeWire
			if err := json.Unmarshal(w.Value, &rw); err != nil {
				return u, fmt.Errorf("graph: decoding the routing of task %s: %w", w.TaskID, err)
			}
			u.route = u.route.To(rw.To...)
			for _, s := range rw.Sends {
				i, ok := r.c.index[s.Node]
				if !ok || r.c.nodes[i].def == nil {
					return u, fmt.Errorf("graph: task %s sent to %q, which is not a task node of this graph", w.TaskID, s.Node)
				}
				arg, err := r.decodeArg(r.c.nodes[i], s.Input)
				if err != nil {
					return u, err
				}
				u.route = u.route.Send(Send{def: r.c.nodes[i].def, arg: arg})
			}
			continue
		}
		var f *fieldOps[S]
		for _, x := range fields {
			if x.name+"|"+x.reducer == w.Channel {
				f = x
				break
			}
		}
		if f == nil {
			return u, fmt.Errorf("graph: task %s wrote %q, which no field handle of %s matches", w.TaskID, w.Channel, reflect.TypeFor[S]())
		}
		p := reflect.NewAt(f.typ, unsafe.Add(unsafe.Pointer(&u.val), f.offset))
		if err := r.d.dur.ser.Unmarshal(w.Value, p.Interface()); err != nil {
			return u, fmt.Errorf("graph: decoding the write of task %s to %s: %w", w.TaskID, f.name, err)
		}
		u.set.add(f.bit)
	}
	return u, nil
}

func (r *run[S]) decodeArg(nd *node[S], data []byte) (any, error) {
	if nd.def == nil || nd.def.arg == nil {
		return nil, fmt.Errorf("graph: node %q takes no task input", nd.name)
	}
	p := reflect.New(nd.def.arg)
	if err := r.d.dur.ser.Unmarshal(data, p.Interface()); err != nil {
		return nil, fmt.Errorf("graph: decoding the input of a task of %q: %w", nd.name, err)
	}
	return p.Elem().Interface(), nil
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
	if err := d.dur.saver.PutWrites(ctx, d.thread, d.parent, ws); err != nil {
		return fmt.Errorf("graph: saving the writes of %q at step %d: %w", t.n.name, r.step, err)
	}
	return nil
}

// execDurable runs the graph on a thread: it loads the thread's checkpoint,
// merges the input or resumes the paused step, runs, and checkpoints every
// step.
func (c *Compiled[S]) execDurable(ctx context.Context, thread string, input S, set settings, out sink, typed *streamSink[S], ns []string) (S, error) {
	r := c.pool.Get().(*run[S])
	r.set, r.out, r.typed, r.ns = set, out, typed, ns
	r.observed = out != nil || len(set.hooks) > 0
	d := r.newDrun(c.dur, thread)
	d.before = c.breakSet(set.before)
	d.after = c.breakSet(set.after)
	d.exit = set.durability == DurabilityExit
	r.d = d
	err := r.startDurable(ctx, input)
	if err == nil {
		r.base = r.step // the step limit counts this run's steps only
		err = r.steps(ctx)
		if d.unsaved {
			err = r.saveExit(ctx, err)
		}
	}
	s := r.state
	r.freeDrun()
	r.release()
	c.pool.Put(r)
	return s, err
}

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

// startDurable prepares r to run its first step: a fresh thread starts from
// input, a finished thread merges input into its state, a paused or crashed
// one resumes its pending step.
func (r *run[S]) startDurable(ctx context.Context, input S) error {
	d, c, set := r.d, r.c, &r.set
	if set.durability != DurabilityStep && set.durability != DurabilityExit {
		return fmt.Errorf("graph: unknown durability mode %d; use graph.DurabilityStep or graph.DurabilityExit", int(set.durability))
	}
	if err := c.checkBreaks(set.before); err != nil {
		return err
	}
	if err := c.checkBreaks(set.after); err != nil {
		return err
	}
	snap, err := d.dur.saver.Get(ctx, d.thread, set.fromID)
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
		return fmt.Errorf("graph: loading thread %q: %w", d.thread, err)
	}
	if err := d.dur.decodeState(snap, &r.state, d); err != nil {
		return err
	}
	r.step = snap.Step
	d.latest, d.parent = snap.ID, snap.ID
	if set.fromID != "" {
		latest, err := d.dur.saver.List(ctx, d.thread, checkpoint.ListOptions{Limit: 1})
		if err != nil {
			return fmt.Errorf("graph: loading thread %q: %w", d.thread, err)
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
			return fmt.Errorf("%w: thread %q is not paused", ErrNothingToResume, d.thread)
		}
		r.mergeInput(&input)
		if d.source == nil {
			d.source = metaInput
		}
		return r.begin(ctx)
	}
	if !reflect.ValueOf(&input).Elem().IsZero() {
		return fmt.Errorf("%w: thread %q has a paused step (next: %v); resume it with graph.Resume, graph.ResumeByID or a zero input, or start from a checkpoint with graph.FromCheckpoint",
			ErrThreadPaused, d.thread, nextNames(snap.Next))
	}
	return r.restore(snap)
}

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
	_, err := r.put(ctx, nil, metaInput, nil, nil)
	return err
}

// mergeInput merges a thread's new input into its state through the
// reducers: each non-zero top-level field is applied with the handle
// declared on it (a plain replace when it has none).
func (r *run[S]) mergeInput(in *S) {
	d := r.d
	fields := r.c.sch.list()
	for ch := range d.dur.chans {
		c := &d.dur.chans[ch]
		if d.dur.value(in, ch).IsZero() {
			continue
		}
		var h *fieldOps[S]
		for _, f := range fields {
			if f.offset == c.offset && f.typ == c.typ && f.slot == f.bit {
				h = f
				break
			}
		}
		if h != nil {
			h.apply(&r.state, in)
			d.mark(h)
			continue
		}
		d.dur.value(&r.state, ch).Set(d.dur.value(in, ch))
		d.chans[ch].dirty, d.chans[ch].full = true, true
	}
}

// restore rebuilds the paused step of snap as r.cur, with the tasks that
// finished marked done and the resume values the run was given.
func (r *run[S]) restore(snap *checkpoint.Snapshot) error {
	d, c := r.d, r.c
	step := snap.Step + 1
	for _, t := range snap.Next {
		i, ok := c.index[t.Node]
		if !ok {
			return fmt.Errorf("graph: checkpoint %s of thread %q schedules node %q, which this graph does not have", snap.ID, d.thread, t.Node)
		}
		nd := c.nodes[i]
		if t.ID == "" {
			r.trigger(i)
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
	byTask := map[string][]checkpoint.Write{}
	d.resume = map[string][]byte{}
	for _, w := range snap.Writes {
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
		ws := byTask[taskID(step, t.n.name, i)]
		if !slices.ContainsFunc(ws, func(w checkpoint.Write) bool { return w.Channel == wDone }) {
			continue
		}
		u, err := r.decodeWrites(ws)
		if err != nil {
			return err
		}
		t.upd, t.done = u, true
	}
	// Resume values given to this run.
	open := map[string]bool{}
	var ids []string
	for _, x := range snap.Interrupts {
		if !strings.HasSuffix(x.ID, "#before") && !strings.HasSuffix(x.ID, "#after") {
			open[x.ID] = true
			ids = append(ids, x.ID)
		}
	}
	set := &r.set
	if set.hasResume && set.resumeByID == nil {
		if len(ids) != 1 {
			return fmt.Errorf("%w: graph.Resume needs exactly one pending interrupt, thread %q has %d %v; use graph.ResumeByID", ErrNothingToResume, d.thread, len(ids), ids)
		}
		data, err := d.dur.ser.Marshal(set.resumeValue)
		if err != nil {
			return fmt.Errorf("graph: encoding the resume value: %w", err)
		}
		d.resume[ids[0]] = data
	}
	for id, v := range set.resumeByID {
		if !open[id] {
			return fmt.Errorf("%w: thread %q has no pending interrupt %q (pending: %v)", ErrNothingToResume, d.thread, id, ids)
		}
		data, err := d.dur.ser.Marshal(v)
		if err != nil {
			return fmt.Errorf("graph: encoding the resume value for %s: %w", id, err)
		}
		d.resume[id] = data
	}
	d.skipBefore = true
	d.interrupts = snap.Interrupts
	return nil
}

type resumeWire struct {
	ID    string `json:"id"`
	Value []byte `json:"value"`
}

// beforeStep stops the run at a breakpoint before the step's tasks.
func (r *run[S]) beforeStep(ctx context.Context) error {
	d := r.d
	if d.skipBefore {
		d.skipBefore = false
		return nil
	}
	if d.before == nil {
		return nil
	}
	var hits []checkpoint.Interrupt
	for i := range r.cur {
		if nd := r.cur[i].n; d.before[nd.idx] {
			id := taskID(r.step, nd.name, i)
			hits = append(hits, checkpoint.Interrupt{ID: id + "#before", Node: nd.name, TaskID: id})
		}
	}
	if hits == nil {
		return nil
	}
	r.step--
	cp, err := r.put(ctx, nil, metaInterrupt, hits, nil)
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
				hits = append(hits, checkpoint.Interrupt{ID: id + "#after", Node: name, TaskID: id})
			}
		}
	}
	d.resume, d.interrupts = nil, nil
	if d.exit && hits == nil {
		// Saved when the run exits; the checkpoint it would have been
		// is the one a failure of the next step saves.
		d.unsaved, d.started, d.merged, d.lastRan = true, false, false, ran
		if !d.forked {
			d.source = nil // only the first checkpoint of a run says "input"
		}
		return nil
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

// UpdateState edits a thread's latest state as if node asNode had returned
// u: u merges through the fields' reducers, and the next tasks are those
// asNode's edges, routers and u's routing give. With asNode "" the state
// changes and the next tasks (and pending interrupts) stay as they were.
// It saves a new checkpoint (metadata source "update") and returns its ID.
// Writes of tasks that finished in a paused step are dropped: those tasks
// run again.
func (c *Compiled[S]) UpdateState(ctx context.Context, thread string, u Update[S], asNode string) (string, error) {
	dur, err := c.durableOrErr()
	if err != nil {
		return "", err
	}
	var nd *node[S]
	if asNode != "" {
		i, ok := c.index[asNode]
		if !ok {
			return "", fmt.Errorf("graph: UpdateState as unknown node %q", asNode)
		}
		nd = c.nodes[i]
	}
	r := c.pool.Get().(*run[S])
	defer func() {
		r.freeDrun()
		r.release()
		c.pool.Put(r)
	}()
	r.set = c.set
	d := r.newDrun(dur, thread)
	r.d = d
	snap, err := dur.saver.Get(ctx, thread, "")
	var interrupts []checkpoint.Interrupt
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
	case err != nil:
		return "", fmt.Errorf("graph: loading thread %q: %w", thread, err)
	default:
		if err := dur.decodeState(snap, &r.state, d); err != nil {
			return "", err
		}
		r.step = snap.Step
		d.latest, d.parent = snap.ID, snap.ID
		if nd == nil {
			interrupts = snap.Interrupts
			for _, t := range snap.Next {
				if i, ok := c.index[t.Node]; ok && t.ID == "" {
					r.trigger(i)
				} else if ok {
					tk := task[S]{n: c.nodes[i]}
					if t.Input != nil {
						arg, err := r.decodeArg(c.nodes[i], t.Input)
						if err != nil {
							return "", err
						}
						tk.arg, tk.push = arg, true
					}
					r.cur = append(r.cur, tk)
				}
			}
		}
	}
	if u.sch != nil {
		fields := c.sch.list()
		u.set.each(func(bit int) { fields[bit].apply(&r.state, &u.val); d.mark(fields[bit]) })
	}
	var ran []string
	if nd != nil {
		ran = []string{asNode}
		if err := r.routeFrom(ctx, nd); err != nil {
			return "", err
		}
		if !u.route.IsZero() {
			if err := r.follow(nd, false, u.route, nd.targets, nd.targetIdx); err != nil {
				return "", err
			}
		}
		r.schedule()
	}
	cp, err := r.put(ctx, ran, metaUpdate, interrupts, nil)
	if err != nil {
		return "", err
	}
	return cp.ID, nil
}

// saveExit saves, for a run in [DurabilityExit] that has progress it has
// not saved, the checkpoint step-by-step durability would have left as the
// thread's latest when the run stopped with err (nil when it finished): the
// state after its last completed step, with the step that failed (or was
// not started) as the next one and, for a parallel step, the writes of its
// tasks that finished. A failure to save is joined to err.
func (r *run[S]) saveExit(ctx context.Context, err error) error {
	d := r.d
	if err != nil {
		// A cancelled run is saved too: that is what lets it be resumed.
		ctx = context.WithoutCancel(ctx)
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
