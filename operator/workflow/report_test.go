package workflow_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentgraph/agentgraph/operator/workflow"
)

// A StepEnd streamed as a custom event is JSON-encoded: its error must
// arrive as its message, not as an empty object.
func TestStepEndJSON(t *testing.T) {
	b, err := json.Marshal(workflow.StepEnd{Step: 2, ID: "fetch", Operator: "search", Status: workflow.Failed, Err: errors.New("search: the index is down")})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["error"] != "search: the index is down" || got["step"] != 2.0 || got["id"] != "fetch" || got["status"] != string(workflow.Failed) {
		t.Errorf("StepEnd JSON = %s, want the error's message under \"error\"", b)
	}
	b, _ = json.Marshal(workflow.StepEnd{Step: 1, Status: workflow.Succeeded})
	got = nil
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["error"]; ok {
		t.Errorf("StepEnd JSON without an error = %s, want no \"error\"", b)
	}
}
