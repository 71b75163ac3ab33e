package plan_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/operator/plan"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// validates without panicking.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"goal":"g","steps":[{"id":"a","operator":"x","input_mapping":{"q":["{{user_query}}"]},"depends_on":["a"]}]}`))
	f.Add([]byte("```json\n{\"steps\":[]}\n```"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := plan.Parse(data)
		if err != nil {
			return
		}
		_ = d.Validate(nil)
	})
}
