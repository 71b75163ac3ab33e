package graph

import (
	"fmt"
	"maps"
	"math/bits"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// inlineFields is how many field numbers of a state type a fieldSet holds
// without allocating. A state type may have more fields with handles: the
// bits above spill into an overflow slice that is allocated when one of
// them is set.
const inlineFields = 128

// fieldSet is a set of field numbers (bits, see schema) of one state type. It
// is a value: copies never share a change. Bits below inlineFields live in
// w; the others in *more, which is copied on write and is nil or holds at
// least one set bit.
type fieldSet struct {
	w    [inlineFields / 64]uint64
	more *[]uint64 // bit inlineFields+64*i+j is (*more)[i] bit j
}

func (s *fieldSet) add(bit int) {
	if bit < inlineFields {
		s.w[bit>>6] |= 1 << (bit & 63)
		return
	}
	bit -= inlineFields
	var old []uint64
	if s.more != nil {
		old = *s.more
	}
	n := make([]uint64, max(len(old), bit>>6+1))
	copy(n, old)
	n[bit>>6] |= 1 << (bit & 63)
	s.more = &n
}

func (s *fieldSet) has(bit int) bool {
	if bit < inlineFields {
		return s.w[bit>>6]&(1<<(bit&63)) != 0
	}
	bit -= inlineFields
	return s.more != nil && bit>>6 < len(*s.more) && (*s.more)[bit>>6]&(1<<(bit&63)) != 0
}

func (s *fieldSet) empty() bool { return s.w[0]|s.w[1] == 0 && s.more == nil }

// count returns the number of bits in s. An update's set has a bit per
// write in its list, so count is the length of the list, found without
// scanning it (see writes).
func (s *fieldSet) count() int {
	n := bits.OnesCount64(s.w[0]) + bits.OnesCount64(s.w[1])
	if s.more != nil {
		for _, w := range *s.more {
			n += bits.OnesCount64(w)
		}
	}
	return n
}

func (s *fieldSet) union(o fieldSet) {
	s.w[0] |= o.w[0]
	s.w[1] |= o.w[1]
	if o.more != nil {
		if s.more == nil {
			s.more = o.more // never modified in place
			return
		}
		a, b := *s.more, *o.more
		n := make([]uint64, max(len(a), len(b)))
		copy(n, a)
		for i, x := range b {
			n[i] |= x
		}
		s.more = &n
	}
}

func (s *fieldSet) remove(o fieldSet) {
	s.w[0] &^= o.w[0]
	s.w[1] &^= o.w[1]
	if s.more != nil && o.more != nil {
		n := slices.Clone(*s.more)
		any := false
		for i := range n {
			if i < len(*o.more) {
				n[i] &^= (*o.more)[i]
			}
			any = any || n[i] != 0
		}
		s.more = nil
		if any {
			s.more = &n
		}
	}
}

// each calls fn for every bit of s, in increasing order.
func (s fieldSet) each(fn func(bit int)) {
	for w, word := range s.w {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			fn(w*64 + b)
		}
	}
	if s.more != nil {
		for w, word := range *s.more {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &^= 1 << b
				fn(inlineFields + w*64 + b)
			}
		}
	}
}

// fieldOps is what the engine knows about one field handle: where the field
// is, how it merges, and typed functions that move its value between two
// values of S. It is built once, when the handle is made, and an update
// carries a pointer to it for each field it writes, so merging needs no
// table of handles.
type fieldOps[S any] struct {
	name    string       // Go path of the field, e.g. "Log" or "Usage.Input"
	reducer string       // "replace", "append", "merge map", "sum", "merge method", "reduce"
	typ     reflect.Type // the field's type
	offset  uintptr      // byte offset of the field in S
	slot    int          // number of the field within S's schema
	replace bool         // writes overwrite; two writes in one step conflict
	fn      uintptr      // Reduce: the identity of its function value
	fnName  string       // Reduce: its function's name, stable across processes built from one source
	channel string       // the name of its saved writes: "name|reducer", "name|reduce|fnName" for Reduce

	apply func(dst, src *S) // dst.field = reduce(dst.field, src.field)
	// combine and copy do the same on values, for building updates: a
	// pointer to a local passed through a func value would escape and cost
	// an allocation per update.
	combine func(dst, src S) S
	copy    func(dst, src S) S
	get     func(s *S) any // the field's value, for printing
}

// same reports whether f and o merge alike: the same handle, or two
// declarations of one reducer on one field (for [Reduce], with the same
// function value). Both are alive, so equal function addresses are the
// same function.
func (f *fieldOps[S]) same(o *fieldOps[S]) bool {
	return f == o || (f.slot == o.slot && f.typ == o.typ && f.reducer == o.reducer && f.fn == o.fn)
}

// noteReduce records a Reduce handle in s.reduces by its function's name.
// The caller holds the schema's mu.
func (s *slot[S]) noteReduce(ops *fieldOps[S]) {
	if ops.fnName == "" {
		return
	}
	if s.reduces == nil {
		s.reduces = make(map[string]*fieldOps[S])
	}
	old, ok := s.reduces[ops.fnName]
	switch {
	case !ok:
		s.reduces[ops.fnName] = ops
	case old != nil && old.fn != ops.fn:
		s.reduces[ops.fnName] = nil // two functions under one name: ambiguous
	}
}

// reduceNamed returns the Reduce handle on s whose function is named name,
// and whether the name is ambiguous.
func (sc *schema[S]) reduceNamed(s *slot[S], name string) (f *fieldOps[S], ambiguous bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	f, ok := s.reduces[name]
	return f, ok && f == nil
}

// at returns the address of the field of type T at offset off in *s. The
// offset and type were checked against S when the handle was made.
func at[T, S any](s *S, off uintptr) *T {
	return (*T)(unsafe.Add(unsafe.Pointer(s), off))
}

// slot is one field of S that has a handle: where it is and its default
// handle, the first declared on it.
type slot[S any] struct {
	name   string
	offset uintptr
	typ    reflect.Type
	def    *fieldOps[S] // the field's default handle: the first declared on it
	field  any          // def's *Field[S, T], returned when it is declared again
	// reduces maps the name of each Reduce function declared on the field
	// to its handle, or to nil when two different function values share
	// the name (closures of one function literal capturing different
	// variables). Guarded by the schema's mu; bounded by the functions in
	// the program's source.
	reduces map[string]*fieldOps[S]
}

// schema numbers the fields of one state type that have handles: type
// information, in the manner of encoding/json's cache, not configuration.
// It is bounded by the fields of S: a field gets a number the first time a
// handle is declared on it, and declaring more handles (however many, on
// however many graphs) adds nothing. It also records each field's default
// handle, the first declared on it, which merges a thread's input and
// rebuilds saved writes for a graph that declares no handle of its own on
// the field ([Graph.Handles]). What a write does is the reducer of the
// handle it was made with, which the update carries, so graphs over one
// type never change one another's merging.
type schema[S any] struct {
	typ   reflect.Type
	mu    sync.Mutex
	slots atomic.Pointer[[]*slot[S]] // copy on write; read without locking
}

// schemas maps a state type to its *schema[S]. It holds one entry per
// state type of the program.
var schemas sync.Map

func schemaOf[S any]() *schema[S] {
	t := reflect.TypeFor[S]()
	if v, ok := schemas.Load(t); ok {
		return v.(*schema[S])
	}
	v, _ := schemas.LoadOrStore(t, &schema[S]{typ: t})
	return v.(*schema[S])
}

func (sc *schema[S]) list() []*slot[S] {
	if p := sc.slots.Load(); p != nil {
		return *p
	}
	return nil
}

// lookup returns the number and slot of the field at off of type typ, or
// -1 and nil.
func lookup[S any](slots []*slot[S], off uintptr, typ reflect.Type) (int, *slot[S]) {
	for i, s := range slots {
		if s.offset == off && s.typ == typ {
			return i, s
		}
	}
	return -1, nil
}

// locate finds the field that acc points into, by offset and type.
func locate[S, T any](acc func(*S) *T) (name string, off uintptr) {
	st := reflect.TypeFor[S]()
	ft := reflect.TypeFor[T]()
	if acc == nil {
		panic(fmt.Sprintf("graph: nil accessor for a %s field of %s", ft, st))
	}
	if st.Kind() != reflect.Struct {
		panic(fmt.Sprintf("graph: state type %s is not a struct; field handles need a struct state", st))
	}
	base := new(S)
	p := acc(base)
	if p == nil {
		panic(fmt.Sprintf("graph: accessor for a %s field of %s returned nil; write it as func(s *%s) *%s { return &s.Field }", ft, st, st.Name(), ft))
	}
	off = uintptr(unsafe.Pointer(p)) - uintptr(unsafe.Pointer(base))
	if uintptr(unsafe.Pointer(p)) < uintptr(unsafe.Pointer(base)) || off >= st.Size() {
		panic(fmt.Sprintf("graph: accessor for a %s field of %s does not point into the state; write it as func(s *%s) *%s { return &s.Field }", ft, st, st.Name(), ft))
	}
	name, ok := fieldPath(st, off, ft, "")
	if !ok {
		panic(fmt.Sprintf("graph: accessor for a %s field of %s points at offset %d, which is not a %s field", ft, st, off, ft))
	}
	return name, off
}

// fieldPath returns the dotted name of the field of type ft at offset off.
func fieldPath(t reflect.Type, off uintptr, ft reflect.Type, prefix string) (string, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Offset == off && f.Type == ft {
			return prefix + f.Name, true
		}
		if f.Type.Kind() == reflect.Struct && off >= f.Offset && off < f.Offset+f.Type.Size() {
			if name, ok := fieldPath(f.Type, off-f.Offset, ft, prefix+f.Name+"."); ok {
				return name, true
			}
		}
	}
	return "", false
}

// register gives ops the number of its field, numbering the field if it
// has none yet, and makes field the field's default handle when it is the
// first declared on it. It returns the default handle's *Field when ops
// merges like it, so declaring a handle again returns the same handle.
func (sc *schema[S]) register(ops *fieldOps[S], field any) any {
	i, s := lookup(sc.list(), ops.offset, ops.typ)
	if s == nil || ops.fnName != "" {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		old := sc.list()
		if i, s = lookup(old, ops.offset, ops.typ); s == nil { // not declared meanwhile
			ops.slot = len(old)
			s = &slot[S]{name: ops.name, offset: ops.offset, typ: ops.typ, def: ops, field: field}
			s.noteReduce(ops)
			next := append(old[:len(old):len(old)], s)
			sc.slots.Store(&next)
			return field
		}
		s.noteReduce(ops)
	}
	ops.slot = i
	if s.def.same(ops) {
		return s.field
	}
	return field
}

// Field is a typed handle on one field of the state S, holding the field's
// reducer. Make one with [Replace], [Append], [MergeMap], [Sum], [Merge],
// [Reduce] or [Declare], usually as a package variable next to the state:
//
//	var Log = graph.Append(func(s *State) *[]string { return &s.Log })
//
// A node writes the field by returning Log.Set(v), and the update carries
// the handle's reducer: graphs over one state type may merge a field
// differently, each through its own handle. Handles are safe for
// concurrent use. A state type may have any number of handles, and
// declaring them holds no memory beyond the handle itself: a handle no
// longer used is garbage collected. Declaring the field's first handle
// again (the same reducer; for [Reduce], the same function value) returns
// that handle. The first handle declared on a field is its default, which
// merges a thread's input and rebuilds saved writes in the graphs that do
// not declare their own ([Graph.Handles]).
type Field[S, T any] struct {
	ops *fieldOps[S]
	off uintptr
}

// handle makes a *Field a [Handle].
func (f *Field[S, T]) handle() *fieldOps[S] { return f.ops }

// Handle is a field handle of S of any field type: a *[Field][S, T]. It
// lists a graph's handles in [Graph.Handles].
type Handle[S any] interface {
	handle() *fieldOps[S]
}

func newField[S, T any](acc func(*S) *T, reducer string, reduce func(old, new T) T) *Field[S, T] {
	name, off := locate(acc)
	var fn uintptr
	var fnName string
	channel := name + "|" + reducer
	if reducer == "reduce" {
		// A func value is a pointer to its closure record: equal pointers
		// are the same function with the same captured variables.
		fn = uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&reduce)))
		// The function's name ("pkg.maxInt", "pkg.init.func1") is the
		// same in every process built from one source, so saved writes
		// carry it and a resume merges them with that function.
		if rf := runtime.FuncForPC(reflect.ValueOf(reduce).Pointer()); rf != nil {
			fnName = rf.Name()
			channel += "|" + fnName
		}
	}
	ops := &fieldOps[S]{
		name:    name,
		reducer: reducer,
		typ:     reflect.TypeFor[T](),
		offset:  off,
		replace: reduce == nil,
		fn:      fn,
		fnName:  fnName,
		channel: channel,
		get:     func(s *S) any { return *at[T](s, off) },
		copy: func(dst, src S) S {
			*at[T](&dst, off) = *at[T](&src, off)
			return dst
		},
	}
	if reduce == nil {
		ops.apply = func(dst, src *S) { *at[T](dst, off) = *at[T](src, off) }
		ops.combine = ops.copy
	} else {
		ops.apply = func(dst, src *S) {
			d := at[T](dst, off)
			*d = reduce(*d, *at[T](src, off))
		}
		ops.combine = func(dst, src S) S {
			d := at[T](&dst, off)
			*d = reduce(*d, *at[T](&src, off))
			return dst
		}
	}
	f := &Field[S, T]{ops: ops, off: off}
	return schemaOf[S]().register(ops, f).(*Field[S, T])
}

// Name returns the field's name in S, dotted for fields of nested structs.
func (f *Field[S, T]) Name() string { return f.ops.name }

// Reducer names how the field merges: "replace", "append", "merge map",
// "sum", "merge method" or "reduce".
func (f *Field[S, T]) Reducer() string { return f.ops.reducer }

// Set returns an update that writes v to the field. The zero value of T is
// written like any other value.
func (f *Field[S, T]) Set(v T) Update[S] {
	u := Update[S]{}
	*at[T](&u.val, f.off) = v
	u.set.add(f.ops.slot)
	u.ops.in[0] = f.ops
	return u
}

// Put adds to *u a write of v to the field, as *u = Updates(*u, f.Set(v))
// does, without copying the update: a node writing several fields builds
// its update in one variable.
//
//	var u graph.Update[State]
//	Count.Put(&u, 1)
//	Log.Put(&u, []string{"counted"})
//	return u, nil
func (f *Field[S, T]) Put(u *Update[S], v T) {
	if !u.set.has(f.ops.slot) {
		*at[T](&u.val, f.off) = v
		u.ops.set(u.set.count(), f.ops)
		u.set.add(f.ops.slot)
		return
	}
	p := f.Set(v)
	u.fold(f.ops, &p)
}

// Get returns the value u writes to the field, and whether u writes it.
func (f *Field[S, T]) Get(u Update[S]) (T, bool) {
	if !u.set.has(f.ops.slot) {
		var zero T
		return zero, false
	}
	return *at[T](&u.val, f.off), true
}

// Value returns the field's value in s.
func (f *Field[S, T]) Value(s S) T { return *at[T](&s, f.off) }

// Merger is implemented by a type that knows how to merge a newer value
// into itself. A field of such a type declared with [Declare] or [Merge]
// merges by calling old.Merge(new).
type Merger[T any] interface {
	Merge(T) T
}

// Number is the set of types [Sum] adds.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Replace declares a field whose writes overwrite its value. Two tasks of
// one super-step writing it is an error of the run ([ConflictError]): give
// the field a merging reducer if parallel nodes write it.
func Replace[S, T any](acc func(*S) *T) *Field[S, T] {
	return newField(acc, "replace", nil)
}

// Append declares a slice field whose writes are appended to its value.
func Append[S, E any](acc func(*S) *[]E) *Field[S, []E] {
	return newField(acc, "append", func(old, new []E) []E {
		if len(new) == 0 {
			return old
		}
		return append(old, new...)
	})
}

// MergeMap declares a map field whose writes are merged into its value key
// by key, the written entries winning. The state's map is never modified in
// place: a merge builds a new map, so earlier snapshots stay as they were.
func MergeMap[S any, K comparable, V any](acc func(*S) *map[K]V) *Field[S, map[K]V] {
	return newField(acc, "merge map", func(old, new map[K]V) map[K]V {
		if len(new) == 0 {
			return old
		}
		m := make(map[K]V, len(old)+len(new))
		maps.Copy(m, old)
		maps.Copy(m, new)
		return m
	})
}

// Sum declares a numeric field whose writes are added to its value.
func Sum[S any, T Number](acc func(*S) *T) *Field[S, T] {
	return newField(acc, "sum", func(old, new T) T { return old + new })
}

// Merge declares a field merged by its type's own method: old.Merge(new).
func Merge[S any, T Merger[T]](acc func(*S) *T) *Field[S, T] {
	return newField(acc, "merge method", func(old, new T) T { return old.Merge(new) })
}

// Reduce declares a field merged by fn(old, new). Handles with the same
// function value (a top-level function, a method expression, or one closure
// value) on one field merge alike, so updates written through two
// declarations of one combine; a closure made anew on each call is a
// handle of its own, garbage once unused. A checkpointed graph whose
// Reduce handle on a field is not the field's first declared handle lists
// it with [Graph.Handles].
func Reduce[S, T any](acc func(*S) *T, fn func(old, new T) T) *Field[S, T] {
	if fn == nil {
		panic(fmt.Sprintf("graph: Reduce for a %s field of %s has a nil function", reflect.TypeFor[T](), reflect.TypeFor[S]()))
	}
	return newField(acc, "reduce", fn)
}

// Declare declares a field with its default reducer: a type that implements
// [Merger] merges by its Merge method (so a token-usage field accumulates by
// itself); any other type is replaced, as with [Replace].
func Declare[S, T any](acc func(*S) *T) *Field[S, T] {
	var zero T
	if _, ok := any(zero).(Merger[T]); ok {
		return newField(acc, "merge method", func(old, new T) T { return any(old).(Merger[T]).Merge(new) })
	}
	return newField(acc, "replace", nil)
}

// Update is what a node returns: the fields it writes, each merged into the
// state by its reducer, and optionally routing (targets to go to and
// dynamic tasks to start), LangGraph's Command. Fields it does not write are
// untouched. The zero Update writes nothing and routes nowhere; the node's
// edges still apply.
//
// Build one with [Field.Set] and combine parts with [Updates]:
//
//	return graph.Updates(Log.Set([]string{"a"}), N.Set(s.N+1)), nil
//
// An Update is a value: it holds a value of S with the written fields set
// and the handles they were written through, so building and merging one
// neither allocates (up to two fields) nor reflects.
type Update[S any] struct {
	set   fieldSet  // the numbers of the fields written
	ops   writes[S] // the handles they were written through, in write order
	val   S
	route Route
}

// inlineWrites is how many of an update's writes it holds without
// allocating: enough for the updates nodes usually return (the prebuilt
// agent's model turn writes five fields).
const inlineWrites = 6

// writes lists the handles of an update's writes, one per field, in the
// order the fields were first written. The first inlineWrites are inline;
// the list behind more is never modified in place, so copies of an update
// share it safely. The update's field set has a bit per write, so
// Update.set.count() is the list's length, which hot paths use rather
// than len, which scans.
type writes[S any] struct {
	in   [inlineWrites]*fieldOps[S]
	more *[]*fieldOps[S] // set only when in is full
}

func (w *writes[S]) len() int {
	for i, f := range w.in {
		if f == nil {
			return i
		}
	}
	if w.more == nil {
		return len(w.in)
	}
	return len(w.in) + len(*w.more)
}

func (w *writes[S]) at(i int) *fieldOps[S] {
	if i < len(w.in) {
		return w.in[i]
	}
	return (*w.more)[i-len(w.in)]
}

// set puts f at i, which is at most w.len().
func (w *writes[S]) set(i int, f *fieldOps[S]) {
	if i < len(w.in) {
		w.in[i] = f
		return
	}
	var old []*fieldOps[S]
	if w.more != nil {
		old = *w.more
	}
	j := i - len(w.in)
	n := make([]*fieldOps[S], max(len(old), j+1))
	copy(n, old)
	n[j] = f
	w.more = &n
}

// find returns the index of the write to field number slot.
func (w *writes[S]) find(slot int) int {
	for i, n := 0, w.len(); i < n; i++ {
		if w.at(i).slot == slot {
			return i
		}
	}
	return -1
}

// Updates combines parts into one update. A field written by several parts
// is combined through its reducer in order (appends append, a replace field
// keeps the last value); routing is concatenated.
func Updates[S any](parts ...Update[S]) Update[S] {
	if len(parts) == 0 {
		return Update[S]{}
	}
	// Folding into one local through pointers copies each part's value
	// once, where merged would copy the whole update in and out per part.
	u := parts[0]
	for i := 1; i < len(parts); i++ {
		p := &parts[i]
		if u.set.empty() && u.route.IsZero() {
			u = *p
			continue
		}
		for j, n := 0, p.ops.len(); j < n; j++ {
			u.fold(p.ops.at(j), p)
		}
		u.route.add(p.route)
	}
	return u
}

// merged returns u with p folded in. It works on values, not pointers, so
// that building an update on the stack stays on the stack.
func (u Update[S]) merged(p Update[S]) Update[S] {
	if u.set.empty() && u.route.IsZero() {
		return p
	}
	for i, n := 0, p.ops.len(); i < n; i++ {
		u.fold(p.ops.at(i), &p)
	}
	u.route.add(p.route)
	return u
}

// fold folds p's write through f into u.
func (u *Update[S]) fold(f *fieldOps[S], p *Update[S]) {
	if !u.set.has(f.slot) {
		u.val = f.copy(u.val, p.val)
		u.ops.set(u.set.count(), f)
		u.set.add(f.slot)
		return
	}
	i := u.ops.find(f.slot)
	if u.ops.at(i).same(f) {
		u.val = f.combine(u.val, p.val)
		return
	}
	// A write through another handle on the same field is replaced by
	// this one.
	u.val = f.copy(u.val, p.val)
	u.ops.set(i, f)
}

// Goto returns u with targets added to its routing: the nodes run in the
// next super-step, in addition to the node's edges. The targets must be
// declared with the node's [Targets] option.
func (u Update[S]) Goto(targets ...string) Update[S] {
	u.route = u.route.To(targets...)
	return u
}

// Send returns u with dynamic tasks added to its routing; see [AddTask].
func (u Update[S]) Send(tasks ...Send) Update[S] {
	u.route = u.route.Send(tasks...)
	return u
}

// Route returns the routing part of u.
func (u Update[S]) Route() Route { return u.route }

// IsZero reports whether u writes nothing and routes nowhere.
func (u Update[S]) IsZero() bool { return u.set.empty() && u.route.IsZero() }

// Fields returns the names of the fields u writes, in the order they were
// first written.
func (u Update[S]) Fields() []string {
	n := u.ops.len()
	if n == 0 {
		return nil
	}
	names := make([]string, n)
	for i := range n {
		names[i] = u.ops.at(i).name
	}
	return names
}

// ApplyTo merges u's writes into *s through the fields' reducers, as the
// engine does at the end of a super-step. Routing is ignored.
func (u Update[S]) ApplyTo(s *S) {
	for i, n := 0, u.ops.len(); i < n; i++ {
		u.ops.at(i).apply(s, &u.val)
	}
}

// String formats u as {Field:value ...}, followed by its routing if any.
func (u Update[S]) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := 0, u.ops.len(); i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		f := u.ops.at(i)
		fmt.Fprintf(&b, "%s:%v", f.name, f.get(&u.val))
	}
	b.WriteByte('}')
	if !u.route.IsZero() {
		b.WriteByte(' ')
		b.WriteString(u.route.String())
	}
	return b.String()
}
