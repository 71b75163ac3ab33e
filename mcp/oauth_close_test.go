package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/mark3labs/mcp-go/server"
)

// Removing a server ends an OAuth authorization its connect waits for,
// rather than waiting for a person who may never come back.
func TestOAuthRemoveEndsPendingAuthorize(t *testing.T) {
	a := newAuthServer(t)
	entered := make(chan struct{})
	ended := make(chan error, 1)
	forever := func(ctx context.Context, authURL string) (*url.URL, error) {
		close(entered)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, ctx.Err()
	}
	m := newManager(t, mcp.ManagerConfig{ConnectTimeout: -1}, mcp.Server{Name: "guarded", URL: a.rs.URL + "/mcp", NoListen: true, OAuth: &mcp.OAuth{Authorize: forever}})
	checked := make(chan error, 1)
	go func() {
		_, err := m.Check(context.Background(), "guarded")
		checked <- err
	}()
	<-entered
	removed := make(chan error, 1)
	go func() { removed <- m.Remove("guarded") }()
	guard := time.NewTimer(10 * time.Second) // only bounds a failing test
	defer guard.Stop()
	select {
	case err := <-removed:
		if err != nil {
			t.Fatalf("Remove: %v", err)
		}
	case <-guard.C:
		t.Fatal("Remove still waits for the pending OAuth.Authorize")
	}
	if cause := <-ended; !errors.Is(cause, mcp.ErrShutdown) {
		t.Errorf("Authorize's context ended with %v, want ErrShutdown", cause)
	}
	if err := <-checked; err == nil {
		t.Error("Check succeeded although its server was removed during the connect")
	}
}

// An SSE server's OAuth challenge comes on the stream's GET, which runs
// under the manager's context: the authorization's time still does not
// count against ConnectTimeout, and Shutdown still ends it.
func TestOAuthSSEAuthorizeOutsideConnectTimeout(t *testing.T) {
	as := newPlainAS(t)
	var rs *httptest.Server
	sse := server.NewSSEServer(testserver.New("guarded").MCP)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/sse", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL + "/sse", "authorization_servers": []string{as.URL}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(w, r, "Bearer granted", rs.URL+"/.well-known/oauth-protected-resource/sse") {
			return
		}
		sse.ServeHTTP(w, r)
	})
	rs = httptest.NewServer(mux)
	t.Cleanup(rs.Close) // after the manager's shutdown ends the stream
	// The connect's own work (discovery, token, initialize on loopback)
	// must fit in limit on a loaded machine; the login takes 3 limits.
	const limit = time.Second
	slow := func(ctx context.Context, authURL string) (*url.URL, error) {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(3 * limit):
		}
		u, _ := url.Parse(authURL)
		q := u.Query()
		return url.Parse(q.Get("redirect_uri") + "?code=c&state=" + q.Get("state"))
	}
	m := newManager(t, mcp.ManagerConfig{ConnectTimeout: limit}, mcp.Server{Name: "guarded", URL: rs.URL + "/sse", Transport: mcp.TransportSSE, OAuth: &mcp.OAuth{Authorize: slow}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "guarded"); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// newPlainAS is an authorization server that registers every client and
// trades any authorization code or client credentials for the token
// "granted".
func newPlainAS(t *testing.T) *httptest.Server {
	var as *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "authorization_endpoint": as.URL + "/authorize", "token_endpoint": as.URL + "/token",
			"registration_endpoint": as.URL + "/register", "token_endpoint_auth_methods_supported": []string{"none", "client_secret_post"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "registered", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"access_token": "granted", "token_type": "Bearer", "expires_in": 3600})
	})
	as = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}
