package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Plan is a goal and the steps that reach it. Its JSON form is the one a
// model writes:
//
//	{"goal": "...", "steps": [{"id": "step_1", "name": "Rewrite Query",
//	  "operator": "query_rewriter", "input_mapping": {"query": "{{user_query}}"},
//	  "depends_on": []}, ...]}
type Plan struct {
	// Goal says what the plan is for.
	Goal string `json:"goal" jsonschema:"description=What the workflow achieves"`
	// Steps lists the steps. Their order gives their numbers in events
	// (the first step is 1); dependencies, not order, decide when each runs.
	Steps []Step `json:"steps" jsonschema:"minItems=1"`
}

// Step is one operator call of a plan.
type Step struct {
	// ID identifies the step within the plan; templates refer to it.
	// Letters, digits, '_' and '-'; "user_query" is reserved.
	ID string `json:"id" jsonschema:"description=Unique step id such as step_1; letters digits _ and -"`
	// Name is the human-readable name shown in progress events.
	Name string `json:"name" jsonschema:"description=Short human-readable step name"`
	// Operator names the operator the step runs.
	Operator string `json:"operator" jsonschema:"description=The operator this step runs"`
	// InputMapping maps the operator's parameter names to templates: a
	// string ("{{step_1.output}}", "Compare {{step_2.results}}") or a list
	// of strings. A string that is exactly one template passes the
	// referenced value as it is; a template inside other text is rendered
	// as text. The "query" parameter, when it is a string, is the
	// operator's query; without one the operator gets the user's query.
	InputMapping map[string]any `json:"input_mapping,omitempty" jsonschema:"description=Operator inputs: templates like {{user_query}} or {{step_1.output}} or lists of them; a step may read only the steps in its depends_on"`
	// DependsOn lists the ids of the steps that must succeed first. Steps
	// whose dependencies are done run in parallel.
	DependsOn []string `json:"depends_on,omitempty" jsonschema:"description=Ids of steps that must finish first; list every step whose output a template reads"`
}

// Parse decodes a plan from JSON, such as a model's answer. Text around
// the JSON object (a code fence, a sentence) is ignored. Parse does not
// validate; call [Plan.Validate].
func Parse(data []byte) (Plan, error) {
	var p Plan
	start, end := bytes.IndexByte(data, '{'), bytes.LastIndexByte(data, '}')
	if start < 0 || end < start {
		return p, fmt.Errorf("plan: no JSON object in %q; write the plan as a JSON object with goal and steps", truncate(string(data), 80))
	}
	if err := json.Unmarshal(data[start:end+1], &p); err != nil {
		return p, fmt.Errorf("plan: decoding the plan: %w", err)
	}
	return p, nil
}

// Operators is what validation needs to know about the operators a plan
// may run; *operator.Registry implements it.
type Operators interface {
	// Has reports whether an operator of that name exists.
	Has(name string) bool
	// Names lists the operators' names, for the error naming an unknown one.
	Names() []string
}

// Validate checks the plan against the rules of its executor and returns
// the first problem as a [*StepError] naming the step and the field, or a
// [*CycleError] naming the cycle: no steps, an empty, malformed, reserved
// ("user_query") or duplicate id, an empty operator or one ops does not
// have (when ops is not nil), a dependency on an unknown step or the same
// one twice, a cycle, a malformed template, or a template reading a step
// that is not among the step's dependencies. Every error matches
// [ErrInvalid].
func (p Plan) Validate(ops Operators) error {
	if len(p.Steps) == 0 {
		return &StepError{Field: "steps", Reason: "is empty; a plan needs at least one step"}
	}
	index := make(map[string]int, len(p.Steps))
	for i, s := range p.Steps {
		switch {
		case s.ID == "":
			return &StepError{Step: fmt.Sprintf("#%d", i+1), Field: "id", Reason: "is empty; give every step a unique id such as \"step_1\""}
		case !validID(s.ID):
			return &StepError{Step: s.ID, Field: "id", Reason: "may hold only letters, digits, '_' and '-'"}
		case s.ID == userQuery:
			return &StepError{Step: s.ID, Field: "id", Reason: "is reserved for the user's query in templates; rename the step, such as \"step_1\""}
		}
		if j, dup := index[s.ID]; dup {
			return &StepError{Step: s.ID, Field: "id", Reason: fmt.Sprintf("is used by steps %d and %d; ids must be unique", j+1, i+1)}
		}
		index[s.ID] = i
	}
	for _, s := range p.Steps {
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
				return &StepError{Step: s.ID, Field: "depends_on", Reason: fmt.Sprintf("names %q twice; list each dependency once", dep)}
			}
		}
	}
	if cycle := findCycle(p.Steps, index); cycle != nil {
		return &CycleError{Cycle: cycle}
	}
	for _, s := range p.Steps {
		for _, param := range slices.Sorted(maps.Keys(s.InputMapping)) {
			tmpls, err := Templates(s.InputMapping[param])
			if err != nil {
				return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: err.Error()}
			}
			for _, t := range tmpls {
				refs, err := ParseTemplate(t)
				if err != nil {
					return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: err.Error()}
				}
				for _, r := range refs {
					if r.Step == "" || slices.Contains(s.DependsOn, r.Step) {
						continue
					}
					if _, ok := index[r.Step]; ok {
						return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: fmt.Sprintf("uses {{%s}}, but %s is not among depends_on; add it there", r.Text, r.Step)}
					}
					return &StepError{Step: s.ID, Field: "input_mapping." + param, Reason: fmt.Sprintf("uses {{%s}}, which is neither user_query nor a step of the workflow", r.Text)}
				}
			}
		}
	}
	return nil
}

// Leaves returns the ids of the steps that no other step depends on, in
// plan order: those whose outcomes are the plan's outcome.
func (p Plan) Leaves() []string {
	used := make(map[string]bool, len(p.Steps))
	for _, st := range p.Steps {
		for _, dep := range st.DependsOn {
			used[dep] = true
		}
	}
	var ids []string
	for _, st := range p.Steps {
		if !used[st.ID] {
			ids = append(ids, st.ID)
		}
	}
	return ids
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
				// the order the steps would have to run, starting at the
				// step where it was found.
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
