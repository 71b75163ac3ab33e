package guard_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// TestOpenGuardServesThisMachineOnly: an open guard (no authentication)
// refuses, at New, an AllowedHosts name beyond loopback, which would
// serve the open API to whoever reaches that name (a reverse proxy in
// front); with authentication the same name is accepted.
func TestOpenGuardServesThisMachineOnly(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"chat.example.com", "192.0.2.7", "localhost.example"} {
		_, err := guard.New(guard.Config{AllowedHosts: []string{h}})
		if err == nil || !strings.Contains(err.Error(), "Config.AllowedHosts") || !strings.Contains(err.Error(), "Config.Tokens") {
			t.Errorf("open guard with AllowedHosts %q: %v, want an error naming Config.AllowedHosts and Config.Tokens", h, err)
		}
		if _, err := guard.New(guard.Config{Tokens: twoTokens, AllowedHosts: []string{h}}); err != nil {
			t.Errorf("authenticated guard with AllowedHosts %q: %v", h, err)
		}
		if _, err := guard.New(guard.Config{Authenticate: func(*http.Request) (string, error) { return "alice", nil },
			AllowedHosts: []string{h}}); err != nil {
			t.Errorf("guard with Authenticate and AllowedHosts %q: %v", h, err)
		}
	}
	for _, h := range []string{"localhost", "app.localhost:8080", "127.0.0.1", "[::1]:80"} {
		if _, err := guard.New(guard.Config{AllowedHosts: []string{h}}); err != nil {
			t.Errorf("open guard with the loopback AllowedHosts %q: %v", h, err)
		}
	}
}

// TestOpenGuardRefusesProxiedRequests: a request to an open guard that
// carries a header a proxy adds came through a proxy, which may relay it
// from anywhere to the loopback listener: 403 naming the header, for
// public requests too. With authentication proxies are fine.
func TestOpenGuardRefusesProxiedRequests(t *testing.T) {
	t.Parallel()
	public := func(r *http.Request) bool { return r.URL.Path == "/page" }
	_, open := newServer(t, guard.Config{Public: public}, whoami)
	_, authed := newServer(t, guard.Config{Tokens: twoTokens, Public: public}, whoami)
	for _, h := range guard.ProxyHeaders() {
		val := "203.0.113.9"
		switch h {
		case "Forwarded":
			val = "for=203.0.113.9;proto=https"
		case "Via":
			val = "1.1 proxy.example"
		case "X-Forwarded-Host", "X-Forwarded-Server":
			val = "chat.example.com"
		case "X-Forwarded-Proto":
			val = "https"
		case "X-Forwarded-Port":
			val = "443"
		}
		for _, path := range []string{"/notes", "/page"} {
			code, _, body := do(t, open, "GET", path, "", h, val)
			if code != http.StatusForbidden || !strings.Contains(strings.ToLower(body), strings.ToLower(h)) || !strings.Contains(body, "Config.Tokens") {
				t.Errorf("open guard, GET %s with %s: %d %s, want 403 naming the header and Config.Tokens", path, h, code, body)
			}
			if code, _, body := do(t, authed, "GET", path, "", h, val, "Authorization", "Bearer "+aliceToken); code != http.StatusOK {
				t.Errorf("authenticated guard, GET %s with %s: %d %s, want 200", path, h, code, body)
			}
		}
	}
	if code, _, body := do(t, open, "GET", "/notes", ""); code != http.StatusOK || body != "local:" {
		t.Errorf("open guard without proxy headers: %d %q", code, body)
	}
}

// TestOpenGuardRefusesRemotePeers: an open guard's handler served on a
// listener beyond loopback (not through Guard.Listen) refuses a peer
// beyond this machine, whatever its Host header says; a loopback peer, a
// unix socket's or an in-process request's (no IP address) are served.
// With authentication any peer is.
func TestOpenGuardRefusesRemotePeers(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(guard.Principal(r.Context()))) })
	open, err := guard.New(guard.Config{Public: func(r *http.Request) bool { return r.URL.Path == "/page" }})
	if err != nil {
		t.Fatal(err)
	}
	authed, err := guard.New(guard.Config{Tokens: twoTokens})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		remote string
		want   int
	}{{"192.0.2.1:1234", http.StatusForbidden}, {"[2001:db8::1]:80", http.StatusForbidden}, {"10.0.0.2:5", http.StatusForbidden},
		{"127.0.0.1:1234", http.StatusOK}, {"[::1]:1234", http.StatusOK}, {"", http.StatusOK}, {"@", http.StatusOK}} {
		for _, path := range []string{"/notes", "/page"} {
			r := httptest.NewRequest("GET", "http://127.0.0.1:8080"+path, nil)
			r.RemoteAddr = c.remote
			w := httptest.NewRecorder()
			open.Handler(ok).ServeHTTP(w, r)
			if w.Code != c.want || c.want == http.StatusForbidden && (!strings.Contains(w.Body.String(), `"field":"RemoteAddr"`) ||
				!strings.Contains(w.Body.String(), "Config.Tokens")) {
				t.Errorf("open guard, GET %s from %q: %d %s, want %d (403 naming RemoteAddr and Config.Tokens)", path, c.remote, w.Code, w.Body, c.want)
			}
		}
		r := httptest.NewRequest("GET", "http://127.0.0.1:8080/notes", nil)
		r.RemoteAddr = c.remote
		r.Header.Set("Authorization", "Bearer "+aliceToken)
		w := httptest.NewRecorder()
		authed.Handler(ok).ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("authenticated guard, GET from %q: %d %s, want 200", c.remote, w.Code, w.Body)
		}
	}
}

// TestOpenGuardRefusesForgedLoopbackClients: by default an open guard
// refuses every request that carries a proxy's header, also one naming a
// loopback client only: behind a proxy that passes the client's headers
// on (nginx's plain proxy_pass ending TLS) a client beyond this machine
// writes X-Forwarded-For: 127.0.0.1 itself. The 403 names the header and
// both fixes, authentication and Config.TrustLocalProxy.
func TestOpenGuardRefusesForgedLoopbackClients(t *testing.T) {
	t.Parallel()
	g, err := guard.New(guard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	trusting, err := guard.New(guard.Config{TrustLocalProxy: true})
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, c := range []struct {
		headers []string
		field   string
	}{
		{[]string{"X-Forwarded-For", "127.0.0.1"}, "X-Forwarded-For"},
		{[]string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "127.0.0.1"}, "X-Forwarded-For"},
		{[]string{"Via", "1.1 edge", "X-Forwarded-For", "127.0.0.1"}, "X-Forwarded-For"},
		{[]string{"X-Forwarded-Host", "api.example.com", "X-Forwarded-For", "::1"}, "X-Forwarded-For"},
		{[]string{"Forwarded", "for=127.0.0.1;proto=https"}, "Forwarded"},
		{[]string{"X-Real-Ip", "127.0.0.1"}, "X-Real-Ip"},
	} {
		r := httptest.NewRequest("GET", "http://localhost:8080/v1/runs", nil)
		r.RemoteAddr = "127.0.0.1:40000" // the proxy's
		for i := 0; i < len(c.headers); i += 2 {
			r.Header.Set(c.headers[i], c.headers[i+1])
		}
		w := httptest.NewRecorder()
		g.Handler(ok).ServeHTTP(w, r)
		body := w.Body.String()
		if w.Code != http.StatusForbidden || !strings.Contains(body, `"field":"`+c.field+`"`) ||
			!strings.Contains(body, "Config.Tokens") || !strings.Contains(body, "Config.TrustLocalProxy") {
			t.Errorf("open guard, GET with %q: %d %s, want 403 naming %s, Config.Tokens and Config.TrustLocalProxy", c.headers, w.Code, body, c.field)
		}
		w = httptest.NewRecorder()
		trusting.Handler(ok).ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("open guard with TrustLocalProxy, GET with %q: %d %s, want 200", c.headers, w.Code, w.Body)
		}
	}
}

// TestOpenGuardServesLocalDevProxies: with Config.TrustLocalProxy a
// development proxy on this machine (a dev server's proxy adding
// X-Forwarded-For: 127.0.0.1) in front of a local browser is served when
// every client address the request names is loopback; one address beyond
// loopback anywhere in the chain, a header naming no client, or only
// headers without a client address get 403.
func TestOpenGuardServesLocalDevProxies(t *testing.T) {
	t.Parallel()
	_, open := newServer(t, guard.Config{TrustLocalProxy: true}, whoami)
	for _, c := range []struct {
		headers []string
		want    int
	}{
		{[]string{"X-Forwarded-For", "127.0.0.1"}, http.StatusOK},
		{[]string{"X-Forwarded-For", "::1", "X-Forwarded-Proto", "http", "X-Forwarded-Host", "localhost:3000", "X-Forwarded-Port", "3000"}, http.StatusOK},
		{[]string{"X-Forwarded-For", "127.0.0.1, 127.0.0.1", "Via", "1.1 caddy"}, http.StatusOK},
		{[]string{"Forwarded", `for="[::1]:51234";proto=http;host=localhost`}, http.StatusOK},
		{[]string{"Forwarded", "for=127.0.0.1, for=127.0.0.2", "X-Real-Ip", "127.0.0.1"}, http.StatusOK},
		{[]string{"X-Forwarded-For", "127.0.0.1, 203.0.113.9"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", "203.0.113.9, 127.0.0.1"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", "localhost"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", "unknown"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", ""}, http.StatusForbidden},
		{[]string{"Forwarded", "for=_hidden"}, http.StatusForbidden},
		{[]string{"Forwarded", "proto=https;host=chat.example.com"}, http.StatusForbidden},
		{[]string{"Forwarded", "for=127.0.0.1, for=203.0.113.9"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", "127.0.0.1", "Cf-Connecting-Ip", "203.0.113.9"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", "127.0.0.1", "True-Client-Ip", "203.0.113.9"}, http.StatusForbidden},
		{[]string{"X-Real-Ip", "127.0.0.1", "X-Client-Ip", "203.0.113.9"}, http.StatusForbidden},
		{[]string{"X-Forwarded-For", "127.0.0.1", "Fastly-Client-Ip", "203.0.113.9"}, http.StatusForbidden},
		{[]string{"Via", "1.1 proxy.example"}, http.StatusForbidden},
		{[]string{"X-Forwarded-Host", "chat.example.com", "X-Forwarded-Proto", "https"}, http.StatusForbidden},
	} {
		code, _, body := do(t, open, "GET", "/notes", "", c.headers...)
		if code != c.want {
			t.Errorf("open guard, GET with %q: %d %s, want %d", c.headers, code, body, c.want)
		}
	}
	// Two header lines: the second names a client beyond loopback.
	req, err := http.NewRequestWithContext(t.Context(), "GET", open.URL+"/notes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Add("X-Forwarded-For", "127.0.0.1")
	req.Header.Add("X-Forwarded-For", "203.0.113.9")
	resp, err := open.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("open guard, two X-Forwarded-For lines, the second beyond loopback: %d, want 403", resp.StatusCode)
	}
}

// TestProxyHeadersIsACopy: a caller changing the slice ProxyHeaders
// returns changes no guard's rules.
func TestProxyHeadersIsACopy(t *testing.T) {
	t.Parallel()
	hs := guard.ProxyHeaders()
	for i := range hs {
		hs[i] = "X-Nothing"
	}
	if got := guard.ProxyHeaders(); !slices.Contains(got, "X-Forwarded-For") || !slices.Contains(got, "Forwarded") {
		t.Errorf("ProxyHeaders after changing a returned slice: %v", got)
	}
	r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	if guard.Proxied(r) != "X-Forwarded-For" {
		t.Errorf("Proxied after changing a returned slice: %q", guard.Proxied(r))
	}
}

// fakeListener is a listener that reports addr.
type fakeListener struct {
	net.Listener
	addr net.Addr
}

func (f fakeListener) Addr() net.Addr { return f.addr }

// TestLoopbackListener: the address a listener is on, not the name it was
// asked for, tells whether it is on loopback only.
func TestLoopbackListener(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ip   string
		want bool
	}{{"127.0.0.1", true}, {"127.3.2.1", true}, {"::1", true}, {"0.0.0.0", false}, {"::", false}, {"192.0.2.7", false}} {
		ln := fakeListener{addr: &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 8080}}
		if got := guard.LoopbackListener(ln); got != c.want {
			t.Errorf("LoopbackListener on %s: %v, want %v", c.ip, got, c.want)
		}
	}
	if guard.LoopbackListener(fakeListener{addr: &net.UnixAddr{Name: "/tmp/x", Net: "unix"}}) {
		t.Error("LoopbackListener on a unix socket: true, want false")
	}
}

// TestOpenGuardRefusesClientAddressHeadersByName: a header that names a
// client's address is known by its name, not only from ProxyHeaders'
// list (Fly-Client-IP, X-Cluster-Client-IP, X-Original-Forwarded-For,
// a header ending in -Real-IP, in any case, with '_' for '-'): an open
// guard refuses one naming an address beyond loopback, serves one naming
// loopback only with Config.TrustLocalProxy, and is not misled by headers
// that merely look similar.
func TestOpenGuardRefusesClientAddressHeadersByName(t *testing.T) {
	t.Parallel()
	_, open := newServer(t, guard.Config{TrustLocalProxy: true}, whoami)
	_, strict := newServer(t, guard.Config{}, whoami)
	for _, h := range []string{"Fly-Client-Ip", "X-Cluster-Client-Ip", "X-Original-Forwarded-For", "X-Custom-Real-Ip",
		"X-Akamai-Client-Ip", "X-Envoy-External-Address", "X-Azure-Clientip", "X_Real_IP", "Cf-Connecting-Ipv6", "X-Forwarded-Prefix"} {
		code, _, body := do(t, open, "GET", "/notes", "", h, "203.0.113.9")
		if code != http.StatusForbidden || !strings.Contains(strings.ToLower(body), strings.ToLower(h)) {
			t.Errorf("open guard, %s: 203.0.113.9: %d %s, want 403 naming the header", h, code, body)
		}
		if h == "X-Forwarded-Prefix" {
			continue // names no client: a loopback address elsewhere is needed
		}
		if code, _, body := do(t, open, "GET", "/notes", "", h, "127.0.0.1"); code != http.StatusOK {
			t.Errorf("open guard with TrustLocalProxy, %s: 127.0.0.1: %d %s, want 200", h, code, body)
		}
		if code, _, body := do(t, strict, "GET", "/notes", "", h, "127.0.0.1"); code != http.StatusForbidden {
			t.Errorf("open guard, %s: 127.0.0.1: %d %s, want 403", h, code, body)
		}
	}
	for _, h := range []string{"X-Request-Id", "X-Client-Version", "X-Forward", "Referer"} {
		if code, _, body := do(t, open, "GET", "/notes", "", h, "203.0.113.9"); code != http.StatusOK {
			t.Errorf("open guard with TrustLocalProxy, %s: %d %s, want 200 (not a proxy's header)", h, code, body)
		}
		if code, _, body := do(t, strict, "GET", "/notes", "", h, "203.0.113.9"); code != http.StatusOK {
			t.Errorf("open guard, %s: %d %s, want 200 (not a proxy's header)", h, code, body)
		}
	}
	// Proxied and the 403 name the best known header first, then by name.
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	r.Header.Set("X-Zeta-Client-Ip", "127.0.0.1")
	r.Header.Set("X-Alpha-Real-Ip", "127.0.0.1")
	if got := guard.Proxied(r); got != "X-Alpha-Real-Ip" {
		t.Errorf("Proxied: %q, want X-Alpha-Real-Ip", got)
	}
	r.Header.Set("Fly-Client-Ip", "127.0.0.1")
	r.Header.Set("X-Forwarded-For", "127.0.0.1")
	if got := guard.Proxied(r); got != "X-Forwarded-For" {
		t.Errorf("Proxied: %q, want X-Forwarded-For", got)
	}
	for _, h := range guard.ProxyHeaders() {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
		r.Header.Set(h, "x")
		if guard.Proxied(r) != h {
			t.Errorf("Proxied with %s: %q", h, guard.Proxied(r))
		}
	}
}
