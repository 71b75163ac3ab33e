package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// A server without protected resource metadata (2025-03-26) is its own
// authorization server: a client whose credentials are restricted to other
// authorization servers refuses it, and metadata on an allowed origin
// cannot send the credentials to a token endpoint elsewhere.
func TestOAuthNoResourceMetadataRestricted(t *testing.T) {
	for _, c := range []struct {
		name    string
		allow   func(rs, other string) []string
		tokenAt string // "rs" or "other": where the MCP origin's metadata puts the token endpoint
		wantErr string
	}{
		{name: "server origin not allowed", allow: func(rs, other string) []string { return []string{"https://auth.example.com"} }, tokenAt: "rs", wantErr: "OAuth.AuthorizationServers"},
		{name: "token endpoint elsewhere", tokenAt: "other", wantErr: "token_endpoint"},
		{name: "token endpoint elsewhere, allowed", allow: func(rs, other string) []string { return []string{rs, other} }, tokenAt: "other"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tokens requestLog
			tokenHandler := func(w http.ResponseWriter, r *http.Request) {
				r.ParseForm()
				tokens.mu.Lock()
				tokens.seen = append(tokens.seen, r.Host+" secret="+r.PostForm.Get("client_secret"))
				tokens.mu.Unlock()
				json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "Bearer", "expires_in": 3600})
			}
			other := httptest.NewServer(http.HandlerFunc(tokenHandler))
			defer other.Close()
			h := server.NewStreamableHTTPServer(testserver.New("r").MCP)
			var rs *httptest.Server
			mux := http.NewServeMux()
			mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				at := rs.URL
				if c.tokenAt == "other" {
					at = other.URL
				}
				json.NewEncoder(w).Encode(map[string]any{"issuer": rs.URL, "token_endpoint": at + "/token", "token_endpoint_auth_methods_supported": []string{"client_secret_post"}})
			})
			mux.HandleFunc("/token", tokenHandler)
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer tok" {
					w.Header().Set("WWW-Authenticate", `Bearer`)
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				h.ServeHTTP(w, r)
			})
			rs = httptest.NewServer(mux) // 404 on /.well-known/oauth-protected-resource*
			defer rs.Close()
			o := &mcp.OAuth{ClientID: "cid", ClientSecret: "csecret", GrantType: "client_credentials"}
			if c.allow != nil {
				o.AuthorizationServers = c.allow(rs.URL, other.URL)
			}
			m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "r", URL: rs.URL + "/mcp", NoListen: true, OAuth: o})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := m.Check(ctx, "r")
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if got := tokens.all(); len(got) != 1 || !strings.HasPrefix(got[0], strings.TrimPrefix(other.URL, "http://")) {
					t.Errorf("token requests %q, want one at %s", got, other.URL)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Check = %v, want an error naming %s", err, c.wantErr)
			}
			if got := tokens.all(); len(got) > 0 {
				t.Errorf("the client's secret was posted: %q", got)
			}
		})
	}
}

// A refresh token one authorization server issued is never posted to
// another one the server names later.
func TestOAuthRefreshTokenStaysWithIssuer(t *testing.T) {
	type seen struct {
		mu    sync.Mutex
		forms []string
	}
	newAS := func(name string, s *seen, refuseCC *atomic.Bool) *httptest.Server {
		var as *httptest.Server
		mux := http.NewServeMux()
		mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token", "token_endpoint_auth_methods_supported": []string{"client_secret_post"}})
		})
		mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			s.mu.Lock()
			s.forms = append(s.forms, r.PostForm.Get("grant_type")+" "+r.PostForm.Get("refresh_token"))
			s.mu.Unlock()
			if r.PostForm.Get("grant_type") != "client_credentials" || refuseCC.Load() {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"access_token": name, "refresh_token": "r-" + name, "token_type": "Bearer", "expires_in": 3600})
		})
		as = httptest.NewServer(mux)
		return as
	}
	var seen1, seen2 seen
	var refuse1, refuse2 atomic.Bool
	as1 := newAS("a1", &seen1, &refuse1)
	defer as1.Close()
	as2 := newAS("a2", &seen2, &refuse2)
	defer as2.Close()
	refuse2.Store(true)
	var phase atomic.Int64 // 0: AS1 authorizes; 1: AS2 does
	h := server.NewStreamableHTTPServer(testserver.New("r").MCP)
	var rs *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/prm/", func(w http.ResponseWriter, r *http.Request) {
		as := as1.URL
		if strings.HasSuffix(r.URL.Path, "/2") {
			as = as2.URL
		}
		json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL + "/mcp", "authorization_servers": []string{as}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		want, prm := "Bearer a1", "/prm/1"
		if phase.Load() == 1 {
			want, prm = "Bearer a2", "/prm/2"
		}
		if !authorized(w, r, want, rs.URL+prm) {
			return
		}
		h.ServeHTTP(w, r)
	})
	rs = httptest.NewServer(mux)
	defer rs.Close()
	o := &mcp.OAuth{ClientID: "cid", ClientSecret: "csecret", GrantType: "client_credentials", AnyAuthorizationServer: true}
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "r", URL: rs.URL + "/mcp", NoListen: true, OAuth: o})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "r"); err != nil {
		t.Fatalf("Check with AS1: %v", err)
	}
	phase.Store(1)
	if _, err := m.Check(ctx, "r"); err == nil {
		t.Fatal("Check succeeded while AS2 refuses")
	}
	refuse2.Store(false)
	if _, err := m.Check(ctx, "r"); err != nil {
		t.Fatalf("Check with AS2: %v", err)
	}
	seen2.mu.Lock()
	defer seen2.mu.Unlock()
	for _, f := range seen2.forms {
		if strings.Contains(f, "r-a1") {
			t.Errorf("AS2 received AS1's refresh token: %q", seen2.forms)
		}
	}
}

// The time a person takes to authorize the client (OAuth.Authorize) does
// not count against ConnectTimeout; the caller's context bounds it.
func TestOAuthAuthorizeOutsideConnectTimeout(t *testing.T) {
	a := newAuthServer(t)
	// The connect's own work (discovery, token, initialize on loopback)
	// must fit in limit on a loaded machine; the login takes 3 limits.
	const limit = time.Second
	slow := func(ctx context.Context, authURL string) (*url.URL, error) {
		select {
		case <-ctx.Done(): // the connect's limit ran out while the person was busy
			return nil, context.Cause(ctx)
		case <-time.After(3 * limit):
		}
		return headless(ctx, authURL)
	}
	m := newManager(t, mcp.ManagerConfig{ConnectTimeout: limit}, mcp.Server{Name: "guarded", URL: a.rs.URL + "/mcp", NoListen: true, OAuth: &mcp.OAuth{Authorize: slow}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "guarded"); err != nil {
		t.Fatalf("Check: %v", err)
	}
}
