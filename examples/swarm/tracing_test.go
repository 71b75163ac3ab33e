package swarm_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentgraph/agentgraph/agent/telemetry"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

// TestTracing (§9): the run's span is in the trace derived from its thread
// id, carries the session id derived from it and the tags agent_name,
// reflection_status and tool_usage, with the full trace as events; the
// nodes' spans (agent/telemetry's hooks) are in the same trace.
func TestTracing(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Tracing: &swarm.Tracing{Tracer: tp.Tracer("swarm-test"), Hooks: tel.Hooks()}})
	_, out := run(t, s, teamTask)

	var runSpan sdktrace.ReadOnlySpan
	nodes := 0
	for _, sp := range rec.Ended() {
		if sp.SpanContext().TraceID() != swarm.TraceID(out.Thread) {
			t.Errorf("span %q is in trace %s, want the thread's %s", sp.Name(), sp.SpanContext().TraceID(), swarm.TraceID(out.Thread))
		}
		if sp.Name() == "swarm.run" {
			runSpan = sp
		} else {
			nodes++
		}
	}
	if runSpan == nil || nodes == 0 {
		t.Fatalf("run span %v, %d node spans; want both", runSpan, nodes)
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range runSpan.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	if got := attrs[swarm.AttrSession].AsString(); got != swarm.SessionID(out.Thread) || got == swarm.SessionID("other") {
		t.Errorf("session id = %q, want %q", got, swarm.SessionID(out.Thread))
	}
	for key, want := range map[attribute.Key][]string{
		swarm.AttrAgentName:        {"mcp_agent_knowledge", "mcp_agent_calculator"},
		swarm.AttrReflectionStatus: {"FIXED", "APPROVED"},
		swarm.AttrToolUsage:        {"search_knowledge", "calculate"},
	} {
		if got := attrs[key].AsStringSlice(); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	events := map[string]bool{}
	for _, e := range runSpan.Events() {
		events[e.Name] = true
	}
	for _, k := range []string{swarm.TraceTransition, swarm.TraceThought, swarm.TraceToolCall, swarm.TraceToolOutput, swarm.TraceReflection} {
		if !events[k] {
			t.Errorf("run span lacks %s events: %v", k, events)
		}
	}
}
