package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/operator"
)

// ref is one {{...}} of a template.
type ref struct {
	text     string   // the text between the braces, trimmed
	step     string   // the step id, or "" for user_query
	path     []string // the field path; empty or ["output"] means the whole output
	from, to int      // the byte range of {{...}} in the template
}

// templatesOf returns the template strings of an input mapping value: a
// string, or a list of strings.
func templatesOf(v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("item %d is a %T; list items must be template strings", i, e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("is a %T; use a template string or a list of them", v)
}

// parseTemplate finds the references of a template.
func parseTemplate(t string) ([]ref, error) {
	var refs []ref
	for off := 0; ; {
		i := strings.Index(t[off:], "{{")
		if i < 0 {
			if j := strings.Index(t[off:], "}}"); j >= 0 {
				return nil, fmt.Errorf("%q has a \"}}\" at byte %d without an opening \"{{\"", t, off+j)
			}
			return refs, nil
		}
		i += off
		j := strings.Index(t[i+2:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("%q has a \"{{\" at byte %d that is never closed with \"}}\"", t, i)
		}
		j += i + 2
		text := strings.TrimSpace(t[i+2 : j])
		r, err := parseRef(text)
		if err != nil {
			return nil, fmt.Errorf("%q at byte %d: %v", t, i, err)
		}
		r.from, r.to = i, j+2
		refs = append(refs, r)
		off = j + 2
	}
}

func parseRef(text string) (ref, error) {
	if text == "user_query" {
		return ref{text: text}, nil
	}
	parts := strings.Split(text, ".")
	for _, p := range parts {
		if p == "" || !validID(p) {
			return ref{}, fmt.Errorf("{{%s}} is not of the form {{user_query}}, {{STEP.output}} or {{STEP.FIELD}}", text)
		}
	}
	if len(parts) < 2 {
		return ref{}, fmt.Errorf("{{%s}} names no field; write {{%s.output}} for the whole output", text, text)
	}
	return ref{text: text, step: parts[0], path: parts[1:]}, nil
}

// template is a parsed template string.
type template struct {
	text string
	refs []ref
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
	for _, name := range sortedKeys(m) {
		texts, err := templatesOf(m[name])
		if err != nil {
			return nil, err
		}
		in := input{name: name, tmpls: make([]template, len(texts))}
		_, isString := m[name].(string)
		in.list = !isString
		for i, t := range texts {
			refs, err := parseTemplate(t)
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
	refs, err := parseTemplate(t)
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
	if len(refs) == 1 && refs[0].from == 0 && refs[0].to == len(t) {
		return lookup(refs[0], query, outputs)
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		v, err := lookup(r, query, outputs)
		if err != nil {
			return nil, err
		}
		b.WriteString(t[last:r.from])
		b.WriteString(operator.Text(v))
		last = r.to
	}
	b.WriteString(t[last:])
	return b.String(), nil
}

func lookup(r ref, query string, outputs map[string]any) (any, error) {
	if r.step == "" {
		return query, nil
	}
	v, ok := outputs[r.step]
	if !ok {
		return nil, fmt.Errorf("{{%s}}: step %s has no output", r.text, r.step)
	}
	path := r.path
	if len(path) > 0 && path[0] == "output" {
		path = path[1:]
	}
	for i, field := range path {
		m, ok := asMap(v)
		if !ok {
			return nil, fmt.Errorf("{{%s}}: the output of %s at %q is a %T, not an object with field %q", r.text, r.step, strings.Join(path[:i], "."), v, field)
		}
		fv, ok := m[field]
		if !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, fmt.Errorf("{{%s}}: the output of %s has no field %q; it has: %s", r.text, r.step, field, strings.Join(keys, ", "))
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
