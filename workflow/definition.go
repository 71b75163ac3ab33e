package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Definition is a plan: a goal and the steps that reach it. Its JSON form
// is the one a model writes:
//
//	{"goal": "...", "steps": [{"id": "step_1", "name": "Rewrite Query",
//	  "operator": "query_rewriter", "input_mapping": {"query": "{{user_query}}"},
//	  "depends_on": []}, ...]}
type Definition struct {
	// Goal says what the workflow is for.
	Goal string `json:"goal"`
	// Steps lists the steps. Their order gives their numbers in events
	// (the first step is 1); dependencies, not order, decide when each runs.
	Steps []Step `json:"steps"`
}

// Step is one operator call of a workflow.
type Step struct {
	// ID identifies the step within the workflow; templates refer to it.
	// Letters, digits, '_' and '-'.
	ID string `json:"id"`
	// Name is the human-readable name shown in events.
	Name string `json:"name"`
	// Operator names the operator the step runs.
	Operator string `json:"operator"`
	// InputMapping maps the operator's parameter names to templates: a
	// string ("{{step_1.output}}", "Compare {{step_2.results}}") or a list
	// of strings. A string that is exactly one template passes the
	// referenced value as it is; a template inside other text is rendered
	// as text. The "query" parameter, when it is a string, is the
	// operator's query; without one the operator gets the user's query.
	InputMapping map[string]any `json:"input_mapping,omitempty"`
	// DependsOn lists the ids of the steps that must succeed first.
	DependsOn []string `json:"depends_on,omitempty"`
}

// Parse decodes a definition from JSON, such as a model's answer. Text
// around the JSON object (a code fence, a sentence) is ignored. Parse
// does not validate; call [Definition.Validate] or [Compile].
func Parse(data []byte) (Definition, error) {
	var d Definition
	start, end := bytes.IndexByte(data, '{'), bytes.LastIndexByte(data, '}')
	if start < 0 || end < start {
		return d, fmt.Errorf("workflow: no JSON object in the definition %q", truncate(string(data), 80))
	}
	if err := json.Unmarshal(data[start:end+1], &d); err != nil {
		return d, fmt.Errorf("workflow: decoding the definition: %w", err)
	}
	return d, nil
}

// Operators is what validation needs to know about operators;
// *operator.Registry implements it.
type Operators interface {
	Has(name string) bool
	Names() []string
}

// Validate checks the definition and returns the first problem as a
// [*StepError] naming the step and the field, or a [*CycleError] naming the
// cycle: an empty or duplicate id, an unknown operator (when ops is not
// nil), a dependency on an unknown step, a cycle, a malformed template or a
// template referencing a step that is not among the step's dependencies.
func (d *Definition) Validate(ops Operators) error {
	if len(d.Steps) == 0 {
		return &StepError{Field: "steps", Reason: "is empty; a workflow needs at least one step"}
	}
	index := make(map[string]int, len(d.Steps))
	for i, s := range d.Steps {
		switch {
		case s.ID == "":
			return &StepError{Step: fmt.Sprintf("#%d", i+1), Field: "id", Reason: "is empty; give every step a unique id such as \"step_1\""}
		case !validID(s.ID):
			return &StepError{Step: s.ID, Field: "id", Reason: "may hold only letters, digits, '_' and '-'"}
		case s.ID == "user_query":
			return &StepError{Step: s.ID, Field: "id", Reason: "is reserved for the user's query in templates"}
		}
		if j, dup := index[s.ID]; dup {
			return &StepError{Step: s.ID, Field: "id", Reason: fmt.Sprintf("is used by steps %d and %d; ids must be unique", j+1, i+1)}
		}
		index[s.ID] = i
	}
	for _, s := range d.Steps {
		if s.Operator == "" {
			return &StepError{Step: s.ID, Field: "operator", Reason: "is empty; name the operator the step runs"}
		}
		if ops != nil && !ops.Has(s.Operator) {
			return &StepError{Step: s.ID, Field: "operator", Reason: fmt.Sprintf("%q is not registered; registered: %s", s.Operator, strings.Join(ops.Names(), ", "))}
		}
		for i, dep := range s.DependsOn {
			if _, ok := index[dep]; !ok {
				return &StepError{Step: s.ID, Field: "depends_on", Reason: fmt.Sprintf("names %q, which is not a step of the workflow", dep)}
			}
			if slices.Contains(s.DependsOn[:i], dep) {
				return &StepError{Step: s.ID, Field: "depends_on", Reason: fmt.Sprintf("names %q twice", dep)}
			}
		}
	}
	if cycle := findCycle(d.Steps, index); cycle != nil {
		return &CycleError{Cycle: cycle}
	}
	for _, s := range d.Steps {
		for _, param := range sortedKeys(s.InputMapping) {
			tmpls, err := templatesOf(s.InputMapping[param])
			if err != nil {
				return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: err.Error()}
			}
			for _, t := range tmpls {
				refs, err := parseTemplate(t)
				if err != nil {
					return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: err.Error()}
				}
				for _, r := range refs {
					if r.step == "" || slices.Contains(s.DependsOn, r.step) {
						continue
					}
					if _, ok := index[r.step]; ok {
						return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: fmt.Sprintf("uses {{%s}}, but %s is not among depends_on; add it there", r.text, r.step)}
					}
					return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: fmt.Sprintf("uses {{%s}}, which is neither user_query nor a step of the workflow", r.text)}
				}
			}
		}
	}
	return nil
}

func validID(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// findCycle returns the ids of a dependency cycle, first id repeated at the
// end, or nil.
func findCycle(steps []Step, index map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(steps))
	var path []int
	var visit func(i int) []string
	visit = func(i int) []string {
		color[i] = grey
		path = append(path, i)
		for _, dep := range steps[i].DependsOn {
			j := index[dep]
			switch color[j] {
			case grey:
				start := slices.Index(path, j)
				cycle := make([]string, 0, len(path)-start+1)
				for _, k := range path[start:] {
					cycle = append(cycle, steps[k].ID)
				}
				// path runs against the dependency arrows; report it in
				// the order the steps would have to run.
				// Rotate it to start at the step where it was found.
				slices.Reverse(cycle)
				k := slices.Index(cycle, steps[j].ID)
				cycle = append(cycle[k:], cycle[:k]...)
				return append(cycle, cycle[0])
			case white:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		color[i] = black
		return nil
	}
	for i := range steps {
		if color[i] == white {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
