package guard

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of [Config].
const (
	// DefaultMaxBodyBytes bounds a request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultBodyTimeout bounds how long a request body may take to
	// arrive.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultMaxStreams bounds each principal's concurrent streams.
	DefaultMaxStreams = 64
	// DefaultReadHeaderTimeout bounds how long a request's headers may
	// take to arrive (http.Server.ReadHeaderTimeout).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes idle keep-alive connections
	// (http.Server.IdleTimeout).
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes bounds a request's headers
	// (http.Server.MaxHeaderBytes).
	DefaultMaxHeaderBytes = 64 << 10
)

// MinTokenLen is the shortest token Config.Tokens accepts.
const MinTokenLen = 16

// LocalPrincipal is the principal of every request of an open guard (no
// Config.Tokens, no Config.Authenticate) unless Config.Local names
// another.
const LocalPrincipal = "local"

// The rules a request can break; an *[Error] unwraps to one of them.
var (
	// ErrHost: the Host header names a host the guard does not serve (421).
	ErrHost = errors.New("guard: host not served")
	// ErrOrigin: a browser request from another origin (403).
	ErrOrigin = errors.New("guard: cross-origin request")
	// ErrUnauthenticated: no credentials the guard accepts (401).
	ErrUnauthenticated = errors.New("guard: not authenticated; send the header Authorization: Bearer <token>")
	// ErrContentType: a body of a media type the guard does not accept (415).
	ErrContentType = errors.New("guard: media type not accepted")
	// ErrTooManyStreams: the principal holds Config.MaxStreams streams (429).
	ErrTooManyStreams = errors.New("guard: too many streams")
	// ErrProxied: a request to an open guard shows signs of coming from
	// beyond this machine (403): its peer address is not loopback, or it
	// carries a header proxies add ([ProxyHeaders]); with
	// Config.TrustLocalProxy, one that names a client beyond loopback, or
	// none.
	ErrProxied = errors.New("guard: request through a proxy")
)

// proxyHeaders are the request headers that proxies add, best known
// first; see [ProxyHeaders]. Any other header that [proxyHeaderKind]
// classifies counts too.
var proxyHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip", "Via", "X-Forwarded-Host",
	"X-Forwarded-Proto", "X-Forwarded-Port", "X-Forwarded-Server", "Cf-Connecting-Ip", "True-Client-Ip",
	"X-Client-Ip", "Fastly-Client-Ip", "X-Cluster-Client-Ip", "Fly-Client-Ip", "X-Original-Forwarded-For",
	"X-Envoy-External-Address", "X-Azure-Clientip", "X-Azure-Socketip", "X-Appengine-User-Ip", "Cdn-Loop"}

// ProxyHeaders returns the best known request headers that proxies add,
// in canonical form; the slice is the caller's. They are RFC 7239's
// Forwarded, the de facto X-Forwarded-For, X-Forwarded-Host, -Proto,
// -Port, -Server, X-Real-IP and Via, RFC 8586's CDN-Loop, and the
// client-address headers of CDNs, load balancers and hosts
// (CF-Connecting-IP, True-Client-IP, Fastly-Client-IP, Fly-Client-IP,
// X-Cluster-Client-IP, X-Envoy-External-Address and others).
//
// The guard does not stop at this list: a header counts as a proxy's when
// its name, compared without regard to case, '-' and '_', is Forwarded,
// Via or CDN-Loop, starts with X-Forwarded, or ends with one of the words
// that name a client's address: ForwardedFor, ClientIP, RealIP,
// ConnectingIP, UserIP, SocketIP, RemoteIP, OriginatingIP (each also
// followed by v4 or v6), ClientAddr, ClientAddress, RemoteAddr,
// ExternalAddress. Those with such a word (and Forwarded, through its
// for= parameters) name client addresses.
//
// An open guard refuses a request that carries a proxy's header, since
// the proxy may relay requests from anywhere to a loopback listener. With
// Config.TrustLocalProxy it serves one whose client addresses are all
// loopback addresses: a local development proxy (one that adds
// X-Forwarded-For: 127.0.0.1) in front of a local client; a proxy that
// appends the real client's address cannot hide a client from beyond this
// machine, but one that passes the client's own headers on can (see
// Config.TrustLocalProxy). A proxy that adds none of these headers and
// passes on none of the client's (nginx's plain proxy_pass with a client
// that sends none) goes unnoticed, so these headers are a sign of a
// proxy, not a proof of its absence.
func ProxyHeaders() []string { return slices.Clone(proxyHeaders) }

// The kinds of header [proxyHeaderKind] tells apart.
const (
	notProxy   = iota // a header proxies do not add
	proxySign         // a header proxies add that names no client address
	clientAddr        // a header naming the client's address (a list of them)
)

// clientWords are the words (lower case, without '-' and '_') a header's
// name ends with when it names a client's address; the words that end in
// "ip" may also end in "ipv4" or "ipv6" (CF-Connecting-IPv6).
var clientWords = func() []string {
	ws := []string{"forwardedfor", "clientaddr", "clientaddress", "remoteaddr", "externaladdress"}
	for _, w := range []string{"clientip", "realip", "connectingip", "userip", "socketip", "remoteip", "originatingip"} {
		ws = append(ws, w, w+"v4", w+"v6")
	}
	return ws
}()

// proxyHeaderKind classifies the header name (see [ProxyHeaders]); it
// compares without regard to case, '-' and '_'.
func proxyHeaderKind(name string) int {
	switch {
	case foldEqual(name, "forwarded"):
		return clientAddr
	case foldEqual(name, "via"), foldEqual(name, "cdnloop"):
		return proxySign
	}
	last := byte(0)
	for i := len(name) - 1; i >= 0 && last == 0; i-- {
		if !separator(name[i]) {
			last = lower(name[i])
		}
	}
	switch last {
	case 'r', 'p', '4', '6', 's': // the last letters of clientWords
		for _, w := range clientWords {
			if foldSuffix(name, w) {
				return clientAddr
			}
		}
	}
	if foldPrefix(name, "xforwarded") {
		return proxySign
	}
	return notProxy
}

// lower is c in lower case when it is an ASCII letter.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// separator reports whether c is one of the characters header names
// compare without: '-' and '_'.
func separator(c byte) bool { return c == '-' || c == '_' }

// foldSuffix reports whether name, without '-' and '_' and in lower case,
// ends with word (lower case).
func foldSuffix(name, word string) bool {
	i := len(name)
	for j := len(word) - 1; j >= 0; j-- {
		for i > 0 && separator(name[i-1]) {
			i--
		}
		if i == 0 || lower(name[i-1]) != word[j] {
			return false
		}
		i--
	}
	return true
}

// foldPrefixAt reports whether name, without '-' and '_' and in lower
// case, starts with word (lower case), and returns the index after it.
func foldPrefixAt(name, word string) (int, bool) {
	i := 0
	for j := 0; j < len(word); j++ {
		for i < len(name) && separator(name[i]) {
			i++
		}
		if i == len(name) || lower(name[i]) != word[j] {
			return 0, false
		}
		i++
	}
	return i, true
}

// foldPrefix reports whether name, compared as foldSuffix does, starts
// with word.
func foldPrefix(name, word string) bool {
	_, ok := foldPrefixAt(name, word)
	return ok
}

// foldEqual reports whether name, compared as foldSuffix does, is word.
func foldEqual(name, word string) bool {
	i, ok := foldPrefixAt(name, word)
	for ok && i < len(name) {
		ok = separator(name[i])
		i++
	}
	return ok
}

// Error is a request the guard refused: the HTTP status it is answered
// with, the request header or part at fault, and a message that says how
// to fix it. errors.Is(err, ErrHost) and the like tell the rule.
type Error struct {
	// Status is the HTTP status of the answer.
	Status int
	// Field names what is at fault: "Host", "Origin", "Authorization",
	// "Content-Type", the proxy header (see ProxyHeaders) or
	// "RemoteAddr" for ErrProxied, or "" for the stream limit.
	Field string
	// Message says what is wrong and how to fix it.
	Message string
	// Principal is the authenticated principal, when the rule broken
	// comes after authentication (Content-Type, streams).
	Principal string
	rule      error
	cause     error
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the rule broken and, for ErrUnauthenticated, the error
// of Config.Authenticate.
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{e.rule, e.cause}
	}
	return []error{e.rule}
}

// Config configures a [Guard]. The zero Config is an open guard for a
// loopback-only JSON API: every request is LocalPrincipal's.
type Config struct {
	// Tokens maps bearer tokens to the principals they authenticate: a
	// request with the header "Authorization: Bearer TOKEN" acts as that
	// principal. Each token has at least MinTokenLen bytes. With Tokens or
	// Authenticate set, every request that is not Public must
	// authenticate (401 otherwise); with neither the guard is open.
	Tokens map[string]string
	// APIKeyHeader, when set (such as "X-Api-Key"), is a header that may
	// carry a token of Tokens instead of Authorization.
	APIKeyHeader string
	// Authenticate, when set, authenticates a request that carries no
	// token of Tokens, with the host service's own scheme (a session
	// cookie, a proxy's header, mTLS): it returns the request's principal,
	// or an error for a 401.
	Authenticate func(*http.Request) (principal string, err error)
	// CheckPrincipal, when set, validates each principal of Tokens and of
	// Authenticate; an error refuses it. Nil means 1 to 128 letters,
	// digits, '_', '.', ':' or '-', starting with a letter or digit.
	CheckPrincipal func(principal string) error
	// Local is the principal of an open guard's requests. Empty means
	// LocalPrincipal.
	Local string
	// Realm is the realm of the WWW-Authenticate challenge of a 401.
	// Empty means "api".
	Realm string
	// AllowedHosts are the host names (Host header, port ignored) served
	// besides the loopback names (localhost, names under .localhost,
	// 127.0.0.1, ::1), which are always served; others get 421, which
	// defeats DNS rebinding. Empty means any host with authentication,
	// and loopback names only without. An open guard (no Tokens, no
	// Authenticate) serves this machine only: [New] refuses a name here
	// that is not a loopback name.
	AllowedHosts []string
	// AllowedOrigins are the origins (such as "https://app.example.com")
	// whose pages may call the API from a browser, besides the origin the
	// request is sent to. Requests without Origin (curl, servers) are not
	// affected unless Sec-Fetch-Site says they are cross-site. Behind a
	// proxy that ends TLS without saying so (X-Forwarded-Proto), list the
	// API's public https origin: then the http origin of its host is not
	// taken for the request's own (see [Origins.Allowed]).
	AllowedOrigins []string
	// Public, when set, reports requests served to anyone: a page, a
	// health check. They are checked for their Host (and, without
	// authentication, for coming from this machine) only, their body is
	// bounded as any other (MaxBodyBytes, BodyTimeout), and they carry no
	// principal.
	Public func(*http.Request) bool
	// ContentTypes, when set, returns the media types accepted for a
	// request's body. Nil means "application/json" for every request.
	ContentTypes func(*http.Request) []string
	// MaxBodyBytes bounds request bodies. Zero means DefaultMaxBodyBytes;
	// negative means no bound.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request body may take to arrive.
	// Zero means DefaultBodyTimeout; negative means no bound.
	BodyTimeout time.Duration
	// WriteTimeout, when positive, bounds how long the handler may take
	// to write its response (a write deadline on the connection, set per
	// request so that it can be longer than the server's). Zero means no
	// bound.
	WriteTimeout time.Duration
	// Streaming, when set, reports the requests that hold a stream open
	// (server-sent events, a long poll); each principal holds at most
	// MaxStreams of them at once. Nil means no request counts.
	Streaming func(*http.Request) bool
	// MaxStreams bounds each principal's concurrent streams. Zero means
	// DefaultMaxStreams.
	MaxStreams int
	// ReadHeaderTimeout, IdleTimeout and MaxHeaderBytes configure the
	// http.Server of [Guard.Server]. Zero means DefaultReadHeaderTimeout,
	// DefaultIdleTimeout and DefaultMaxHeaderBytes.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// TrustLocalProxy lets an open guard (no Tokens, no Authenticate)
	// serve a request that carries headers a proxy adds ([ProxyHeaders])
	// when every client address they name is a loopback address: a
	// development proxy on this machine (a dev server's, adding
	// X-Forwarded-For: 127.0.0.1) in front of a local browser. False (the
	// default) refuses every request to an open guard that carries such a
	// header (403, ErrProxied).
	//
	// The threat: these headers are the client's to write. A proxy that
	// relays requests from beyond this machine and passes the client's
	// own X-Forwarded-For or Forwarded on unchanged (nginx's plain
	// proxy_pass, which forwards client headers, behind TLS) lets anyone
	// pass for a loopback client by sending X-Forwarded-For: 127.0.0.1,
	// and reach the open API. Set it only when every proxy in front is on
	// this machine, serves this machine only, and sets those headers
	// itself. An authenticated guard serves proxied requests and ignores
	// it.
	TrustLocalProxy bool
	// Reject, when set, answers a refused request; its *Error says the
	// status, the rule and a message. Nil writes the status and the JSON
	// object {"error": message, "field": field}.
	Reject func(w http.ResponseWriter, r *http.Request, err *Error)
}

// Guard is an http.Handler middleware enforcing a [Config]. Make one with
// [New]; it is safe for concurrent use.
type Guard struct {
	cfg     Config
	tokens  map[[sha256.Size]byte]string // sha256(token) → principal
	hosts   []string                     // lower-case, without port
	origins Origins                      // Config.AllowedOrigins

	mu      sync.Mutex
	streams map[string]int // principal → open streams; no entry at zero
}

// principalPattern is the default rule of Config.CheckPrincipal.
var principalPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

func defaultCheckPrincipal(p string) error {
	if !principalPattern.MatchString(p) {
		return fmt.Errorf("principal %q must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", p)
	}
	return nil
}

// New returns a guard enforcing cfg, or an error naming the field of cfg
// that is invalid.
func New(cfg Config) (*Guard, error) {
	g := &Guard{cfg: cfg, streams: map[string]int{}}
	c := &g.cfg
	if c.CheckPrincipal == nil {
		c.CheckPrincipal = defaultCheckPrincipal
	}
	if c.Local == "" {
		c.Local = LocalPrincipal
	}
	if c.Realm == "" {
		c.Realm = "api"
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.MaxStreams < 0 {
		return nil, fmt.Errorf("guard: Config.MaxStreams is %d; use 0 for DefaultMaxStreams or a positive bound", c.MaxStreams)
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Reject == nil {
		c.Reject = writeError
	}
	for tok, p := range cfg.Tokens {
		if len(tok) < MinTokenLen {
			return nil, fmt.Errorf("guard: Config.Tokens: the token of principal %q has %d bytes; use at least %d random bytes", p, len(tok), MinTokenLen)
		}
		if err := c.CheckPrincipal(p); err != nil {
			return nil, fmt.Errorf("guard: Config.Tokens: %w", err)
		}
		if g.tokens == nil {
			g.tokens = map[[sha256.Size]byte]string{}
		}
		g.tokens[sha256.Sum256([]byte(tok))] = p
	}
	for _, h := range cfg.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return nil, fmt.Errorf("guard: Config.AllowedHosts: %q is not a host name such as app.example.com", h)
		}
		if g.Open() && !LoopbackHost(h) {
			return nil, fmt.Errorf("guard: Config.AllowedHosts: serving %q, a name beyond this machine, needs authentication: "+
				"set Config.Tokens or Config.Authenticate, or remove the name (loopback names are served without it)", h)
		}
		g.hosts = append(g.hosts, strings.ToLower(hostOnly(h)))
	}
	var err error
	if g.origins, err = ParseOrigins(cfg.AllowedOrigins); err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	return g, nil
}

// Open reports whether the guard authenticates no one (neither
// Config.Tokens nor Config.Authenticate): every request is Config.Local's
// and only loopback hosts are served.
func (g *Guard) Open() bool { return g.tokens == nil && g.cfg.Authenticate == nil }

// Authenticate returns r's principal: the principal of a bearer token of
// Config.Tokens, else of Config.Authenticate, else, when the guard is
// open, Config.Local. The error wraps ErrUnauthenticated.
func (g *Guard) Authenticate(r *http.Request) (string, error) {
	if g.Open() {
		return g.cfg.Local, nil
	}
	if g.tokens != nil {
		tok, ok := BearerToken(r)
		if !ok && g.cfg.APIKeyHeader != "" {
			tok, ok = strings.TrimSpace(r.Header.Get(g.cfg.APIKeyHeader)), true
		}
		if ok {
			if p, found := g.tokens[sha256.Sum256([]byte(tok))]; found {
				return p, nil
			}
		}
	}
	if g.cfg.Authenticate == nil {
		return "", ErrUnauthenticated
	}
	p, err := g.cfg.Authenticate(r)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	if err := g.cfg.CheckPrincipal(p); err != nil {
		return "", fmt.Errorf("%w: Config.Authenticate returned an invalid principal: %w", ErrUnauthenticated, err)
	}
	return p, nil
}

// BearerToken returns the token of r's header "Authorization: Bearer
// TOKEN", and whether r carries one. The scheme is matched without
// regard to case ("bearer", "BEARER"), as RFC 9110 says, and is
// separated from the token by spaces or tabs; a token is not empty.
func BearerToken(r *http.Request) (string, bool) {
	v := strings.Trim(r.Header.Get("Authorization"), " \t")
	i := strings.IndexAny(v, " \t")
	if i < 0 || !strings.EqualFold(v[:i], "Bearer") {
		return "", false
	}
	return strings.TrimLeft(v[i:], " \t"), true
}

// HostAllowed reports whether r's Host header names a host the guard
// serves (rule 1 of the package documentation): a loopback name, one of
// Config.AllowedHosts, or, when there are none and the guard
// authenticates, any.
func (g *Guard) HostAllowed(r *http.Request) bool {
	h := strings.ToLower(hostOnly(r.Host))
	if LoopbackHost(h) || slices.Contains(g.hosts, h) {
		return true
	}
	return len(g.hosts) == 0 && !g.Open()
}

// Proxied returns a header of r that proxies add ([ProxyHeaders] and
// the rule it states), or "" when r carries none. When r carries several,
// it returns the first in ProxyHeaders' order, else the first in
// lexical order.
func Proxied(r *http.Request) string {
	best := ""
	for name := range r.Header {
		if proxyHeaderKind(name) != notProxy && (best == "" || headerBefore(name, best)) {
			best = name
		}
	}
	return best
}

// headerBefore reports whether proxy header a comes before b: in
// ProxyHeaders' order, the others after them in lexical order.
func headerBefore(a, b string) bool {
	ia, ib := slices.Index(proxyHeaders, a), slices.Index(proxyHeaders, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia < ib
	case ia >= 0 || ib >= 0:
		return ia >= 0
	}
	return a < b
}

// remoteBeyond reports whether r's peer (RemoteAddr) is an IP address
// beyond loopback. A RemoteAddr that is no IP address (a unix socket's,
// an in-process request's empty one) is this machine's.
func remoteBeyond(r *http.Request) bool {
	ip := net.ParseIP(hostOnly(r.RemoteAddr))
	return ip != nil && !ip.IsLoopback()
}

// proxiedBeyond returns the proxy header of r that shows it may come from
// beyond this machine, or "" when r carries no proxy header or names
// loopback clients only: at least one client address, each a loopback
// address. Of several such headers it returns the first in Proxied's
// order.
func proxiedBeyond(r *http.Request) string {
	named, beyond, first := false, "", ""
	for h, vs := range r.Header {
		kind := proxyHeaderKind(h)
		if kind == notProxy {
			continue
		}
		if first == "" || headerBefore(h, first) {
			first = h
		}
		if kind != clientAddr {
			continue
		}
		ok := true
		for _, v := range vs {
			for elem := range strings.SplitSeq(v, ",") {
				addr := strings.TrimSpace(elem)
				if foldEqual(h, "forwarded") {
					addr = forwardedFor(elem)
				}
				ok = ok && loopbackIP(addr)
				named = true
			}
		}
		if !ok && (beyond == "" || headerBefore(h, beyond)) {
			beyond = h
		}
	}
	if beyond != "" {
		return beyond
	}
	if !named {
		return first
	}
	return ""
}

// forwardedFor returns the for= parameter of one element of a Forwarded
// header (RFC 7239), unquoted, or "" when it has none.
func forwardedFor(elem string) string {
	for pair := range strings.SplitSeq(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// loopbackIP reports whether addr is a loopback IP address, with or
// without a port and brackets; names ("localhost", "unknown") and
// obfuscated identifiers ("_hidden") are not.
func loopbackIP(addr string) bool {
	ip := net.ParseIP(hostOnly(addr))
	return ip != nil && ip.IsLoopback()
}

// OriginAllowed reports whether a browser request comes from the origin it
// is sent to or one of Config.AllowedOrigins (rule 3), as
// [Origins.Allowed] tells. Requests without an Origin header pass unless
// Sec-Fetch-Site says they are cross-site or same-site; "null" (a
// sandboxed frame, a file) never passes.
func (g *Guard) OriginAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		s := r.Header.Get("Sec-Fetch-Site")
		return s != "cross-site" && s != "same-site"
	}
	return g.origins.Allowed(r, o)
}

// Origins are the browser origins, besides a request's own, whose pages
// may call an API: Config.AllowedOrigins, parsed by [ParseOrigins]. The
// zero Origins lists none.
type Origins struct {
	list []origin // in lower case
}

// ParseOrigins parses list, origins such as "https://app.example.com"
// (scheme://host[:port], a trailing "/" allowed), as Config.AllowedOrigins
// holds them; the error names the first that is not an origin.
func ParseOrigins(list []string) (Origins, error) {
	var o Origins
	for _, s := range list {
		co, ok := parseOrigin(strings.TrimSuffix(s, "/"))
		if !ok {
			return Origins{}, fmt.Errorf("Config.AllowedOrigins: %q is not an origin; write scheme://host[:port], such as https://app.example.com", s)
		}
		o.list = append(o.list, origin{strings.ToLower(co.scheme), strings.ToLower(co.host), co.port})
	}
	return o, nil
}

// Allowed reports whether originHeader, the Origin header of r, is one of
// o or the origin r is sent to; "null", and anything else that is not an
// origin, is not.
//
// An origin is its scheme, host and port, the scheme's default port when
// it names none (https://x and https://x:443 are one origin): the origin
// http://example.com is not the origin of a request to
// https://example.com (a page a network attacker can rewrite would act
// with the secure origin's cookies). The scheme a request is sent with is
// https when it came over TLS (r.TLS) or when a proxy in front that ended
// TLS says so (X-Forwarded-Proto, or the proto= of Forwarded: a page
// cannot add these headers to a cross-site request without a preflight,
// which the guard refuses), and http otherwise. A proxy that ends TLS
// and says nothing makes every request look sent with http: then a
// request's own origin is not taken for http when o lists an https origin
// of the request's host, so listing the API's public https origin refuses
// pages of its http origin (list that too to allow them).
func (o Origins) Allowed(r *http.Request, originHeader string) bool {
	co, ok := parseOrigin(originHeader)
	if !ok {
		return false
	}
	for _, a := range o.list {
		if co.equal(a) {
			return true
		}
	}
	scheme := requestScheme(r)
	host, port := splitHostPort(r.Host)
	if host == "" || scheme != "https" && o.listsHTTPS(host) {
		return false
	}
	return co.equal(origin{scheme, host, defaultPort(scheme, port)})
}

// listsHTTPS reports whether o lists an https origin of host.
func (o Origins) listsHTTPS(host string) bool {
	for _, a := range o.list {
		if a.scheme == "https" && strings.EqualFold(a.host, host) {
			return true
		}
	}
	return false
}

// LoopbackOrigin reports whether originHeader is the origin of a page
// served by this machine: http or https, on a loopback host ([LoopbackHost])
// and any port.
func LoopbackOrigin(originHeader string) bool {
	co, ok := parseOrigin(originHeader)
	return ok && (strings.EqualFold(co.scheme, "http") || strings.EqualFold(co.scheme, "https")) && LoopbackHost(co.host)
}

// requestScheme is the scheme r was sent with (see [Guard.OriginAllowed]).
func requestScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	proto := ""
	if v := r.Header.Get("X-Forwarded-Proto"); v != "" {
		proto, _, _ = strings.Cut(v, ",")
	} else if v := r.Header.Get("Forwarded"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		for pair := range strings.SplitSeq(first, ";") {
			if k, val, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && strings.EqualFold(strings.TrimSpace(k), "proto") {
				proto = strings.Trim(strings.TrimSpace(val), `"`)
			}
		}
	}
	if strings.EqualFold(strings.TrimSpace(proto), "https") {
		return "https"
	}
	return "http"
}

// origin is an origin's scheme, host (without brackets) and port (the
// scheme's default when the origin names none).
type origin struct{ scheme, host, port string }

// equal reports whether o and p are the same origin: scheme and host
// compared without regard to case.
func (o origin) equal(p origin) bool {
	return o.port == p.port && strings.EqualFold(o.scheme, p.scheme) && strings.EqualFold(o.host, p.host)
}

// parseOrigin parses s, an origin as the Origin header serializes it
// (RFC 6454: scheme "://" host [":" port]); ok is false when s is not one
// ("null", one with a path, a query or user information).
func parseOrigin(s string) (o origin, ok bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || !validScheme(scheme) || strings.ContainsAny(rest, "/?#@ \t\\") {
		return origin{}, false
	}
	host, port := splitHostPort(rest)
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return origin{}, false
		}
	}
	if host == "" {
		return origin{}, false
	}
	return origin{scheme, host, defaultPort(scheme, port)}, true
}

// validScheme reports whether s is a URI scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // lower case for letters
		if !('a' <= c && c <= 'z' || i > 0 && ('0' <= s[i] && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
			return false
		}
	}
	return s != ""
}

// splitHostPort splits hostport (host, host:port, [ipv6] or [ipv6]:port)
// into the host, without brackets, and the port, "" when it names none.
func splitHostPort(hostport string) (host, port string) {
	host = hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && i > strings.LastIndexByte(hostport, ']') {
		host, port = hostport[:i], hostport[i+1:]
	}
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return host, port
}

// defaultPort is port, or when it is empty the default port of scheme
// (443 for https, 80 for http).
func defaultPort(scheme, port string) string {
	if port != "" {
		return port
	}
	switch {
	case strings.EqualFold(scheme, "https"):
		return "443"
	case strings.EqualFold(scheme, "http"):
		return "80"
	}
	return ""
}

// Handler returns next behind the guard's rules; next finds the request's
// principal with [Principal].
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		if hasBody(r) {
			// Before any rule, so that a request refused or served
			// without authentication cannot hold its connection with a
			// body that never arrives. A request without a body has
			// nothing to bound; net/http already reads its connection in
			// the background (to notice a client going away), and a
			// read deadline would fail that read and cancel the
			// request's context after BodyTimeout.
			g.bound(w, r)
		}
		if !g.HostAllowed(r) {
			msg := fmt.Sprintf("guard: Host %q is not one of Config.AllowedHosts", hostOnly(r.Host))
			if g.Open() {
				msg = fmt.Sprintf("guard: Host %q is not served; without authentication only loopback names are (localhost, 127.0.0.1); "+
					"to serve other names, turn on authentication (Config.Tokens, Config.Authenticate) and list them in Config.AllowedHosts", hostOnly(r.Host))
			}
			g.reject(w, r, &Error{Status: http.StatusMisdirectedRequest, Field: "Host", Message: msg, rule: ErrHost})
			return
		}
		if g.Open() {
			if remoteBeyond(r) {
				g.reject(w, r, &Error{Status: http.StatusForbidden, Field: "RemoteAddr", rule: ErrProxied, Message: fmt.Sprintf(
					"guard: the request came from %s, beyond this machine; without authentication only this machine is served: "+
						"turn on authentication (Config.Tokens, Config.Authenticate) or listen on loopback only (Guard.Listen)", hostOnly(r.RemoteAddr))})
				return
			}
			if !g.cfg.TrustLocalProxy {
				if ph := Proxied(r); ph != "" {
					g.reject(w, r, &Error{Status: http.StatusForbidden, Field: ph, rule: ErrProxied, Message: fmt.Sprintf(
						"guard: the request came through a proxy (header %s), which may relay anyone's requests; "+
							"without authentication only this machine is served: turn on authentication (Config.Tokens, Config.Authenticate) "+
							"to serve through a proxy, or, when a trusted proxy on this machine sets these headers itself (never passing on "+
							"the client's), set Config.TrustLocalProxy", ph)})
					return
				}
			} else if ph := proxiedBeyond(r); ph != "" {
				g.reject(w, r, &Error{Status: http.StatusForbidden, Field: ph, rule: ErrProxied, Message: fmt.Sprintf(
					"guard: the request came through a proxy (header %s) and names no loopback client, so it may be anyone's; "+
						"without authentication only this machine is served: turn on authentication (Config.Tokens, Config.Authenticate) "+
						"to serve through a proxy, or have the local proxy (Config.TrustLocalProxy) send X-Forwarded-For with the client's loopback address", ph)})
				return
			}
		}
		if g.cfg.Public != nil && g.cfg.Public(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !g.OriginAllowed(r) {
			g.reject(w, r, &Error{Status: http.StatusForbidden, Field: "Origin", rule: ErrOrigin, Message: fmt.Sprintf(
				"guard: cross-origin request from %q refused; add the origin to Config.AllowedOrigins", r.Header.Get("Origin"))})
			return
		}
		p, err := g.Authenticate(r)
		if err != nil {
			h.Set("WWW-Authenticate", `Bearer realm="`+g.cfg.Realm+`"`)
			g.reject(w, r, &Error{Status: http.StatusUnauthorized, Field: "Authorization", Message: ErrUnauthenticated.Error(),
				rule: ErrUnauthenticated, cause: err})
			return
		}
		if hasBody(r) {
			if err := g.checkContentType(r); err != nil {
				err.Principal = p
				g.reject(w, r, err)
				return
			}
		}
		if g.cfg.WriteTimeout > 0 {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(g.cfg.WriteTimeout))
		}
		if g.cfg.Streaming != nil && g.cfg.Streaming(r) {
			if !g.take(p) {
				h.Set("Retry-After", "1")
				g.reject(w, r, &Error{Status: http.StatusTooManyRequests, Principal: p, rule: ErrTooManyStreams, Message: fmt.Sprintf(
					"guard: %d streams of yours are open (Config.MaxStreams); finish or close one first", g.cfg.MaxStreams)})
				return
			}
			defer g.give(p)
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// reject answers r with err through Config.Reject, after [RefuseBody].
func (g *Guard) reject(w http.ResponseWriter, r *http.Request, err *Error) {
	RefuseBody(w, r)
	g.cfg.Reject(w, r, err)
}

// RefuseBody readies the answer to a request refused without reading its
// body, for a server that applies the guard's rules without a [Guard];
// call it before writing the answer. When r carries an HTTP/1 body, the
// connection's read deadline is set to a short grace ([RefuseGrace], or
// what remains of the body's timeout when that is sooner): net/http then
// reads and discards what the client sent before it answers and keeps
// the connection, as for any handler that leaves a body unread; a body
// over 256 KiB it does not read, but answers with "Connection: close"
// and closes its side first, so the client reads the answer rather than
// a reset connection; and a body that stalls fails at the grace, and the
// connection closes after the answer without waiting for the rest. For
// HTTP/2 the read deadline is now: the stream ends, not the connection. A
// request without a body keeps its connection untouched.
func RefuseBody(w http.ResponseWriter, r *http.Request) {
	if !hasBody(r) {
		return
	}
	rc := http.NewResponseController(w)
	if r.ProtoMajor != 1 {
		_ = rc.SetReadDeadline(time.Now())
		return
	}
	d := time.Now().Add(RefuseGrace)
	if b, ok := r.Body.(*deadlineBody); ok && !b.done && b.deadline.Before(d) {
		d = b.deadline
	}
	_ = rc.SetReadDeadline(d)
}

// RefuseGrace is how long, at most, the server reads the body of a
// refused HTTP/1 request before it answers (see [RefuseBody]): a client
// that sent its whole body gets the answer at once, one whose body stalls
// gets it after RefuseGrace, on a connection that then closes.
const RefuseGrace = time.Second

// hasBody reports whether r carries a body, whose media type the guard
// checks: an empty POST (a command without arguments) sends nothing a
// cross-site form could forge beyond what its Origin already tells.
func hasBody(r *http.Request) bool {
	return r.ContentLength != 0 || len(r.TransferEncoding) > 0
}

func (g *Guard) checkContentType(r *http.Request) *Error {
	want := []string{"application/json"}
	if g.cfg.ContentTypes != nil {
		want = g.cfg.ContentTypes(r)
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if slices.Contains(want, mt) {
		return nil
	}
	quoted := make([]string, len(want))
	for i, w := range want {
		quoted[i] = fmt.Sprintf("%q", w)
	}
	return &Error{Status: http.StatusUnsupportedMediaType, Field: "Content-Type", rule: ErrContentType, Message: fmt.Sprintf(
		"guard: Content-Type %q is not accepted; send %s", r.Header.Get("Content-Type"), strings.Join(quoted, " or "))}
}

// bound limits r's body to Config.MaxBodyBytes and to Config.BodyTimeout.
func (g *Guard) bound(w http.ResponseWriter, r *http.Request) {
	BoundBody(w, r, g.cfg.MaxBodyBytes, g.cfg.BodyTimeout)
}

// BoundBody limits r's body, for a server that applies the guard's body
// rule without a [Guard]: at most maxBytes are read (a read beyond fails
// with *http.MaxBytesError), and the body must arrive within timeout from
// now (a read after fails, see [BodyTimedOut], and the connection
// closes). The connection's read deadline is lifted once the body is read
// to its end (or by [BodyRead]). A bound of zero or less is not applied;
// neither is the timeout when w cannot set read deadlines (a recorder in
// a test, a request served in-process).
func BoundBody(w http.ResponseWriter, r *http.Request, maxBytes int64, timeout time.Duration) {
	if maxBytes > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
	}
	if timeout > 0 {
		rc := http.NewResponseController(w)
		// Outermost, so that RefuseBody finds the deadline.
		if d := time.Now().Add(timeout); rc.SetReadDeadline(d) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, deadline: d}
		}
	}
}

// deadlineBody lifts the connection's read deadline once the body is read
// to its end. After a failed read the deadline stays, so that the server's
// discarding of the rest of the body ends too.
type deadlineBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	deadline time.Time // the body's deadline, set by BoundBody
	done     bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// BodyRead clears the connection's read deadline, which the guard sets
// to Config.BodyTimeout for a request that has a body (it clears any
// Server.ReadTimeout deadline too). The guard clears it itself when a
// read of the body returns io.EOF, so a handler that reads the body to
// its end need not call BodyRead.
//
// A handler that stops reading before io.EOF (a JSON decoder that has its
// value) and works on for longer than BodyTimeout calls BodyRead once it
// has what it needs: while the deadline stands, a read of the body's rest
// fails at it, net/http's background read of the connection (which it
// starts once the body is used up, to notice a client that goes away)
// fails and cancels the request's context, and after the handler returns
// the server's discarding of the unread rest fails and closes the
// connection instead of reusing it. BodyRead does not extend writes: the
// response is bounded by Config.WriteTimeout alone.
func BodyRead(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
}

// BodyTimedOut reports whether err, from reading a request's body, is
// its Config.BodyTimeout passing.
func BodyTimedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (g *Guard) take(p string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.streams[p] >= g.cfg.MaxStreams {
		return false
	}
	g.streams[p]++
	return true
}

func (g *Guard) give(p string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.streams[p] <= 1 {
		delete(g.streams, p)
		return
	}
	g.streams[p]--
}

// Streams returns how many streams principal holds open.
func (g *Guard) Streams(principal string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams[principal]
}

// writeError is the default Config.Reject.
func writeError(w http.ResponseWriter, _ *http.Request, err *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(err.Status)
	_ = json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
		Field string `json:"field,omitempty"`
	}{err.Message, err.Field})
}

type principalKey struct{}

// WithPrincipal returns a context carrying principal, as the guard gives
// its handler; code that calls the API's functions directly, rather than
// over HTTP, names the caller with it.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// Principal returns the principal of ctx set by the guard (or
// [WithPrincipal]), or "" when none is.
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// hostOnly is hostport without its port and brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

// LoopbackHost reports whether host (a Host header: a name or address,
// with or without a port) names this machine: "localhost", a name under
// ".localhost", or a loopback address.
func LoopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(hostOnly(host)), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// LoopbackListener reports whether ln accepts connections on the loopback
// interface only: its address is a loopback IP address. Unlike
// [LoopbackAddr], which trusts a name ("localhost" is loopback by name),
// it checks the address the name resolved to.
func LoopbackListener(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// LoopbackAddr reports whether addr (HOST:PORT, as for net.Listen, or a
// request's RemoteAddr) is on the loopback interface only; ":8080" and
// "0.0.0.0:8080" listen on every interface.
func LoopbackAddr(addr string) bool {
	if hostOnly(addr) == "" {
		return false
	}
	return LoopbackHost(addr)
}
