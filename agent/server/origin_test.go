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
