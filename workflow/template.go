package workflow

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/plan"
)

// template is a parsed template string.
type template struct {
	text string
	refs []plan.Ref
}

// input is a parsed input mapping entry: one template, or a list.
type input struct {
	name  string
	list  bool
	tmpls []template
}

// compileMapping parses a step's input mapping; it has been validated.
func compileMapping(m map[string]any) ([]input, error) {
	var out []input
	for _, name := range slices.Sorted(maps.Keys(m)) {
		texts, err := plan.Templates(m[name])
		if err != nil {
			return nil, err
		}
		in := input{name: name, tmpls: make([]template, len(texts))}
		_, isString := m[name].(string)
		in.list = !isString
		for i, t := range texts {
			refs, err := plan.ParseTemplate(t)
			if err != nil {
				return nil, err
			}
			in.tmpls[i] = template{text: t, refs: refs}
		}
		out = append(out, in)
	}
	return out, nil
}

// resolve resolves an input against the query and the outputs of the
// step's dependencies.
func (in input) resolve(query string, outputs map[string]any) (any, error) {
	if !in.list {
		return in.tmpls[0].resolve(query, outputs)
	}
	out := make([]any, len(in.tmpls))
	for i, t := range in.tmpls {
		v, err := t.resolve(query, outputs)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// resolveString parses and resolves one template.
func resolveString(t, query string, outputs map[string]any) (any, error) {
	refs, err := plan.ParseTemplate(t)
	if err != nil {
		return nil, err
	}
	return template{text: t, refs: refs}.resolve(query, outputs)
}

// resolve fills in the template. A template that is exactly one reference
// yields the referenced value itself.
func (tp template) resolve(query string, outputs map[string]any) (any, error) {
	t, refs := tp.text, tp.refs
	if len(refs) == 0 {
		return t, nil
	}
	if len(refs) == 1 && refs[0].From == 0 && refs[0].To == len(t) {
		return lookup(refs[0], query, outputs)
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		v, err := lookup(r, query, outputs)
		if err != nil {
			return nil, err
		}
		b.WriteString(t[last:r.From])
		b.WriteString(operator.Text(v))
		last = r.To
	}
	b.WriteString(t[last:])
	return b.String(), nil
}

func lookup(r plan.Ref, query string, outputs map[string]any) (any, error) {
	if r.Step == "" {
		return query, nil
	}
	v, ok := outputs[r.Step]
	if !ok {
		return nil, fmt.Errorf("{{%s}}: step %s has no output", r.Text, r.Step)
	}
	path := r.Path
	if len(path) > 0 && path[0] == "output" {
		path = path[1:]
	}
	for i, field := range path {
		m, ok := asMap(v)
		if !ok {
			return nil, fmt.Errorf("{{%s}}: the output of %s at %q is a %T, not an object with field %q", r.Text, r.Step, strings.Join(path[:i], "."), v, field)
		}
		fv, ok := m[field]
		if !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, fmt.Errorf("{{%s}}: the output of %s has no field %q; it has: %s", r.Text, r.Step, field, strings.Join(keys, ", "))
		}
		v = fv
	}
	return v, nil
}

// asMap views v as an object: a map, a struct (through JSON), or a string
// holding a JSON object (as models often answer).
func asMap(v any) (map[string]any, bool) {
	switch v := v.(type) {
	case map[string]any:
		return v, true
	case nil:
		return nil, false
	case string:
		s := strings.TrimSpace(v)
		if start, end := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); start >= 0 && end > start {
			var m map[string]any
			if json.Unmarshal([]byte(s[start:end+1]), &m) == nil {
				return m, true
			}
		}
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil, false
	}
	return m, true
}
