package graph

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// Fields declares the graph's own field handles, at most one per field: the
// handles that merge a thread's input into the field and rebuild the
// field's saved writes when a paused or interrupted step resumes after a
// restart. A field the graph does not list uses its default handle, the
// first declared on it in the program.
//
// An update always merges through the handle it was written with, so
// graphs over one state type may merge a field differently; list a graph's
// handles when its reducer for a field is not the field's default. A
// checkpointed graph must: a node of such a graph writing a field through a
// [Reduce] handle other than the graph's handle on that field fails the run
// with an error naming the field, because a restart could not rebuild the
// write. Compile reports two listed handles on one field that merge
// differently.
//
//	var (
//		Best  = graph.Reduce(func(s *State) *int { return &s.Best }, maxInt) // the default
//		Worst = graph.Reduce(func(s *State) *int { return &s.Best }, minInt)
//	)
//	g := graph.New[State]().Fields(Worst) // this graph keeps the lowest
func (g *Graph[S]) Fields(handles ...Handle[S]) *Graph[S] {
	for i, h := range handles {
		if h == nil || h.handle() == nil {
			g.problem("Fields: handle %d is nil; pass handles made by graph.Replace, graph.Reduce, ...", i)
			continue
		}
		g.fields = append(g.fields, h)
	}
	return g
}

// ownFields checks a graph's handles (one per field) and returns their ops.
func ownFields[S any](handles []Handle[S], errs []error) ([]*fieldOps[S], []error) {
	var own []*fieldOps[S]
next:
	for _, h := range handles {
		f := h.handle()
		for _, o := range own {
			if o.slot != f.slot {
				continue
			}
			if !o.same(f) {
				errs = append(errs, invalid("field %s: Fields lists two handles that merge it differently (%s and %s); list one handle per field", f.name, o.reducer, f.reducer))
			}
			continue next
		}
		own = append(own, f)
	}
	return own, errs
}

// handleOf returns the handle that merges input into field number slot and
// rebuilds its saved writes: the graph's own, or the field's default.
func (c *Compiled[S]) handleOf(slot int) *fieldOps[S] {
	for _, f := range c.own {
		if f.slot == slot {
			return f
		}
	}
	return c.sch.list()[slot].def
}

// checkReduce reports a write through a Reduce handle that the graph could
// not rebuild after a restart: one other than its handle on the field.
func (c *Compiled[S]) checkReduce(node string, u *Update[S]) error {
	for i, n := 0, u.ops.len(); i < n; i++ {
		f := u.ops.at(i)
		if f.fn == 0 {
			continue
		}
		if h := c.handleOf(f.slot); !h.same(f) {
			what := "a Reduce handle with another function"
			if h.reducer != "reduce" {
				what = "a " + h.reducer + " handle"
			}
			return fmt.Errorf("graph: node %q writes field %s through a Reduce handle other than this graph's handle on the field (%s), so a restart could not merge the write once saved; list the handle in the graph's Fields", node, f.name, what)
		}
	}
	return nil
}

// rebuild returns a handle that merges like the one a saved write was made
// with, named by the field's name and the handle's reducer: the graph's
// handle on the field when its reducer is that one, else one built for it.
func (c *Compiled[S]) rebuild(name, reducer string) (*fieldOps[S], error) {
	for i, s := range c.sch.list() {
		if s.name != name {
			continue
		}
		h := c.handleOf(i)
		if h.reducer == reducer {
			return h, nil
		}
		if f := reflectOps[S](s, i, reducer); f != nil {
			return f, nil
		}
		return nil, fmt.Errorf("field %s was written through a %s handle, which this graph cannot rebuild (its handle on the field merges by %s); list the handle in the graph's Fields", name, reducer, h.reducer)
	}
	return nil, fmt.Errorf("no field handle of %s is declared on field %s; declare the handles before resuming", c.sch.typ, name)
}

// reflectOps builds a handle on field number n with a built-in reducer, for
// rebuilding a saved write made through a handle the graph does not hold.
// It works by reflection: it serves resumes, not steps.
func reflectOps[S any](s *slot[S], n int, reducer string) *fieldOps[S] {
	t := s.typ
	var merge func(old, new reflect.Value)
	switch reducer {
	case "replace":
	case "append":
		if t.Kind() != reflect.Slice {
			return nil
		}
		merge = func(old, new reflect.Value) {
			if new.Len() > 0 {
				old.Set(reflect.AppendSlice(old, new))
			}
		}
	case "merge map":
		if t.Kind() != reflect.Map {
			return nil
		}
		merge = func(old, new reflect.Value) {
			if new.Len() == 0 {
				return
			}
			m := reflect.MakeMapWithSize(t, old.Len()+new.Len())
			for _, src := range []reflect.Value{old, new} {
				for it := src.MapRange(); it.Next(); {
					m.SetMapIndex(it.Key(), it.Value())
				}
			}
			old.Set(m)
		}
	case "sum":
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			merge = func(old, new reflect.Value) { old.SetInt(old.Int() + new.Int()) }
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			merge = func(old, new reflect.Value) { old.SetUint(old.Uint() + new.Uint()) }
		case reflect.Float32, reflect.Float64:
			merge = func(old, new reflect.Value) { old.SetFloat(old.Float() + new.Float()) }
		default:
			return nil
		}
	case "merge method":
		m, ok := t.MethodByName("Merge")
		if !ok || m.Type.NumIn() != 2 || m.Type.In(1) != t || m.Type.NumOut() != 1 || m.Type.Out(0) != t {
			return nil
		}
		merge = func(old, new reflect.Value) { old.Set(old.Method(m.Index).Call([]reflect.Value{new})[0]) }
	default:
		return nil
	}
	off := s.offset
	val := func(p *S) reflect.Value { return reflect.NewAt(t, unsafe.Add(unsafe.Pointer(p), off)).Elem() }
	f := &fieldOps[S]{name: s.name, reducer: reducer, typ: t, offset: off, slot: n, replace: merge == nil,
		get: func(p *S) any { return val(p).Interface() }}
	f.apply = func(dst, src *S) {
		if merge == nil {
			val(dst).Set(val(src))
			return
		}
		merge(val(dst), val(src))
	}
	f.copy = func(dst, src S) S { val(&dst).Set(val(&src)); return dst }
	f.combine = func(dst, src S) S { f.apply(&dst, &src); return dst }
	return f
}

// UpdateOf returns an update that writes the named fields of s, each through
// the graph's handle on it ([Graph.Fields], else the field's default), the
// way the graph merges a thread's input: code that receives state edits as
// data (a JSON body naming the fields it sets, as an HTTP API does) turns
// them into an update for [Thread.Update] with it. Names are the fields'
// Go names, as [Field.Name] gives them. A name with no handle declared on
// it is an error naming the field and the fix.
func (c *Compiled[S]) UpdateOf(s S, fields ...string) (Update[S], error) {
	return updateOf(c.sch, c.handleOf, s, fields)
}

func updateOf[S any](sch *schema[S], handleOf func(int) *fieldOps[S], s S, fields []string) (Update[S], error) {
	slots := sch.list()
	var u Update[S]
	for _, name := range fields {
		n := -1
		for i, x := range slots {
			if x.name == name {
				n = i
				break
			}
		}
		if n < 0 {
			known := make([]string, len(slots))
			for i, x := range slots {
				known[i] = x.name
			}
			return Update[S]{}, fmt.Errorf("graph: no handle is declared on field %q of %s; declare one (graph.Replace, graph.Append, ...) to write it (fields with handles: %s)",
				name, sch.typ, strings.Join(known, ", "))
		}
		if u.set.has(n) {
			continue
		}
		h := handleOf(n)
		u.val = h.copy(u.val, s)
		u.set.add(n)
		u.ops.set(u.ops.len(), h)
	}
	return u, nil
}
