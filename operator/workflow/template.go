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

// resolver resolves the templates of one step's inputs against the
// user's query and the outputs of the step's dependencies. It keeps each
// object it parses out of an output (a string holding JSON, a struct), so
// that an output read by many references is parsed once, and it bounds
// the bytes the step's inputs render together.
type resolver struct {
	query   string
	outputs map[string]any
	// maxBytes bounds the size of the step's inputs together; 0 means
	// no bound.
	maxBytes int
	// objects holds the objects parsed so far, keyed by the step and the
	// path of the value in its output; ok is false for a value that is
	// not an object. It holds at most one entry per distinct path prefix
	// of the step's references.
	objects map[string]parsed
	// texts holds the text (operator.Text) of each non-string value
	// referenced so far, keyed as objects, so that a value read by many
	// references is rendered once; it holds at most one entry per
	// distinct reference of the step.
	texts map[string]string
	// used counts the bytes of the step's inputs resolved so far.
	used int
}

// parsed is a value viewed as an object by asMap.
type parsed struct {
	m  map[string]any
	ok bool
}

// errInputSize is the error of an input larger than the bound.
type errInputSize struct{ limit int }

func (e errInputSize) Error() string {
	return fmt.Sprintf("resolves to more than %d bytes, the limit of a step's inputs together (Config.MaxInputBytes); reference a field of the output rather than the whole of it, use fewer references, or raise the limit", e.limit)
}

// resolve resolves an input.
func (in input) resolve(r *resolver) (any, error) {
	if !in.list {
		return in.tmpls[0].resolve(r)
	}
	out := make([]any, len(in.tmpls))
	for i, t := range in.tmpls {
		v, err := t.resolve(r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// refs returns the number of references of the input, over a list's items.
func (in input) refs() int {
	n := 0
	for _, t := range in.tmpls {
		n += len(t.refs)
	}
	return n
}

// resolveString parses and resolves one template, without a size bound.
func resolveString(t, query string, outputs map[string]any) (any, error) {
	refs, err := plan.ParseTemplate(t)
	if err != nil {
		return nil, err
	}
	return template{text: t, refs: refs}.resolve(&resolver{query: query, outputs: outputs})
}

// grow counts n more bytes of the step's inputs, failing past the bound.
func (r *resolver) grow(n int) error {
	r.used += n
	if r.maxBytes > 0 && r.used > r.maxBytes {
		return errInputSize{limit: r.maxBytes}
	}
	return nil
}

// resolve fills in the template. A template that is exactly one reference
// yields the referenced value itself; it counts towards the inputs' size
// by its length when it is a string and by the length of its text (JSON)
// otherwise, as every encoding of the inputs (a checkpoint) writes it.
func (tp template) resolve(r *resolver) (any, error) {
	t, refs := tp.text, tp.refs
	if len(refs) == 0 {
		return t, r.grow(len(t))
	}
	if len(refs) == 1 && refs[0].From == 0 && refs[0].To == len(t) {
		v, err := r.lookup(refs[0])
		if err != nil {
			return nil, err
		}
		if err := r.grow(len(r.text(refs[0], v))); err != nil {
			return nil, err
		}
		return v, nil
	}
	var b strings.Builder
	last := 0
	for _, ref := range refs {
		v, err := r.lookup(ref)
		if err != nil {
			return nil, err
		}
		text := r.text(ref, v)
		if err := r.grow(ref.From - last + len(text)); err != nil {
			return nil, err
		}
		b.WriteString(t[last:ref.From])
		b.WriteString(text)
		last = ref.To
	}
	if err := r.grow(len(t) - last); err != nil {
		return nil, err
	}
	b.WriteString(t[last:])
	return b.String(), nil
}

// text returns operator.Text(v) for v, the value of ref, rendering a
// non-string value once per step and path.
func (r *resolver) text(ref plan.Ref, v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	key := ref.Step + "." + strings.Join(ref.Path, ".")
	if t, ok := r.texts[key]; ok {
		return t
	}
	t := operator.Text(v)
	if r.texts == nil {
		r.texts = make(map[string]string)
	}
	r.texts[key] = t
	return t
}

func (r *resolver) lookup(ref plan.Ref) (any, error) {
	if ref.Step == "" {
		return r.query, nil
	}
	v, ok := r.outputs[ref.Step]
	if !ok {
		return nil, fmt.Errorf("{{%s}}: step %s has no output", ref.Text, ref.Step)
	}
	path := ref.Path
	if len(path) > 0 && path[0] == "output" {
		path = path[1:]
	}
	for i, field := range path {
		m, ok := r.object(v, ref.Step, path[:i])
		if !ok {
			return nil, fmt.Errorf("{{%s}}: the output of %s at %q is a %T, not an object with field %q", ref.Text, ref.Step, strings.Join(path[:i], "."), v, field)
		}
		fv, ok := m[field]
		if !ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return nil, fmt.Errorf("{{%s}}: the output of %s has no field %q; it has: %s", ref.Text, ref.Step, field, strings.Join(keys, ", "))
		}
		v = fv
	}
	return v, nil
}

// object views v, the value at path in step's output, as an object,
// parsing it at most once per resolver.
func (r *resolver) object(v any, step string, path []string) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	key := step + "." + strings.Join(path, ".")
	if p, ok := r.objects[key]; ok {
		return p.m, p.ok
	}
	m, ok := asMap(v)
	if r.objects == nil {
		r.objects = make(map[string]parsed)
	}
	r.objects[key] = parsed{m, ok}
	return m, ok
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
