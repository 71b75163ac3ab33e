package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Outcomes merge by step id, and a replacement never writes into the
// slice an earlier state holds.
func TestMergeSteps(t *testing.T) {
	ids := func(rs []StepResult) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID+":"+string(r.Status))
		}
		return out
	}
	old := make([]StepResult, 2, 8)
	old[0] = StepResult{ID: "a", Status: Succeeded}
	old[1] = StepResult{ID: "b", Status: Failed}
	tests := []struct {
		name string
		new  []StepResult
		want []string
	}{
		{"nothing", nil, []string{"a:succeeded", "b:failed"}},
		{"new step", []StepResult{{ID: "c", Status: Succeeded}}, []string{"a:succeeded", "b:failed", "c:succeeded"}},
		{"replaced", []StepResult{{ID: "b", Status: Succeeded}}, []string{"a:succeeded", "b:succeeded"}},
		{"both", []StepResult{{ID: "c", Status: Skipped}, {ID: "b", Status: Succeeded}}, []string{"a:succeeded", "b:succeeded", "c:skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(mergeSteps(old, tt.new))); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"a:succeeded", "b:failed"}, ids(old)); diff != "" {
				t.Errorf("the earlier state changed (-want +got):\n%s", diff)
			}
		})
	}
}
