package graph

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// Handles declares the graph's own field handles, at most one per field: the
// handles that merge a thread's input into the field and rebuild the
// field's saved writes when a paused or interrupted step resumes after a
// restart. A field the graph does not list uses its default handle, the
// first declared on it in the program.
//
// An update always merges through the handle it was written with, so
// graphs over one state type may merge a field differently; list a graph's
// handles when its reducer for a field is not the field's default.
//
// A checkpointed graph saves a write through a [Reduce] handle under the
// name of its function (e.g. "example.com/app.maxInt", the same in every
// process built from one source), and a resume merges the write with that
// function whatever the graph's handle on the field; a resume in a program
// that declares no Reduce with that function on the field fails naming the
// field and the function. A node writing a field through a Reduce handle
// other than the graph's handle, whose function shares its name with
// another function value declared on the field (closures of one function
// literal capturing different variables), fails the run naming the field:
// list that handle here. Compile reports two listed handles on one field that merge
// differently.
//
//	var (
//		Best  = graph.Reduce(func(s *State) *int { return &s.Best }, maxInt) // the default
//		Worst = graph.Reduce(func(s *State) *int { return &s.Best }, minInt)
//	)
//	g := graph.New[State]().Handles(Worst) // this graph keeps the lowest
func (g *Graph[S]) Handles(handles ...Handle[S]) *Graph[S] {
	for i, h := range handles {
		if h == nil || h.handle() == nil {
			g.problem("Handles: handle %d is nil; pass handles made by graph.Replace, graph.Reduce, ...", i)
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
				errs = append(errs, invalid("field %s: Handles lists two handles that merge it differently (%s and %s); list one handle per field", f.name, o.reducer, f.reducer))
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

// checkReduce reports a write through a Reduce handle that a restart could
// not rebuild: one other than the graph's handle on the field whose
// function has no name, or shares its name with another function value
// declared on the field (closures of one function literal that capture
// different variables). Other Reduce writes are saved under their
// function's name and rebuilt with that function.
func (c *Compiled[S]) checkReduce(node string, u *Update[S]) error {
	for i, n := 0, u.ops.len(); i < n; i++ {
		f := u.ops.at(i)
		if f.fn == 0 {
			continue
		}
		h := c.handleOf(f.slot)
		if h.same(f) {
			continue
		}
		if f.fnName != "" {
			if g, _ := c.sch.reduceNamed(c.sch.list()[f.slot], f.fnName); g != nil && g.same(f) {
				continue
			}
		}
		return fmt.Errorf("graph: node %q writes field %s through a Reduce handle whose function (%s) a restart could not tell from another declared on the field, so the write could not be merged once saved; list the handle in the graph's Handles", node, f.name, orUnnamed(f.fnName))
	}
	return nil
}

func orUnnamed(name string) string {
	if name == "" {
		return "unnamed"
	}
	return name
}

// rebuild returns a handle that merges like the one a saved write was made
// with, named by the field's name, the handle's reducer and, for [Reduce],
// its function's name (empty in writes saved before the name was): the
// graph's handle on the field when it is that one, else the field's Reduce
// handle with that function, else one built for a built-in reducer.
func (c *Compiled[S]) rebuild(name, reducer, fnName string) (*fieldOps[S], error) {
	for i, s := range c.sch.list() {
		if s.name != name {
			continue
		}
		h := c.handleOf(i)
		if reducer == "reduce" && fnName != "" {
			if h.reducer == reducer && h.fnName == fnName {
				return h, nil
			}
			f, ambiguous := c.sch.reduceNamed(s, fnName)
			if f != nil {
				return f, nil
			}
			if ambiguous {
				return nil, fmt.Errorf("field %s was written through a Reduce handle with function %s, and this program declares several Reduce handles on the field with functions of that name; list the one to use in the graph's Handles", name, fnName)
			}
			return nil, fmt.Errorf("field %s was written through a Reduce handle with function %s, which this program does not declare on the field (this graph's handle on it merges by %s); declare graph.Reduce with that function before resuming", name, fnName, describe(h))
		}
		if h.reducer == reducer {
			return h, nil
		}
		if f := reflectOps[S](s, i, reducer); f != nil {
			return f, nil
		}
		return nil, fmt.Errorf("field %s was written through a %s handle, which this graph cannot rebuild (its handle on the field merges by %s); list the handle in the graph's Handles", name, reducer, h.reducer)
	}
	return nil, fmt.Errorf("no field handle of %s is declared on field %s; declare the handles before resuming", c.sch.typ, name)
}

// describe names how f merges, with a Reduce handle's function.
func describe[S any](f *fieldOps[S]) string {
	if f.fnName != "" {
		return f.reducer + " with function " + f.fnName
	}
	return f.reducer
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
	f := &fieldOps[S]{name: s.name, reducer: reducer, typ: t, offset: off, slot: n, replace: merge == nil, channel: s.name + "|" + reducer,
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
// the graph's handle on it ([Graph.Handles], else the field's default), the
// way the graph merges a thread's input: code that receives state edits as
// data (a JSON body naming the fields it sets, as an HTTP API does) turns
// them into an update for [Thread.Update] with it. Names are the fields'
// Go names, as [Field.Name] gives them. A name with no handle declared on
// it is an error naming the field and the fix.
func (c *Compiled[S]) UpdateOf(s S, fields ...string) (Update[S], error) {
	sch := c.sch
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
		h := c.handleOf(n)
		u.val = h.copy(u.val, s)
		u.set.add(n)
		u.ops.set(u.ops.len(), h)
	}
	return u, nil
}
