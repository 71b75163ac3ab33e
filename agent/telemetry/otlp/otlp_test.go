package otlp_test

import (
	"context"
	"iter"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type echo struct{}

func (echo) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return &model.Response{Message: model.Assistant("hi"), Model: "m-1"}, nil
}

func (echo) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return nil
}

func TestFromEnvExportsOverOTLP(t *testing.T) {
	col := otlptest.Start(t)
	t.Setenv("OTEL_SERVICE_NAME", "otlp-test")
	tel, shutdown, err := otlp.FromEnv(context.Background(), otlp.Options{ServiceName: "fallback"})
	if err != nil {
		t.Fatal(err)
	}
	m := tel.Model(echo{}, "openai", "gpt-x")
	if _, err := m.Generate(context.Background(), &model.Request{}); err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := col.Spans()
	if len(spans) != 1 || spans[0].Name != "chat gpt-x" {
		t.Errorf("collector got spans %+v, want one named chat gpt-x", spans)
	}
	if len(spans) == 0 || spans[0].Service != "otlp-test" {
		t.Errorf("spans %+v, want service.name otlp-test from OTEL_SERVICE_NAME", spans)
	}
}

func TestFromEnvWithoutEndpointRecordsNothing(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tel, shutdown, err := otlp.FromEnv(context.Background(), otlp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	var m model.Model = &echo{}
	if tel.Model(m, "openai", "x") != m {
		t.Error("a model was wrapped with no exporter configured")
	}
}

func TestFromEnvRejectsUnknownSettings(t *testing.T) {
	for _, tc := range []struct{ key, val, want string }{
		{"OTEL_TRACES_EXPORTER", "zipkin", "OTEL_TRACES_EXPORTER"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"},
	} {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv(tc.key, tc.val)
		_, _, err := otlp.FromEnv(context.Background(), otlp.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: err = %v, want one naming %s", tc.key, tc.val, err, tc.want)
		}
		t.Setenv(tc.key, "")
	}
}

// otlptest.Start clears the variables that would send the spans elsewhere
// or change them: a developer's OTEL_* settings do not leak into a test.
func TestStartClearsTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:1/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=elsewhere")
	col := otlptest.Start(t)
	tel, shutdown, err := otlp.FromEnv(context.Background(), otlp.Options{ServiceName: "fallback"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tel.Model(echo{}, "openai", "gpt-x").Generate(context.Background(), &model.Request{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = shutdown(ctx) // an export error shows as missing spans below
	spans := col.Spans()
	if len(spans) != 1 || spans[0].Service != "fallback" {
		t.Errorf("collector got spans %+v, want one under the program's service name", spans)
	}
}

// TestFromEnvBoundsAttributeValues: without
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT and
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, a span attribute of a megabyte is
// exported cut to DefaultAttributeValueLengthLimit; either variable, when
// set, wins.
func TestFromEnvBoundsAttributeValues(t *testing.T) {
	for _, c := range []struct {
		span, all string
		want      int
	}{
		{"", "", otlp.DefaultAttributeValueLengthLimit},
		{"100", "", 100},
		{"", "50", 50},
		{"2000000", "", 1 << 20},
	} {
		col := otlptest.Start(t)
		t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", c.span)
		t.Setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", c.all)
		tel, shutdown, err := otlp.FromEnv(context.Background(), otlp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, span := tel.Tracer().Start(context.Background(), "big")
		span.SetAttributes(attribute.String("big", strings.Repeat("x", 1<<20)))
		span.End()
		if err := shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		spans := col.Spans()
		if len(spans) != 1 {
			t.Fatalf("collector got %d spans, want 1", len(spans))
		}
		if v, _ := spans[0].Attributes["big"].(string); len(v) != c.want {
			t.Errorf("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT=%q OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=%q: a 1 MiB attribute exported with %d bytes, want %d",
				c.span, c.all, len(v), c.want)
		}
	}
}
