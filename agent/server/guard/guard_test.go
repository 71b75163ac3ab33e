package guard_test

import (
	"bufio"
	"context"
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

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789ab"
)

var twoTokens = map[string]string{aliceToken: "alice", bobToken: "bob"}

// whoami answers the request's principal and body.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fmt.Fprintf(w, "%s:%s", guard.Principal(r.Context()), b)
})

func newServer(t *testing.T, cfg guard.Config, h http.Handler) (*guard.Guard, *httptest.Server) {
	t.Helper()
	g, err := guard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(h))
	t.Cleanup(srv.Close)
	return g, srv
}

// do sends a request; headers are name, value pairs ("Host" sets the
// Host header). A body is sent as application/json unless a Content-Type
// header is given.
func do(t *testing.T, srv *httptest.Server, method, path, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestDNSRebinding: an open guard serves loopback host names only, so a
// page whose name was rebound to 127.0.0.1 (it sends its own name) gets
// 421, for reads and writes; with authentication AllowedHosts adds names
// to the loopback ones, and without AllowedHosts any host is served.
func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	_, open := newServer(t, guard.Config{}, whoami)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(open.URL, "http://"))
	for _, c := range []struct {
		method, host string
		want         int
	}{
		{"GET", "attacker.example", http.StatusMisdirectedRequest},
		{"POST", "attacker.example:" + port, http.StatusMisdirectedRequest},
		{"GET", "127.0.0.1.nip.io:" + port, http.StatusMisdirectedRequest},
		{"GET", "localhost:" + port, http.StatusOK},
		{"GET", "app.localhost:" + port, http.StatusOK},
		{"GET", "[::1]:" + port, http.StatusOK},
		{"GET", "127.0.0.1:" + port, http.StatusOK},
	} {
		body := ""
		if c.method == "POST" {
			body = `{}`
		}
		code, _, got := do(t, open, c.method, "/", body, "Host", c.host)
		if code != c.want {
			t.Errorf("%s Host %s: %d %s, want %d", c.method, c.host, code, got, c.want)
		}
		if code == http.StatusMisdirectedRequest && !strings.Contains(got, "Config.AllowedHosts") {
			t.Errorf("Host %s refused with %s; want the fix named", c.host, got)
		}
	}
	_, listed := newServer(t, guard.Config{Tokens: twoTokens, AllowedHosts: []string{"App.Example:443"}}, whoami)
	for host, want := range map[string]int{"app.example": http.StatusOK, "localhost": http.StatusOK,
		"127.0.0.1": http.StatusOK, "api.example": http.StatusMisdirectedRequest} {
		if code, _, _ := do(t, listed, "GET", "/", "", "Host", host, "Authorization", "Bearer "+aliceToken); code != want {
			t.Errorf("Host %s beside AllowedHosts: %d, want %d", host, code, want)
		}
	}
	_, authed := newServer(t, guard.Config{Tokens: twoTokens}, whoami)
	if code, _, _ := do(t, authed, "GET", "/", "", "Host", "api.example", "Authorization", "Bearer "+aliceToken); code != http.StatusOK {
		t.Errorf("any host with authentication: %d", code)
	}
}

// TestCrossSite replays cross-site requests: a page of another origin, a
// sandboxed frame (Origin: null), a cross-site fetch without Origin, and
// forms posting the simple media types (text/plain,
// application/x-www-form-urlencoded, multipart/form-data), which browsers
// send without asking first. The page's own origin and the allowed ones
// are served.
func TestCrossSite(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t, guard.Config{AllowedOrigins: []string{"https://App.example/"}}, whoami)
	self := srv.URL
	for _, c := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"foreign origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"text/plain form from another origin", []string{"Content-Type", "text/plain", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"null origin", []string{"Origin", "null"}, http.StatusForbidden},
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same-site fetch", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"text/plain without origin", []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"text/plain with charset", []string{"Content-Type", "text/plain; charset=utf-8"}, http.StatusUnsupportedMediaType},
		{"urlencoded form", []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
		{"multipart form", []string{"Content-Type", "multipart/form-data; boundary=x"}, http.StatusUnsupportedMediaType},
		{"no content type", []string{"Content-Type", ""}, http.StatusUnsupportedMediaType},
		{"own origin", []string{"Origin", self}, http.StatusOK},
		{"allowed origin", []string{"Origin", "https://app.example"}, http.StatusOK},
		{"same-origin fetch", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusOK},
		{"no browser", nil, http.StatusOK},
	} {
		code, _, body := do(t, srv, "POST", "/", `{"a":1}`, c.headers...)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	// A route that takes uploads accepts what ContentTypes lists.
	_, up := newServer(t, guard.Config{ContentTypes: func(r *http.Request) []string {
		if r.URL.Path == "/upload" {
			return []string{"application/json", "multipart/form-data"}
		}
		return []string{"application/json"}
	}}, whoami)
	if code, _, body := do(t, up, "POST", "/upload", "--x--", "Content-Type", "multipart/form-data; boundary=x"); code != http.StatusOK {
		t.Errorf("multipart upload: %d %s", code, body)
	}
	if code, _, body := do(t, up, "POST", "/other", "--x--", "Content-Type", "multipart/form-data; boundary=x"); code != http.StatusUnsupportedMediaType ||
		!strings.Contains(body, `send \"application/json\"`) {
		t.Errorf("multipart elsewhere: %d %s, want 415 naming application/json", code, body)
	}
	// A GET, or a POST without a body, needs no Content-Type.
	for _, m := range []string{"GET", "POST"} {
		if code, _, _ := do(t, srv, m, "/", ""); code != http.StatusOK {
			t.Errorf("%s without a body: %d", m, code)
		}
	}
	// A chunked body of an unknown length is checked too.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL, io.MultiReader(strings.NewReader("a=1")))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.ContentLength != 0 || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("chunked text/plain: %d (length %d), want 415", resp.StatusCode, req.ContentLength)
	}
}

// TestAuthentication: with tokens, a request needs one (401 with a
// challenge otherwise, also for a wrong one); the API-key header and the
// hook authenticate too; the hook's error reaches Reject and an invalid
// principal from it is refused; a short token or a bad principal is a
// configuration error naming the field.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var rejected []error
	errNoSession := errors.New("no session")
	_, srv := newServer(t, guard.Config{Tokens: twoTokens, APIKeyHeader: "X-Api-Key", Realm: "notes",
		Authenticate: func(r *http.Request) (string, error) {
			switch r.Header.Get("X-Session") {
			case "carol":
				return "carol", nil
			case "bad":
				return "carol/../bob", nil
			}
			return "", errNoSession
		},
		Reject: func(w http.ResponseWriter, r *http.Request, err *guard.Error) {
			mu.Lock()
			rejected = append(rejected, err)
			mu.Unlock()
			http.Error(w, err.Message, err.Status)
		}}, whoami)
	for _, h := range [][]string{nil, {"Authorization", "Bearer not-a-token-0123456789"}, {"Authorization", "Basic " + aliceToken},
		{"X-Api-Key", "wrong"}, {"X-Session", "bad"}} {
		code, hdr, body := do(t, srv, "GET", "/", "", h...)
		if code != http.StatusUnauthorized || hdr.Get("WWW-Authenticate") != `Bearer realm="notes"` || !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("%v: %d %v %s, want 401 with a challenge", h, code, hdr, body)
		}
	}
	mu.Lock()
	if len(rejected) != 5 || !errors.Is(rejected[0], guard.ErrUnauthenticated) || !errors.Is(rejected[0], errNoSession) {
		t.Errorf("rejections %v; want 5 wrapping ErrUnauthenticated and the hook's error", rejected)
	}
	mu.Unlock()
	for _, c := range []struct {
		headers []string
		want    string
	}{
		{[]string{"Authorization", "Bearer " + aliceToken}, "alice:"},
		{[]string{"X-Api-Key", bobToken}, "bob:"},
		{[]string{"X-Session", "carol"}, "carol:"},
	} {
		if code, _, body := do(t, srv, "GET", "/", "", c.headers...); code != http.StatusOK || body != c.want {
			t.Errorf("%v: %d %q, want %q", c.headers, code, body, c.want)
		}
	}
	for _, c := range []struct {
		cfg  guard.Config
		want string
	}{
		{guard.Config{Tokens: map[string]string{"short": "alice"}}, "Config.Tokens"},
		{guard.Config{Tokens: map[string]string{aliceToken: "al/ice"}}, "Config.Tokens"},
		{guard.Config{AllowedOrigins: []string{"evil.example"}}, "Config.AllowedOrigins"},
		{guard.Config{AllowedHosts: []string{"http://x/"}}, "Config.AllowedHosts"},
		{guard.Config{MaxStreams: -1}, "Config.MaxStreams"},
	} {
		if _, err := guard.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
}

// TestOpenGuard: without authentication every request is Config.Local's.
func TestOpenGuard(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t, guard.Config{}, whoami)
	if _, _, body := do(t, srv, "GET", "/", ""); body != guard.LocalPrincipal+":" {
		t.Errorf("open guard: %q", body)
	}
	_, named := newServer(t, guard.Config{Local: "me"}, whoami)
	if _, _, body := do(t, named, "GET", "/", ""); body != "me:" {
		t.Errorf("Config.Local: %q", body)
	}
}

// TestPublic: a public request needs no principal and may come from any
// origin, but its Host is still checked; the security headers are on
// every response.
func TestPublic(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t, guard.Config{Tokens: twoTokens, AllowedHosts: []string{"127.0.0.1"},
		Public: func(r *http.Request) bool { return r.URL.Path == "/health" }}, whoami)
	code, hdr, body := do(t, srv, "GET", "/health", "", "Origin", "https://elsewhere.example")
	if code != http.StatusOK || body != ":" {
		t.Errorf("public: %d %q, want 200 without a principal", code, body)
	}
	if hdr.Get("X-Frame-Options") != "DENY" || hdr.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", hdr)
	}
	if code, _, _ := do(t, srv, "GET", "/health", "", "Host", "attacker.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("public with a foreign host: %d, want 421", code)
	}
	if code, _, _ := do(t, srv, "GET", "/notes", ""); code != http.StatusUnauthorized {
		t.Errorf("not public: %d, want 401", code)
	}
}

// TestBodyLimit: the handler's read of a body over MaxBodyBytes fails
// with *http.MaxBytesError.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t, guard.Config{MaxBodyBytes: 16}, whoami)
	if code, _, body := do(t, srv, "POST", "/", `{"a":"0123456789abcdef"}`); code != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d %s, want 413", code, body)
	}
	if code, _, body := do(t, srv, "POST", "/", `{"a":1}`); code != http.StatusOK {
		t.Errorf("small body: %d %s", code, body)
	}
	_, unbounded := newServer(t, guard.Config{MaxBodyBytes: -1}, whoami)
	if code, _, _ := do(t, unbounded, "POST", "/", `{"a":"`+strings.Repeat("x", 2<<20)+`"}`); code != http.StatusOK {
		t.Errorf("MaxBodyBytes -1: %d", code)
	}
}

// serve runs h behind g on a loopback listener from g.Listen, with g's
// http.Server, until the test ends.
func serve(t *testing.T, g *guard.Guard, h http.Handler) string {
	t.Helper()
	ln, err := g.Listen(t.Context(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := g.Server(h)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// TestSlowBody: a client that stalls its body (slowloris) gets its read
// failed once BodyTimeout passes, instead of holding the connection; a
// body read to its end lifts the deadline, so the response outlives it.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	g, _ := guard.New(guard.Config{BodyTimeout: timeout})
	timedOut := make(chan bool, 1)
	addr := serve(t, g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err != nil {
			timedOut <- guard.BodyTimedOut(err)
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		// The deadline lifted, the connection outlives it: the server's
		// background read would otherwise fail and cancel the request.
		select {
		case <-time.After(3 * timeout):
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "streamed")
	}))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a", addr)
	select {
	case to := <-timedOut:
		if !to {
			t.Error("the stalled body's read failed, but not as a timeout")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a stalled body held its handler 30s")
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://"+addr+"/", strings.NewReader(`{"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "streamed" {
		t.Errorf("a response outliving BodyTimeout: %s %s", resp.Status, b)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestSlowHeaders: the server of Guard.Server closes a connection whose
// headers do not arrive within ReadHeaderTimeout.
func TestSlowHeaders(t *testing.T) {
	t.Parallel()
	g, _ := guard.New(guard.Config{ReadHeaderTimeout: 100 * time.Millisecond})
	if s := g.Server(whoami); s.ReadTimeout != 0 || s.WriteTimeout != 0 || s.IdleTimeout != guard.DefaultIdleTimeout || s.MaxHeaderBytes != guard.DefaultMaxHeaderBytes {
		t.Errorf("server %+v", s)
	}
	addr := serve(t, g, whoami)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept a connection with unfinished headers for 30s")
	}
}

// TestStreamLimit: a principal holding MaxStreams streams gets 429 for
// another, while another principal is served; a stream's end frees its
// place, and the counts are forgotten at zero.
func TestStreamLimit(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	g, srv := newServer(t, guard.Config{Tokens: twoTokens, MaxStreams: 1,
		Streaming: func(r *http.Request) bool { return r.URL.Path == "/stream" }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("hold") != "" {
				started <- struct{}{}
				<-release
			}
		}))
	auth := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }
	held := make(chan int, 1)
	go func() {
		code, _, _ := do(t, srv, "GET", "/stream?hold=1", "", auth(aliceToken)...)
		held <- code
	}()
	<-started
	code, hdr, body := do(t, srv, "GET", "/stream", "", auth(aliceToken)...)
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(body, "Config.MaxStreams") {
		t.Errorf("alice's second stream: %d %v %s, want 429 naming Config.MaxStreams", code, hdr, body)
	}
	if n := g.Streams("alice"); n != 1 {
		t.Errorf("alice holds %d streams, want 1", n)
	}
	if code, _, _ := do(t, srv, "GET", "/other", "", auth(aliceToken)...); code != http.StatusOK {
		t.Errorf("alice's request that is not a stream: %d", code)
	}
	if code, _, _ := do(t, srv, "GET", "/stream", "", auth(bobToken)...); code != http.StatusOK {
		t.Errorf("bob's stream: %d", code)
	}
	close(release)
	if code := <-held; code != http.StatusOK {
		t.Errorf("alice's first stream: %d", code)
	}
	if n := g.Streams("alice"); n != 0 {
		t.Errorf("alice holds %d streams after hers ended", n)
	}
	if code, _, _ := do(t, srv, "GET", "/stream", "", auth(aliceToken)...); code != http.StatusOK {
		t.Errorf("alice's stream once the first ended: %d", code)
	}
}

// TestListen: an open guard refuses to listen beyond loopback; with
// authentication it listens anywhere.
func TestListen(t *testing.T) {
	t.Parallel()
	open, _ := guard.New(guard.Config{})
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:80", "example.com:80"} {
		if err := open.CheckAddr(addr); err == nil || !strings.Contains(err.Error(), "Config.Tokens") {
			t.Errorf("open guard on %s: %v, want an error naming Config.Tokens", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:8080", "[::1]:0"} {
		if err := open.CheckAddr(addr); err != nil {
			t.Errorf("open guard on %s: %v", addr, err)
		}
	}
	authed, _ := guard.New(guard.Config{Tokens: twoTokens})
	if err := authed.CheckAddr(":0"); err != nil {
		t.Errorf("authenticated guard on :0: %v", err)
	}
}

// TestPrincipalContext: WithPrincipal and Principal round-trip; a
// context without one has "".
func TestPrincipalContext(t *testing.T) {
	if p := guard.Principal(t.Context()); p != "" {
		t.Errorf("no principal: %q", p)
	}
	if p := guard.Principal(guard.WithPrincipal(t.Context(), "alice")); p != "alice" {
		t.Errorf("principal %q", p)
	}
}

// TestBodylessPostOutlivesBodyTimeout: a POST without a body (a command
// such as "resume") is not bounded by BodyTimeout; net/http reads such a
// connection in the background from the start, and a read deadline would
// fail that read and cancel the request's context once BodyTimeout passed.
func TestBodylessPostOutlivesBodyTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 50 * time.Millisecond
	g, _ := guard.New(guard.Config{BodyTimeout: timeout})
	addr := serve(t, g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(4 * timeout):
		case <-r.Context().Done():
			http.Error(w, "cancelled: "+context.Cause(r.Context()).Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "resumed")
	}))
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch} {
		req, _ := http.NewRequestWithContext(t.Context(), method, "http://"+addr+"/tasks/t1/resume", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "resumed" {
			t.Errorf("bodyless %s outliving BodyTimeout: %s %s", method, resp.Status, b)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}
