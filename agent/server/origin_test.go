package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestOriginRuleIsTheGuards: the server compares browser origins as
// package guard does: Config.AllowedOrigins and the Origin header as
// origins (scheme, host and port, default ports filled in, case aside),
// a page of the API's own origin allowed, and loopback pages (http or
// https only) allowed only on a server reached on a loopback host.
func TestOriginRuleIsTheGuards(t *testing.T) {
	srv, err := server.New(server.Config{AllowedOrigins: []string{"https://app.example", "http://dev.example:8080/"},
		Authenticate: func(*http.Request) (string, error) { return "alice", nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	for _, c := range []struct {
		name, host, origin string
		want               int
	}{
		{"listed", "api.example", "https://app.example", http.StatusNoContent},
		{"listed, default port named", "api.example", "https://app.example:443", http.StatusNoContent},
		{"listed, in upper case", "api.example", "HTTPS://APP.example", http.StatusNoContent},
		{"listed with a port and a slash", "api.example", "http://dev.example:8080", http.StatusNoContent},
		{"listed host, other scheme", "api.example", "http://app.example", http.StatusForbidden},
		{"listed host, other port", "api.example", "https://app.example:8443", http.StatusForbidden},
		{"own origin", "api.example", "http://api.example", http.StatusNoContent},
		{"own origin, other port", "api.example", "http://api.example:8080", http.StatusForbidden},
		{"loopback page, loopback server", "127.0.0.1:2024", "http://localhost:3000", http.StatusNoContent},
		{"loopback https page, loopback server", "localhost:2024", "https://127.0.0.1:3000", http.StatusNoContent},
		{"loopback page, public server", "api.example", "http://localhost:3000", http.StatusForbidden},
		{"loopback host, other scheme", "127.0.0.1:2024", "chrome-extension://localhost", http.StatusForbidden},
		{"loopback host with a path", "127.0.0.1:2024", "http://localhost:3000/x", http.StatusForbidden},
		{"null", "127.0.0.1:2024", "null", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodOptions, "http://"+c.host+"/threads", nil)
		r.Host = c.host
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("Origin", c.origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s (Host %s, Origin %s): %d %s, want %d", c.name, c.host, c.origin, w.Code, w.Body, c.want)
		}
	}
	if _, err := server.New(server.Config{AllowedOrigins: []string{"app.example"}}); err == nil {
		t.Error("AllowedOrigins app.example: no error")
	}
}

// TestRefusedBodyGetsItsAnswer: a request the server refuses before
// reading its body (a foreign Origin) gets its 403 even when the client
// sent a body far larger than the server's read buffer, not a reset
// connection; a small refused body is discarded and the connection kept.
func TestRefusedBodyGetsItsAnswer(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	send := func(body string) (int, bool) {
		var reused bool
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/threads", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://evil.example")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST /threads with %d bytes from a foreign origin: %v; want 403", len(body), err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, reused
	}
	for _, size := range []int{100 << 10, 4 << 20} {
		if code, _ := send(`{"metadata":{"a":"` + strings.Repeat("x", size) + `"}}`); code != http.StatusForbidden {
			t.Errorf("%d bytes: %d, want 403", size, code)
		}
	}
	c.CloseIdleConnections()
	small := `{"metadata":{"a":"` + strings.Repeat("x", 200) + `"}}`
	send(small)
	if code, reused := send(small); code != http.StatusForbidden || !reused {
		t.Errorf("second small refused body: %d, connection reused %v; want 403 on the same connection", code, reused)
	}
}

// preflight answers an OPTIONS preflight of POST /threads from origin,
// sent to host, by srv.
func preflight(srv http.Handler, host, origin string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodOptions, "http://"+host+"/threads", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set("Origin", origin)
	r.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	return w
}

// TestAnyOriginNeedsAuthenticate: "*" in Config.AllowedOrigins without
// Config.Authenticate is refused by New, naming both fields (any site
// could drive a server that serves every local request). With
// Authenticate, a page of any site is allowed with the credentials it
// sends itself: its Cookie header does not reach Authenticate (a page
// allowed by name keeps it), and a cross-site request without Origin is
// still refused.
func TestAnyOriginNeedsAuthenticate(t *testing.T) {
	_, err := server.New(server.Config{AllowedOrigins: []string{"https://app.example", "*"}})
	if err == nil || !strings.Contains(err.Error(), "Config.Authenticate") || !strings.Contains(err.Error(), "Config.AllowedOrigins") {
		t.Fatalf(`New with AllowedOrigins "*" and no Authenticate: %v; want an error naming Config.AllowedOrigins and Config.Authenticate`, err)
	}
	var cookies []string
	srv, err := server.New(server.Config{AllowedOrigins: []string{"*", "https://app.example"}, Authenticate: func(r *http.Request) (string, error) {
		cookies = append(cookies, r.Header.Get("Cookie"))
		return "alice", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	if w := preflight(srv, "api.example", "https://evil.example"); w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://evil.example" {
		t.Errorf(`preflight from another site with "*": %d %v; want 204 allowing it`, w.Code, w.Header())
	}
	for _, c := range []struct{ origin, cookie string }{{"https://evil.example", ""}, {"https://app.example", "session=s"}} {
		cookies = nil
		r := httptest.NewRequest(http.MethodGet, "http://api.example/ok/x", nil)
		r.RemoteAddr = "192.0.2.1:1"
		r.Header.Set("Origin", c.origin)
		r.Header.Set("Cookie", "session=s")
		srv.ServeHTTP(httptest.NewRecorder(), r)
		if len(cookies) != 1 || cookies[0] != c.cookie {
			t.Errorf("Authenticate of a request from %s with a cookie saw Cookie %q; want %q", c.origin, cookies, c.cookie)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "http://api.example/threads/x", nil)
	r.RemoteAddr = "192.0.2.1:1"
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "Sec-Fetch-Site") {
		t.Errorf(`cross-site request without Origin, with "*": %d %s; want 403 naming Sec-Fetch-Site`, w.Code, w.Body)
	}
	// A same-site one is Authenticate's to judge.
	r.Header.Set("Sec-Fetch-Site", "same-site")
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code == http.StatusForbidden {
		t.Errorf(`same-site request without Origin, with Authenticate: %d %s; want it served (422: x is no thread id)`, w.Code, w.Body)
	}
}

// TestOpenServerAllowsOwnAndListedOriginsOnly: without Authenticate,
// every page on this machine could act as its user, so a page of a
// loopback origin other than the API's own (another port, a name under
// localhost, another loopback address) is refused with 403 unless
// Config.AllowedOrigins lists it, as package guard refuses it.
func TestOpenServerAllowsOwnAndListedOriginsOnly(t *testing.T) {
	srv, err := server.New(server.Config{AllowedOrigins: []string{"http://localhost:5173"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"http://127.0.0.1:2024", http.StatusNoContent}, // the API's own
		{"http://localhost:5173", http.StatusNoContent}, // listed
		{"http://localhost:9999", http.StatusForbidden},
		{"http://evil.localhost:2024", http.StatusForbidden},
		{"http://127.0.0.2:2024", http.StatusForbidden},
		{"https://127.0.0.1:3000", http.StatusForbidden},
	} {
		if w := preflight(srv, "127.0.0.1:2024", c.origin); w.Code != c.want {
			t.Errorf("preflight from %s to an open server on 127.0.0.1:2024: %d %s; want %d", c.origin, w.Code, w.Body, c.want)
		} else if c.want == http.StatusForbidden && !strings.Contains(w.Body.String(), "Config.AllowedOrigins") {
			t.Errorf("refusal of %s: %s; want the fix named", c.origin, w.Body)
		}
	}
}

// TestLoopbackPagesLoseTheirCookies: with Authenticate, a loopback page
// the loopback rule alone allows (not the API's own, not listed), and a
// same-site request without Origin (an <img> of such a page), reach
// Authenticate without their Cookie header, so that an Authenticate that
// reads cookies is not driven by any page on this machine; the API's own
// page and a listed one keep it.
func TestLoopbackPagesLoseTheirCookies(t *testing.T) {
	var cookies []string
	srv, err := server.New(server.Config{AllowedOrigins: []string{"http://localhost:5173"}, Authenticate: func(r *http.Request) (string, error) {
		cookies = append(cookies, r.Header.Get("Cookie"))
		return "alice", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	for _, c := range []struct{ origin, site, cookie string }{
		{"http://localhost:9999", "same-site", ""},
		{"http://127.0.0.1:3000", "same-site", ""},
		{"", "same-site", ""},
		{"http://127.0.0.1:2024", "same-origin", "session=s"}, // the API's own
		{"http://localhost:5173", "same-site", "session=s"},   // listed
		{"", "same-origin", "session=s"},
		{"", "", "session=s"}, // no browser's
	} {
		cookies = nil
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:2024/ok/x", nil)
		r.RemoteAddr = "127.0.0.1:1"
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		r.Header.Set("Cookie", "session=s")
		srv.ServeHTTP(httptest.NewRecorder(), r)
		if len(cookies) != 1 || cookies[0] != c.cookie {
			t.Errorf("Authenticate of a request from %q (Sec-Fetch-Site %q) with a cookie saw Cookie %q; want %q", c.origin, c.site, cookies, c.cookie)
		}
	}
}
