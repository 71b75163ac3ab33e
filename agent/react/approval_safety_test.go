package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

// recordTool records the arguments of each of its runs.
type recordTool struct {
	mu   *sync.Mutex
	args *[]string
}

func newRecordTool() recordTool { return recordTool{mu: new(sync.Mutex), args: new([]string)} }

func (t recordTool) Definition() model.ToolDef {
	return model.ToolDef{Name: "send", Description: "Send a message.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}}}`)}
}

func (t recordTool) Call(_ context.Context, args json.RawMessage) (*model.ToolResult, error) {
	t.mu.Lock()
	*t.args = append(*t.args, string(args))
	t.mu.Unlock()
	return &model.ToolResult{Content: []model.Part{model.TextPart("sent")}}, nil
}

func (t recordTool) ran() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), *t.args...)
}

// pausedReview returns the review of the run's single interrupt.
func pausedReview(t *testing.T, err error) react.Review {
	t.Helper()
	var ie *graph.InterruptError
	if !errors.As(err, &ie) || len(ie.Interrupts) != 1 {
		t.Fatalf("err %v, want one interrupt", err)
	}
	var rv react.Review
	if err := ie.Interrupts[0].Decode(&rv); err != nil {
		t.Fatal(err)
	}
	return rv
}

type parent struct {
	Q string
	A string
}

// An agent run as a subgraph without a checkpointer of its own runs again
// from its input on resume, and its model proposes anew: a decision about
// the call the reviewer saw does not run another call of the same id. The
// run pauses again with the new proposal, whose approval runs it.
func TestApprovalSubgraphProposedAnew(t *testing.T) {
	for _, id2 := range []string{"s1", "s2"} {
		t.Run("second id "+id2, func(t *testing.T) {
			m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
				if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
					return answer("done"), nil
				}
				if n == 0 {
					return calls(call("s1", "send", `{"to":"bob"}`)), nil
				}
				return calls(call(id2, "send", `{"to":"eve"}`)), nil
			}}
			tool := newRecordTool()
			ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{tool}, Approve: []string{"send"}})
			if err != nil {
				t.Fatal(err)
			}
			g := graph.New[parent]()
			graph.AddSubgraph(g, "agent", ag, func(p parent) react.State { return react.Input(p.Q) },
				func(s react.State) graph.Update[parent] {
					return graph.Replace(func(p *parent) *string { return &p.A }).Set(s.Reply())
				})
			g.AddEdge(graph.START, "agent").AddEdge("agent", graph.END)
			app, err := g.Compile(graph.WithCheckpointer(checkpoint.NewMemory()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, th := context.Background(), app.Thread("t")
			_, err = th.Invoke(ctx, parent{Q: "mail"})
			rv := pausedReview(t, err)
			if string(rv.Calls[0].Arguments) != `{"to":"bob"}` {
				t.Fatalf("first review %+v", rv)
			}
			_, err = th.Invoke(ctx, parent{}, graph.Resume([]react.Decision{react.Approve(rv.Calls[0])}))
			if ran := tool.ran(); len(ran) != 0 {
				t.Fatalf("send ran with %q on the approval of {\"to\":\"bob\"}", ran)
			}
			rv2 := pausedReview(t, err)
			if rv2.Calls[0].ID != id2 || string(rv2.Calls[0].Arguments) != `{"to":"eve"}` {
				t.Fatalf("second review %+v, want the call proposed anew", rv2)
			}
			out, err := th.Invoke(ctx, parent{}, graph.Resume([]react.Decision{react.Approve(rv2.Calls[0])}))
			if err != nil {
				t.Fatal(err)
			}
			if ran := tool.ran(); len(ran) != 1 || ran[0] != `{"to":"eve"}` || out.A != "done" {
				t.Fatalf("send ran with %q, reply %q; want eve once", ran, out.A)
			}
		})
	}
}

// Decisions that do not fit the review fail the resume with an error naming
// the calls at fault and the proposed ones; nothing runs and the thread
// stays paused, so a right resume goes on.
func TestApprovalWrongDecisions(t *testing.T) {
	m := &scripted{reply: func(_ int, req *model.Request) (*model.Response, error) {
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			return answer("done"), nil
		}
		return calls(call("s1", "send", `{"to":"bob"}`)), nil
	}}
	tool := newRecordTool()
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{tool}, Approve: []string{"send"}, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("wrong")
	_, err = ag.Invoke(ctx, react.Input("mail bob"))
	rv := pausedReview(t, err)
	good := react.Approve(rv.Calls[0])
	for _, tc := range []struct {
		name   string
		resume any
		want   []string
	}{
		{"unknown id", []react.Decision{{CallID: "c9", Fingerprint: good.Fingerprint, Action: react.ActionApprove}}, []string{`"c9"`, `proposed calls are "s1"`}},
		{"no fingerprint", []react.Decision{{CallID: "s1", Action: react.ActionApprove}}, []string{`"s1"`, "no Fingerprint"}},
		{"twice", []react.Decision{good, good}, []string{`"s1"`, "more than once"}},
		{"one decision, not a slice", good, []string{"pass graph.Resume([]react.Decision{"}},
	} {
		_, err := ag.Invoke(ctx, react.State{}, graph.Resume(tc.resume))
		if err == nil || errors.Is(err, graph.ErrInterrupted) {
			t.Fatalf("%s: err %v, want an error", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s: err %q does not say %q", tc.name, err, w)
			}
		}
		if ran := tool.ran(); len(ran) != 0 {
			t.Fatalf("%s: send ran with %q", tc.name, ran)
		}
		snap, err := ag.Thread("wrong").State(context.Background())
		if err != nil || len(snap.Interrupts) != 1 {
			t.Fatalf("%s: thread has %d interrupts (%v), want still paused", tc.name, len(snap.Interrupts), err)
		}
	}
	s, err := ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{good}))
	if err != nil || s.Reply() != "done" {
		t.Fatalf("right resume: %q, %v", s.Reply(), err)
	}
	if ran := tool.ran(); len(ran) != 1 {
		t.Fatalf("send ran %q, want once", ran)
	}
}

// An agent with Config.Approve whose run cannot pause fails before it calls
// the model, naming Config.Checkpointer as the fix.
func TestApprovalWithoutCheckpointerFailsBeforeModel(t *testing.T) {
	m := &scripted{reply: func(int, *model.Request) (*model.Response, error) {
		return calls(call("s1", "send", `{"to":"bob"}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{newRecordTool()}, Approve: []string{"send"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ag.Invoke(context.Background(), react.Input("mail bob"))
	if err == nil || !strings.Contains(err.Error(), "react.Config.Checkpointer") {
		t.Fatalf("err %v, want one naming react.Config.Checkpointer", err)
	}
	if n := len(m.requests()); n != 0 {
		t.Fatalf("the model was called %d times", n)
	}
}

// A conversation whose last assistant message has calls without results (a
// thread paused for approval that took a new message) reaches the model
// with an error result for each, after the results it has and before the
// new message, and keeps them.
func TestDanglingCallsAnswered(t *testing.T) {
	m := &scripted{reply: func(int, *model.Request) (*model.Response, error) { return answer("ok"), nil }}
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{newRecordTool()}})
	if err != nil {
		t.Fatal(err)
	}
	asked := model.Assistant("")
	asked.Parts = []model.Part{{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c1", Name: "send", Arguments: json.RawMessage(`{}`)}},
		{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c2", Name: "send", Arguments: json.RawMessage(`{}`)}}}
	in := model.Messages{model.User("mail bob"), asked,
		model.ToolResults(model.ToolResult{CallID: "c1", Name: "send", Content: []model.Part{model.TextPart("sent")}}),
		model.User("never mind, what time is it?")}
	s, err := ag.Invoke(context.Background(), react.State{Messages: in})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, msgs model.Messages) {
		t.Helper()
		var roles []string
		for _, msg := range msgs {
			roles = append(roles, string(msg.Role))
		}
		if len(msgs) < 5 || msgs[3].Role != model.RoleTool || msgs[4].Role != model.RoleUser {
			t.Fatalf("%s: roles %v, want the added result before the new message", what, roles)
		}
		r := msgs[3].Parts[0].ToolResult
		if r == nil || r.CallID != "c2" || !r.IsError || !strings.Contains(r.Content[0].Text, "not run") {
			t.Fatalf("%s: added result %+v", what, r)
		}
	}
	reqs := m.requests()
	check("request", reqs[0].Messages)
	check("state", s.Messages)
	if s.Reply() != "ok" || len(s.Messages) != 6 {
		t.Fatalf("reply %q, %d messages", s.Reply(), len(s.Messages))
	}
}
