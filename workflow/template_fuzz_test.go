package workflow

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/operator/plan"
)

// FuzzTemplate checks that any template either fails validation with a
// StepError or resolves without panicking, and that a template without
// braces resolves to itself.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{{user_query}}", "{{s1.output}}", "a {{s1.x.y}} b {{user_query}}", "{{", "}}", "{{ s1.x }}", "{{s1}}", "{{}}", "{{s1..x}}", "x"} {
		f.Add(s)
	}
	outputs := map[string]any{"s1": map[string]any{"x": map[string]any{"y": "deep"}, "output": "o"}}
	f.Fuzz(func(t *testing.T, tmpl string) {
		d := plan.Plan{Steps: []plan.Step{{ID: "s1", Operator: "op"}, {ID: "s2", Operator: "op", DependsOn: []string{"s1"},
			InputMapping: map[string]any{"q": tmpl}}}}
		if err := d.Validate(nil); err != nil {
			if _, ok := err.(*plan.StepError); !ok {
				t.Fatalf("Validate(%q) = %T %v, want a *StepError", tmpl, err, err)
			}
			return
		}
		v, err := resolveString(tmpl, "query", outputs)
		if err == nil && !strings.Contains(tmpl, "{{") {
			if v != tmpl {
				t.Fatalf("resolve(%q) = %v, want the text unchanged", tmpl, v)
			}
		}
	})
}
