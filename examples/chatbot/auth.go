package chatbot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// LocalPrincipal is the principal of every request when the bot has no
// authentication (Config.Tokens and Config.Authenticate unset: a loopback
// demo), and of [Bot.Chat] calls whose context names none. Its
// conversations, request ids and users are stored under their own ids;
// another principal's are stored under "principal/id", so that no
// principal can name another's.
const LocalPrincipal = "local"

// MinTokenLen is the shortest token Config.Tokens accepts.
const MinTokenLen = 16

// ErrUnauthenticated is the cause of a 401: the request carries no
// credentials the bot accepts.
var ErrUnauthenticated = errors.New("chatbot: not authenticated; send the header Authorization: Bearer <token>")

type principalKey struct{}

// WithPrincipal returns a context whose turns, questions, documents and
// users belong to principal (see [Bot.Chat], [Bot.Respond]), an id like
// a conversation id (no '/'). A host service that calls the bot
// directly, rather than through [Bot.Handler], names the authenticated
// caller with it.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFromContext returns the principal set by [WithPrincipal], or
// LocalPrincipal.
func PrincipalFromContext(ctx context.Context) string {
	if p, ok := ctx.Value(principalKey{}).(string); ok && p != "" {
		return p
	}
	return LocalPrincipal
}

// scoped is the id under which principal's id is stored: the id itself
// for LocalPrincipal, "principal/id" for the others. Ids never hold a
// '/' (idPattern), so no principal's stored id is another's.
func scoped(principal, id string) string {
	if principal == LocalPrincipal || principal == "" || id == "" {
		return id
	}
	return principal + "/" + id
}

// unscoped is the id a client named for a stored id of principal.
func unscoped(principal, id string) string {
	if principal == LocalPrincipal || principal == "" {
		return id
	}
	return strings.TrimPrefix(id, principal+"/")
}

// auth is the bot's authentication and request checks (see Config.Tokens,
// Config.Authenticate, Config.AllowedHosts, Config.AllowedOrigins).
type auth struct {
	tokens       map[[sha256.Size]byte]string // sha256(token) → principal
	authenticate func(*http.Request) (string, error)
	hosts        []string // allowed Host names, lower-case, without port
	origins      []string // allowed Origin values, lower-case
}

func newAuth(cfg Config) (*auth, error) {
	a := &auth{authenticate: cfg.Authenticate}
	for tok, p := range cfg.Tokens {
		if len(tok) < MinTokenLen {
			return nil, fmt.Errorf("chatbot: Config.Tokens: the token of principal %q has %d bytes; use at least %d random bytes", p, len(tok), MinTokenLen)
		}
		if !idPattern.MatchString(p) {
			return nil, fmt.Errorf("chatbot: Config.Tokens: principal %q %s", p, idRule)
		}
		if a.tokens == nil {
			a.tokens = map[[sha256.Size]byte]string{}
		}
		a.tokens[sha256.Sum256([]byte(tok))] = p
	}
	for _, h := range cfg.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return nil, fmt.Errorf("chatbot: Config.AllowedHosts: %q is not a host name", h)
		}
		a.hosts = append(a.hosts, strings.ToLower(hostOnly(h)))
	}
	for _, o := range cfg.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return nil, fmt.Errorf("chatbot: Config.AllowedOrigins: %q is not an origin such as https://app.example.com", o)
		}
		a.origins = append(a.origins, strings.ToLower(o))
	}
	return a, nil
}

// open reports whether the bot authenticates no one: every request is
// LocalPrincipal's, and only loopback hosts are served.
func (a *auth) open() bool { return a.tokens == nil && a.authenticate == nil }

// principal authenticates r: a bearer token of Config.Tokens, else
// Config.Authenticate, else, without either, LocalPrincipal.
func (a *auth) principal(r *http.Request) (string, error) {
	if a.open() {
		return LocalPrincipal, nil
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && a.tokens != nil {
		if p, ok := a.tokens[sha256.Sum256([]byte(strings.TrimSpace(tok)))]; ok {
			return p, nil
		}
	}
	if a.authenticate == nil {
		return "", ErrUnauthenticated
	}
	p, err := a.authenticate(r)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if !idPattern.MatchString(p) {
		return "", fmt.Errorf("chatbot: Config.Authenticate returned principal %q, which %s", p, idRule)
	}
	return p, nil
}

// hostAllowed reports whether r's Host header names this server: one of
// Config.AllowedHosts, or, without them, any host when authentication is
// on and a loopback name or address when it is off (a DNS-rebinding page
// sends its own host name).
func (a *auth) hostAllowed(r *http.Request) bool {
	h := strings.ToLower(hostOnly(r.Host))
	if slices.Contains(a.hosts, h) {
		return true
	}
	if len(a.hosts) > 0 {
		return false
	}
	return !a.open() || loopbackHost(h)
}

// originAllowed reports whether a browser request comes from the page's
// own origin or one of Config.AllowedOrigins. Requests without an Origin
// header (not sent by a browser, or a same-origin GET) pass, unless
// Sec-Fetch-Site says they are cross-site.
func (a *auth) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		s := r.Header.Get("Sec-Fetch-Site")
		return s != "cross-site" && s != "same-site"
	}
	if slices.Contains(a.origins, strings.ToLower(o)) {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false // "null": a sandboxed frame, a file
	}
	return strings.EqualFold(u.Host, r.Host)
}

// hostOnly is hostport without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

// loopbackHost reports whether h is "localhost" or a loopback address.
func loopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (HOST:PORT, as for net.Listen) listens
// only on the loopback interface; ":8080" and "0.0.0.0:8080" listen on
// every interface.
func IsLoopback(addr string) bool {
	h := hostOnly(addr)
	if h == "" {
		return false
	}
	return loopbackHost(strings.ToLower(h))
}

// streamLimit counts each principal's open chat streams (Config.MaxStreams).
type streamLimit struct {
	max int
	mu  sync.Mutex
	n   map[string]int // principal → open streams; no entry at zero
}

// take counts one more stream of p, or reports false when p has max.
func (l *streamLimit) take(p string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	if l.n[p] >= l.max {
		return false
	}
	l.n[p]++
	return true
}

func (l *streamLimit) give(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[p] <= 1 {
		delete(l.n, p)
		return
	}
	l.n[p]--
}

// jsonOnly is the media type every JSON POST must declare; a browser's
// cross-site form can only send text/plain, multipart/form-data and
// application/x-www-form-urlencoded without asking the server first.
const jsonOnly = "application/json"

// protect wraps the API's handlers with the checks every request goes
// through: the Host header, the Origin of browser requests, the
// principal (401 without one), the Content-Type of POST bodies, the
// per-principal stream limit, and the deadlines of the connection (the
// body must arrive within Config.BodyTimeout; writes end after
// Config.TurnTimeout and a minute).
func (b *Bot) protect(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		if !b.auth.hostAllowed(r) {
			writeJSON(w, http.StatusMisdirectedRequest, apiError{Field: "Host", Error: fmt.Sprintf(
				"chatbot: Host %q is not served; without authentication the bot serves loopback names only (localhost, 127.0.0.1); "+
					"set Config.AllowedHosts (chatbot serve -allow-host), or turn on authentication (Config.Tokens, CHATBOT_TOKENS)", hostOnly(r.Host))})
			return
		}
		api := strings.HasPrefix(r.URL.Path, "/api/")
		if !api {
			// The page and /health carry nothing of a principal's.
			mux.ServeHTTP(w, r)
			return
		}
		if !b.auth.originAllowed(r) {
			writeJSON(w, http.StatusForbidden, apiError{Field: "Origin", Error: fmt.Sprintf(
				"chatbot: cross-origin request from %q refused; add the origin to Config.AllowedOrigins (chatbot serve -allow-origin)", r.Header.Get("Origin"))})
			return
		}
		p, err := b.auth.principal(r)
		if err != nil {
			b.log.Debug("chatbot: request not authenticated", zap.Error(err))
			h.Set("WWW-Authenticate", `Bearer realm="chatbot"`)
			writeJSON(w, http.StatusUnauthorized, apiError{Field: "Authorization", Error: ErrUnauthenticated.Error()})
			return
		}
		if r.Method == http.MethodPost {
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if mt != jsonOnly && (mt != "multipart/form-data" || r.URL.Path != "/api/v1/documents") {
				want := `"application/json"`
				if r.URL.Path == "/api/v1/documents" {
					want += ` or "multipart/form-data"`
				}
				writeJSON(w, http.StatusUnsupportedMediaType, apiError{Field: "Content-Type", Error: fmt.Sprintf(
					"chatbot: Content-Type %q is not accepted; send %s", r.Header.Get("Content-Type"), want)})
				return
			}
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(b.cfg.BodyTimeout)) // lifted once the body is read (bodyRead)
		}
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(b.cfg.TurnTimeout + time.Minute))
		if streaming(r) && !b.auth.open() {
			if !b.streamsOf.take(p) {
				h.Set("Retry-After", "1")
				writeJSON(w, http.StatusTooManyRequests, apiError{Error: fmt.Sprintf(
					"chatbot: %d chat streams of yours are open (Config.MaxStreams); finish or close one first", b.cfg.MaxStreams)})
				return
			}
			defer b.streamsOf.give(p)
		}
		mux.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// streaming reports whether r holds a turn's stream open: a chat (SSE or
// sync) or a resumption.
func streaming(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodPost && (p == "/api/v1/chat" || p == "/api/v1/chat/sync") ||
		r.Method == http.MethodGet && strings.HasPrefix(p, "/api/v1/chat/stream/")
}

// bodyRead lifts the body's read deadline (set by protect) once the body
// is read: the connection then stays open as long as the response needs
// (an SSE stream), and the server notices a client that goes away. After
// a failed read the deadline stays, so that the server's discarding of
// the rest of the body ends too.
func bodyRead(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// bodyTimedOut reports whether err is the body's read deadline passing.
func bodyTimedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// bodyTimeoutError is a request body that did not arrive within
// Config.BodyTimeout: 408.
type bodyTimeoutError struct{ limit time.Duration }

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("chatbot: body: not received within %s (Config.BodyTimeout); send the whole body at once", e.limit)
}

// timeoutMarker remembers whether a read of its body timed out.
type timeoutMarker struct {
	io.ReadCloser
	timedOut bool
}

func (t *timeoutMarker) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if err != nil && bodyTimedOut(err) {
		t.timedOut = true
	}
	return n, err
}
