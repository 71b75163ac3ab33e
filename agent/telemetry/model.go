package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Model returns m instrumented: each Generate or Stream call is a client
// span with the GenAI semantic conventions and feeds the token usage and
// operation duration metrics. provider names the provider as the
// conventions spell it ("openai", "anthropic", "ollama"...), and name the
// model requested when the request does not name one. A Telemetry that
// records nothing returns m itself.
func (t *Telemetry) Model(m model.Model, provider, name string) model.Model {
	if !t.enabled() {
		return m
	}
	return &tracedModel{t: t, next: m, provider: provider, name: name}
}

// errAbandoned marks a stream its consumer stopped reading before the end.
var errAbandoned = errors.New("telemetry: stream abandoned by its consumer before the final response")

type tracedModel struct {
	t        *Telemetry
	next     model.Model
	provider string
	name     string
}

func (m *tracedModel) requested(req *model.Request) string {
	if req != nil && req.Model != "" {
		return req.Model
	}
	return m.name
}

// start opens the call's span.
func (m *tracedModel) start(ctx context.Context, req *model.Request, stream bool) (context.Context, trace.Span) {
	if m.t.tracer == nil {
		return ctx, nil
	}
	requested := m.requested(req)
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(m.provider),
		semconv.GenAIRequestModel(requested),
		semconv.GenAIRequestStream(stream),
	}
	if req != nil {
		if req.MaxTokens > 0 {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
		if req.Temperature != nil {
			attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
		}
		if len(req.Stop) > 0 {
			attrs = append(attrs, semconv.GenAIRequestStopSequences(req.Stop...))
		}
	}
	ctx, span := m.t.tracer.Start(ctx, "chat "+requested,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if m.t.capture && req != nil {
		if b, err := json.Marshal(req.Messages); err == nil {
			addContent(span, "gen_ai.input.messages", string(b))
		}
	}
	return ctx, span
}

// finish closes the span and records the metrics of a call that began at
// begin, with its response or error and, when streamed, the time its first
// chunk arrived.
func (m *tracedModel) finish(ctx context.Context, span trace.Span, req *model.Request, begin time.Time, first time.Duration, resp *model.Response, err error) {
	elapsed := time.Since(begin)
	requested := m.requested(req)
	if span != nil {
		if resp != nil {
			u := resp.Usage
			span.SetAttributes(
				semconv.GenAIResponseModel(resp.Model),
				semconv.GenAIUsageInputTokens(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens),
				semconv.GenAIUsageOutputTokens(u.OutputTokens+u.ThinkingTokens),
				semconv.GenAIUsageReasoningOutputTokens(u.ThinkingTokens),
				semconv.GenAIUsageCacheReadInputTokens(u.CacheReadTokens),
				semconv.GenAIUsageCacheCreationInputTokens(u.CacheWriteTokens),
			)
			if resp.ID != "" {
				span.SetAttributes(semconv.GenAIResponseID(resp.ID))
			}
			if resp.FinishReason != "" {
				span.SetAttributes(semconv.GenAIResponseFinishReasons(string(resp.FinishReason)))
			}
			if m.t.capture {
				if b, jerr := json.Marshal([]model.Message{resp.Message}); jerr == nil {
					addContent(span, "gen_ai.output.messages", string(b))
				}
			}
		}
		if first > 0 {
			span.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(first.Seconds()))
		}
		if err != nil {
			span.SetAttributes(errorType(err))
			fail(span, err)
		}
		span.End()
	}
	if !m.t.metrics {
		return
	}
	op := genaiconv.OperationNameChat
	prov := genaiconv.ProviderNameAttr(m.provider)
	attrs := []attribute.KeyValue{semconv.GenAIRequestModel(requested)}
	if resp != nil && resp.Model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(resp.Model))
	}
	if err != nil {
		attrs = append(attrs, errorType(err))
	}
	m.t.latency.Record(ctx, elapsed.Seconds(), op, prov, attrs...)
	if resp != nil {
		u := resp.Usage
		m.t.tokens.Record(ctx, int64(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens), op, prov, genaiconv.TokenTypeInput, attrs...)
		m.t.tokens.Record(ctx, int64(u.OutputTokens+u.ThinkingTokens), op, prov, genaiconv.TokenTypeOutput, attrs...)
	}
}

func (m *tracedModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	begin := time.Now()
	ctx, span := m.start(ctx, req, false)
	resp, err := m.next.Generate(ctx, req)
	m.finish(ctx, span, req, begin, 0, resp, err)
	return resp, err
}

func (m *tracedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		begin := time.Now()
		ctx, span := m.start(ctx, req, true)
		var (
			first time.Duration
			resp  *model.Response
			err   error
		)
		abandoned := true
		defer func() {
			if abandoned && resp == nil && err == nil {
				err = errAbandoned
			}
			m.finish(ctx, span, req, begin, first, resp, err)
		}()
		for c, cerr := range m.next.Stream(ctx, req) {
			if cerr != nil {
				err = cerr
				yield(c, cerr)
				return
			}
			if first == 0 {
				first = max(time.Since(begin), time.Nanosecond)
			}
			if c.Kind == model.ChunkDone {
				resp = c.Response
			}
			if !yield(c, nil) {
				if resp != nil {
					abandoned = false
				}
				return
			}
		}
		abandoned = false
		if resp == nil && err == nil {
			err = model.ErrIncompleteStream
		}
	}
}
