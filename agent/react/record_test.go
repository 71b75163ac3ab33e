package react_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
)

// TestModelKeepsRequests: a model may keep the requests it is given (as
// llmtest's Model does, for Calls); the agent does not change a request
// once the model has it, so each recorded request is the call as it was
// made, whether the run is invoked or streamed.
func TestModelKeepsRequests(t *testing.T) {
	type pair struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add, err := operator.FuncTool("add", "adds a and b", func(_ context.Context, in pair) (int, error) { return in.A + in.B, nil })
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]func(*graph.Compiled[react.State]) error{
		"invoke": func(ag *graph.Compiled[react.State]) error {
			_, err := ag.Invoke(t.Context(), react.Input("what is 2+3?"))
			return err
		},
		"stream": func(ag *graph.Compiled[react.State]) error {
			for _, err := range ag.Stream(t.Context(), react.Input("what is 2+3?"), graph.WithModes(graph.StreamMessages)) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			m := llmtest.New(
				llmtest.ToolCalls(llmtest.ToolCall("call_1", "add", map[string]int{"a": 2, "b": 3})),
				llmtest.Text("5"))
			ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{add}, Instructions: "be brief"})
			if err != nil {
				t.Fatal(err)
			}
			if err := run(ag); err != nil {
				t.Fatal(err)
			}
			calls := m.Calls()
			if len(calls) != 2 {
				t.Fatalf("%d model calls, want 2", len(calls))
			}
			want := [][]model.Role{
				{model.RoleSystem, model.RoleUser},
				{model.RoleSystem, model.RoleUser, model.RoleAssistant, model.RoleTool},
			}
			for i, c := range calls {
				req := c.Request
				var roles []model.Role
				for _, msg := range req.Messages {
					roles = append(roles, msg.Role)
				}
				if !slices.Equal(roles, want[i]) {
					t.Errorf("call %d: request messages of roles %v, want %v", i, roles, want[i])
				}
				if len(req.Tools) != 1 || req.Tools[0].Name != "add" || len(req.Tools[0].Parameters) == 0 {
					t.Errorf("call %d: request tools %+v, want add with its parameters", i, req.Tools)
				}
				if len(req.Messages) >= 2 && (req.Messages[0].Text() != "be brief" || req.Messages[1].Text() != "what is 2+3?") {
					t.Errorf("call %d: request starts with %q, %q; want the instructions and the question", i,
						req.Messages[0].Text(), req.Messages[1].Text())
				}
			}
			if r := toolResults(calls[1].Request); len(r) != 1 || r["call_1"].Text() != "5" {
				t.Errorf("second call: tool results %+v, want call_1's result 5", r)
			}
		})
	}
}
