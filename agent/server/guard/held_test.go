package guard_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// heldWait is how long a test waits for the server to close a connection
// whose body never arrives; every bound under test is far shorter, or
// not involved at all.
const heldWait = 30 * time.Second

// exchange sends head (a request's start line and headers, without Host
// and the blank line), the Host header host (addr when empty), and then
// the start of a body that never ends, on a new connection to addr, and
// returns what the server answered before it closed the connection, or
// an error when it kept the connection open for heldWait.
func exchange(addr, host, head, partialBody string) (string, error) {
	if host == "" {
		host = addr
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "%s\r\nHost: %s\r\n\r\n%s", head, host, partialBody); err != nil {
		return "", err
	}
	if err := conn.SetReadDeadline(time.Now().Add(heldWait)); err != nil {
		return "", err
	}
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return string(got), fmt.Errorf("%q: the server held the connection for %s with the body unfinished; answered %q", head, heldWait, got)
	}
	return string(got), nil
}

// exchangeAll runs exchange for each of reqs at once (a test waits
// heldWait once, not once per request) and returns the answers.
func exchangeAll(t *testing.T, reqs [][4]string) []string {
	t.Helper()
	answers, errs := make([]string, len(reqs)), make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() { answers[i], errs[i] = exchange(r[0], r[1], r[2], r[3]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	return answers
}

// TestRefusedBodyHoldsNoConnection: a request the guard refuses (bad
// Host, foreign Origin, no token, wrong media type, a proxy's header to
// an open guard) whose body never arrives is answered with
// "Connection: close" after guard.RefuseGrace, and its connection closes
// without waiting for the body: with a BodyTimeout far longer than the
// test waits, or none.
func TestRefusedBodyHoldsNoConnection(t *testing.T) {
	t.Parallel()
	for _, timeout := range []time.Duration{time.Hour, -1} {
		authed, _ := guard.New(guard.Config{Tokens: twoTokens, AllowedHosts: []string{"api.example"}, BodyTimeout: timeout})
		open, _ := guard.New(guard.Config{BodyTimeout: timeout})
		authedAddr, openAddr := serve(t, authed, whoami), serve(t, open, whoami)
		const post = "POST /api HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000"
		cases := []struct {
			name, addr, host, head, body, status string
		}{
			{"no token", authedAddr, "", post, "{", "401"},
			{"no token, chunked", authedAddr, "", "POST /api HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", "5\r\n{\"a\":", "401"},
			{"wrong token", authedAddr, "", post + "\r\nAuthorization: Bearer " + strings.Repeat("x", 24), "{", "401"},
			{"foreign origin", authedAddr, "", post + "\r\nOrigin: https://evil.example", "{", "403"},
			{"foreign host", authedAddr, "evil.example", post, "{", "421"},
			{"media type", authedAddr, "", strings.Replace(post, "application/json", "text/plain", 1) + "\r\nAuthorization: Bearer " + aliceToken, "{", "415"},
			{"proxied to an open guard", openAddr, "", post + "\r\nX-Forwarded-For: 203.0.113.9", "{", "403"},
		}
		var reqs [][4]string
		for _, c := range cases {
			reqs = append(reqs, [4]string{c.addr, c.host, c.head, c.body})
		}
		for i, got := range exchangeAll(t, reqs) {
			if c := cases[i]; !strings.HasPrefix(got, "HTTP/1.1 "+c.status+" ") || !strings.Contains(got, "\r\nConnection: close\r\n") {
				t.Errorf("%s, BodyTimeout %s: answer %q; want %s with Connection: close", c.name, timeout, got, c.status)
			}
		}
	}
}

// TestServedBodyHoldsNoConnection: a request the guard lets through whose
// body never arrives, to a handler that does not read it (a public
// health check, a route that answers 404), holds its connection no
// longer than BodyTimeout: the deadline is set before the rules, so it
// also bounds net/http's reading of the unread body before the answer.
func TestServedBodyHoldsNoConnection(t *testing.T) {
	t.Parallel()
	g, _ := guard.New(guard.Config{Tokens: twoTokens, BodyTimeout: 100 * time.Millisecond,
		Public: func(r *http.Request) bool { return r.URL.Path == "/health" }})
	addr := serve(t, g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			fmt.Fprint(w, "ok")
			return
		}
		http.NotFound(w, r)
	}))
	cases := []struct{ name, head, status string }{
		{"public", "POST /health HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000", "200"},
		{"public with a foreign origin", "POST /health HTTP/1.1\r\nOrigin: https://evil.example\r\nContent-Length: 100000", "200"},
		{"authenticated, body unread", "POST /nothing HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nAuthorization: Bearer " + aliceToken, "404"},
	}
	var reqs [][4]string
	for _, c := range cases {
		reqs = append(reqs, [4]string{addr, "", c.head, "{"})
	}
	for i, got := range exchangeAll(t, reqs) {
		if c := cases[i]; !strings.HasPrefix(got, "HTTP/1.1 "+c.status+" ") {
			t.Errorf("%s: answer %q, want %s", c.name, got, c.status)
		}
	}
}

// TestRefusalKeepsBodylessConnections: a refused request without a body
// leaves its connection open for the next (no Connection: close), and an
// HTTP/2 refusal never says Connection: close, which would end every
// stream of the connection.
func TestRefusalKeepsBodylessConnections(t *testing.T) {
	t.Parallel()
	g, _ := guard.New(guard.Config{Tokens: twoTokens})
	h := g.Handler(whoami)
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/api", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || w.Header().Get("Connection") != "" {
		t.Errorf("bodyless refusal: %d %v", w.Code, w.Header())
	}
	r = httptest.NewRequest(http.MethodPost, "http://127.0.0.1/api", strings.NewReader("{}"))
	r.ProtoMajor, r.ProtoMinor, r.Proto = 2, 0, "HTTP/2.0"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || w.Header().Get("Connection") != "" {
		t.Errorf("HTTP/2 refusal: %d %v", w.Code, w.Header())
	}
}
