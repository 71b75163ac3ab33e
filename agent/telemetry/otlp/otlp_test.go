package otlp_test

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/telemetry/otlp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type echo struct{}

func (echo) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return &model.Response{Message: model.Assistant("hi"), Model: "m-1"}, nil
}

func (echo) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return nil
}

// collector is an OTLP/HTTP trace receiver: it decodes what the exporter
// posts the way a collector does.
type collector struct {
	mu    sync.Mutex
	spans []string
	svc   []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/traces" {
		w.WriteHeader(http.StatusOK)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				c.svc = append(c.svc, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, s.Name)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func TestFromEnvExportsOverOTLP(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
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
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.spans) != 1 || col.spans[0] != "chat gpt-x" {
		t.Errorf("collector got spans %q, want [chat gpt-x]", col.spans)
	}
	if len(col.svc) == 0 || col.svc[0] != "otlp-test" {
		t.Errorf("service.name = %q, want otlp-test from OTEL_SERVICE_NAME", col.svc)
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
