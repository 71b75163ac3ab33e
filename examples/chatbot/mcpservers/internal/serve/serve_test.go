package serve_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/serve"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// urlWriter passes the URL HTTP logs to a channel.
type urlWriter chan string

func (w urlWriter) Write(p []byte) (int, error) {
	if u, ok := strings.CutPrefix(strings.TrimSpace(string(p)), "serving MCP at "); ok {
		w <- u
	}
	return len(p), nil
}

func TestHTTPRefusesReachableAddressWithoutToken(t *testing.T) {
	s := server.NewMCPServer("t", "1.0.0")
	err := serve.HTTP(context.Background(), s, "0.0.0.0:0", serve.Auth{Required: true}, serve.Limits{}, io.Discard)
	if !errors.Is(err, serve.ErrNoToken) {
		t.Errorf("HTTP on 0.0.0.0 without a token: %v, want ErrNoToken", err)
	}
}

func TestHTTPToken(t *testing.T) {
	s := server.NewMCPServer("t", "1.0.0")
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(urlWriter, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.HTTP(ctx, s, "127.0.0.1:0", serve.Auth{Token: "s3cret", Required: true}, serve.Limits{}, urls)
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("HTTP: %v", err)
	}
	post := func(auth string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}, {"bearer s3cret", http.StatusOK}} {
		if got := post(tc.auth); got != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, got, tc.want)
		}
	}
	// A refused request whose body never ends is answered without
	// waiting for it.
	if got := stuckBody(t, url, "Bearer wrong"); got != http.StatusUnauthorized {
		t.Errorf("refused request with a stuck body: status %d, want 401", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("HTTP after cancel: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
}

// stuckBody posts to url a request whose body sends a little and then
// nothing more, and returns the answer's status. The request gives up after
// a minute, failing the test.
func stuckBody(t *testing.T, url, auth string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"jsonrpc":"2.0",`)) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 1000
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatalf("request with a stuck body: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A request body that stops arriving is refused after Limits.BodyTimeout.
func TestBodyTimeout(t *testing.T) {
	ts := newTestServer(t, serve.Limits{BodyTimeout: 50 * time.Millisecond})
	if got := stuckBody(t, ts.url, ""); got != http.StatusRequestTimeout {
		t.Errorf("stuck body: status %d, want 408", got)
	}
}
