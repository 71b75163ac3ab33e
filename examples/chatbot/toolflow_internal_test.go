package chatbot

import (
	"context"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
)

// newTestBot returns a bot on the offline model with SQLite storage in a
// temporary directory, configured further by cfg, and closes it without
// an error, within five seconds, when the test ends.
func newTestBot(t *testing.T, cfg Config) *Bot {
	t.Helper()
	cfg.Offline = true
	cfg.DataDir = t.TempDir()
	b, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// runToolFlow runs the tool subflow for one call in conversation conv and
// returns the nodes that ran, in order, and the final state.
func runToolFlow(t *testing.T, b *Bot, turn *memory.Turn, prior []supervisor.Observation, name string, args map[string]any) ([]string, ToolState) {
	t.Helper()
	nodes, last, _ := runToolFlowEvents(t, b, turn, prior, name, args)
	return nodes, last
}

// runToolFlowEvents is runToolFlow that also returns the events the call
// emitted.
func runToolFlowEvents(t *testing.T, b *Bot, turn *memory.Turn, prior []supervisor.Observation, name string, args map[string]any) ([]string, ToolState, []event.Event) {
	t.Helper()
	flow, err := buildToolFlow(b)
	if err != nil {
		t.Fatal(err)
	}
	em := event.NewEmitter(event.EmitterConfig{})
	defer em.Close()
	session := b.mcpReg.NewSession(mcptool.Callbacks(wire{em: em, log: zap.NewNop()}, nil))
	defer session.Close()
	ctx := context.WithValue(context.Background(), runKey{}, &turnDeps{em: em, report: wire{em: em, log: zap.NewNop()}, caller: mcptool.Session(session), turn: turn, meter: new(meter)})
	var nodes []string
	var last ToolState
	in := ToolState{ConversationID: turn.ConversationID, Query: turn.Query, Tool: name, Arguments: args, Prior: prior}
	for ev, err := range flow.Stream(ctx, in, graph.WithModes(graph.StreamDebug, graph.StreamValues)) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Mode {
		case graph.StreamDebug:
			if ev.Debug.Kind == graph.TaskStart {
				nodes = append(nodes, ev.Node)
			}
		case graph.StreamValues:
			last = ev.State
		}
	}
	em.Close()
	var evs []event.Event
	for ev, err := range em.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return nodes, last, evs
}

// The tool subflow's context node assembles an operator's context once,
// from the conversation and the turn, and execute hands that context to
// the operator; a local or MCP tool passes through it with none. collect
// stores each call in the turn's results and actions.
func TestToolFlowContextNode(t *testing.T) {
	ctx := context.Background()
	b := newTestBot(t, Config{})
	err := b.convs.Append(ctx, "conv-1",
		memory.Message{Role: memory.RoleUser, Content: "How much does the Business plan cost?"},
		memory.Message{Role: memory.RoleAssistant, Content: "Business costs $89 per editor per month."})
	if err != nil {
		t.Fatal(err)
	}
	turn := memory.NewTurn("conv-1", "Is it billed annually?")

	nodes, s := runToolFlow(t, b, turn, nil, "query_rewriter", map[string]any{"query": turn.Query})
	if diff := cmp.Diff([]string{NodeToolPrepare, NodeToolContext, NodeToolExecute, NodeToolCollect}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if s.Context == nil {
		t.Fatal("the context node assembled nothing for query_rewriter")
	}
	want := "## conversation.recent(3)\nuser: How much does the Business plan cost?\nassistant: Business costs $89 per editor per month.\n"
	if !strings.Contains(s.Context.String(), want) {
		t.Errorf("assembled context lacks the first exchange:\n%s", s.Context)
	}
	if s.Observation.Err != "" || !strings.Contains(s.Observation.Content, "business") {
		t.Errorf("the rewrite does not name the Business plan: %+v", s.Observation)
	}

	nodes, s = runToolFlow(t, b, turn, []supervisor.Observation{s.Observation}, "calculate", map[string]any{"expression": "2+2"})
	if diff := cmp.Diff([]string{NodeToolPrepare, NodeToolContext, NodeToolExecute, NodeToolCollect}, nodes); diff != "" {
		t.Errorf("MCP tool nodes (-want +got):\n%s", diff)
	}
	if s.Context != nil {
		t.Errorf("an MCP tool got an assembled context:\n%s", s.Context)
	}

	var results []string
	for _, r := range turn.Results.All() {
		results = append(results, r.ID+" "+r.Name+": "+r.Text())
	}
	if len(results) != 2 || !strings.HasPrefix(results[0], `call_1 query_rewriter: {"external_query"`) || results[1] != "call_2 calculate: 2+2 = 4" {
		t.Errorf("the turn's results: %q", results)
	}
	var actions []string
	for _, a := range turn.Actions.All() {
		actions = append(actions, a.Kind+" "+a.Name+" "+string(a.Status))
	}
	if diff := cmp.Diff([]string{"tool_call query_rewriter succeeded", "tool_call calculate succeeded"}, actions); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// A context that can only be assembled at call time (results.step(ID) of a
// result the turn does not have) fails the call, not the turn: the
// subflow goes from context to collect with the error, and the operator
// does not run.
func TestToolFlowContextFails(t *testing.T) {
	ran := false
	b := newTestBot(t, Config{RegisterOperators: func(r *operator.Registry) error {
		return r.Register(operator.Metadata{Name: "step_reader", Description: "Reads step 9's result", Type: operator.PureLLM,
			ContextRequirements: []string{"query", "results.step(step_9)"}},
			func(operator.Deps) (operator.Operator, error) {
				return operator.Func(func(context.Context, *operator.Context) (*operator.Result, error) {
					ran = true
					return &operator.Result{}, nil
				}), nil
			})
	}})
	turn := memory.NewTurn("conv-2", "What did step 9 find?")
	nodes, s, evs := runToolFlowEvents(t, b, turn, nil, "step_reader", nil)
	if diff := cmp.Diff([]string{NodeToolPrepare, NodeToolContext, NodeToolCollect}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if ran {
		t.Error("the operator ran without its context")
	}
	for _, want := range []string{"step_reader", `"results.step(step_9)"`, `no result with id "step_9"`} {
		if !strings.Contains(s.Observation.Err, want) {
			t.Errorf("observation error lacks %q: %q", want, s.Observation.Err)
		}
	}
	// The client sees the call start and fail.
	var got []string
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case chatevent.ToolStart:
			got = append(got, "tool.start "+p.Tool)
		case chatevent.ToolError:
			if !strings.Contains(p.Error, `no result with id "step_9"`) || p.ErrorType != chatevent.ErrorExecution {
				t.Errorf("tool.error %+v, want the assembler's error", p)
			}
			got = append(got, "tool.error "+p.Tool)
		}
	}
	if diff := cmp.Diff([]string{"tool.start step_reader", "tool.error step_reader"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
