package react_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/operator"
)

// Two calls of one turn that each wait for the other to start finish under
// Invoke too (TestParallelCallsOneStep streams): a tool blocking does not
// hold back its sibling.
func TestParallelCallsWaitForEachOtherInvoke(t *testing.T) {
	ag := barrierAgent(t)
	s, err := ag.Invoke(context.Background(), react.Input("go"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Reply() != "2,4" {
		t.Fatalf("reply %q", s.Reply())
	}
}

// rawTool is a tool whose Call is fn.
type rawTool struct {
	name string
	fn   func() (*model.ToolResult, error)
}

func (t rawTool) Definition() model.ToolDef {
	return model.ToolDef{Name: t.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t rawTool) Call(context.Context, json.RawMessage) (*model.ToolResult, error) { return t.fn() }

// The results of calls without ids: a tool that panics, one that returns
// neither a result nor an error, and one that fails. Each result names its
// tool, and only the panic and the failure are errors.
func TestToolResultsOfCallsWithoutIDs(t *testing.T) {
	var seen []model.ToolResult
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("", "panics", `{}`), call("", "empty", `{}`), call("", "fails", `{}`)), nil
		}
		for _, msg := range req.Messages {
			for _, p := range msg.Parts {
				if p.ToolResult != nil {
					seen = append(seen, *p.ToolResult)
				}
			}
		}
		return answer("ok"), nil
	}}
	tools := []operator.Tool{
		rawTool{"panics", func() (*model.ToolResult, error) { panic("kaput") }},
		rawTool{"empty", func() (*model.ToolResult, error) { return nil, nil }},
		rawTool{"fails", func() (*model.ToolResult, error) { return nil, errBoom }},
	}
	ag, err := react.New(react.Config{Model: m, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Invoke(context.Background(), react.Input("go")); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Fatalf("%d results: %+v", len(seen), seen)
	}
	want := []struct {
		name, text string
		isErr      bool
	}{{"panics", "the tool failed: kaput", true}, {"empty", "", false}, {"fails", "the tool failed: " + errBoom.Error(), true}}
	for i, w := range want {
		r := seen[i]
		if r.Name != w.name || r.Text() != w.text || r.IsError != w.isErr {
			t.Errorf("result %d: %+v, want %s %q error=%v", i, r, w.name, w.text, w.isErr)
		}
	}
}
