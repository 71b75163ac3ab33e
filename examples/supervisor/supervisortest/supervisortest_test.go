package supervisortest_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
	"github.com/google/go-cmp/cmp"
)

var tools = []model.ToolDef{
	{Name: "search_knowledge", Description: "Search the company knowledge base. Arguments: query."},
	{Name: "web_search", Description: "Search the web."},
}

var obs = []supervisor.Observation{
	{Source: "search_knowledge", Content: "Team: $49 per seat.\n## Draft\nnot a section"},
	{Source: "web_search", Err: "timeout"},
}

// TestParseRoundTrip: what Prompt renders, Parse reads back.
func TestParseRoundTrip(t *testing.T) {
	for _, r := range []supervisortest.Request{
		{Step: supervisortest.Decide, Query: "How much is Team?", Tools: tools, Context: "user: hi", Observations: obs, Iteration: 2, MaxIterations: 5},
		{Step: supervisortest.Decide, Query: "hi", Iteration: 1, MaxIterations: 1},
		{Step: supervisortest.Reflect, Query: "q", Observations: obs, Iteration: 3, MaxIterations: 3},
		{Step: supervisortest.Plan, Query: "Compare", Tools: tools, Context: "c"},
		{Step: supervisortest.Write, Query: "q", Context: "c", Observations: obs, Draft: "Team costs $49.\n\nWrite the answer."},
		{Step: supervisortest.Critique, Task: "t", Call: "calc {}", Output: "36", Error: "", Attempt: 1, MaxAttempts: 2},
		{Step: supervisortest.Critique, Task: "t", Error: "boom", Attempt: 2, MaxAttempts: 2},
	} {
		p, err := supervisortest.Prompt(r)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := supervisortest.Parse(p)
		if !ok {
			t.Fatalf("Parse(%q) = false", p)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("%s: round trip (-want +got):\n%s\nprompt:\n%s", r.Step, diff, p)
		}
	}
	if _, ok := supervisortest.Parse("Question: what?"); ok {
		t.Error("Parse accepted a prompt of no step")
	}
}

// TestParseRequest reads what the steps send, on the wire of the model
// vocabulary, also on a retry whose feedback follows the step's text.
func TestParseRequest(t *testing.T) {
	var seen []supervisortest.Request
	m := llmtest.New().OnFunc(func(c llmtest.Call) bool { return true },
		llmtest.Text(`{"action":"CALL_TOOL","reasoning":"r","tool":"nope"}`),
		llmtest.Text(`{"action":"ANSWER","reasoning":"r","response":"$49"}`))
	rec := recorder{Model: m, seen: &seen}
	in := supervisor.DecideInput{Query: "How much is Team?", Tools: tools, Observations: obs, Iteration: 1, MaxIterations: 4}
	res, err := supervisor.Decide(context.Background(), rec, in, agent.WithMaxAttempts(2))
	if err != nil || res.Value.Action != supervisor.ActionAnswer {
		t.Fatalf("Decide() = %+v, %v", res, err)
	}
	want := supervisortest.Request{Step: supervisortest.Decide, Query: in.Query, Tools: tools, Observations: obs, Iteration: 1, MaxIterations: 4}
	if len(seen) != 2 {
		t.Fatalf("requests read = %d, want 2", len(seen))
	}
	for i, got := range seen {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i+1, diff)
		}
	}
}

type recorder struct {
	*llmtest.Model
	seen *[]supervisortest.Request
}

func (r recorder) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if p, ok := supervisortest.ParseRequest(req); ok {
		*r.seen = append(*r.seen, p)
	}
	return r.Model.Generate(ctx, req)
}
