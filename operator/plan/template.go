package plan

import (
	"fmt"
	"strings"
)

// userQuery is the reference to the user's query, {{user_query}}.
const userQuery = "user_query"

// Ref is one {{...}} reference of a template.
type Ref struct {
	// Text is the text between the braces, trimmed: "user_query",
	// "step_1.output", "step_2.results".
	Text string
	// Step is the id of the step referenced, or "" for {{user_query}}.
	Step string
	// Path is the field path into the step's output; empty or ["output"]
	// means the whole output.
	Path []string
	// From and To are the byte range of {{...}} in the template.
	From, To int
}

// Templates returns the template strings of an input mapping value: a
// string, or a list of strings ([]string or []any holding strings, as JSON
// decodes it).
func Templates(v any) ([]string, error) {
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

// ParseTemplate returns the references of a template in the order they
// appear. It fails on an unbalanced "{{" or "}}" and on a reference that
// is neither {{user_query}} nor {{STEP.FIELD...}}.
func ParseTemplate(t string) ([]Ref, error) {
	var refs []Ref
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
		r.From, r.To = i, j+2
		refs = append(refs, r)
		off = j + 2
	}
}

func parseRef(text string) (Ref, error) {
	if text == userQuery {
		return Ref{Text: text}, nil
	}
	parts := strings.Split(text, ".")
	for _, p := range parts {
		if p == "" || !validID(p) {
			return Ref{}, fmt.Errorf("{{%s}} is not of the form {{user_query}}, {{STEP.output}} or {{STEP.FIELD}}", text)
		}
	}
	if len(parts) < 2 {
		return Ref{}, fmt.Errorf("{{%s}} names no field; write {{%s.output}} for the whole output", text, text)
	}
	return Ref{Text: text, Step: parts[0], Path: parts[1:]}, nil
}
