package guard_test

import (
	"net"
	"net/http"
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
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-IP", "Via"} {
		val := "203.0.113.9"
		switch h {
		case "Forwarded":
			val = "for=203.0.113.9;proto=https"
		case "Via":
			val = "1.1 proxy.example"
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
