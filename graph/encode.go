package graph

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Names of the pending-write channels that are not state fields.
const (
	wDone      = "~done"      // the task finished; its writes follow
	wRoute     = "~route"     // the task's own routing
	wInterrupt = "~interrupt" // the task paused on an interrupt
	wResume    = "~resume"    // a resume value the task has consumed
	// wGiven is a resume value given to the thread's latest checkpoint,
	// saved as a pending write of it before its step runs again (see
	// saveResume): it is used only while that checkpoint is the thread's
	// latest, so forks and updates from it, and runs from it once the
	// thread has moved on, see the checkpoint as it was saved.
	wGiven = "~given"
)

// channel is one top-level field of the state: the unit a checkpoint
// versions and stores.
type channel struct {
	name   string
	typ    reflect.Type
	offset uintptr
	slice  bool // a slice
	// delta: a slice eligible for delta blobs, whose type decodes as
	// encoding/json does (no Unmarshaler of its own), so that a value
	// decoded piece by piece and appended is the value stored. A type
	// that decodes itself (capping, deduplicating or sorting its items)
	// is always stored whole.
	delta bool
	// array: a slice that checkpoint.JSON encodes as a JSON array of its
	// items, each encoded alone (no Marshaler of its own), so that a value
	// whose earlier items are unchanged encodes to the same bytes up to
	// them.
	array bool
}

// durable is what a graph compiled with a checkpointer knows about storing
// its state.
type durable[S any] struct {
	// grace bounds how long a run whose context is done still waits for
	// each of its saves (abandonGrace; tests change it).
	grace time.Duration
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
	d := &durable[S]{grace: abandonGrace, saver: saver, ser: ser, byKey: map[string]int{}}
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
		if err := checkpoint.ValidateID("Compile", "the channel of state field "+t.Name()+"."+f.Name[:min(len(f.Name), 40)], f.Name); err != nil {
			errs = append(errs, invalid("%v; rename the field", err))
			continue
		}
		d.byKey[f.Name] = len(d.chans)
		slice := f.Type.Kind() == reflect.Slice
		delta := slice && !unmarshals(f.Type) && !unmarshals(reflect.PointerTo(f.Type))
		d.chans = append(d.chans, channel{name: f.Name, typ: f.Type, offset: f.Offset, slice: slice, delta: delta,
			array: delta && ser == checkpoint.JSON && !marshals(f.Type) && !marshals(reflect.PointerTo(f.Type))})
	}
	return d, errors.Join(errs...)
}

// marshals reports whether t encodes itself to JSON.
func marshals(t reflect.Type) bool {
	return t.Implements(reflect.TypeFor[json.Marshaler]()) || t.Implements(reflect.TypeFor[encoding.TextMarshaler]())
}

// unmarshals reports whether t decodes itself from JSON or text.
func unmarshals(t reflect.Type) bool {
	return t.Implements(reflect.TypeFor[json.Unmarshaler]()) || t.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
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
		if len(data.Deltas) > 0 && d.chans[ch].slice && !d.chans[ch].delta && d.ser == checkpoint.JSON {
			// A checkpoint written before such a type was stored whole:
			// decoded piece by piece, its items would be decoded apart.
			whole, err := joinArrays(data)
			if err != nil {
				return fmt.Errorf("graph: decoding field %s of checkpoint %s: %w", name, snap.ID, err)
			}
			data = checkpoint.Channel{Base: whole}
		}
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

// joinArrays joins the JSON arrays of c's Base and Deltas into one.
func joinArrays(c checkpoint.Channel) ([]byte, error) {
	var all []json.RawMessage
	for i, b := range append([][]byte{c.Base}, c.Deltas...) {
		if b == nil {
			continue
		}
		var part []json.RawMessage
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("piece %d of base and deltas is not a JSON array: %w", i, err)
		}
		all = append(all, part...)
	}
	return json.Marshal(all)
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

// markSet records the writes of u.
func (d *drun[S]) markSet(u *Update[S]) {
	for i, n := 0, u.ops.len(); i < n; i++ {
		d.mark(u.ops.at(i))
	}
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
	// prev is the encoding of the channel's whole value at the last
	// checkpoint, when known: the blob stored, or for a delta of an array
	// channel the whole value's encoding it was cut from. It is held
	// until the next checkpoint (a Saver keeps the blobs it is given and
	// never modifies them; prev is only read). A write that leaves the
	// encoding as it was stores nothing, and a write to an array channel
	// other than by appending (a merge method such as model.Messages',
	// Reduce, Replace) whose encoding starts with prev's items followed
	// by ',' kept the earlier items: the items after them are stored as a
	// delta, as an Append handle's are.
	prev []byte
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
		deltaOK := c.delta && cr.version > 0 && n >= cr.len && !cr.chain.NeedsFull()
		if deltaOK && !full {
			if n == cr.len {
				continue // appended nothing
			}
			kind = checkpoint.Delta
			sc = d.tail(ch, v, cr.len, n)
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
		prev := cr.prev
		cr.prev = data
		switch {
		case kind == checkpoint.Delta:
			cr.prev = nil // the whole value is not encoded
		case cr.version > 0 && prev != nil && bytes.Equal(data, prev):
			cr.prev = prev
			continue // written, but as it was: stored already
		case c.array && deltaOK && arrayHead(prev, data, cr.len, n):
			// The items before cr.len are as stored: store the items
			// after them.
			kind = checkpoint.Delta
			sc = d.tail(ch, v, cr.len, n)
			data, err = d.dur.ser.Marshal(sc.Interface())
			sc.Elem().SetZero()
			if err != nil {
				return fmt.Errorf("graph: encoding field %s: %w", c.name, err)
			}
		}
		cr.version++
		cr.chain.Add(kind, len(data))
		cr.len = n
		d.blobs = append(d.blobs, checkpoint.Blob{Channel: c.name, Kind: kind, Data: data})
	}
	return nil
}

// arrayHead reports whether data, the JSON array of n items, starts with
// the items of prev, the JSON array of m items, each encoded as it was.
func arrayHead(prev, data []byte, m, n int) bool {
	if len(prev) < 2 || prev[0] != '[' || prev[len(prev)-1] != ']' || len(data) <= len(prev) || n <= m {
		return false
	}
	at := len(prev) - 1 // where prev's ']' is
	return m == 0 || data[at] == ',' && bytes.Equal(data[:at], prev[:at])
}

// tail returns a pointer to a scratch slice that holds items from to n of
// the slice channel ch, whose value is v: the items a delta stores,
// marshalled through it without a copy of the slice header to the heap.
// The caller zeroes it once marshalled, to keep no reference to the state.
func (d *drun[S]) tail(ch int, v reflect.Value, from, n int) reflect.Value {
	c := &d.dur.chans[ch]
	if d.scratch == nil {
		d.scratch = make([]reflect.Value, len(d.chans))
	}
	if !d.scratch[ch].IsValid() {
		d.scratch[ch] = reflect.New(c.typ)
	}
	sc := d.scratch[ch]
	// *sc = (*v)[from:n], without reflect.Value.Slice's heap copy of the
	// header.
	src := (*sliceHeader)(v.Addr().UnsafePointer())
	dst := (*sliceHeader)(sc.UnsafePointer())
	off := uintptr(from) * c.typ.Elem().Size()
	*dst = sliceHeader{data: unsafe.Add(src.data, off), len: n - from, cap: src.cap - from}
	return sc
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
	for ch := range d.chans {
		cr := &d.chans[ch]
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
			out = append(out, checkpoint.Task{Node: r.c.nodes[i].name, Input: r.firedInput(i)})
		}
	}
	return out, nil
}

// firedInput is the Input of node i's waiting trigger in a checkpoint: the
// names of the nodes whose edges triggered it since it last ran, as a JSON
// list, which the node's wait depends on (see run.waits); nil when there
// is none.
func (r *run[S]) firedInput(i int) []byte {
	nd := r.c.nodes[i]
	var names []string
	for k := nd.in; k < nd.in+nd.nin; k++ {
		if r.fired[k] {
			names = append(names, r.c.nodes[r.c.inFrom[k]].name)
		}
	}
	if names == nil {
		return nil
	}
	data, _ := json.Marshal(names) // a []string always encodes
	return data
}

// held restores node i's waiting trigger from a checkpoint, with the nodes
// whose edges had triggered it (fired, see firedInput). A checkpoint saved
// before those were recorded has none: the node then waits while any node
// strictly upstream of it has a task, as it did then.
func (r *run[S]) held(i int, fired []byte) error {
	r.trigger(i)
	if fired == nil {
		return nil
	}
	var names []string
	if err := json.Unmarshal(fired, &names); err != nil {
		return fmt.Errorf("graph: the checkpoint's waiting trigger of node %q has Input %q, not a JSON list of the node names that triggered it: %w", r.c.nodes[i].name, fired, err)
	}
	for _, name := range names {
		if j, ok := r.c.index[name]; ok && r.fired != nil { // a node since removed from the graph no longer counts
			r.fire(r.c.nodes[j], i)
		}
	}
	return nil
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

// encodeWrites turns a finished task's update into pending writes.
func (d *drun[S]) encodeWrites(c *Compiled[S], id string, t *task[S]) ([]checkpoint.Write, error) {
	ws := []checkpoint.Write{{TaskID: id, Node: t.n.name, Channel: wDone}}
	if err := c.checkReduce(t.n.name, &t.upd); err != nil {
		return nil, err
	}
	for i, n := 0, t.upd.ops.len(); i < n; i++ {
		f := t.upd.ops.at(i)
		v := reflect.NewAt(f.typ, unsafe.Add(unsafe.Pointer(&t.upd.val), f.offset)).Elem()
		data, err := d.dur.ser.Marshal(v.Interface())
		if err != nil {
			return nil, fmt.Errorf("graph: encoding the write of %q to field %s: %w", t.n.name, f.name, err)
		}
		ws = append(ws, checkpoint.Write{TaskID: id, Node: t.n.name, Channel: f.channel, Value: data})
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
	var u Update[S]
	for _, w := range ws {
		switch w.Channel {
		case wDone, wInterrupt, wResume, wGiven:
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
		name, reducer, _ := strings.Cut(w.Channel, "|")
		reducer, fnName, _ := strings.Cut(reducer, "|")
		f, err := r.c.rebuild(name, reducer, fnName)
		if err != nil {
			return u, fmt.Errorf("graph: task %s wrote %q: %w", w.TaskID, w.Channel, err)
		}
		if u.set.has(f.slot) {
			return u, fmt.Errorf("graph: task %s wrote field %s twice", w.TaskID, f.name)
		}
		p := reflect.NewAt(f.typ, unsafe.Add(unsafe.Pointer(&u.val), f.offset))
		if err := r.d.dur.ser.Unmarshal(w.Value, p.Interface()); err != nil {
			return u, fmt.Errorf("graph: decoding the write of task %s to %s: %w", w.TaskID, f.name, err)
		}
		u.set.add(f.slot)
		u.ops.set(u.ops.len(), f)
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
