// Package otlptest is an OTLP/HTTP receiver for tests: an httptest server
// that decodes the spans an exporter posts (protobuf, as
// OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf sends them) the way a collector
// does, so that a test can point OTEL_EXPORTER_OTLP_ENDPOINT at it and check
// what a program exported without a collector or Jaeger running.
//
// Metrics and logs are accepted and dropped.
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// maxBody bounds one export request; a larger one is refused.
const maxBody = 32 << 20

// maxSpans bounds what a Receiver keeps; later spans are counted in
// Dropped, not kept.
const maxSpans = 100_000

// Span is a received span: its names, ids and attributes, with the
// service.name of the resource that sent it.
type Span struct {
	// Service is the service.name resource attribute of the exporter.
	Service string
	// Name is the span's name.
	Name string
	// TraceID, SpanID and ParentSpanID are hex encoded; ParentSpanID is
	// empty for a root span.
	TraceID, SpanID, ParentSpanID string
	// Attributes holds the span's attributes, each as its Go value
	// (string, bool, int64, float64, or []any for arrays).
	Attributes map[string]any
	// Events lists the names of the span's events in order.
	Events []string
}

// Receiver is a running OTLP/HTTP receiver. It is safe for concurrent use.
type Receiver struct {
	// Endpoint is the receiver's base URL, the value for
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string

	mu      sync.Mutex
	spans   []Span
	dropped int
}

// Start starts a receiver on loopback, stopped when the test ends, and
// points the OTLP exporters of the test at it through the standard
// variables: OTEL_EXPORTER_OTLP_ENDPOINT is its endpoint, the protocol
// http/protobuf, metrics are not exported (OTEL_METRICS_EXPORTER=none),
// and OTEL_SERVICE_NAME, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_EXPORTER_OTLP_COMPRESSION and OTEL_RESOURCE_ATTRIBUTES are cleared,
// so the spans reach the receiver as the program makes them, under its
// default service name. Like t.Setenv, it cannot be used
// in parallel tests.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.Endpoint = srv.URL
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	// Cleared: each would send the spans elsewhere, or change them, in
	// place of the endpoint above.
	for _, v := range []string{"OTEL_SERVICE_NAME", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(v, "")
	}
	return r
}

// Spans returns the spans received so far, in the order they arrived.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Root returns the one received root span (a span without a parent) whose
// name starts with prefix, and fails the test when there is none or more
// than one.
func (r *Receiver) Root(t testing.TB, prefix string) Span {
	t.Helper()
	var roots []Span
	for _, s := range r.Spans() {
		if s.ParentSpanID == "" && strings.HasPrefix(s.Name, prefix) {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("otlptest: %d root spans named %q*, want 1; received %+v", len(roots), prefix, r.Spans())
	}
	return roots[0]
}

// Trace returns the names of the received spans of the trace traceID, in
// the order they arrived.
func (r *Receiver) Trace(traceID string) []string {
	var out []string
	for _, s := range r.Spans() {
		if s.TraceID == traceID {
			out = append(out, s.Name)
		}
	}
	return out
}

// Missing returns the names of want that no received span of the trace
// traceID has.
func (r *Receiver) Missing(traceID string, want ...string) []string {
	have := r.Trace(traceID)
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// Dropped reports how many spans arrived after the receiver held its
// maximum (100,000) and were not kept.
func (r *Receiver) Dropped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// ServeHTTP decodes an export request. Trace exports are decoded and kept;
// other signals are answered and dropped.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "otlptest: POST an export request", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
	if err != nil {
		http.Error(w, "otlptest: reading the request: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	if req.URL.Path != "/v1/traces" {
		w.WriteHeader(http.StatusOK)
		return
	}
	var export collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		http.Error(w, "otlptest: not an OTLP trace export: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range export.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if len(r.spans) >= maxSpans {
					r.dropped++
					continue
				}
				sp := Span{Service: service, Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Attributes: map[string]any{}}
				for _, a := range s.GetAttributes() {
					sp.Attributes[a.GetKey()] = value(a.GetValue())
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}
