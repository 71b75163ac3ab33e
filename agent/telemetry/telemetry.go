package telemetry

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentgraph/agentgraph/graph"
)

// ScopeName is the instrumentation scope of agentgraph's spans and metrics.
const ScopeName = "github.com/agentgraph/agentgraph"

// Config says where telemetry goes.
type Config struct {
	// TracerProvider receives the spans. Nil means no tracing.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the metrics. Nil means no metrics.
	MeterProvider metric.MeterProvider
	// CaptureContent records prompts, completions and tool arguments and
	// results as span events. Off by default: they can hold personal data.
	CaptureContent bool
}

// Telemetry instruments models, tools and graphs. It is safe for concurrent
// use. The zero value and nil do nothing.
type Telemetry struct {
	tracer  trace.Tracer // nil without a TracerProvider
	capture bool

	metrics bool
	tokens  genaiconv.ClientTokenUsage
	latency genaiconv.ClientOperationDuration
	calls   metric.Int64Counter
	errs    metric.Int64Counter
}

// New returns a Telemetry that reports to cfg's providers.
func New(cfg Config) (*Telemetry, error) {
	t := &Telemetry{capture: cfg.CaptureContent}
	if cfg.TracerProvider != nil {
		t.tracer = cfg.TracerProvider.Tracer(ScopeName)
	}
	if cfg.MeterProvider != nil {
		m := cfg.MeterProvider.Meter(ScopeName)
		var err error
		if t.tokens, err = genaiconv.NewClientTokenUsage(m); err != nil {
			return nil, fmt.Errorf("telemetry: token usage histogram: %w", err)
		}
		if t.latency, err = genaiconv.NewClientOperationDuration(m); err != nil {
			return nil, fmt.Errorf("telemetry: operation duration histogram: %w", err)
		}
		if t.calls, err = m.Int64Counter("agentgraph.tool.calls",
			metric.WithDescription("Tool calls, by tool."), metric.WithUnit("{call}")); err != nil {
			return nil, fmt.Errorf("telemetry: tool call counter: %w", err)
		}
		if t.errs, err = m.Int64Counter("agentgraph.tool.errors",
			metric.WithDescription("Tool calls that failed or returned an error result, by tool."),
			metric.WithUnit("{call}")); err != nil {
			return nil, fmt.Errorf("telemetry: tool error counter: %w", err)
		}
		t.metrics = true
	}
	return t, nil
}

// enabled reports whether t records anything.
func (t *Telemetry) enabled() bool { return t != nil && (t.tracer != nil || t.metrics) }

// Hooks returns graph hooks that open a span per node attempt. Pass them to
// a graph with graph.WithHooks. Without a TracerProvider they are empty.
//
// The span is named after the node and carries the step, the task index,
// the attempt and the subgraph namespace; a failed attempt records the error
// and sets the span's status, so a retried node shows each attempt.
func (t *Telemetry) Hooks() graph.Hooks {
	if t == nil || t.tracer == nil {
		return graph.Hooks{}
	}
	return graph.Hooks{
		NodeStart: func(ctx context.Context, ti graph.TaskInfo) context.Context {
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
		},
		NodeEnd: func(ctx context.Context, _ graph.TaskInfo, _ time.Duration) {
			trace.SpanFromContext(ctx).End()
		},
		NodeError: func(ctx context.Context, _ graph.TaskInfo, _ time.Duration, err error) {
			span := trace.SpanFromContext(ctx)
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			span.End()
		},
	}
}

// errorType returns the error.type attribute of err.
func errorType(err error) attribute.KeyValue {
	switch {
	case err == context.Canceled:
		return semconv.ErrorTypeKey.String("canceled")
	case err == context.DeadlineExceeded:
		return semconv.ErrorTypeKey.String("timeout")
	default:
		return semconv.ErrorTypeKey.String(fmt.Sprintf("%T", err))
	}
}
