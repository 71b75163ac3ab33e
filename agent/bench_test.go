package agent_test

import (
	"context"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

// BenchmarkCall measures the structured caller's own work around a scripted
// model that answers at once: options, prompt building, the resilience
// policy, response and usage reading, extraction, schema validation, strict
// decoding and validation. The schema is built on the first call and cached.
func BenchmarkCall(b *testing.B) {
	reply := llmtest.Reply{
		Text:  "Here is my decision:\n```json\n{\"action\": \"CALL_TOOL\", \"reasoning\": \"User wants to search\", \"operator\": \"web_searcher\", \"params\": {\"query\": \"go\"}}\n```",
		Usage: model.Usage{InputTokens: 100, OutputTokens: 20},
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

// cannedModel answers every call with the same response and does nothing
// else: no option processing, no recording, no allocation. Benchmarks over it
// measure the caller alone.
type cannedModel struct{ resp *model.Response }

func (m cannedModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	return m.resp, nil
}

func (m cannedModel) Stream(context.Context, *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		yield(model.Chunk{Kind: model.ChunkDone, Response: m.resp}, nil)
	}
}

func canned(text string, u model.Usage) cannedModel {
	return cannedModel{&model.Response{Message: model.Assistant(text), FinishReason: model.FinishStop, Usage: u}}
}

// BenchmarkCallOverhead is the structured caller's own cost per successful
// call, excluding the model by construction: the model hands back a canned
// response. The reply is the one of BenchmarkCall (prose around a fenced
// object, a Validate method and validate tags to run). The Options variant
// adds the options a real call tends to carry.
func BenchmarkCallOverhead(b *testing.B) {
	benchmarkCallOverhead(b)
}

func BenchmarkCallOverheadOptions(b *testing.B) {
	benchmarkCallOverhead(b, agent.WithSystem(supervisorSystem), agent.WithModel("haiku"), agent.WithMaxTokens(1024))
}

func benchmarkCallOverhead(b *testing.B, opts ...agent.Option) {
	reply := "Here is my decision:\n```json\n{\"action\": \"CALL_TOOL\", \"reasoning\": \"User wants to search\", \"operator\": \"web_searcher\", \"params\": {\"query\": \"go\"}}\n```"
	c := newClient(b, agent.Config{Model: canned(reply, model.Usage{InputTokens: 100, OutputTokens: 20})})
	ctx := context.Background()
	if _, err := agent.Call[SupervisorDecision](ctx, c, "search go", opts...); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := agent.Call[SupervisorDecision](ctx, c, "search go", opts...); err != nil {
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
	req := &model.Request{Messages: []model.Message{model.User("search go")}}
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := m.Generate(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkComplete is the client's overhead for a plain call: resolution,
// call options, the resilience policy, response and usage reading.
func BenchmarkComplete(b *testing.B) {
	m := llmtest.New().Default(llmtest.Reply{Text: "pong", Usage: model.Usage{InputTokens: 3, OutputTokens: 1}})
	c := newClient(b, agent.Config{Model: m})
	ctx := context.Background()
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if _, err := agent.Complete(ctx, c, "ping"); err != nil {
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

// BenchmarkExtractJSONUnclosed measures a hostile reply: 100 KB of opening
// brackets, each a candidate that never closes. The scan is bounded, so this
// stays linear in the reply's length.
func BenchmarkExtractJSONUnclosed(b *testing.B) {
	reply := strings.Repeat("[", 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := agent.ExtractJSON(reply); ok {
			b.Fatal("found JSON in unclosed brackets")
		}
	}
}
