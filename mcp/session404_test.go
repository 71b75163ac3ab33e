package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// interceptToolsCall serves h, except that the tools/call POSTs go to call,
// which counts them.
func interceptToolsCall(h http.Handler, calls *atomic.Int64, call http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				calls.Add(1)
				call(w, r)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// A server that accepted a call's POST, sent an event and ended the stream
// before the answer, then answered the resuming GET with 404, may have run
// the tool: a call that is not safe to repeat is not sent again.
func TestHTTPSessionLostAfterAcceptDoesNotRepeatUnsafeCall(t *testing.T) {
	ts := testserver.New("remote")
	h := server.NewStreamableHTTPServer(ts.MCP, server.WithStateful(true))
	var calls atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		interceptToolsCall(h, &calls, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			// An event with an ID, then the end of the stream before the
			// answer: the client resumes with Last-Event-ID.
			_, _ = io.WriteString(w, "id: 1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"working\"}}\n\n")
		}).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "remote", URL: hs.URL, NoListen: true})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "remote", Name: "progress", Arguments: map[string]any{"steps": 1}})
	if err == nil {
		t.Fatal("call succeeded without an answer")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the call was sent %d times, want 1 (the server accepted it)", n)
	}
}

// Under protocol 2026-07-28 a 404 is the server's answer that it has no
// such method: the call is not retried and does not count as a failure.
func TestHTTPModern404IsAnAnswer(t *testing.T) {
	ts := testserver.New("remote")
	h := server.NewStreamableHTTPServer(ts.MCP)
	var calls atomic.Int64
	hs := httptest.NewServer(interceptToolsCall(h, &calls, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`)
	}))
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "remote", URL: hs.URL, ProtocolVersion: mcp.ProtocolModern, NoListen: true})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	_, err := echo(context.Background(), s, "remote", "x")
	if err == nil {
		t.Fatal("call succeeded on a 404")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the call was sent %d times, want 1", n)
	}
	if h := health(t, m, "remote"); h.Failures != 0 || h.State != mcp.HealthHealthy {
		t.Errorf("health after a 404 answer = %+v, want healthy with no failures", h)
	}
}
