package telemetry

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

// Tool returns tool instrumented: each call is a span named
// "execute_tool {name}" and counts toward the tool call and tool error
// metrics. attrs are added to the span and the metrics, for example the
// MCP server and transport a tool comes from. A Telemetry that records
// nothing returns tool itself.
func (t *Telemetry) Tool(tool operator.Tool, attrs ...attribute.KeyValue) operator.Tool {
	if !t.enabled() {
		return tool
	}
	def := tool.Definition()
	all := append([]attribute.KeyValue{semconv.GenAIToolName(def.Name)}, attrs...)
	return &tracedTool{t: t, next: tool, name: def.Name, attrs: all, set: metric.WithAttributes(all...)}
}

// Tools instruments every tool of tools, in place order, as [Telemetry.Tool].
func (t *Telemetry) Tools(tools []operator.Tool, attrs ...attribute.KeyValue) []operator.Tool {
	out := make([]operator.Tool, len(tools))
	for i, tool := range tools {
		out[i] = t.Tool(tool, attrs...)
	}
	return out
}

type tracedTool struct {
	t     *Telemetry
	next  operator.Tool
	name  string
	attrs []attribute.KeyValue
	set   metric.MeasurementOption
}

func (tt *tracedTool) Definition() model.ToolDef { return tt.next.Definition() }

func (tt *tracedTool) Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error) {
	var span trace.Span
	if tt.t.tracer != nil {
		ctx, span = tt.t.tracer.Start(ctx, "execute_tool "+tt.name,
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(append([]attribute.KeyValue{semconv.GenAIOperationNameExecuteTool}, tt.attrs...)...))
		if tt.t.capture {
			addContent(span, "gen_ai.tool.call.arguments", string(args))
		}
	}
	res, err := tt.next.Call(ctx, args)
	failed := err != nil || (res != nil && res.IsError)
	if span != nil {
		if res != nil {
			span.SetAttributes(
				attribute.Bool("agentgraph.tool.is_error", res.IsError),
				attribute.Int("agentgraph.tool.result_bytes", resultSize(res)),
			)
			if tt.t.capture {
				addContent(span, "gen_ai.tool.call.result", res.Text())
			}
		}
		switch {
		case err != nil:
			span.SetAttributes(errorType(err))
			fail(span, err)
		case failed:
			span.SetStatus(codes.Error, "tool returned an error result")
		}
		span.End()
	}
	if tt.t.metrics {
		tt.t.calls.Add(ctx, 1, tt.set)
		if failed {
			tt.t.errs.Add(ctx, 1, tt.set)
		}
	}
	return res, err
}

// resultSize is the size in bytes of what a result carries.
func resultSize(r *model.ToolResult) int {
	n := len(r.Structured)
	for _, p := range r.Content {
		n += len(p.Text) + len(p.Data)
	}
	return n
}
