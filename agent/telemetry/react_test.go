package telemetry_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
)

type cityArgs struct {
	City string `json:"city" validate:"required"`
}

// A tool-calling agent turn through a real OpenAI client against the
// llmtest wire server: the model asks for two tools in one reply, they run
// as two parallel tasks of one step, and the model answers. The trace:
//
//	run react
//	  step 1: node model -> chat gpt-test (tokens 50 in, 20 out, finish tool_calls)
//	  step 2: node tools -> execute_tool get_weather (Paris)
//	          node tools -> execute_tool get_weather (Rome)
//	  step 3: node model -> chat gpt-test (tokens 90 in, 7 out)
func TestAgentTurnSpans(t *testing.T) {
	tel, exp, _ := newTelemetry(t, false)
	script := llmtest.New(
		llmtest.Reply{Usage: model.Usage{InputTokens: 50, OutputTokens: 20}, ToolCalls: []model.ToolCall{
			llmtest.ToolCall("call_p", "get_weather", `{"city":"Paris"}`),
			llmtest.ToolCall("call_r", "get_weather", `{"city":"Rome"}`),
		}},
		llmtest.Reply{Text: "Rome is warmer.", Usage: model.Usage{InputTokens: 90, OutputTokens: 7}},
	)
	srv := llmtest.NewOpenAIServer(script)
	defer srv.Close()
	m, err := provider.OpenAI(provider.OpenAIConfig{APIKey: "k", BaseURL: srv.URL + "/v1", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	weather := operator.MustFuncTool("get_weather", "Current temperature of a city.",
		func(_ context.Context, in cityArgs) (int, error) {
			return map[string]int{"Paris": 18, "Rome": 24}[in.City], nil
		})
	ag, err := react.New(react.Config{Model: tel.Model(m, "openai", "gpt-test"), Tools: tel.Tools([]operator.Tool{weather})})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("Is Paris or Rome warmer?"), graph.WithHooks(tel.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	if s.Reply() != "Rome is warmer." {
		t.Fatalf("reply %q", s.Reply())
	}

	tr := newTree(t, exp)
	run := tr.one("run react")
	wantInt(t, run, "agentgraph.run.steps", 3)
	step := func(n int) []string {
		return tr.children(tr.one("step", attribute.Int("agentgraph.step", n)))
	}
	if got := step(1); !slices.Equal(got, []string{"node model"}) {
		t.Errorf("step 1 has %v", got)
	}
	if got := step(2); !slices.Equal(got, []string{"node tools", "node tools"}) {
		t.Errorf("step 2 has %v, want the two tool calls as parallel tasks", got)
	}
	first := tr.one("node model", attribute.Int("agentgraph.step", 1))
	chat := tr.named("chat gpt-test")
	if len(chat) != 2 {
		t.Fatalf("%d model spans, want 2:%s", len(chat), tr.describe())
	}
	var turn1 = chat[0]
	for _, c := range chat {
		if c.Parent().SpanID() == first.SpanContext().SpanID() {
			turn1 = c
		}
	}
	tr.wantParent(turn1, first)
	wantInt(t, turn1, "gen_ai.usage.input_tokens", 50)
	wantInt(t, turn1, "gen_ai.usage.output_tokens", 20)
	wantString(t, turn1, "gen_ai.provider.name", "openai")
	if v, _ := attr(turn1, "gen_ai.response.finish_reasons"); !slices.Equal(v.AsStringSlice(), []string{"tool_calls"}) {
		t.Errorf("finish reasons %v", v.AsStringSlice())
	}
	tools := tr.named("execute_tool get_weather")
	if len(tools) != 2 {
		t.Fatalf("%d tool spans, want 2", len(tools))
	}
	nodes := tr.named("node tools")
	parents := map[string]bool{}
	for _, ts := range tools {
		parents[ts.Parent().SpanID().String()] = true
		wantString(t, ts, "gen_ai.operation.name", "execute_tool")
	}
	for _, n := range nodes {
		if !parents[n.SpanContext().SpanID().String()] {
			t.Errorf("task %v has no tool span under it", n.Attributes())
		}
	}
	if nodes[0].SpanContext().SpanID() == nodes[1].SpanContext().SpanID() {
		t.Error("both tool calls ran in one task")
	}
	second := tr.one("node model", attribute.Int("agentgraph.step", 3))
	if got := tr.children(second); !slices.Equal(got, []string{"chat gpt-test"}) {
		t.Errorf("the answering model node has %v", got)
	}
}
