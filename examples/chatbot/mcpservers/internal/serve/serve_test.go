package serve_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

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
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}} {
		if got := post(tc.auth); got != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, got, tc.want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("HTTP after cancel: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
}
