package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// requestLog records what requests reached a server.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.Method+" "+r.URL.Path+" Authorization="+r.Header.Get("Authorization")+" X-Api-Key="+r.Header.Get("X-Api-Key"))
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// ownAuthorizationServer serves on mux the metadata of an MCP server at
// *rs/mcp that is its own authorization server, whose token endpoint is
// *rs/token (for a client_secret_post client).
func ownAuthorizationServer(mux *http.ServeMux, rs **httptest.Server) {
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": (*rs).URL + "/mcp", "authorization_servers": []string{(*rs).URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": (*rs).URL, "token_endpoint": (*rs).URL + "/token", "token_endpoint_auth_methods_supported": []string{"client_secret_post"}})
	})
}

// A server that redirects to another origin gets neither its bearer token
// nor its static headers sent there: the redirect is not followed.
func TestRedirectToAnotherOriginNotFollowed(t *testing.T) {
	var elsewhere requestLog
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.add(r)
		server.NewStreamableHTTPServer(testserver.New("other").MCP).ServeHTTP(w, r)
	}))
	defer other.Close()
	var rs *httptest.Server
	mux := http.NewServeMux()
	ownAuthorizationServer(mux, &rs)
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"access_token": "SECRET-TOKEN", "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer SECRET-TOKEN" {
			w.Header().Set("WWW-Authenticate", `Bearer`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		// The same host by another name is another origin.
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/mcp", http.StatusTemporaryRedirect)
	})
	rs = httptest.NewServer(mux)
	defer rs.Close()
	m := newManager(t, mcp.ManagerConfig{CallTimeout: 5 * time.Second}, mcp.Server{Name: "r", URL: rs.URL + "/mcp", NoListen: true,
		Headers: map[string]string{"X-Api-Key": "static-api-key"},
		OAuth:   &mcp.OAuth{ClientID: "cid", ClientSecret: "csecret", GrantType: "client_credentials"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := m.Check(ctx, "r")
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("Check = %v, want an error saying the redirect to another origin was not followed", err)
	}
	if h.State == mcp.HealthHealthy {
		t.Errorf("a server that only redirects elsewhere is %s", h.State)
	}
	if got := elsewhere.all(); len(got) > 0 {
		t.Errorf("the other origin received %d requests: %q", len(got), got)
	}
}

// A redirect within the server's origin is still followed.
func TestRedirectWithinOriginFollowed(t *testing.T) {
	h := server.NewStreamableHTTPServer(testserver.New("web").MCP)
	mux := http.NewServeMux()
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
	})
	mux.Handle("/mcp", h)
	hs := httptest.NewServer(mux)
	defer hs.Close()
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "web", URL: hs.URL + "/old", NoListen: true})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	if res, err := echo(context.Background(), s, "web", "moved"); err != nil || res.Text() != "moved" {
		t.Fatalf("call through a same-origin redirect: %v %+v", err, res)
	}
}

// countingTransport counts the response body bytes the client read.
type countingTransport struct {
	next http.RoundTripper
	read atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// endless generates n bytes of 'x' without holding them.
type endless struct{ n, max int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= e.max {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.max-e.n)]
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A tool call answered with a huge body of any status reads little of it:
// an error status's body is cut off at 64 KiB, a 2xx body at
// MaxMessageBytes.
func TestHugeResponseBodiesBounded(t *testing.T) {
	const maxMessage = 1 << 20
	for _, c := range []struct {
		status  int
		maxRead int64
	}{
		{http.StatusInternalServerError, 512 << 10},
		{http.StatusBadRequest, 512 << 10},
		{http.StatusAccepted, maxMessage + 512<<10},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			h := server.NewStreamableHTTPServer(testserver.New("web").MCP)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.Method == http.MethodPost && bytes.Contains(body, []byte(`"tools/call"`)) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(c.status)
					io.Copy(w, &endless{max: 1 << 30})
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				h.ServeHTTP(w, r)
			}))
			defer hs.Close()
			ct := &countingTransport{next: http.DefaultTransport}
			m := newManager(t, mcp.ManagerConfig{CallTimeout: 20 * time.Second, MaxMessageBytes: maxMessage, HTTPClient: &http.Client{Transport: ct}},
				mcp.Server{Name: "web", URL: hs.URL, NoListen: true})
			s := m.NewSession(mcp.Callbacks{})
			defer s.Close()
			before := ct.read.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := echo(ctx, s, "web", "hi")
			if err == nil {
				t.Fatal("a call answered with a 1 GiB body succeeded")
			}
			if n := ct.read.Load() - before; n > c.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", n, c.maxRead)
			}
			if n := len(err.Error()); n > 128<<10 {
				t.Errorf("the error holds %d bytes", n)
			}
		})
	}
}

// A server that assigns an over-long session id is refused, and the id is
// never sent back.
func TestLongSessionIDRefused(t *testing.T) {
	var longest atomic.Int64
	h := server.NewStreamableHTTPServer(testserver.New("web").MCP, server.WithStateLess(true))
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := int64(len(r.Header.Get("Mcp-Session-Id"))); n > longest.Load() {
			longest.Store(n)
		}
		w.Header().Set("Mcp-Session-Id", strings.Repeat("s", 5<<20))
		h.ServeHTTP(w, r)
	}))
	hs.Config.MaxHeaderBytes = 16 << 20 // the server would take it back
	hs.Start()
	defer hs.Close()
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "web", URL: hs.URL, NoListen: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := m.Check(ctx, "web")
	if err == nil || !strings.Contains(err.Error(), "Mcp-Session-Id") {
		t.Errorf("Check = %v, want an error naming the Mcp-Session-Id", err)
	}
	if n := longest.Load(); n > 0 {
		t.Errorf("the client sent back a session id of %d bytes", n)
	}
}

// The client's secret goes only to an authorization server its OAuth
// config allows (by default the MCP server's own origin) whose metadata
// names the issuer it was fetched for (RFC 8414 §3.3).
func TestOAuthSecretOnlyToAllowedServer(t *testing.T) {
	for _, c := range []struct {
		name      string
		allow     bool   // list the authorization server in OAuth.AuthorizationServers
		issuer    string // the issuer its metadata names; "" for its own URL
		wantErr   string // "" for success
		wantToken bool   // the token endpoint is asked
	}{
		{name: "not allowed", wantErr: "OAuth.AuthorizationServers"},
		{name: "wrong issuer", allow: true, issuer: "https://legit.example", wantErr: "RFC 8414"},
		{name: "allowed", allow: true, wantToken: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tokenRequests atomic.Int64
			var as *httptest.Server
			asMux := http.NewServeMux()
			asMux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
				issuer := c.issuer
				if issuer == "" {
					issuer = as.URL
				}
				json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "token_endpoint": as.URL + "/token", "token_endpoint_auth_methods_supported": []string{"client_secret_post"}})
			})
			asMux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
				tokenRequests.Add(1)
				r.ParseForm()
				if r.PostForm.Get("client_secret") != "csecret" {
					http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
					return
				}
				json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "Bearer", "expires_in": 3600})
			})
			as = httptest.NewServer(asMux)
			defer as.Close()
			h := server.NewStreamableHTTPServer(testserver.New("r").MCP)
			var rs *httptest.Server
			rsMux := http.NewServeMux()
			rsMux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
				json.NewEncoder(w).Encode(map[string]any{"resource": rs.URL + "/mcp", "authorization_servers": []string{as.URL}})
			})
			rsMux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				if !authorized(w, r, "Bearer tok", rs.URL+"/.well-known/oauth-protected-resource/mcp") {
					return
				}
				h.ServeHTTP(w, r)
			})
			rs = httptest.NewServer(rsMux)
			defer rs.Close()
			o := &mcp.OAuth{ClientID: "cid", ClientSecret: "csecret", GrantType: "client_credentials"}
			if c.allow {
				o.AuthorizationServers = []string{as.URL}
			}
			m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "r", URL: rs.URL + "/mcp", NoListen: true, OAuth: o})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := m.Check(ctx, "r")
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Check = %v, want an error naming %s", err, c.wantErr)
			}
			if got := tokenRequests.Load() > 0; got != c.wantToken {
				t.Errorf("token endpoint asked: %v, want %v", got, c.wantToken)
			}
		})
	}
}

// A token endpoint that redirects to another origin does not get the
// client's secret posted there.
func TestOAuthTokenRedirectNotFollowed(t *testing.T) {
	var elsewhere requestLog
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.add(r)
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "Bearer"})
	}))
	defer other.Close()
	var rs *httptest.Server
	mux := http.NewServeMux()
	ownAuthorizationServer(mux, &rs)
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	rs = httptest.NewServer(mux)
	defer rs.Close()
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "r", URL: rs.URL + "/mcp", NoListen: true,
		OAuth: &mcp.OAuth{ClientID: "cid", ClientSecret: "csecret", GrantType: "client_credentials"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.Check(ctx, "r"); err == nil {
		t.Error("Check succeeded without a token")
	}
	if got := elsewhere.all(); len(got) > 0 {
		t.Errorf("the other origin received %q", got)
	}
}

// A server that never answers the DELETE ending its session does not hold
// Shutdown past its context: the rest of the close goes on in the
// background, bounded, and a later Shutdown waits for it.
func TestShutdownServerHangsOnDelete(t *testing.T) {
	h := server.NewStreamableHTTPServer(testserver.New("web").MCP)
	deleted := make(chan struct{}, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deleted <- struct{}{}
			<-r.Context().Done() // until the client gives up
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	m, err := mcp.NewManager(mcp.ManagerConfig{Resilience: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add(mcp.Server{Name: "web", URL: hs.URL, NoListen: true}); err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(mcp.Callbacks{})
	if _, err := echo(context.Background(), s, "web", "hi"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-deleted; cancel() }() // ends Shutdown's ctx while the DELETE hangs
	if err := m.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown while the server hangs on DELETE = %v, want context.Canceled", err)
	}
	wait, cancelWait := context.WithTimeout(context.Background(), time.Minute) // bounds a hang only
	defer cancelWait()
	if err := m.Shutdown(wait); err != nil {
		t.Fatalf("the close left to the background did not finish: %v", err)
	}
}
