package main

import (
	"regexp"
	"testing"

	"github.com/agentgraph/agentgraph/agent/telemetry/otlptest"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

// TestTracesOverOTLP runs one task with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at an in-test OTLP/HTTP receiver: the run's span arrives in the
// trace derived from the printed thread id (seed 004 §9), with the session
// id derived from it and the agent_name tag, and the graph's nodes nested
// in the same trace.
func TestTracesOverOTLP(t *testing.T) {
	offline(t)
	rec := otlptest.Start(t)
	code, out, errs := runCmd(t, "-data", t.TempDir(), "What is 15% of 240?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`(?m)^thread: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no thread in the output:\n%s", out)
	}
	thread := m[1]
	var run otlptest.Span
	for _, s := range rec.Spans() {
		if s.Name == "swarm.run" {
			run = s // its parent is the remote span derived from the thread
		}
	}
	if want := swarm.TraceID(thread).String(); run.TraceID != want {
		t.Errorf("run span trace id = %s, want %s derived from thread %s", run.TraceID, want, thread)
	}
	if run.Service != "swarm" || run.Attributes[swarm.AttrSession] != swarm.SessionID(thread) || run.Attributes[swarm.AttrThread] != thread {
		t.Errorf("run span %+v, want service swarm, thread %s and session %s", run, thread, swarm.SessionID(thread))
	}
	if agents, _ := run.Attributes[swarm.AttrAgentName].([]any); len(agents) == 0 {
		t.Errorf("run span has no %s tag: %+v", swarm.AttrAgentName, run.Attributes)
	}
	if missing := rec.Missing(run.TraceID, "node "+swarm.Supervisor); len(missing) > 0 {
		t.Errorf("the run's trace lacks %q: %q", missing, rec.Trace(run.TraceID))
	}
}
