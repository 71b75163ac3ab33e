package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// subgraphParent returns a parent graph, compiled with opts, that runs ag
// as its subgraph node "agent".
func subgraphParent(t *testing.T, ag *graph.Compiled[react.State], opts ...graph.CompileOption) *graph.Compiled[parent] {
	t.Helper()
	g := graph.New[parent]()
	graph.AddSubgraph(g, "agent", ag, func(p parent) react.State { return react.Input(p.Q) },
		func(s react.State) graph.Update[parent] {
			return graph.Replace(func(p *parent) *string { return &p.A }).Set(s.Reply())
		})
	g.AddEdge(graph.START, "agent").AddEdge("agent", graph.END)
	app, err := g.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// freshIDModel proposes a send to bob under a new id on each call, as real
// providers do, and answers "done" once it reads a tool result.
func freshIDModel() *scripted {
	return &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			return answer("done"), nil
		}
		return calls(call(fmt.Sprintf("call_%d", n), "send", `{"to":"bob"}`)), nil
	}}
}

// An agent with Config.Approve run as a subgraph of a checkpointed parent
// without a checkpointer of its own would run again from its input on each
// resume and propose its call anew under a new id, so that no approval
// would ever apply: the run fails before its first model call, naming
// Config.Checkpointer. With the parent's saver as its checkpointer, the
// approval runs the call the reviewer saw, after one model call.
func TestApprovalSubgraphNeedsCheckpointer(t *testing.T) {
	saver := checkpoint.NewMemory()
	ctx := context.Background()
	t.Run("without", func(t *testing.T) {
		m := freshIDModel()
		ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{newRecordTool()}, Approve: []string{"send"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = subgraphParent(t, ag, graph.WithCheckpointer(saver)).Thread("without").Invoke(ctx, parent{Q: "mail"})
		if err == nil || graph.IsInterrupt(err) || !strings.Contains(err.Error(), "set react.Config.Checkpointer (the parent's saver will do)") {
			t.Fatalf("err %v, want one naming react.Config.Checkpointer", err)
		}
		if n := len(m.requests()); n != 0 {
			t.Fatalf("the model was called %d times", n)
		}
	})
	t.Run("with", func(t *testing.T) {
		m := freshIDModel()
		tool := newRecordTool()
		ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{tool}, Approve: []string{"send"}, Checkpointer: saver})
		if err != nil {
			t.Fatal(err)
		}
		th := subgraphParent(t, ag, graph.WithCheckpointer(saver)).Thread("with")
		_, err = th.Invoke(ctx, parent{Q: "mail"})
		rv := pausedReview(t, err)
		out, err := th.Invoke(ctx, parent{}, graph.Resume([]react.Decision{react.Approve(rv.Calls[0])}))
		if err != nil || out.A != "done" {
			t.Fatalf("resume: %q, %v", out.A, err)
		}
		if ran, n := tool.ran(), len(m.requests()); len(ran) != 1 || ran[0] != `{"to":"bob"}` || n != 2 {
			t.Fatalf("send ran %q, %d model calls; want bob once, 2 calls", ran, n)
		}
	})
}

// An agent with a checkpointer of its own run as a subgraph of a parent
// without one cannot pause: the error names the parent's checkpointer, not
// the agent's, which is set.
func TestApprovalSubgraphParentWithoutCheckpointer(t *testing.T) {
	m := freshIDModel()
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{newRecordTool()}, Approve: []string{"send"}, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = subgraphParent(t, ag).Invoke(context.Background(), parent{Q: "mail"})
	if err == nil || strings.Contains(err.Error(), "set react.Config.Checkpointer") || !strings.Contains(err.Error(), "compile the parent graph with graph.WithCheckpointer") {
		t.Fatalf("err %v, want one naming the parent's checkpointer", err)
	}
	if n := len(m.requests()); n != 0 {
		t.Fatalf("the model was called %d times", n)
	}
}

// Arguments with characters a JSON checkpoint stores escaped (<, >, &,
// U+2028) or in another order: the decision about the call as proposed
// applies to the call as the resume reads it from the checkpoint.
func TestApprovalEscapedArguments(t *testing.T) {
	for _, args := range []string{`{"to":"Tom & Jerry <x>"}`, "{\"to\":\"a\u2028b\"}", `{"to": "bob",  "cc":"eve"}`} {
		m := &scripted{reply: func(_ int, req *model.Request) (*model.Response, error) {
			if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
				return answer("done"), nil
			}
			return calls(call("s1", "send", args)), nil
		}}
		tool := newRecordTool()
		ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{tool}, Approve: []string{"send"}, Checkpointer: checkpoint.NewMemory()})
		if err != nil {
			t.Fatal(err)
		}
		ctx := onThread("escaped")
		_, err = ag.Invoke(ctx, react.Input("mail"))
		rv := pausedReview(t, err)
		s, err := ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Approve(rv.Calls[0])}))
		if err != nil || s.Reply() != "done" {
			t.Fatalf("%s: resume: %q, %v; want the approval to apply", args, s.Reply(), err)
		}
		if ran := tool.ran(); len(ran) != 1 {
			t.Fatalf("%s: send ran %q, want once", args, ran)
		}
	}
}

// A decision made on a call of an earlier turn does not run the call the
// model proposes anew, with another id or the same one, and the same
// arguments: the run pauses again with a review of the new call whose
// Stale lists the decision, and the new call runs on its own approval.
func TestApprovalEarlierTurn(t *testing.T) {
	for _, id2 := range []string{"s2", "s1"} {
		t.Run("second id "+id2, func(t *testing.T) {
			m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
				switch n {
				case 0:
					return calls(call("s1", "send", `{"to":"bob"}`)), nil
				case 1:
					return calls(call(id2, "send", `{"to":"bob"}`)), nil
				}
				return answer("done"), nil
			}}
			tool := newRecordTool()
			ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{tool}, Approve: []string{"send"}, Checkpointer: checkpoint.NewMemory()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := onThread("earlier")
			_, err = ag.Invoke(ctx, react.Input("mail"))
			first := pausedReview(t, err).Calls[0]
			_, err = ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Reject(first, "not yet")}))
			second := pausedReview(t, err)
			if second.Calls[0].Fingerprint == first.Fingerprint {
				t.Fatal("the call proposed anew has the fingerprint of the earlier one")
			}
			_, err = ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Approve(first)}))
			again := pausedReview(t, err)
			if ran := tool.ran(); len(ran) != 0 {
				t.Fatalf("send ran %q on a decision about an earlier turn", ran)
			}
			if len(again.Stale) != 1 || again.Stale[0].Fingerprint != first.Fingerprint || again.Calls[0].Fingerprint != second.Calls[0].Fingerprint {
				t.Fatalf("review %+v, want the new call and the stale decision", again)
			}
			s, err := ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{react.Approve(again.Calls[0])}))
			if err != nil || s.Reply() != "done" || len(tool.ran()) != 1 {
				t.Fatalf("approval of the new call: %q, %v, ran %q", s.Reply(), err, tool.ran())
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
		return calls(call("s1", "send", `{"to":"bob"}`), call("s2", "send", `{"to":"eve"}`)), nil
	}}
	tool := newRecordTool()
	ag, err := react.New(react.Config{Model: m, Tools: []operator.Tool{tool}, Approve: []string{"send"}, Checkpointer: checkpoint.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := onThread("wrong")
	_, err = ag.Invoke(ctx, react.Input("mail bob"))
	rv := pausedReview(t, err)
	good, good2 := react.Approve(rv.Calls[0]), react.Approve(rv.Calls[1])
	mark, _, _ := strings.Cut(good.Fingerprint, ".")
	for _, tc := range []struct {
		name   string
		resume any
		want   []string
	}{
		{"unknown id", []react.Decision{{CallID: "c9", Fingerprint: good.Fingerprint, Action: react.ActionApprove}, good2}, []string{`"c9"`, `proposed calls are "s1", "s2"`}},
		{"another call's fingerprint", []react.Decision{{CallID: "s1", Fingerprint: good2.Fingerprint, Action: react.ActionApprove}, good2}, []string{`"s1"`, "Fingerprint of another proposed call"}},
		{"unknown fingerprint", []react.Decision{{CallID: "s1", Fingerprint: mark + ".0123", Action: react.ActionApprove}, good2}, []string{`"` + mark + `.0123"`, "of no call of the react.Review", `proposed calls are "s1", "s2"`}},
		{"made-up fingerprint", []react.Decision{{CallID: "s1", Fingerprint: "approved", Action: react.ActionApprove}, good2}, []string{`"approved"`, "of no call of the react.Review"}},
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
	s, err := ag.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{good, good2}))
	if err != nil || s.Reply() != "done" {
		t.Fatalf("right resume: %q, %v", s.Reply(), err)
	}
	if ran := tool.ran(); len(ran) != 2 {
		t.Fatalf("send ran %q, want twice", ran)
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
// new message, and keeps them: in a run without a checkpointer, and on a
// thread, where the messages merge into the thread's.
func TestDanglingCallsAnswered(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			m := &scripted{reply: func(int, *model.Request) (*model.Response, error) { return answer("ok"), nil }}
			cfg := react.Config{Model: m, Tools: []operator.Tool{newRecordTool()}}
			ctx := context.Background()
			if durable {
				cfg.Checkpointer = checkpoint.NewMemory()
				ctx = onThread("dangling")
			}
			ag, err := react.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			asked := model.Assistant("")
			asked.Parts = []model.Part{{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c1", Name: "send", Arguments: json.RawMessage(`{}`)}},
				{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c2", Name: "send", Arguments: json.RawMessage(`{}`)}}}
			in := model.Messages{model.User("mail bob"), asked,
				model.ToolResults(model.ToolResult{CallID: "c1", Name: "send", Content: []model.Part{model.TextPart("sent")}}),
				model.User("never mind, what time is it?")}
			s, err := ag.Invoke(ctx, react.State{Messages: in})
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
			if durable {
				snap, err := ag.Thread("dangling").State(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				check("thread", snap.Values.Messages)
				if len(snap.Values.Messages) != 6 {
					t.Fatalf("thread has %d messages, want 6", len(snap.Values.Messages))
				}
			}
		})
	}
}
