package otlp_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/telemetry/jaegertest"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
	"github.com/agentgraph/agentgraph/graph"
)

type note struct{ Text string }

var text = graph.Replace(func(n *note) *string { return &n.Text })

// TestJaegerReceivesRun exports a graph run with a model call to a real
// Jaeger over OTLP and reads the trace back through Jaeger's query API:
// run > step > node > chat.
func TestJaegerReceivesRun(t *testing.T) {
	j := jaegertest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLPEndpoint)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_SERVICE_NAME", "agentgraph-e2e")
	tel, shutdown, err := otlp.FromEnv(context.Background(), otlp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := tel.Model(echo{}, "openai", "gpt-e2e")
	g := graph.New[note]()
	g.AddNode("answer", func(ctx context.Context, n note) (graph.Update[note], error) {
		r, err := m.Generate(ctx, &model.Request{Messages: []model.Message{model.User("hi")}})
		if err != nil {
			return graph.Update[note]{}, err
		}
		return text.Set(r.Text()), nil
	})
	g.AddEdge(graph.START, "answer").AddEdge("answer", graph.END)
	app, err := g.Compile(graph.WithHooks(tel.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(context.Background(), note{}); err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("export to jaeger: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spans, err := j.Spans(ctx, "agentgraph-e2e", 4)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]jaegertest.Span{}
	for _, s := range spans {
		byName[s.OperationName] = s
	}
	node, chat := byName["node answer"], byName["chat gpt-e2e"]
	if node.SpanID == "" || chat.SpanID == "" {
		t.Fatalf("jaeger has spans %v, want node answer and chat gpt-e2e", spans)
	}
	if chat.Parent() != node.SpanID || chat.TraceID != node.TraceID {
		t.Errorf("chat span's parent = %s, want the node span %s", chat.Parent(), node.SpanID)
	}
	run, step := byName["run graph"], byName["step"]
	if node.Parent() != step.SpanID || step.Parent() != run.SpanID || run.SpanID == "" {
		t.Errorf("jaeger's tree: node's parent %s, step %s (parent %s), run %s; want run > step > node", node.Parent(), step.SpanID, step.Parent(), run.SpanID)
	}
	if got := run.Tag("agentgraph.run.outcome"); got != "completed" {
		t.Errorf("run outcome = %v, want completed", got)
	}
	if got := chat.Tag("gen_ai.provider.name"); got != "openai" {
		t.Errorf("gen_ai.provider.name = %v, want openai", got)
	}
}
