package telemetry

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/resilience"
)

// Outcomes of a run, the agentgraph.run.outcome attribute.
const (
	OutcomeCompleted   = "completed"   // the run finished
	OutcomeInterrupted = "interrupted" // the run paused: an Interrupt or a breakpoint
	OutcomeCancelled   = "cancelled"   // the run's context was cancelled or timed out
	OutcomeFailed      = "failed"      // a node, a route, a save or the step limit failed it
)

// Outcome returns the outcome of a run that returned err: one of the
// Outcome constants.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeCompleted
	case errors.Is(err, graph.ErrInterrupted):
		return OutcomeInterrupted
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	default:
		return OutcomeFailed
	}
}

// Hooks returns graph hooks that trace and measure runs. Pass them to the
// outermost graph with graph.WithHooks: subgraphs' runs see them too.
// Without a provider they are empty, and an empty set of hooks leaves a
// run exactly as fast as one without.
//
// With a TracerProvider, a run is a span named "run {graph}" (the graph's
// name from graph.WithName, or its subgraph node's name, or "graph")
// carrying the graph, thread id, run id (graph.RunConfig), outcome and
// number of steps; a resumed run has an "agentgraph.resume" event and a
// paused one an "agentgraph.interrupt" event per interrupt. Each
// super-step is a span "step" under the run, with the nodes it runs; each
// node attempt is a span "node {name}" under its step, with the step, the
// task index, the attempt and the subgraph namespace, so a retried node
// shows each attempt and a subgraph's run nests under its node's span. A
// failed attempt records the error and sets the span's status; an
// attempt that pauses on graph.Interrupt records an
// "agentgraph.interrupt" event instead. Each checkpoint save of a durable
// run is a span "checkpoint save" with the backend, the bytes written, the
// thread, the checkpoint id and the step.
//
// With a MeterProvider, runs that are not nested in another (a
// subgraph's runs are part of their parent's) feed the
// agentgraph.run.duration histogram, by graph and outcome, and the
// agentgraph.run.active up-down counter, by graph.
func (t *Telemetry) Hooks() graph.Hooks {
	if !t.enabled() {
		return graph.Hooks{}
	}
	h := graph.Hooks{
		RunStart: t.runStart,
		RunEnd:   t.runEnd,
	}
	if t.tracer == nil {
		return h
	}
	h.StepStart = t.stepStart
	h.StepEnd = t.stepEnd
	h.NodeStart = t.nodeStart
	h.NodeEnd = func(ctx context.Context, _ graph.TaskInfo, _ time.Duration) {
		trace.SpanFromContext(ctx).End()
	}
	h.NodeError = func(ctx context.Context, _ graph.TaskInfo, _ time.Duration, err error) {
		span := trace.SpanFromContext(ctx)
		if graph.IsInterrupt(err) {
			span.AddEvent("agentgraph.interrupt")
		} else {
			fail(span, err)
		}
		span.End()
	}
	h.Saved = t.saved
	return h
}

func graphName(r graph.RunInfo) string {
	switch {
	case r.Graph != "":
		return r.Graph
	case len(r.Namespace) > 0:
		return r.Namespace[len(r.Namespace)-1]
	}
	return "graph"
}

func (t *Telemetry) runStart(ctx context.Context, r graph.RunInfo) context.Context {
	name := graphName(r)
	if t.metrics && len(r.Namespace) == 0 {
		t.active.Add(ctx, 1, metric.WithAttributes(attribute.String("agentgraph.graph", name)))
	}
	if t.tracer == nil {
		return ctx
	}
	rc := graph.ConfigFrom(ctx)
	thread := r.Thread
	if thread == "" {
		thread = rc.ThreadID
	}
	attrs := []attribute.KeyValue{attribute.String("agentgraph.graph", name)}
	if thread != "" {
		attrs = append(attrs, attribute.String("agentgraph.thread.id", thread))
	}
	if rc.RunID != "" {
		attrs = append(attrs, attribute.String("agentgraph.run.id", rc.RunID))
	}
	if len(r.Namespace) > 0 {
		attrs = append(attrs, attribute.String("agentgraph.namespace", strings.Join(r.Namespace, "/")))
	}
	if len(rc.Tags) > 0 {
		attrs = append(attrs, attribute.StringSlice("agentgraph.tags", rc.Tags))
	}
	ctx, span := t.tracer.Start(ctx, "run "+name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if r.Resume || r.FromCheckpoint != "" {
		var ev []attribute.KeyValue
		if r.FromCheckpoint != "" {
			ev = append(ev, attribute.String("agentgraph.checkpoint.id", r.FromCheckpoint))
		}
		span.AddEvent("agentgraph.resume", trace.WithAttributes(ev...))
	}
	return ctx
}

func (t *Telemetry) runEnd(ctx context.Context, r graph.RunInfo, res graph.RunResult) {
	outcome := Outcome(res.Err)
	if t.metrics && len(r.Namespace) == 0 {
		g := attribute.String("agentgraph.graph", graphName(r))
		t.active.Add(ctx, -1, metric.WithAttributes(g))
		t.runs.Record(ctx, res.Elapsed.Seconds(), metric.WithAttributes(g, attribute.String("agentgraph.run.outcome", outcome)))
	}
	if t.tracer == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("agentgraph.run.outcome", outcome), attribute.Int("agentgraph.run.steps", res.Steps))
	var ie *graph.InterruptError
	switch {
	case errors.As(res.Err, &ie):
		for _, in := range ie.Interrupts {
			span.AddEvent("agentgraph.interrupt", trace.WithAttributes(
				attribute.String("agentgraph.interrupt.id", in.ID),
				attribute.String("agentgraph.interrupt.kind", in.Kind.String()),
				attribute.String("agentgraph.node", in.Node),
				attribute.String("agentgraph.checkpoint.id", ie.CheckpointID)))
		}
	case res.Err != nil:
		fail(span, res.Err)
	}
	span.End()
}

func (t *Telemetry) stepStart(ctx context.Context, s graph.StepInfo) context.Context {
	attrs := []attribute.KeyValue{
		attribute.Int("agentgraph.step", s.Step),
		attribute.StringSlice("agentgraph.step.nodes", s.Nodes),
	}
	if len(s.Namespace) > 0 {
		attrs = append(attrs, attribute.String("agentgraph.namespace", strings.Join(s.Namespace, "/")))
	}
	ctx, _ = t.tracer.Start(ctx, "step", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx
}

func (t *Telemetry) stepEnd(ctx context.Context, _ graph.StepInfo, err error) {
	span := trace.SpanFromContext(ctx)
	if err != nil && !errors.Is(err, graph.ErrInterrupted) {
		fail(span, err)
	}
	span.End()
}

func (t *Telemetry) nodeStart(ctx context.Context, ti graph.TaskInfo) context.Context {
	attrs := []attribute.KeyValue{
		attribute.String("agentgraph.node", ti.Node),
		attribute.Int("agentgraph.step", ti.Step),
		attribute.Int("agentgraph.task.index", ti.Index),
		attribute.Int("agentgraph.task.attempt", ti.Attempt),
		attribute.String("agentgraph.task.id", ti.ID()),
	}
	if len(ti.Namespace) > 0 {
		attrs = append(attrs, attribute.String("agentgraph.namespace", strings.Join(ti.Namespace, "/")))
	}
	if rc := graph.ConfigFrom(ctx); rc.ThreadID != "" || rc.RunID != "" {
		attrs = append(attrs,
			attribute.String("agentgraph.thread.id", rc.ThreadID),
			attribute.String("agentgraph.run.id", rc.RunID))
	}
	ctx, _ = t.tracer.Start(ctx, "node "+ti.Node,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx
}

func (t *Telemetry) saved(ctx context.Context, s graph.SaveInfo, elapsed time.Duration, err error) {
	end := time.Now()
	_, span := t.tracer.Start(ctx, "checkpoint save", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(end.Add(-elapsed)), trace.WithAttributes(
			attribute.String("agentgraph.checkpoint.backend", s.Backend),
			attribute.Int("agentgraph.checkpoint.bytes", s.Bytes),
			attribute.String("agentgraph.thread.id", s.Thread),
			attribute.String("agentgraph.checkpoint.id", s.Checkpoint),
			attribute.Int("agentgraph.step", s.Step),
			attribute.Bool("agentgraph.checkpoint.writes", s.Writes)))
	if err != nil {
		fail(span, err)
	}
	span.End(trace.WithTimestamp(end))
}

// BreakerObserver returns a function for resilience.BreakerConfig's
// OnStateChange that counts the state changes of the breaker named name in
// the agentgraph.breaker.state_changes metric, by breaker and the state
// entered (and left). Without a MeterProvider it returns nil, which the
// breaker takes as no observer.
func (t *Telemetry) BreakerObserver(name string) func(from, to resilience.BreakerState) {
	if t == nil || !t.metrics {
		return nil
	}
	return func(from, to resilience.BreakerState) {
		t.breakers.Add(context.Background(), 1, metric.WithAttributes(
			attribute.String("agentgraph.breaker", name),
			attribute.String("agentgraph.breaker.from", from.String()),
			attribute.String("agentgraph.breaker.state", to.String())))
	}
}
