package graph

import (
	"fmt"
	"strings"
)

// UpdateOf returns an update that writes the named fields of s, each through
// the first handle declared on it, the way a thread's input merges: code that
// receives state edits as data (a JSON body naming the fields it sets, as an
// HTTP API does) turns them into an update for [Thread.Update] with it.
// Names are the fields' Go names, as [Field.Name] gives them. A name with no
// handle declared on it is an error naming the field and the fix.
func UpdateOf[S any](s S, fields ...string) (Update[S], error) {
	sch := schemaOf[S]()
	list := sch.list()
	u := Update[S]{sch: sch}
	for _, name := range fields {
		var h *fieldOps[S]
		for _, f := range list {
			if f.name == name && f.slot == f.bit {
				h = f
				break
			}
		}
		if h == nil {
			var known []string
			for _, f := range list {
				if f.slot == f.bit {
					known = append(known, f.name)
				}
			}
			return Update[S]{}, fmt.Errorf("graph: no handle is declared on field %q of %s; declare one (graph.Replace, graph.Append, ...) to write it (fields with handles: %s)",
				name, sch.typ, strings.Join(known, ", "))
		}
		u.val = h.copy(u.val, s)
		u.set.remove(h.alias)
		u.set.add(h.bit)
	}
	return u, nil
}
