package guard_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// TestBearerSchemeIgnoresCase: the scheme of "Authorization: Bearer
// TOKEN" is matched without regard to case and may be followed by spaces
// or tabs (RFC 9110); another scheme, a scheme run into the token, or no
// token is not a bearer token.
func TestBearerSchemeIgnoresCase(t *testing.T) {
	t.Parallel()
	g, _ := guard.New(guard.Config{Tokens: twoTokens})
	h := g.Handler(whoami)
	for _, c := range []struct {
		header string
		want   int
	}{
		{"Bearer " + aliceToken, http.StatusOK},
		{"bearer " + aliceToken, http.StatusOK},
		{"BEARER " + aliceToken, http.StatusOK},
		{"bEaReR " + aliceToken, http.StatusOK},
		{"Bearer\t" + aliceToken, http.StatusOK},
		{"Bearer  \t " + aliceToken, http.StatusOK},
		{"Bearer" + aliceToken, http.StatusUnauthorized},
		{"Bearer", http.StatusUnauthorized},
		{"Bearer ", http.StatusUnauthorized},
		{"Bearerx " + aliceToken, http.StatusUnauthorized},
		{"Basic " + aliceToken, http.StatusUnauthorized},
		{"Bearer " + aliceToken + "x", http.StatusUnauthorized},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api", nil)
		r.Header.Set("Authorization", c.header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want || c.want == http.StatusOK && w.Body.String() != "alice:" {
			t.Errorf("Authorization %q: %d %s, want %d", c.header, w.Code, w.Body, c.want)
		}
	}
	for header, want := range map[string]string{"bearer " + aliceToken: aliceToken, "BEARER\t" + bobToken: bobToken,
		"Bearer a b": "a b", "Bearer": "", "Bearer \t": "", "Basic x": "", "Bearerx y": ""} {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api", nil)
		r.Header.Set("Authorization", header)
		if tok, ok := guard.BearerToken(r); tok != want || ok != (want != "") {
			t.Errorf("BearerToken of %q: %q %v, want %q", header, tok, ok, want)
		}
	}
}

// TestOriginComparesScheme: an origin is its scheme, host and port, the
// default port of the scheme when it names none: a request over plain
// HTTP refuses an https Origin of the same host and port, a request over
// TLS an http one; a proxy in front that ended TLS says so with
// X-Forwarded-Proto or Forwarded's proto=; Config.AllowedOrigins match
// with their default ports too.
func TestOriginComparesScheme(t *testing.T) {
	t.Parallel()
	g, _ := guard.New(guard.Config{Tokens: twoTokens, AllowedOrigins: []string{"https://App.example:443", "http://dev.example:8080/",
		"chrome-extension://ABCDEF"}})
	h := g.Handler(whoami)
	for _, c := range []struct {
		name, host, origin string
		tls                bool
		headers            []string
		want               int
	}{
		{"http, own origin", "127.0.0.1:18081", "http://127.0.0.1:18081", false, nil, http.StatusOK},
		{"http, own origin in upper case", "127.0.0.1:18081", "HTTP://127.0.0.1:18081", false, nil, http.StatusOK},
		{"http, https origin", "127.0.0.1:18081", "https://127.0.0.1:18081", false, nil, http.StatusForbidden},
		{"http, other port", "127.0.0.1:18081", "http://127.0.0.1:18082", false, nil, http.StatusForbidden},
		{"http, default port", "chat.example", "http://chat.example:80", false, nil, http.StatusOK},
		{"tls, own origin", "chat.example", "https://chat.example", true, nil, http.StatusOK},
		{"tls, explicit default port", "chat.example:443", "https://chat.example", true, nil, http.StatusOK},
		{"tls, http origin", "chat.example", "http://chat.example", true, nil, http.StatusForbidden},
		{"tls, http origin on the https port", "chat.example:443", "http://chat.example:443", true, nil, http.StatusForbidden},
		{"proxy ended tls", "chat.example", "https://chat.example", false, []string{"X-Forwarded-Proto", "https"}, http.StatusOK},
		{"proxy ended tls, Forwarded", "chat.example", "https://chat.example", false, []string{"Forwarded", `for=203.0.113.9;proto="https"`}, http.StatusOK},
		{"proxy ended tls, http origin", "chat.example", "http://chat.example", false, []string{"X-Forwarded-Proto", "https"}, http.StatusForbidden},
		{"proxy said http", "chat.example", "https://chat.example", false, []string{"X-Forwarded-Proto", "http"}, http.StatusForbidden},
		{"allowed origin, default port", "127.0.0.1:18081", "https://app.example", false, nil, http.StatusOK},
		{"allowed origin, other scheme", "127.0.0.1:18081", "http://app.example", false, nil, http.StatusForbidden},
		{"allowed origin with a port", "127.0.0.1:18081", "http://dev.example:8080", false, nil, http.StatusOK},
		{"origin with a path", "127.0.0.1:18081", "http://127.0.0.1:18081/x", false, nil, http.StatusForbidden},
		{"origin with user information", "127.0.0.1:18081", "http://u@127.0.0.1:18081", false, nil, http.StatusForbidden},
		{"origin with a bad port", "127.0.0.1:18081", "http://127.0.0.1:18081x", false, nil, http.StatusForbidden},
		{"ipv6, own origin", "[::1]:18081", "http://[::1]:18081", false, nil, http.StatusOK},
		{"ipv6, https origin", "[::1]:18081", "https://[::1]:18081", false, nil, http.StatusForbidden},
		{"extension origin", "127.0.0.1:18081", "chrome-extension://abcdef", false, nil, http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://"+c.host+"/api", strings.NewReader("{}"))
		r.Host = c.host
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+aliceToken)
		r.Header.Set("Origin", c.origin)
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		for i := 0; i+1 < len(c.headers); i += 2 {
			r.Header.Set(c.headers[i], c.headers[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s (Host %s, Origin %s): %d %s, want %d", c.name, c.host, c.origin, w.Code, w.Body, c.want)
		}
	}
	// Over a real TLS connection the server's scheme is https.
	_, srv := newTLSServer(t, guard.Config{Tokens: twoTokens})
	self := srv.URL
	for origin, want := range map[string]int{self: http.StatusOK, strings.Replace(self, "https:", "http:", 1): http.StatusForbidden} {
		if code, _, body := do(t, srv, "POST", "/", "{}", "Origin", origin, "Authorization", "Bearer "+aliceToken); code != want {
			t.Errorf("TLS server, Origin %s: %d %s, want %d", origin, code, body, want)
		}
	}
	for _, o := range []string{"app.example", "https://app.example/x", "https://app.example?x", "https://u@app.example", "null",
		"https://app.example:x", "1http://app.example", "https://"} {
		if _, err := guard.New(guard.Config{AllowedOrigins: []string{o}}); err == nil || !strings.Contains(err.Error(), "Config.AllowedOrigins") {
			t.Errorf("AllowedOrigins %q: %v, want an error naming Config.AllowedOrigins", o, err)
		}
	}
}

func newTLSServer(t *testing.T, cfg guard.Config) (*guard.Guard, *httptest.Server) {
	t.Helper()
	g, err := guard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(g.Handler(whoami))
	t.Cleanup(srv.Close)
	return g, srv
}

// TestOriginBehindSilentTLSProxy: behind a proxy that ends TLS and sends
// no X-Forwarded-Proto, every request looks sent over http; once
// AllowedOrigins lists the API's https origin, a page of the http origin
// of the same host is refused, whatever port it names, unless listed
// itself; hosts without an https entry keep their own http origin.
func TestOriginBehindSilentTLSProxy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		allowed []string
		host    string
		origin  string
		want    int
	}{
		{"public https origin", []string{"https://api.example"}, "api.example", "https://api.example", http.StatusOK},
		{"its http origin", []string{"https://api.example"}, "api.example", "http://api.example", http.StatusForbidden},
		{"its http origin, host in upper case", []string{"https://API.example:443"}, "api.EXAMPLE", "http://api.example", http.StatusForbidden},
		{"its http origin, proxy names a port", []string{"https://api.example"}, "api.example:8080", "http://api.example:8080", http.StatusForbidden},
		{"its http origin listed too", []string{"https://api.example", "http://api.example"}, "api.example", "http://api.example", http.StatusOK},
		{"another host's https entry", []string{"https://app.example"}, "api.example", "http://api.example", http.StatusOK},
		{"no entries", nil, "api.example", "http://api.example", http.StatusOK},
	} {
		g, err := guard.New(guard.Config{Tokens: twoTokens, AllowedOrigins: c.allowed})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "http://"+c.host+"/api", strings.NewReader("{}"))
		r.Host = c.host
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+aliceToken)
		r.Header.Set("Origin", c.origin)
		w := httptest.NewRecorder()
		g.Handler(whoami).ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s (AllowedOrigins %q, Host %s, Origin %s): %d %s, want %d", c.name, c.allowed, c.host, c.origin, w.Code, w.Body, c.want)
		}
	}
}
