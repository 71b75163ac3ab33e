package chatbot_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestOpenDemoServesThisMachineOnly: the open demo (no authentication) is
// for this machine. A reverse proxy in front would relay anyone's
// requests to its loopback listener: New refuses AllowedHosts beyond
// loopback without authentication, and a request that carries a header a
// proxy adds gets 403 naming it and the fix, for the page too. The 421 of
// a foreign Host offers authentication, not AllowedHosts alone.
func TestOpenDemoServesThisMachineOnly(t *testing.T) {
	_, err := chatbot.New(t.Context(), chatbot.Config{Offline: true, AllowedHosts: []string{"chat.example.com"}})
	if err == nil || !strings.Contains(err.Error(), "Config.AllowedHosts") || !strings.Contains(err.Error(), "Config.Tokens") {
		t.Errorf("New with AllowedHosts beyond loopback and no authentication: %v, want an error naming Config.AllowedHosts and Config.Tokens", err)
	}
	_, srv := newServer(t, chatbot.Config{AllowedHosts: []string{"localhost"}})
	for _, c := range []struct{ path, header, value string }{
		{"/api/v1/tools", "X-Forwarded-For", "203.0.113.9"},
		{"/api/v1/tools", "Forwarded", "for=203.0.113.9"},
		{"/api/v1/tools", "X-Real-IP", "203.0.113.9"},
		{"/api/v1/tools", "Via", "1.1 proxy"},
		{"/", "X-Forwarded-For", "203.0.113.9"},
		{"/health", "Via", "1.1 proxy"},
	} {
		code, body := status(t, srv, "GET", c.path, "", "", c.header, c.value)
		if code != http.StatusForbidden || !strings.Contains(body, "CHATBOT_TOKENS") || !strings.Contains(strings.ToLower(body), strings.ToLower(c.header)) {
			t.Errorf("GET %s with %s: %d %s, want 403 naming the header and how to turn on authentication", c.path, c.header, code, body)
		}
	}
	if code, body := status(t, srv, "GET", "/api/v1/tools", "", ""); code != http.StatusOK {
		t.Errorf("GET /api/v1/tools from this machine: %d %s", code, body)
	}
	code, body := status(t, srv, "GET", "/api/v1/tools", "", "", "Host", "chat.example.com")
	if code != http.StatusMisdirectedRequest || !strings.Contains(body, "turn on authentication") {
		t.Errorf("a foreign Host on the open demo: %d %s, want 421 saying to turn on authentication", code, body)
	}
}

// TestOpenDemoPeersAndLocalProxies: the open demo served on a listener
// beyond loopback refuses a peer beyond this machine (403 naming
// RemoteAddr and CHATBOT_TOKENS); by default a request naming a loopback
// client (X-Forwarded-For: 127.0.0.1, which a client beyond can forge
// through a proxy that passes its headers on) gets 403 naming
// Config.TrustLocalProxy; with it, a development proxy on this machine
// that names a loopback client is served, one that also names a client
// beyond is not.
func TestOpenDemoPeersAndLocalProxies(t *testing.T) {
	_, strict := newServer(t, chatbot.Config{})
	code, body := status(t, strict, "GET", "/api/v1/tools", "", "", "X-Forwarded-For", "127.0.0.1")
	if code != http.StatusForbidden || !strings.Contains(body, "X-Forwarded-For") || !strings.Contains(body, "CHATBOT_TOKENS") ||
		!strings.Contains(body, "-trust-local-proxy") {
		t.Errorf("GET naming a loopback client without TrustLocalProxy: %d %s, want 403 naming the header, CHATBOT_TOKENS and -trust-local-proxy", code, body)
	}
	bot, srv := newServer(t, chatbot.Config{TrustLocalProxy: true})
	r := httptest.NewRequest("GET", "http://127.0.0.1:8080/api/v1/tools", nil)
	r.RemoteAddr = "192.0.2.1:4321"
	w := httptest.NewRecorder()
	bot.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `"field":"RemoteAddr"`) || !strings.Contains(w.Body.String(), "CHATBOT_TOKENS") ||
		!strings.Contains(w.Body.String(), "192.0.2.1") {
		t.Errorf("GET from a peer beyond loopback: %d %s, want 403 naming RemoteAddr, the peer and CHATBOT_TOKENS", w.Code, w.Body)
	}
	if code, body := status(t, srv, "GET", "/api/v1/tools", "", "", "X-Forwarded-For", "127.0.0.1"); code != http.StatusOK {
		t.Errorf("GET through a local development proxy: %d %s, want 200", code, body)
	}
	code, body = status(t, srv, "GET", "/api/v1/tools", "", "", "X-Forwarded-For", "127.0.0.1, 203.0.113.9")
	if code != http.StatusForbidden || !strings.Contains(body, "X-Forwarded-For") || !strings.Contains(body, "CHATBOT_TOKENS") {
		t.Errorf("GET through a proxy naming a client beyond loopback: %d %s, want 403 naming the header and CHATBOT_TOKENS", code, body)
	}
}

// TestAllowedHostsAddToLoopback: with authentication, AllowedHosts (serve
// -allow-host) names hosts served besides the loopback names, as its help
// says; other names get 421. Requests through a proxy are served.
func TestAllowedHostsAddToLoopback(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Tokens: twoPrincipals, AllowedHosts: []string{"chat.example.com"}})
	for host, want := range map[string]int{"chat.example.com": http.StatusOK, "localhost": http.StatusOK,
		"127.0.0.1": http.StatusOK, "other.example.com": http.StatusMisdirectedRequest} {
		if code, body := status(t, srv, "GET", "/api/v1/tools", aliceToken, "", "Host", host); code != want {
			t.Errorf("Host %s: %d %s, want %d", host, code, body, want)
		}
	}
	if code, body := status(t, srv, "GET", "/api/v1/tools", aliceToken, "", "Host", "chat.example.com", "X-Forwarded-For", "203.0.113.9"); code != http.StatusOK {
		t.Errorf("through a proxy with authentication: %d %s, want 200", code, body)
	}
}

// TestLocalPrincipalReserved: with authentication, the principal "local"
// would read what the bot stores unscoped (the open demo's conversations,
// users and documents): a token for it is refused by New, and
// Config.Authenticate returning it answers 401.
func TestLocalPrincipalReserved(t *testing.T) {
	_, err := chatbot.New(t.Context(), chatbot.Config{Offline: true, Tokens: map[string]string{"local-token-0123456789abcdef": chatbot.LocalPrincipal}})
	if err == nil || !strings.Contains(err.Error(), "Config.Tokens") || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("New with a token for %q: %v, want an error naming Config.Tokens and the reserved name", chatbot.LocalPrincipal, err)
	}
	_, srv := newServer(t, chatbot.Config{Authenticate: func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no user")
	}})
	if code, body := status(t, srv, "GET", "/api/v1/tools", "", "", "X-User", chatbot.LocalPrincipal); code != http.StatusUnauthorized {
		t.Errorf("Authenticate returning %q: %d %s, want 401", chatbot.LocalPrincipal, code, body)
	}
	if code, body := status(t, srv, "GET", "/api/v1/tools", "", "", "X-User", "carol"); code != http.StatusOK {
		t.Errorf("Authenticate returning carol: %d %s, want 200", code, body)
	}
}
