package chatbot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// LocalPrincipal is the principal of every request when the bot has no
// authentication (Config.Tokens and Config.Authenticate unset: a loopback
// demo), and of [Bot.Chat] calls whose context names none. Its
// conversations, request ids and users are stored under their own ids;
// another principal's are stored under "principal/id", so that no
// principal can name another's. With authentication the name is
// reserved: a token of Config.Tokens for it is refused by [New], and
// Config.Authenticate returning it answers 401.
const LocalPrincipal = "local"

// MinTokenLen is the shortest token Config.Tokens accepts.
const MinTokenLen = guard.MinTokenLen

// ErrUnauthenticated is the cause of a 401: the request carries no
// credentials the bot accepts.
var ErrUnauthenticated = errors.New("chatbot: not authenticated; send the header Authorization: Bearer <token>")

// WithPrincipal returns a context whose turns, questions, documents and
// users belong to principal (see [Bot.Chat], [Bot.Respond]), an id like
// a conversation id (no '/'). A host service that calls the bot
// directly, rather than through [Bot.Handler], names the authenticated
// caller with it.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return guard.WithPrincipal(ctx, principal)
}

// CheckPrincipal refuses a principal the bot cannot keep apart from
// the others: one that is not an id (1 to 128 letters, digits, '_',
// '.', ':' or '-', starting with a letter or digit: its stored ids are
// "principal/id"), or LocalPrincipal, whose ids are stored unscoped (as
// an authenticated user it would read what the bot keeps for requests
// without authentication). [Bot.Handler] refuses such principals of
// Config.Tokens and Config.Authenticate with it; a host service that
// names the caller with [WithPrincipal] checks the name with it first.
func CheckPrincipal(p string) error {
	if !idPattern.MatchString(p) {
		return fmt.Errorf("chatbot: principal %q %s", p, idRule)
	}
	if p == LocalPrincipal {
		return fmt.Errorf("chatbot: principal %q is reserved for requests without authentication (LocalPrincipal); name the principal otherwise", p)
	}
	return nil
}

// PrincipalFromContext returns the principal set by [WithPrincipal] (or
// by the guard of [Bot.Handler], guard.Principal), or LocalPrincipal.
func PrincipalFromContext(ctx context.Context) string {
	if p := guard.Principal(ctx); p != "" {
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

// ownID reports whether the stored id is one of principal's, as scoped
// stores it.
func ownID(principal, stored string) bool {
	if principal == LocalPrincipal || principal == "" {
		return !strings.Contains(stored, "/")
	}
	rest, ok := strings.CutPrefix(stored, principal+"/")
	return ok && !strings.Contains(rest, "/")
}

// unscoped is the id a client named for a stored id of principal.
func unscoped(principal, id string) string {
	if principal == LocalPrincipal || principal == "" {
		return id
	}
	return strings.TrimPrefix(id, principal+"/")
}

// newGuard is the guard of the bot's HTTP API (see Config.Tokens,
// Config.Authenticate, Config.AllowedHosts, Config.AllowedOrigins,
// Config.BodyTimeout, Config.MaxStreams): the page and /health are
// public; /api/ requests are authenticated, their POST bodies must be
// application/json (multipart/form-data for documents) and arrive within
// Config.BodyTimeout, their writes end after Config.TurnTimeout and a
// minute, and, with authentication, a principal holds at most
// Config.MaxStreams chat streams.
func (b *Bot) newGuard() (*guard.Guard, error) {
	cfg := b.cfg
	authOn := cfg.Tokens != nil || cfg.Authenticate != nil
	for _, p := range cfg.Admins {
		if !idPattern.MatchString(p) {
			return nil, fmt.Errorf("chatbot: Config.Admins: principal %q %s", p, idRule)
		}
	}
	g, err := guard.New(guard.Config{
		Tokens:          cfg.Tokens,
		Authenticate:    cfg.Authenticate,
		CheckPrincipal:  CheckPrincipal,
		Local:           LocalPrincipal,
		Realm:           "chatbot",
		AllowedHosts:    cfg.AllowedHosts,
		AllowedOrigins:  cfg.AllowedOrigins,
		TrustLocalProxy: cfg.TrustLocalProxy,
		// The page and /health carry nothing of a principal's.
		Public: func(r *http.Request) bool { return !strings.HasPrefix(r.URL.Path, "/api/") },
		ContentTypes: func(r *http.Request) []string {
			if r.URL.Path == "/api/v1/documents" {
				return []string{jsonOnly, "multipart/form-data"}
			}
			return []string{jsonOnly}
		},
		MaxBodyBytes: -1, // each body has its own bound: Config.MaxBodyBytes, uploads theirs
		BodyTimeout:  cfg.BodyTimeout,
		WriteTimeout: cfg.writeTimeout(),
		Streaming:    func(r *http.Request) bool { return authOn && streaming(r) },
		MaxStreams:   cfg.MaxStreams,
		Reject:       b.reject,
	})
	if err != nil {
		return nil, fmt.Errorf("chatbot: %s", strings.TrimPrefix(err.Error(), "guard: "))
	}
	return g, nil
}

// reject answers a request the guard refused, in the API's error format,
// naming the Config fields and serve flags that change the rule.
func (b *Bot) reject(w http.ResponseWriter, r *http.Request, e *guard.Error) {
	switch {
	case errors.Is(e, guard.ErrHost):
		msg := fmt.Sprintf("chatbot: Host %q is not served; add it to Config.AllowedHosts (chatbot serve -allow-host)", hostOnly(r.Host))
		if b.guard.Open() {
			msg = fmt.Sprintf("chatbot: Host %q is not served; without authentication the bot serves loopback names only (localhost, 127.0.0.1); "+
				"to serve other names, turn on authentication (Config.Tokens, CHATBOT_TOKENS or chatbot serve -tokens) and list them "+
				"in Config.AllowedHosts (chatbot serve -allow-host)", hostOnly(r.Host))
		}
		writeJSON(w, e.Status, apiError{Field: "Host", Error: msg})
	case errors.Is(e, guard.ErrProxied) && e.Field == "RemoteAddr":
		writeJSON(w, e.Status, apiError{Field: e.Field, Error: fmt.Sprintf(
			"chatbot: the request came from %s, beyond this machine; without authentication the bot serves this machine only: "+
				"turn on authentication (Config.Tokens, CHATBOT_TOKENS or chatbot serve -tokens), or listen on loopback only", hostOnly(r.RemoteAddr))})
	case errors.Is(e, guard.ErrProxied) && b.cfg.TrustLocalProxy:
		writeJSON(w, e.Status, apiError{Field: e.Field, Error: fmt.Sprintf(
			"chatbot: the request came through a proxy (header %s) and names no loopback client; without authentication the bot "+
				"serves this machine only: turn on authentication (Config.Tokens, CHATBOT_TOKENS or chatbot serve -tokens) to serve "+
				"through a proxy, or have the local proxy send X-Forwarded-For with the client's loopback address", e.Field)})
	case errors.Is(e, guard.ErrProxied):
		writeJSON(w, e.Status, apiError{Field: e.Field, Error: fmt.Sprintf(
			"chatbot: the request came through a proxy (header %s), which may relay anyone's requests; without authentication the bot "+
				"serves this machine only: turn on authentication (Config.Tokens, CHATBOT_TOKENS or chatbot serve -tokens) to serve "+
				"through a proxy, or, when a trusted development proxy on this machine sets these headers itself, set "+
				"Config.TrustLocalProxy (chatbot serve -trust-local-proxy)", e.Field)})
	case errors.Is(e, guard.ErrOrigin):
		writeJSON(w, e.Status, apiError{Field: "Origin", Error: fmt.Sprintf(
			"chatbot: cross-origin request from %q refused; add the origin to Config.AllowedOrigins (chatbot serve -allow-origin)", r.Header.Get("Origin"))})
	case errors.Is(e, guard.ErrUnauthenticated):
		b.log.Debug("chatbot: request not authenticated", zap.Error(errors.Join(e.Unwrap()...)))
		writeJSON(w, e.Status, apiError{Field: "Authorization", Error: ErrUnauthenticated.Error()})
	case errors.Is(e, guard.ErrTooManyStreams):
		writeJSON(w, e.Status, apiError{Error: fmt.Sprintf(
			"chatbot: %d chat streams of yours are open (Config.MaxStreams); finish or close one first", b.cfg.MaxStreams)})
	default: // guard.ErrContentType
		writeJSON(w, e.Status, apiError{Field: e.Field, Error: "chatbot: " + strings.TrimPrefix(e.Message, "guard: ")})
	}
}

// hostOnly is hostport without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

// IsLoopback reports whether addr (HOST:PORT, as for net.Listen) listens
// only on the loopback interface; ":8080" and "0.0.0.0:8080" listen on
// every interface.
func IsLoopback(addr string) bool { return guard.LoopbackAddr(addr) }

// jsonOnly is the media type every JSON POST must declare; a browser's
// cross-site form can only send text/plain, multipart/form-data and
// application/x-www-form-urlencoded without asking the server first.
const jsonOnly = "application/json"

// streaming reports whether r holds a turn's stream open: a chat (SSE or
// sync) or a resumption.
func streaming(r *http.Request) bool {
	p := r.URL.Path
	return r.Method == http.MethodPost && (p == "/api/v1/chat" || p == "/api/v1/chat/sync") ||
		r.Method == http.MethodGet && strings.HasPrefix(p, "/api/v1/chat/stream/")
}

// bodyRead lifts the body's read deadline (set by the guard) once the body
// is read: the connection then stays open as long as the response needs
// (an SSE stream), and the server notices a client that goes away. After
// a failed read the deadline stays, so that the server's discarding of
// the rest of the body ends too.
func bodyRead(w http.ResponseWriter) { guard.BodyRead(w) }

// bodyTimedOut reports whether err is the body's read deadline passing.
func bodyTimedOut(err error) bool { return guard.BodyTimedOut(err) }

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
