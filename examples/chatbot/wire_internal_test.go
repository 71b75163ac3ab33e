package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// The SDK's reports become the seed's wire events: an image's alt text in
// metadata.alt_text, a tool.start that says what the tool is called with,
// a timeout as error_type timeout, a failed workflow step as a tool.error
// then its step's end.
func TestToWire(t *testing.T) {
	tests := []struct {
		in   operator.Report
		want []string
	}{
		{operator.ToolStart{Tool: "calculate", Args: map[string]any{"expression": "2+2", "nested": map[string]any{}}},
			[]string{`tool.start {"tool":"calculate","message":"expression: 2+2"}`}},
		{operator.ToolStart{Tool: "self_info"}, []string{`tool.start {"tool":"self_info","message":"Starting..."}`}},
		{operator.ToolOutput{Tool: "chart", Content: toolresult.Content{MIMEType: "image/png", Data: "iVBO", AltText: "Bar chart of sales"}},
			[]string{`tool.content {"tool":"chart","content_type":"image/png","encoding":"base64","data":"iVBO","metadata":{"alt_text":"Bar chart of sales"}}`}},
		{operator.ToolOutput{Tool: "chart", Content: toolresult.Content{MIMEType: toolresult.MIMEWidget, Value: map[string]any{"widget_type": "chart"}}},
			[]string{`tool.content {"tool":"chart","content_type":"application/vnd.mcp.widget+json","data":{"widget_type":"chart"}}`}},
		{operator.ToolFailed{Tool: "web_search", Err: fmt.Errorf("mcp: %w", context.DeadlineExceeded)},
			[]string{`tool.error {"tool":"web_search","error":"mcp: context deadline exceeded","error_type":"timeout"}`}},
		{operator.ToolFailed{Tool: "calculate", Err: &operator.ResultError{Tool: "calculate", Message: "division by zero"}},
			[]string{`tool.error {"tool":"calculate","error":"division by zero","error_type":"execution"}`}},
		{workflow.StepEnd{Step: 2, ID: "b", Operator: "web_searcher", Status: workflow.Failed, Err: errors.New("offline")},
			[]string{`tool.error {"tool":"web_searcher","error":"offline","error_type":"execution"}`, `workflow.step.complete {"step":2,"status":"failed","error":"offline"}`}},
		{workflow.StepEnd{Step: 1, Status: workflow.Succeeded}, []string{`workflow.step.complete {"step":1}`}},
		{"not a report", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range toWire(tt.in) {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(p.EventType())+" "+string(b))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%T (-want +got):\n%s", tt.in, diff)
		}
	}
}
