package swarm_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

// TestLoopingSupervisor: a supervisor that never marks its step done and
// keeps selecting its agent runs the step once (its approved result makes
// it done), and re-selecting the finished step trips the circuit breaker;
// the run is complete, not failed.
func TestLoopingSupervisor(t *testing.T) {
	t.Parallel()
	decision := `{"thought_process":"again","selected_agents":["mcp_agent_calculator"],
		"plan":[{"id":"step_1","agent":"mcp_agent_calculator","task":"What is 2 + 3","status":"pending"}]}`
	client, err := agent.New(agent.Config{Model: supervisorModel(decision)})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client})
	events, out := run(t, s, "What is 2 + 3?")
	if len(out.Results) != 1 || !out.Results[0].OK {
		t.Fatalf("results = %+v, want the step run once, approved", out.Results)
	}
	if out.Turns != 3 {
		t.Errorf("turns = %d, want 3 (run, re-selected, breaker)", out.Turns)
	}
	plans := ofKind(events, swarm.EventPlan)
	if last := plans[len(plans)-1]; !strings.Contains(last.Text, "Circuit breaker") {
		t.Errorf("last plan event = %q, want the circuit breaker", last.Text)
	}
	if out.Status != swarm.StatusComplete || out.Plan[0].Status != swarm.StepDone {
		t.Errorf("status %q, plan %+v; want complete with step_1 done", out.Status, out.Plan)
	}
}

// TestEightSuccesses: the model lists eight steps and never marks one done;
// each runs once, in turn, and QA reports the run complete.
func TestEightSuccesses(t *testing.T) {
	t.Parallel()
	var steps []string
	for i := 1; i <= 8; i++ {
		steps = append(steps, fmt.Sprintf(`{"id":"step_%d","agent":"mcp_agent_calculator","task":"What is %d + %d","status":"pending"}`, i, i, i))
	}
	decision := `{"thought_process":"all of them","selected_agents":["mcp_agent_calculator"],"plan":[` + strings.Join(steps, ",") + `]}`
	client, err := agent.New(agent.Config{Model: supervisorModel(decision)})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client, MaxTurns: 12})
	_, out := run(t, s, "Add each number to itself, from 1 to 8")
	var ran []string
	for _, r := range out.Results {
		if !r.OK {
			t.Errorf("%s failed: %s", r.Step, r.Error)
		}
		ran = append(ran, r.Step)
	}
	if len(ran) != 8 || len(slices.Compact(slices.Sorted(slices.Values(ran)))) != 8 {
		t.Errorf("steps run = %v, want each of the 8 once", ran)
	}
	if out.Status != swarm.StatusComplete {
		t.Errorf("status = %q after 8 successes, want complete", out.Status)
	}
	if !strings.Contains(out.Answer, "8 + 8 = 16") {
		t.Errorf("answer lacks the last step:\n%s", out.Answer)
	}
}

// TestIrrelevantRejected: offline, the seed's team request without the
// Architect goes to web search, whose results are about pricing; the
// reflection rejects them as irrelevant and the run is not complete.
func TestIrrelevantRejected(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{NoArchitect: true})
	_, out := run(t, s, seedTeamRequest)
	if out.Status == swarm.StatusComplete {
		t.Fatalf("status complete with results %+v", out.Results)
	}
	r := out.Results[0]
	if r.OK || r.Agent != "mcp_agent_websearch" {
		t.Fatalf("first result = %+v, want web search rejected", r)
	}
	for _, rv := range r.Reviews {
		if rv.Verdict != supervisor.VerdictRejected || !strings.Contains(rv.Critique, "something else") {
			t.Errorf("review %+v, want REJECTED as irrelevant", rv)
		}
	}
}

// TestStateAndTrace: the run's state keeps the chat history, the citations
// with the step that used each (carried to the answer), and a trace with
// transitions, thoughts, tool calls and outputs and reflections.
func TestStateAndTrace(t *testing.T) {
	t.Parallel()
	s := newSwarm(t, swarm.Config{})
	events, out := run(t, s, teamTask)

	if n := len(out.Messages); n != 4 || out.Messages[0].Role != model.RoleUser || out.Messages[0].Text() != teamTask ||
		out.Messages[1].Name != "mcp_agent_knowledge" || out.Messages[3].Name != swarm.QA || out.Messages[3].Text() != out.Answer {
		t.Errorf("messages = %+v, want the request, two results and the answer", out.Messages)
	}
	want := []swarm.Citation{
		{Source: "pricing", Locator: "Team", Step: "step_1", Agent: "mcp_agent_knowledge"},
		{Source: "calculator.calculate", Locator: "49 * 12 * 10", Step: "step_2", Agent: "mcp_agent_calculator"},
	}
	if !slices.Equal(out.Citations, want) {
		t.Errorf("citations = %+v, want %+v", out.Citations, want)
	}
	if !strings.Contains(out.Answer, "Sources:\n[1] pricing (Team), used by step_1") {
		t.Errorf("answer does not carry the sources:\n%s", out.Answer)
	}
	kinds := map[string]int{}
	for _, e := range out.Trace {
		kinds[e.Kind]++
	}
	for _, k := range []string{swarm.TraceTransition, swarm.TraceThought, swarm.TraceToolCall, swarm.TraceToolOutput, swarm.TraceReflection} {
		if kinds[k] == 0 {
			t.Errorf("trace has no %s entry: %+v", k, out.Trace)
		}
	}
	var call string
	for _, e := range out.Trace {
		if e.Kind == swarm.TraceToolCall && e.Step == "step_2" {
			call = e.Text
		}
	}
	if call != `calculator.calculate {"expression":"49 * 12 * 10"}` {
		t.Errorf("step_2 tool call in the trace = %q", call)
	}
	for _, ev := range ofKind(events, swarm.EventExecute) {
		if ev.Thought == "" {
			t.Errorf("execute event without the agent's thought: %+v", ev)
		}
	}
	if out.Results[0].Thought == "" {
		t.Error("the result dropped the agent's thought")
	}
}
