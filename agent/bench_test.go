package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
)

// BenchmarkCall measures the structured caller's own work around a scripted
// model that answers at once: options, prompt building, the resilience
// policy, response and usage reading, extraction, schema validation, strict
// decoding and validation. The schema is built on the first call and cached.
func BenchmarkCall(b *testing.B) {
	reply := llmtest.Reply{
		Text:  "Here is my decision:\n```json\n{\"action\": \"CALL_TOOL\", \"reasoning\": \"User wants to search\", \"operator\": \"web_searcher\", \"params\": {\"query\": \"go\"}}\n```",
		Usage: agent.TokenUsage{InputTokens: 100, OutputTokens: 20},
	}
	m := llmtest.New().Default(reply)
	c := newClient(b, agent.Config{Model: m})
	ctx := context.Background()
	if _, err := agent.Call[SupervisorDecision](ctx, c, "search go"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := agent.Call[SupervisorDecision](ctx, c, "search go"); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// reportCPU adds the CPU time per operation, which a machine shared with
// other work does not inflate the way it inflates ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if used := cpuTime() - start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkScriptedModel is the scripted model alone, to subtract from
// BenchmarkCall.
func BenchmarkScriptedModel(b *testing.B) {
	m := llmtest.New().Default(llmtest.Text(`{"action": "ANSWER"}`))
	msgs := []llmsMessage{human("search go")}
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := m.GenerateContent(ctx, msgs); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkComplete is the client's overhead for a plain call: resolution,
// call options, the resilience policy, response and usage reading.
func BenchmarkComplete(b *testing.B) {
	m := llmtest.New().Default(llmtest.Reply{Text: "pong", Usage: agent.TokenUsage{InputTokens: 3, OutputTokens: 1}})
	c := newClient(b, agent.Config{Model: m})
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := c.Complete(ctx, "ping"); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

func BenchmarkExtractJSON(b *testing.B) {
	reply := "Here is my decision:\n```json\n{\"action\": \"CALL_TOOL\", \"reasoning\": \"User wants {braces}\", \"operator\": \"web_searcher\", \"params\": {\"query\": \"go\"}}\n```\nLet me know."
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := agent.ExtractJSON(reply); !ok {
			b.Fatal("not found")
		}
	}
}
