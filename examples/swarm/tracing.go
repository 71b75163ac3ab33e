package swarm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
)

// Tracing sends a run's trace to OpenTelemetry the way the seed's §9
// describes it: the trace id is derived from the run's thread id (the same
// thread always maps to the same trace, so a resumed run continues its
// trace), the session id is derived from the trace id, and the run's span
// carries, per agent result, the tags agent_name, reflection_status and
// tool_usage, with the full trace (transitions, thoughts, tool calls and
// outputs, reflections) as span events. Graph nodes get spans of their own
// through Hooks (agent/telemetry's, when set).
type Tracing struct {
	// Tracer starts the run's span. Required.
	Tracer trace.Tracer
	// Hooks are the graph hooks that trace nodes, such as
	// telemetry.Telemetry.Hooks(); zero means none.
	Hooks graph.Hooks
	// Content records tool outputs and thoughts in span events. Off by
	// default: they can hold personal data.
	Content bool
}

// Attribute keys of the run span.
const (
	AttrThread           = "swarm.thread_id"
	AttrSession          = "session.id"
	AttrAgentName        = "agent_name"
	AttrReflectionStatus = "reflection_status"
	AttrToolUsage        = "tool_usage"
)

// TraceID returns the trace id of the run on thread: the first 16 bytes of
// the SHA-256 of the thread id.
func TraceID(thread string) trace.TraceID {
	sum := sha256.Sum256([]byte(thread))
	var id trace.TraceID
	copy(id[:], sum[:16])
	return id
}

// SessionID returns the session id the trace of thread maps to: stateless,
// derived from the trace id alone.
func SessionID(thread string) string {
	id := TraceID(thread)
	sum := sha256.Sum256(id[:])
	return "sess_" + hex.EncodeToString(sum[:8])
}

// hooks returns the graph hooks of the configured tracing.
func (w *Swarm) hooks() graph.Hooks {
	if w.cfg.Tracing == nil {
		return graph.Hooks{}
	}
	return w.cfg.Tracing.Hooks
}

// startRun opens the run's span in the trace of thread; end closes it with
// the run's tags.
func (t *Tracing) startRun(ctx context.Context, thread, request string) (context.Context, func(State, error)) {
	if t == nil || t.Tracer == nil {
		return ctx, func(State, error) {}
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: TraceID(thread), SpanID: spanID(thread), TraceFlags: trace.FlagsSampled, Remote: true})
	ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	ctx, span := t.Tracer.Start(ctx, "swarm.run", trace.WithAttributes(
		attribute.String(AttrThread, thread), attribute.String(AttrSession, SessionID(thread))))
	return ctx, func(s State, err error) {
		var agents, statuses, tools []string
		for _, r := range s.Results {
			agents = append(agents, r.Agent)
			st := "failed"
			if len(r.Reviews) > 0 {
				st = string(r.Reviews[len(r.Reviews)-1].Verdict)
			} else if r.OK {
				st = string(supervisor.VerdictApproved)
			}
			statuses = append(statuses, st)
			tool := r.Tool
			if tool == "" {
				tool = "llm"
			}
			tools = append(tools, tool)
		}
		span.SetAttributes(attribute.StringSlice(AttrAgentName, agents), attribute.StringSlice(AttrReflectionStatus, statuses),
			attribute.StringSlice(AttrToolUsage, tools), attribute.String("swarm.status", s.Status))
		for _, e := range s.Trace {
			attrs := []attribute.KeyValue{attribute.String("node", e.Node), attribute.String("step", e.Step)}
			if t.Content || e.Kind == TraceTransition {
				attrs = append(attrs, attribute.String("text", clip(e.Text, 1000)))
			}
			span.AddEvent(e.Kind, trace.WithAttributes(attrs...))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

func spanID(thread string) trace.SpanID {
	sum := sha256.Sum256([]byte("span:" + thread))
	var id trace.SpanID
	copy(id[:], sum[:8])
	return id
}
