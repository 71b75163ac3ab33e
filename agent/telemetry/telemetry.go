package telemetry

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentgraph/agentgraph/internal/utf8clip"
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
	// Each is cut to [MaxContentBytes].
	CaptureContent bool
}

// MaxContentBytes bounds each piece of content Config.CaptureContent
// records (a request's messages, a response's message, a tool's arguments
// or its result): a longer one is cut, at a UTF-8 character boundary, to
// at most this many bytes followed by [ContentCut], and its event carries
// [ContentBytesKey] with the length before the cut. A tool's 8 MB result
// is then a few kilobytes of the span, not megabytes of each export
// request that the collector may refuse.
const MaxContentBytes = 16 << 10

// ContentCut ends captured content cut to MaxContentBytes.
const ContentCut = "...[cut]"

// ContentBytesKey is the attribute of a content event whose content was
// cut: its length in bytes before the cut.
const ContentBytesKey = attribute.Key("agentgraph.content.original_bytes")

// addContent adds to span the event name with content as its attribute
// of the same name, cut to MaxContentBytes.
func addContent(span trace.Span, name, content string) {
	if len(content) <= MaxContentBytes {
		span.AddEvent(name, trace.WithAttributes(attribute.String(name, content)))
		return
	}
	span.AddEvent(name, trace.WithAttributes(
		attribute.String(name, utf8clip.Clip(content, MaxContentBytes-len(ContentCut))+ContentCut),
		ContentBytesKey.Int(len(content))))
}

// MaxErrorBytes bounds the text of an error a span records, in its
// exception event and its status description: a longer one is cut, at a
// UTF-8 character boundary, and ends with [ContentCut]. An error can carry
// a provider's answer body or a tool's output, which would otherwise go
// whole into every export request.
const MaxErrorBytes = 4 << 10

// fail records err on span as an exception event, its text cut to
// MaxErrorBytes, and marks the span failed with the same text.
func fail(span trace.Span, err error) {
	msg := err.Error()
	if len(msg) > MaxErrorBytes {
		msg = utf8clip.Clip(msg, MaxErrorBytes-len(ContentCut)) + ContentCut
	}
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(fmt.Sprintf("%T", err)),
		semconv.ExceptionMessage(msg)))
	span.SetStatus(codes.Error, msg)
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

	runs     metric.Float64Histogram   // run duration, by graph and outcome
	active   metric.Int64UpDownCounter // runs in progress, by graph
	breakers metric.Int64Counter       // breaker state changes, by breaker and state
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
		if t.runs, err = m.Float64Histogram("agentgraph.run.duration",
			metric.WithDescription("Duration of graph runs, by graph and outcome."), metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)); err != nil {
			return nil, fmt.Errorf("telemetry: run duration histogram: %w", err)
		}
		if t.active, err = m.Int64UpDownCounter("agentgraph.run.active",
			metric.WithDescription("Graph runs in progress, by graph."), metric.WithUnit("{run}")); err != nil {
			return nil, fmt.Errorf("telemetry: active runs counter: %w", err)
		}
		if t.breakers, err = m.Int64Counter("agentgraph.breaker.state_changes",
			metric.WithDescription("Circuit breaker state changes, by breaker and the state entered."),
			metric.WithUnit("{change}")); err != nil {
			return nil, fmt.Errorf("telemetry: breaker state counter: %w", err)
		}
		t.metrics = true
	}
	return t, nil
}

// enabled reports whether t records anything.
// Tracer returns the tracer t starts its spans with, for a program's own
// spans in the same traces (such as a run span with application tags). It
// is a tracer that records nothing when t has no TracerProvider, or t is
// nil.
func (t *Telemetry) Tracer() trace.Tracer {
	if t == nil || t.tracer == nil {
		return noop.NewTracerProvider().Tracer(ScopeName)
	}
	return t.tracer
}

func (t *Telemetry) enabled() bool { return t != nil && (t.tracer != nil || t.metrics) }

// errorType returns the error.type attribute of err.
func errorType(err error) attribute.KeyValue {
	switch {
	case errors.Is(err, context.Canceled):
		return semconv.ErrorTypeKey.String("canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return semconv.ErrorTypeKey.String("timeout")
	default:
		return semconv.ErrorTypeKey.String(fmt.Sprintf("%T", err))
	}
}
