package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/telemetry/jaegertest"
)

// TestAskTracedInJaeger runs one turn of the chatbot with the OTEL_*
// variables pointing at a real Jaeger and reads the turn's trace back
// through Jaeger's query API: the chat graph's run with its nodes under
// it. It skips, saying how to build it, where Jaeger is not built.
func TestAskTracedInJaeger(t *testing.T) {
	j := jaegertest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLPEndpoint)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_SERVICE_NAME", "chatbot-e2e")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"ask", "-offline", "-data", t.TempDir(), "What is 15% of 240?"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spans, err := j.Spans(ctx, "chatbot-e2e", 3)
	if err != nil {
		t.Fatal(err)
	}
	var run jaegertest.Span
	nodes := 0
	for _, s := range spans {
		if strings.HasPrefix(s.OperationName, "run ") && s.Parent() == "" {
			run = s
		}
	}
	if run.SpanID == "" {
		t.Fatalf("no run span among %d spans: %v", len(spans), spans)
	}
	for _, s := range spans {
		if strings.HasPrefix(s.OperationName, "node ") && s.TraceID == run.TraceID {
			nodes++
		}
	}
	if nodes == 0 {
		t.Errorf("the run's trace has no node spans: %v", spans)
	}
	if got := run.Tag("agentgraph.run.outcome"); got != "completed" {
		t.Errorf("run outcome = %v, want completed", got)
	}
	if got := run.Tag("agentgraph.thread.id"); got == nil || got == "" {
		t.Errorf("the run span has no thread id")
	}
}
