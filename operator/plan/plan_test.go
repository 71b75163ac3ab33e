package plan_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/operator/plan"
	"github.com/google/go-cmp/cmp"
)

type names []string

func (n names) Has(name string) bool { return slices.Contains(n, name) }
func (n names) Names() []string      { return n }

func TestValidate(t *testing.T) {
	ops := names{"a", "b"}
	tests := []struct {
		name  string
		steps []plan.Step
		want  string // "" for valid
	}{
		{"valid", []plan.Step{
			{ID: "s1", Operator: "a", InputMapping: map[string]any{"q": "{{user_query}}"}},
			{ID: "s2", Operator: "b", DependsOn: []string{"s1"}, InputMapping: map[string]any{"q": []any{"{{s1.output}}", "see {{s1.text}}"}}},
		}, ""},
		{"no steps", nil, "plan: steps is empty; a plan needs at least one step"},
		{"reserved id", []plan.Step{{ID: "user_query", Operator: "a"}},
			`plan: step user_query: id is reserved for the user's query in templates; rename the step, such as "step_1"`},
		{"template reads a step it does not depend on", []plan.Step{
			{ID: "a", Operator: "a"},
			{ID: "b", Operator: "b", InputMapping: map[string]any{"q": "{{a.output}}"}},
		}, "plan: step b: input_mapping.q uses {{a.output}}, but a is not among depends_on; add it there"},
		{"duplicate dependency", []plan.Step{
			{ID: "a", Operator: "a"},
			{ID: "b", Operator: "b", DependsOn: []string{"a", "a"}},
		}, `plan: step b: depends_on names "a" twice; list each dependency once`},
		{"unknown operator", []plan.Step{{ID: "s1", Operator: "nope"}},
			`plan: step s1: operator "nope" is not registered; registered: a, b`},
		{"malformed id", []plan.Step{{ID: "c d", Operator: "a"}},
			"plan: step c d: id may hold only letters, digits, '_' and '-'"},
		{"cycle", []plan.Step{
			{ID: "s1", Operator: "a", DependsOn: []string{"s2"}},
			{ID: "s2", Operator: "a", DependsOn: []string{"s1"}},
		}, "plan: dependency cycle s1 -> s2 -> s1; remove one of its depends_on entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := plan.Plan{Goal: "g", Steps: tt.steps}.Validate(ops)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Validate() = %v, want %s", err, tt.want)
			}
			if !errors.Is(err, plan.ErrInvalid) {
				t.Errorf("Validate() = %v, does not match ErrInvalid", err)
			}
		})
	}
}

func TestValidateNilOperators(t *testing.T) {
	p := plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "anything"}}}
	if err := p.Validate(nil); err != nil {
		t.Fatalf("Validate(nil) = %v, want nil: without operators the names are not checked", err)
	}
}

func TestParse(t *testing.T) {
	p, err := plan.Parse([]byte("Here is the plan:\n```json\n" +
		`{"goal":"g","steps":[{"id":"s1","name":"S","operator":"a","input_mapping":{"q":"{{user_query}}"}},` +
		`{"id":"s2","operator":"b","depends_on":["s1"]}]}` + "\n```"))
	if err != nil {
		t.Fatal(err)
	}
	want := plan.Plan{Goal: "g", Steps: []plan.Step{
		{ID: "s1", Name: "S", Operator: "a", InputMapping: map[string]any{"q": "{{user_query}}"}},
		{ID: "s2", Operator: "b", DependsOn: []string{"s1"}},
	}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("Parse() (-want +got):\n%s", diff)
	}
	if _, err := plan.Parse([]byte("no plan here")); err == nil {
		t.Error("Parse(no object) = nil error")
	}
	if got := p.Leaves(); !slices.Equal(got, []string{"s2"}) {
		t.Errorf("Leaves() = %v, want [s2]", got)
	}
}

func TestParseTemplate(t *testing.T) {
	refs, err := plan.ParseTemplate("Compare {{ s1.results }} with {{user_query}}")
	if err != nil {
		t.Fatal(err)
	}
	want := []plan.Ref{
		{Text: "s1.results", Step: "s1", Path: []string{"results"}, From: 8, To: 24},
		{Text: "user_query", From: 30, To: 44},
	}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("ParseTemplate() (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"{{s1}}", "{{s1.output", "s1.output}}", "{{a b.c}}"} {
		if _, err := plan.ParseTemplate(bad); err == nil {
			t.Errorf("ParseTemplate(%q) = nil error", bad)
		}
	}
}

func ExamplePlan_Validate() {
	p := plan.Plan{Goal: "summarise", Steps: []plan.Step{
		{ID: "search", Operator: "web_search", InputMapping: map[string]any{"query": "{{user_query}}"}},
		{ID: "summary", Operator: "summarizer", InputMapping: map[string]any{"text": "{{search.output}}"}},
	}}
	fmt.Println(p.Validate(nil))
	// Output:
	// plan: step summary: input_mapping.text uses {{search.output}}, but search is not among depends_on; add it there
}

// A plan with a dependency cycle is rejected with an error naming the
// cycle, which can go back to the model.
func ExamplePlan_Validate_cycle() {
	p := plan.Plan{Goal: "loop", Steps: []plan.Step{
		{ID: "a", Operator: "x", DependsOn: []string{"b"}},
		{ID: "b", Operator: "x", DependsOn: []string{"a"}},
	}}
	fmt.Println(p.Validate(nil))
	// Output: plan: dependency cycle a -> b -> a; remove one of its depends_on entries
}
