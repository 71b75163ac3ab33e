package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/mark3labs/mcp-go/server"
)

// tenantServer is an MCP server that is its own authorization server
// (no protected resource metadata, 2025-03-26), whose metadata names the
// issuer <origin>/tenant. Its /mcp accepts only the latest token; its
// challenge names resource metadata at prm.
type tenantServer struct {
	hs            *httptest.Server
	registrations atomic.Int64
	tokens        atomic.Int64
	tokenDown     atomic.Int64 // token requests still to answer 503
	prmStatus     atomic.Int64 // the status of /prm (0: 404)
	valid         atomic.Pointer[string]
}

func newTenantServer(t *testing.T) *tenantServer {
	ts := &tenantServer{}
	h := server.NewStreamableHTTPServer(testserver.New("tenant").MCP)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		o := ts.hs.URL
		json.NewEncoder(w).Encode(map[string]any{"issuer": o + "/tenant", "authorization_endpoint": o + "/authorize", "token_endpoint": o + "/token",
			"registration_endpoint": o + "/register", "token_endpoint_auth_methods_supported": []string{"none"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		ts.registrations.Add(1)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "registered", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if ts.tokenDown.Add(-1) >= 0 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		tok := fmt.Sprintf("tok-%d", ts.tokens.Add(1))
		ts.valid.Store(&tok)
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/prm", func(w http.ResponseWriter, r *http.Request) {
		if s := ts.prmStatus.Load(); s != 0 {
			http.Error(w, "metadata unavailable", int(s))
			return
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if v := ts.valid.Load(); v == nil || r.Header.Get("Authorization") != "Bearer "+*v {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+ts.hs.URL+`/prm"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	ts.hs = httptest.NewServer(mux)
	t.Cleanup(ts.hs.Close)
	return ts
}

// manager returns a manager of the server, named tenant, authorized with
// redirectBack.
func (ts *tenantServer) manager(t *testing.T) *mcp.Manager {
	t.Helper()
	return newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "tenant", URL: ts.hs.URL + "/mcp", NoListen: true, OAuth: &mcp.OAuth{Authorize: redirectBack}})
}

// revoke makes the server refuse every token issued so far.
func (ts *tenantServer) revoke() {
	none := "revoked"
	ts.valid.Store(&none)
}

// redirectBack answers the authorization request as a user who agrees.
func redirectBack(ctx context.Context, authURL string) (*url.URL, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	return url.Parse(q.Get("redirect_uri") + "?code=c&state=" + q.Get("state"))
}

// Authorizing again at the same authorization server keeps the registered
// client, even when the server's metadata names its issuer otherwise than
// discovery does (here: without protected resource metadata, the MCP
// server's origin, while the metadata says <origin>/tenant).
func TestOAuthSameIssuerKeepsClient(t *testing.T) {
	ts := newTenantServer(t)
	m := ts.manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "tenant"); err != nil {
		t.Fatalf("Check: %v", err)
	}
	ts.revoke()
	if _, err := m.Check(ctx, "tenant"); err != nil {
		t.Fatalf("Check after the token was revoked: %v", err)
	}
	if n := ts.registrations.Load(); n != 1 {
		t.Errorf("the client registered %d times, want once: the authorization server did not change", n)
	}
}

// Protected resource metadata that cannot be served now (503) is not
// taken for "no metadata": the authorization fails with a transient
// AuthError naming the status, rather than guessing the authorization
// server.
func TestOAuthResourceMetadataDownIsTransient(t *testing.T) {
	ts := newTenantServer(t)
	ts.prmStatus.Store(http.StatusServiceUnavailable)
	m := ts.manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := m.Check(ctx, "tenant")
	var ae *mcp.AuthError
	if !errors.As(err, &ae) || !ae.Transient() || !strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "no protected resource metadata") {
		t.Fatalf("Check = %v, want a transient AuthError naming the 503", err)
	}
	if ts.tokens.Load() != 0 {
		t.Errorf("a token was obtained from a guessed authorization server")
	}
}

// An authorization server that is down (503) during a call fails the
// attempt with a transient AuthError, which the call's policy retries.
func TestOAuthTokenEndpointDownIsRetried(t *testing.T) {
	ts := newTenantServer(t)
	m := ts.manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "tenant"); err != nil {
		t.Fatalf("Check: %v", err)
	}
	ts.revoke()
	ts.tokenDown.Store(1)
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := echo(ctx, s, "tenant", "again")
	if err != nil || res.Text() != "again" {
		t.Fatalf("call while the token endpoint answered 503 once: %v, %+v; want a retry that succeeds", err, res)
	}
}

// A server that names another authorization server in its challenge is
// followed there, even while the old one would still refresh the token.
func TestOAuthSwitchedAuthorizationServerFollowed(t *testing.T) {
	newAS := func(name string) *httptest.Server {
		var as *httptest.Server
		mux := http.NewServeMux()
		mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token", "token_endpoint_auth_methods_supported": []string{"client_secret_post"}})
		})
		mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"access_token": name, "refresh_token": "r-" + name, "token_type": "Bearer", "expires_in": 3600})
		})
		as = httptest.NewServer(mux)
		t.Cleanup(as.Close)
		return as
	}
	as1, as2 := newAS("a1"), newAS("a2")
	var phase atomic.Int64 // 0: AS1 authorizes; 1: AS2 does
	h := server.NewStreamableHTTPServer(testserver.New("r").MCP)
	var rs *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/prm", func(w http.ResponseWriter, r *http.Request) {
		as := as1.URL
		if phase.Load() == 1 {
			as = as2.URL
		}
		json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL + "/mcp", "authorization_servers": []string{as}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		want := "Bearer a1"
		if phase.Load() == 1 {
			want = "Bearer a2"
		}
		if !authorized(w, r, want, rs.URL+"/prm") {
			return
		}
		h.ServeHTTP(w, r)
	})
	rs = httptest.NewServer(mux)
	t.Cleanup(rs.Close)
	o := &mcp.OAuth{ClientID: "cid", ClientSecret: "csecret", GrantType: "client_credentials", AnyAuthorizationServer: true}
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "r", URL: rs.URL + "/mcp", NoListen: true, OAuth: o})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "r"); err != nil {
		t.Fatalf("Check with AS1: %v", err)
	}
	phase.Store(1)
	if _, err := m.Check(ctx, "r"); err != nil {
		t.Fatalf("Check after the server moved to AS2 (AS1 still refreshes): %v", err)
	}
}
