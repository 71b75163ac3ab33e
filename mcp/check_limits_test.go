package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// Check's probe is bounded by the server's CallTimeout, not only by the
// caller's context, and running out of it counts as a timeout.
func TestCheckBoundedByCallTimeout(t *testing.T) {
	h := server.NewStreamableHTTPServer(testserver.New("r").MCP)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"method":"ping"`)) {
			<-r.Context().Done() // never answers
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	m := newManager(t, mcp.ManagerConfig{CallTimeout: 50 * time.Millisecond, PingTimeout: 50 * time.Millisecond},
		mcp.Server{Name: "r", URL: srv.URL, NoListen: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hl, err := m.Check(ctx, "r")
	var te *mcp.TimeoutError
	if !errors.As(err, &te) || te.Request != "ping" || ctx.Err() != nil {
		t.Fatalf("Check = %v (caller's context: %v), want a ping TimeoutError", err, ctx.Err())
	}
	if !strings.Contains(err.Error(), "CallTimeout") {
		t.Errorf("error %q does not name CallTimeout", err)
	}
	if hl.Timeouts != 1 || hl.Failures != 1 {
		t.Errorf("health = %+v, want one timeout and one failure", hl)
	}
}

// Health reports the limits in force, and a connect that runs out of
// ConnectTimeout counts as a timeout.
func TestHealthLimitsAndConnectTimeouts(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	m := newManager(t, mcp.ManagerConfig{ConnectTimeout: 50 * time.Millisecond, MaxTools: 7},
		mcp.Server{Name: "r", URL: srv.URL, NoListen: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	hl, err := m.Check(ctx, "r")
	var te *mcp.TimeoutError
	if !errors.As(err, &te) || te.Request != "initialize" {
		t.Fatalf("Check = %v, want an initialize TimeoutError", err)
	}
	if hl.Timeouts != 1 || hl.Failures != 1 {
		t.Errorf("health = %+v, want one timeout and one failure", hl)
	}
	if hl.ConnectTimeout != 50*time.Millisecond || hl.MaxTools != 7 {
		t.Errorf("health reports ConnectTimeout %v and MaxTools %d, want 50ms and 7", hl.ConnectTimeout, hl.MaxTools)
	}
}

// A negative MaxTools is refused with an error naming the field.
func TestNegativeMaxToolsRefused(t *testing.T) {
	_, err := mcp.NewManager(mcp.ManagerConfig{MaxTools: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxTools") {
		t.Fatalf("NewManager = %v, want an error naming MaxTools", err)
	}
}
