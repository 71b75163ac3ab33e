package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/telemetry/otlptest"
)

// TestTracesOverOTLP runs one question with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at an in-test OTLP/HTTP receiver: the run's trace arrives, with
// the main graph's run as its root, the planner, agent and composer nodes
// under it, and the SQL agent's graph run nested inside the same trace.
func TestTracesOverOTLP(t *testing.T) {
	rec := otlptest.Start(t)
	var out, errOut bytes.Buffer
	if err := cli(t.Context(), []string{"-offline", "-json", "-disable", "api_docs,computation", "How many customers are there?"}, &out, &errOut); err != nil {
		t.Fatalf("cli: %v\n%s", err, errOut.String())
	}
	root := rec.Root(t, "run ")
	if root.Service != "bosai" || root.Attributes["agentgraph.run.outcome"] != "completed" || root.Attributes["agentgraph.thread.id"] == "" {
		t.Errorf("root run span %+v, want service bosai, outcome completed and a thread id", root)
	}
	if missing := rec.Missing(root.TraceID, "node plan", "node agent", "node compose", "node generate", "node execute"); len(missing) > 0 {
		t.Errorf("the run's trace lacks %q: %q", missing, rec.Trace(root.TraceID))
	}
	runs := 0
	for _, n := range rec.Trace(root.TraceID) {
		if strings.HasPrefix(n, "run ") {
			runs++
		}
	}
	if runs < 2 {
		t.Errorf("the run's trace has %d graph runs, want the SQL agent's nested in the main one: %q", runs, rec.Trace(root.TraceID))
	}
}
