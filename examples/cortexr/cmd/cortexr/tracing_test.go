package main

import (
	"testing"

	"github.com/agentgraph/agentgraph/agent/telemetry/otlptest"
)

// TestTracesOverOTLP answers one query with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at an in-test OTLP/HTTP receiver: the agent's graph run arrives
// as the root of a trace, completed, with its perceive, decide and act
// nodes under it.
func TestTracesOverOTLP(t *testing.T) {
	offline(t)
	rec := otlptest.Start(t)
	if code, out, errs := runCLI(t, "", "-memory", t.TempDir(), india); code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
	}
	root := rec.Root(t, "run ")
	if root.Service != "cortexr" || root.Attributes["agentgraph.run.outcome"] != "completed" {
		t.Errorf("root run span %+v, want service cortexr and outcome completed", root)
	}
	if missing := rec.Missing(root.TraceID, "node perceive", "node decide", "node act"); len(missing) > 0 {
		t.Errorf("the run's trace lacks %q: %q", missing, rec.Trace(root.TraceID))
	}
}
