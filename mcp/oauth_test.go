package mcp_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"
)

// authServer is an OAuth 2.1 authorization server with dynamic registration
// and PKCE, and the MCP test server behind it. Tokens name their scopes;
// tools/call needs "tools:call" on top of "tools:read".
type authServer struct {
	t         *testing.T
	as, rs    *httptest.Server
	mu        sync.Mutex
	challenge map[string]string // code -> PKCE challenge
	scopes    map[string]string // code -> scope
	requests  []string          // scopes asked for at /authorize
	tokens    int
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{t: t, challenge: map[string]string{}, scopes: map[string]string{}}
	asMux := http.NewServeMux()
	a.as = httptest.NewServer(asMux)
	t.Cleanup(a.as.Close)
	asMux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": a.as.URL, "authorization_endpoint": a.as.URL + "/authorize", "token_endpoint": a.as.URL + "/token",
			"registration_endpoint": a.as.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	asMux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "registered-client", "token_endpoint_auth_method": "none"})
	})
	asMux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != "registered-client" || q.Get("code_challenge_method") != "S256" || q.Get("resource") != a.rs.URL+"/mcp" {
			http.Error(w, "bad authorization request "+q.Encode(), http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		code := "code-" + q.Get("state")
		a.challenge[code] = q.Get("code_challenge")
		a.scopes[code] = q.Get("scope")
		a.requests = append(a.requests, q.Get("scope"))
		a.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+q.Get("state"), http.StatusFound)
	})
	asMux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		code := r.PostForm.Get("code")
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		a.mu.Lock()
		defer a.mu.Unlock()
		if r.PostForm.Get("grant_type") != "authorization_code" || a.challenge[code] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		a.tokens++
		json.NewEncoder(w).Encode(map[string]any{"access_token": "scopes:" + a.scopes[code], "token_type": "Bearer", "expires_in": 3600})
	})

	mcpHandler := server.NewStreamableHTTPServer(testserver.New("guarded").MCP)
	rsMux := http.NewServeMux()
	a.rs = httptest.NewServer(rsMux)
	t.Cleanup(a.rs.Close)
	rsMux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": a.rs.URL + "/mcp", "authorization_servers": []string{a.as.URL}, "scopes_supported": []string{"tools:read", "tools:call"}})
	})
	rsMux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		need := []string{"tools:read"}
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			need = append(need, "tools:call")
		}
		granted := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "scopes:"))
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer scopes:") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.rs.URL+`/.well-known/oauth-protected-resource/mcp", scope="tools:read"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		for _, s := range need {
			if !contains(granted, s) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(need, " ")+`"`)
				http.Error(w, "insufficient scope", http.StatusForbidden)
				return
			}
		}
		mcpHandler.ServeHTTP(w, r)
	})
	return a
}

// authorized reports whether r carries the Authorization header want; when
// not, it answers 401 with a bearer challenge naming the protected resource
// metadata at metadata (a URL).
func authorized(w http.ResponseWriter, r *http.Request, want, metadata string) bool {
	if r.Header.Get("Authorization") == want {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+metadata+`"`)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// headless follows the authorization server's redirect without a browser.
func headless(ctx context.Context, authURL string) (*url.URL, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, errors.New(resp.Status)
	}
	return url.Parse(resp.Header.Get("Location"))
}

func TestOAuth(t *testing.T) {
	a := newAuthServer(t)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "guarded", URL: a.rs.URL + "/mcp", OAuth: &mcp.OAuth{Authorize: headless}})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := echo(context.Background(), s, "guarded", "authorized")
	if err != nil || res.Text() != "authorized" {
		t.Fatalf("call behind OAuth: %v %+v", err, res)
	}
	// The first authorization asks for the challenge's scope; the 403 on
	// tools/call steps up to both.
	if diff := cmp.Diff([]string{"tools:read", "tools:read tools:call"}, a.requests); diff != "" {
		t.Errorf("scopes asked for (-want +got):\n%s", diff)
	}
	if _, err := echo(context.Background(), s, "guarded", "again"); err != nil {
		t.Fatal(err)
	}
	if a.tokens != 2 {
		t.Errorf("%d tokens issued, want 2 (the token is reused)", a.tokens)
	}
}

func TestOAuthWithoutAuthorize(t *testing.T) {
	a := newAuthServer(t)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "guarded", URL: a.rs.URL + "/mcp", OAuth: &mcp.OAuth{}})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	_, err := echo(context.Background(), s, "guarded", "x")
	var ae *mcp.AuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "set OAuth.Authorize") {
		t.Fatalf("err = %v, want an AuthError telling to set OAuth.Authorize", err)
	}
	if h := health(t, m, "guarded"); h.Failures > 1 {
		t.Errorf("an authorization failure was retried: %+v", h)
	}
}
