// Package jaegertest starts a real Jaeger all-in-one on loopback for tests
// that export traces over OTLP and read them back through Jaeger's query
// API.
//
// The binary is built from the Go module proxy by a module of its own
// (internal/tools/jaeger in agentgraph's repository), so Jaeger's
// dependencies stay out of agentgraph's go.mod; .ci/run builds it into
// bin/jaeger. Tests find it through $AGENTGRAPH_JAEGER, at bin/jaeger of
// agentgraph's repository, or as jaeger on $PATH, and skip, saying how to
// build it, when it is in none of these places.
package jaegertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Jaeger is a running Jaeger all-in-one.
type Jaeger struct {
	// OTLPEndpoint is the base URL of its OTLP/HTTP receiver, the value of
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLPEndpoint string
	// QueryURL is the base URL of its query API.
	QueryURL string
}

// config is Jaeger's configuration: OTLP/HTTP in, memory storage, the query
// API out, everything on loopback, ports from the environment.
//
//go:embed jaeger.yaml
var config []byte

// Binary returns the path of the Jaeger binary, or "" when it is not built:
// $AGENTGRAPH_JAEGER, bin/jaeger of agentgraph's repository when this
// package is compiled from it, or jaeger on $PATH.
func Binary() string {
	if p := os.Getenv("AGENTGRAPH_JAEGER"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "bin", "jaeger")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath("jaeger"); err == nil {
		return p
	}
	return ""
}

// Start starts Jaeger for the test and stops it when the test ends. It
// skips the test when the binary is not built.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("Jaeger is not built: run `go build -C internal/tools/jaeger -o \"$PWD/bin/jaeger\" github.com/jaegertracing/jaeger/cmd/jaeger` at the repository root (or set AGENTGRAPH_JAEGER); .ci/run does")
	}
	cfg := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(cfg, config, 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", cfg)
	cmd.Env = append(os.Environ(),
		"JAEGER_OTLP_PORT="+strconv.Itoa(ports[0]),
		"JAEGER_QUERY_PORT="+strconv.Itoa(ports[1]),
		"JAEGER_QUERY_GRPC_PORT="+strconv.Itoa(ports[2]))
	logs, err := os.Create(filepath.Join(t.TempDir(), "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start jaeger: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = logs.Close()
	})
	j := &Jaeger{
		OTLPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", ports[0]),
		QueryURL:     fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
	}
	// Wait for both listeners; Jaeger needs a few seconds on a busy machine.
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range ports[:2] {
		for {
			select {
			case <-done:
				out, _ := os.ReadFile(logs.Name())
				t.Fatalf("jaeger exited early:\n%s", out)
			default:
			}
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), time.Second)
			if err == nil {
				_ = c.Close()
				break
			}
			if time.Now().After(deadline) {
				out, _ := os.ReadFile(logs.Name())
				t.Fatalf("jaeger did not listen on %d within 60 s:\n%s", p, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return j
}

// Span is a span as Jaeger's query API returns it.
type Span struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

// Tag returns the value of the span's tag key, or nil.
func (s Span) Tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

// Parent returns the span id of the span's parent, or "".
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Spans polls the query API until service has at least min spans, or the
// deadline of ctx, and returns the spans of all its traces.
func (j *Jaeger) Spans(ctx context.Context, service string, min int) ([]Span, error) {
	for {
		spans, err := j.spans(ctx, service)
		if err == nil && len(spans) >= min {
			return spans, nil
		}
		select {
		case <-ctx.Done():
			return spans, fmt.Errorf("jaeger: %d spans of service %q, want %d: %w (last error: %v)", len(spans), service, min, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (j *Jaeger) spans(ctx context.Context, service string) ([]Span, error) {
	u := j.QueryURL + "/api/traces?limit=100&service=" + url.QueryEscape(service)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger query: %s", resp.Status)
	}
	var body struct {
		Data []struct {
			Spans []Span `json:"spans"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	var out []Span
	for _, tr := range body.Data {
		out = append(out, tr.Spans...)
	}
	return out, nil
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}
