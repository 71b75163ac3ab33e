package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/telemetry"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/operator"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is a language model fake: it answers every call with reply.
type scripted struct{ reply model.Response }

func (s scripted) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r := s.reply
	return &r, ctx.Err()
}

func (s scripted) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for _, c := range []model.Chunk{{Kind: model.ChunkText, Text: s.reply.Text()}} {
			if !yield(c, nil) {
				return
			}
		}
		r := s.reply
		yield(model.Chunk{Kind: model.ChunkDone, Response: &r}, nil)
	}
}

// adder is a tool that adds two numbers, or fails on a negative one.
type adder struct{}

func (adder) Definition() model.ToolDef {
	return model.ToolDef{Name: "add", Description: "Adds a and b."}
}

func (adder) Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error) {
	var in struct{ A, B int }
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, err
	}
	if in.A < 0 {
		return &model.ToolResult{IsError: true, Content: []model.Part{model.TextPart("a must be positive")}}, nil
	}
	return &model.ToolResult{Content: []model.Part{model.TextPart("ok")}, Structured: json.RawMessage(`3`)}, nil
}

func newTelemetry(t *testing.T, capture bool) (*telemetry.Telemetry, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp, MeterProvider: mp, CaptureContent: capture})
	if err != nil {
		t.Fatal(err)
	}
	return tel, exp, reader
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantInt(t *testing.T, s sdktrace.ReadOnlySpan, key string, want int64) {
	t.Helper()
	v, ok := attr(s, key)
	if !ok || v.AsInt64() != want {
		t.Errorf("span %q: %s = %v (present %v), want %d", s.Name(), key, v.Emit(), ok, want)
	}
}

func reply() model.Response {
	return model.Response{
		Message:      model.Assistant("42"),
		FinishReason: model.FinishStop,
		Model:        "gpt-test-2026",
		ID:           "chatcmpl-42",
		Usage:        model.Usage{InputTokens: 10, CacheReadTokens: 5, OutputTokens: 7, ThinkingTokens: 3},
	}
}

func TestModelSpanFollowsGenAIConventions(t *testing.T) {
	for _, stream := range []bool{false, true} {
		tel, exp, reader := newTelemetry(t, false)
		m := tel.Model(scripted{reply()}, "openai", "gpt-test")
		req := &model.Request{Messages: []model.Message{model.User("secret question")}, MaxTokens: 64}
		var err error
		if stream {
			_, err = model.Collect(m.Stream(context.Background(), req))
		} else {
			_, err = m.Generate(context.Background(), req)
		}
		if err != nil {
			t.Fatal(err)
		}
		spans := exp.GetSpans().Snapshots()
		if len(spans) != 1 {
			t.Fatalf("stream=%v: %d spans, want 1", stream, len(spans))
		}
		s := spans[0]
		if s.Name() != "chat gpt-test" || s.SpanKind() != trace.SpanKindClient {
			t.Errorf("span %q kind %v, want \"chat gpt-test\" client", s.Name(), s.SpanKind())
		}
		for key, want := range map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test-2026",
			"gen_ai.response.id": "chatcmpl-42",
		} {
			if v, _ := attr(s, key); v.AsString() != want {
				t.Errorf("%s = %q, want %q", key, v.AsString(), want)
			}
		}
		wantInt(t, s, "gen_ai.usage.input_tokens", 15)
		wantInt(t, s, "gen_ai.usage.output_tokens", 10)
		wantInt(t, s, "gen_ai.usage.reasoning.output_tokens", 3)
		wantInt(t, s, "gen_ai.usage.cache_read.input_tokens", 5)
		if v, _ := attr(s, "gen_ai.response.finish_reasons"); len(v.AsStringSlice()) != 1 || v.AsStringSlice()[0] != "stop" {
			t.Errorf("finish reasons = %v", v.Emit())
		}
		if _, ok := attr(s, "gen_ai.response.time_to_first_chunk"); ok != stream {
			t.Errorf("stream=%v: time_to_first_chunk present = %v", stream, ok)
		}
		if len(s.Events()) != 0 {
			t.Errorf("content captured without CaptureContent: %v", s.Events())
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		tokens := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, mt := range sm.Metrics {
				if mt.Name != "gen_ai.client.token.usage" {
					continue
				}
				for _, dp := range mt.Data.(metricdata.Histogram[int64]).DataPoints {
					typ, _ := dp.Attributes.Value("gen_ai.token.type")
					tokens[typ.AsString()] += dp.Sum
				}
			}
		}
		if tokens["input"] != 15 || tokens["output"] != 10 {
			t.Errorf("token usage metric = %v, want input 15, output 10", tokens)
		}
	}
}

func TestCaptureContentIsOptIn(t *testing.T) {
	tel, exp, _ := newTelemetry(t, true)
	m := tel.Model(scripted{reply()}, "openai", "gpt-test")
	if _, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{model.User("secret question")}}); err != nil {
		t.Fatal(err)
	}
	ev := exp.GetSpans().Snapshots()[0].Events()
	if len(ev) != 2 {
		t.Fatalf("%d events, want input and output messages", len(ev))
	}
}

type failing struct{ scripted }

var errProvider = errors.New("provider unavailable")

func (failing) Generate(context.Context, *model.Request) (*model.Response, error) {
	return nil, errProvider
}

func TestModelErrorMarksSpan(t *testing.T) {
	tel, exp, _ := newTelemetry(t, false)
	m := tel.Model(failing{}, "anthropic", "claude-test")
	if _, err := m.Generate(context.Background(), &model.Request{}); !errors.Is(err, errProvider) {
		t.Fatalf("err = %v", err)
	}
	s := exp.GetSpans().Snapshots()[0]
	if s.Status().Code.String() != "Error" {
		t.Errorf("status = %v, want Error", s.Status())
	}
	if v, ok := attr(s, "error.type"); !ok || v.AsString() == "" {
		t.Errorf("error.type missing")
	}
}

func TestToolSpansAndMetrics(t *testing.T) {
	tel, exp, reader := newTelemetry(t, false)
	tool := tel.Tool(adder{}, attribute.String("agentgraph.tool.source", "local"))
	var wg sync.WaitGroup
	for _, args := range []string{`{"A":1,"B":2}`, `{"A":-1,"B":2}`} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tool.Call(context.Background(), json.RawMessage(args)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	spans := exp.GetSpans().Snapshots()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	errorsSeen := 0
	for _, s := range spans {
		if s.Name() != "execute_tool add" {
			t.Errorf("span name %q", s.Name())
		}
		if v, _ := attr(s, "agentgraph.tool.source"); v.AsString() != "local" {
			t.Errorf("extra attribute missing")
		}
		if v, _ := attr(s, "agentgraph.tool.is_error"); v.AsBool() {
			errorsSeen++
		}
	}
	if errorsSeen != 1 {
		t.Errorf("%d error results, want 1", errorsSeen)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if sum, ok := mt.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					got[mt.Name] += dp.Value
				}
			}
		}
	}
	if got["agentgraph.tool.calls"] != 2 || got["agentgraph.tool.errors"] != 1 {
		t.Errorf("tool metrics = %v, want 2 calls, 1 error", got)
	}
}

type doc struct{ Notes []string }

var notes = graph.Append(func(d *doc) *[]string { return &d.Notes })

func TestNodeSpansNestModelAndToolSpans(t *testing.T) {
	tel, exp, _ := newTelemetry(t, false)
	m := tel.Model(scripted{reply()}, "openai", "gpt-test")
	tool := tel.Tool(adder{})
	tries := 0
	g := graph.New[doc]()
	g.AddNode("think", func(ctx context.Context, d doc) (graph.Update[doc], error) {
		r, err := m.Generate(ctx, &model.Request{})
		if err != nil {
			return graph.Update[doc]{}, err
		}
		return notes.Set([]string{r.Text()}), nil
	})
	g.AddNode("act", func(ctx context.Context, d doc) (graph.Update[doc], error) {
		tries++
		if tries == 1 {
			return graph.Update[doc]{}, errors.New("flaky")
		}
		if _, err := tool.Call(ctx, json.RawMessage(`{"A":1,"B":2}`)); err != nil {
			return graph.Update[doc]{}, err
		}
		return notes.Set([]string{"acted"}), nil
	}, graph.Retry(graph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond}))
	g.AddEdge(graph.START, "think").AddEdge("think", "act").AddEdge("act", graph.END)
	app, err := g.Compile(graph.WithHooks(tel.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(context.Background(), doc{}); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans().Snapshots()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	if len(byName["node think"]) != 1 || len(byName["node act"]) != 2 {
		t.Fatalf("spans: %v", names(spans))
	}
	if byName["chat gpt-test"][0].Parent().SpanID() != byName["node think"][0].SpanContext().SpanID() {
		t.Errorf("model span is not a child of its node's span")
	}
	var failedAttempt, okAttempt sdktrace.ReadOnlySpan
	for _, s := range byName["node act"] {
		if v, _ := attr(s, "agentgraph.task.attempt"); v.AsInt64() == 1 {
			failedAttempt = s
		} else {
			okAttempt = s
		}
	}
	if failedAttempt == nil || okAttempt == nil || failedAttempt.Status().Code.String() != "Error" {
		t.Fatalf("retried node: want a failed first attempt and a second one, got %v", names(spans))
	}
	if byName["execute_tool add"][0].Parent().SpanID() != okAttempt.SpanContext().SpanID() {
		t.Errorf("tool span is not a child of the successful attempt's span")
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

func TestWithoutProvidersNothingIsWrapped(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var m model.Model = &scripted{reply()}
	if tel.Model(m, "openai", "x") != m {
		t.Error("Model wrapped without providers")
	}
	var tool operator.Tool = adder{}
	if tel.Tool(tool) != tool {
		t.Error("Tool wrapped without providers")
	}
	if h := tel.Hooks(); h.NodeStart != nil || h.NodeEnd != nil || h.NodeError != nil {
		t.Error("hooks set without a tracer")
	}
}

// With telemetry off, its hooks leave a run unobserved: the engine builds no
// task information for them, so tracing off costs nothing per node.
func TestDisabledHooksCostNothing(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	observed := true
	g := graph.New[doc]()
	g.AddNode("n", func(ctx context.Context, d doc) (graph.Update[doc], error) {
		_, observed = graph.TaskFrom(ctx)
		return graph.Update[doc]{}, nil
	})
	g.AddEdge(graph.START, "n").AddEdge("n", graph.END)
	app, err := g.Compile(graph.WithHooks(tel.Hooks()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Invoke(context.Background(), doc{}); err != nil {
		t.Fatal(err)
	}
	if observed {
		t.Error("empty hooks made the run observed")
	}
}

// huge fails with an error whose text is a megabyte long, as one carrying
// a provider's answer body may be.
type huge struct{ model.Model }

func (huge) Generate(context.Context, *model.Request) (*model.Response, error) {
	return nil, errors.New("provider said: " + strings.Repeat("é", 1<<19))
}

// TestErrorTextBounded: a span records at most MaxErrorBytes of an
// error's text, in its exception event and its status, cut at a character
// boundary and marked.
func TestErrorTextBounded(t *testing.T) {
	tel, exp, _ := newTelemetry(t, false)
	m := tel.Model(huge{}, "openai", "gpt-test")
	if _, err := m.Generate(context.Background(), &model.Request{}); err == nil {
		t.Fatal("Generate succeeded")
	}
	s := exp.GetSpans().Snapshots()[0]
	check := func(where, msg string) {
		t.Helper()
		if len(msg) > telemetry.MaxErrorBytes || !strings.HasSuffix(msg, telemetry.ContentCut) || !utf8.ValidString(msg) || !strings.HasPrefix(msg, "provider said: ") {
			t.Errorf("%s: %d bytes (want at most %d, valid UTF-8, ending %q), starts %.40q", where, len(msg), telemetry.MaxErrorBytes, telemetry.ContentCut, msg)
		}
	}
	check("status", s.Status().Description)
	var found bool
	for _, e := range s.Events() {
		if e.Name != "exception" {
			continue
		}
		found = true
		for _, kv := range e.Attributes {
			switch kv.Key {
			case "exception.message":
				check("exception.message", kv.Value.AsString())
			case "exception.type":
				if kv.Value.AsString() != "*errors.errorString" {
					t.Errorf("exception.type = %q, want *errors.errorString", kv.Value.AsString())
				}
			}
		}
	}
	if !found {
		t.Errorf("no exception event: %v", s.Events())
	}
}
