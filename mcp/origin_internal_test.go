package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/agentgraph/agentgraph/resilience"
)

// A redirect to another origin is refused for good: the server is not
// asked again by the retry policy.
func TestRedirectToAnotherOriginNotRetried(t *testing.T) {
	var other, asked atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.Add(1) }))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	listToolsRefused(t, srv.URL+"/mcp")
	if n := asked.Load(); n != 1 {
		t.Errorf("the server was asked %d times, want 1 (not retried)", n)
	}
	if n := other.Load(); n != 0 {
		t.Errorf("the other origin was asked %d times", n)
	}
}

// So is one met on a connected server: its tools/list is not retried.
func TestRedirectAfterConnectNotRetried(t *testing.T) {
	var lists atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer elsewhere.Close()
	h := server.NewStreamableHTTPServer(testserver.New("s").MCP)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			lists.Add(1)
			http.Redirect(w, r, strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)+"/mcp", http.StatusTemporaryRedirect)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	listToolsRefused(t, srv.URL)
	if n := lists.Load(); n != 1 {
		t.Errorf("tools/list was sent %d times, want 1 (not retried)", n)
	}
}

// listToolsRefused makes a manager (with fast retries) of the server at
// url, named s, and checks that its tools/list fails naming another
// origin.
func listToolsRefused(t *testing.T, url string) {
	t.Helper()
	r := resilience.MCP()
	r.Retry.BaseDelay, r.Retry.MaxDelay = time.Millisecond, 2*time.Millisecond
	m, err := NewManager(ManagerConfig{Resilience: &r})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add(Server{Name: "s", URL: url, NoListen: true}); err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.listTools(ctx, "s"); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Fatalf("listTools = %v, want an error naming another origin", err)
	}
}
