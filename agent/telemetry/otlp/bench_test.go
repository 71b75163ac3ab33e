package otlp_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/agent/telemetry"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
)

// The cost of telemetry on the engine (W1) and on the agent loop (AL1,
// BENCHMARKS.md): off (a Telemetry without providers, wired as a program
// wires it unconditionally), on with a no-op exporter (every span built
// and handed to an exporter that drops it) and on with the batch exporter
// the otlp package uses, posting OTLP/HTTP to a local collector that
// discards what it gets.

type benchTel struct {
	name string
	tel  *telemetry.Telemetry
}

func benchTelemetries(b *testing.B) []benchTel {
	off, err := telemetry.New(telemetry.Config{})
	if err != nil {
		b.Fatal(err)
	}
	noopTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	noop, err := telemetry.New(telemetry.Config{TracerProvider: noopTP})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	batchTP := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	batch, err := telemetry.New(telemetry.Config{TracerProvider: batchTP})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = noopTP.Shutdown(context.Background())
		_ = batchTP.Shutdown(context.Background())
		srv.Close()
	})
	return []benchTel{{"off", off}, {"noop", noop}, {"batch", batch}}
}

type w1 struct {
	Log []string
	N   int
}

var (
	w1Log = graph.Append(func(s *w1) *[]string { return &s.Log })
	w1N   = graph.Replace(func(s *w1) *int { return &s.N })
)

// BenchmarkW1Telemetry is workload W1 (START -> a -> b -> c -> END, each
// node appending its name and incrementing N) with the telemetry's hooks.
func BenchmarkW1Telemetry(b *testing.B) {
	for _, bt := range benchTelemetries(b) {
		b.Run(bt.name, func(b *testing.B) {
			g := graph.New[w1]()
			for _, name := range []string{"a", "b", "c"} {
				g.AddNode(name, func(_ context.Context, s w1) (graph.Update[w1], error) {
					return graph.Updates(w1Log.Set([]string{name}), w1N.Set(s.N+1)), nil
				})
			}
			g.AddEdge(graph.START, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", graph.END)
			app, err := g.Compile(graph.WithHooks(bt.tel.Hooks()))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if s, err := app.Invoke(ctx, w1{}); err != nil || s.N != 3 || len(s.Log) != 3 {
				b.Fatalf("W1 = %+v, %v", s, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := app.Invoke(ctx, w1{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type al1Args struct {
	A int `json:"a"`
	B int `json:"b"`
}

// al1Model scripts AL1: add(2,3) and mul(4,5) in one turn, then
// add(5,20), then "done".
type al1Model struct{}

func (al1Model) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	turn := 0
	for _, m := range req.Messages {
		if m.Role == model.RoleAssistant {
			turn++
		}
	}
	calls := [][]model.ToolCall{
		{{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}, {ID: "call_2", Name: "mul", Arguments: json.RawMessage(`{"a":4,"b":5}`)}},
		{{ID: "call_3", Name: "add", Arguments: json.RawMessage(`{"a":5,"b":20}`)}},
	}
	if turn < len(calls) {
		m := model.Message{Role: model.RoleAssistant}
		for _, c := range calls[turn] {
			m.Parts = append(m.Parts, model.ToolCallPart(c))
		}
		return &model.Response{Message: m, FinishReason: model.FinishToolCalls, Usage: model.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
	return &model.Response{Message: model.Assistant("done"), FinishReason: model.FinishStop, Usage: model.Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

func (m al1Model) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		r, _ := m.Generate(ctx, req)
		yield(model.Chunk{Kind: model.ChunkDone, Response: r}, nil)
	}
}

type plainTool struct {
	name string
	fn   func(al1Args) int
}

func (t plainTool) Definition() model.ToolDef {
	return model.ToolDef{Name: t.name, Description: t.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t plainTool) Call(_ context.Context, args json.RawMessage) (*model.ToolResult, error) {
	var in al1Args
	if err := json.Unmarshal(args, &in); err != nil {
		return operator.ErrorResult(err.Error()), nil
	}
	return &model.ToolResult{Content: []model.Part{model.TextPart(strconv.Itoa(t.fn(in)))}}, nil
}

// BenchmarkAL1Telemetry is the agent loop AL1 with the model, the tools
// and the run instrumented.
func BenchmarkAL1Telemetry(b *testing.B) {
	for _, bt := range benchTelemetries(b) {
		b.Run(bt.name, func(b *testing.B) {
			tools := []operator.Tool{plainTool{"add", func(a al1Args) int { return a.A + a.B }}, plainTool{"mul", func(a al1Args) int { return a.A * a.B }}}
			ag, err := react.New(react.Config{Model: bt.tel.Model(al1Model{}, "openai", "gpt-bench"), Tools: bt.tel.Tools(tools)})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			hooks := graph.WithHooks(bt.tel.Hooks())
			if s, err := ag.Invoke(ctx, react.Input("compute please"), hooks); err != nil || s.Reply() != "done" || len(s.Messages) != 7 {
				b.Fatalf("AL1 = %q (%d messages), %v", s.Reply(), len(s.Messages), err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ag.Invoke(ctx, react.Input("compute please"), hooks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
