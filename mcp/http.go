package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

// httpClient returns the manager's HTTP client wrapped for this server: the
// wrapper bounds the retries of the standalone GET stream and learns the
// JSON-RPC ids of tool calls so that a cancelled call can be cancelled on the
// server too.
func (c *conn) httpClient(w *wire) *http.Client {
	hc := *c.m.cfg.HTTPClient
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	limit := c.spec.ListenRetries
	if limit == 0 {
		limit = 5
	}
	origin := originOf(c.spec.URL)
	hc.CheckRedirect = sameOriginRedirects(c.spec.Name, origin, hc.CheckRedirect)
	hc.Transport = &roundTripper{next: next, c: c, w: w, origin: origin, listenLimit: limit, streamable: c.spec.transport() == TransportHTTP}
	return &hc
}

// maxRedirects is how many redirects in a row a request follows when the
// configured HTTPClient has no CheckRedirect of its own (net/http's
// default).
const maxRedirects = 10

// sameOriginRedirects returns a CheckRedirect that refuses to follow a
// redirect to another origin than origin, so that the bearer token and
// Server.Headers, which a client copies onto every hop, only reach the
// server's own origin. Redirects within the origin are checked by next (the
// configured client's own CheckRedirect), or limited to maxRedirects.
func sameOriginRedirects(server, origin string, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if o := originOf(req.URL.String()); o != origin {
			return &transport.Error{Err: &originError{fmt.Sprintf("mcp: server %q redirected to %s, another origin than its URL's (%s); not followed, so that its credentials stay with it (set Server.URL to the address that answers)", server, o, origin)}}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("mcp: server %q: stopped after %d redirects", server, maxRedirects)
		}
		return nil
	}
}

// originError is the cause of a request or redirect to another origin than
// the server URL's that was refused: the server's configuration or its
// answer has to change, so it is not retried.
type originError struct{ msg string }

func (e *originError) Error() string { return e.msg }

// isOriginError reports whether err is, or wraps, an [originError].
func isOriginError(err error) bool {
	var oe *originError
	return errors.As(err, &oe)
}

// originOf returns the origin (scheme://host:port, lowercased, with the
// scheme's default port made explicit) of rawURL, or "" when it does not
// parse.
func originOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Bounds on what a server's HTTP responses may hold besides its messages.
const (
	// maxErrorBodyBytes bounds the body of a response whose status is not
	// 2xx: the transport reads it whole into its error, so the rest is
	// cut off.
	maxErrorBodyBytes = 64 << 10
	// maxSessionIDBytes bounds the Mcp-Session-Id a server assigns; the
	// client sends it back on every request.
	maxSessionIDBytes = 1 << 10
)

type roundTripper struct {
	next        http.RoundTripper
	c           *conn
	w           *wire  // the connection the client serves; nil for none
	origin      string // Server.URL's origin, the only one requests go to
	listenLimit int
	streamable  bool

	mu          sync.Mutex
	listenFails int
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if o := originOf(req.URL.String()); o != rt.origin {
		// Only Server.URL's origin gets the server's credentials (an SSE
		// endpoint event may name another scheme on the same host).
		return nil, &transport.Error{Err: &originError{fmt.Sprintf("mcp: server %q: request to %s refused: only its URL's origin (%s) is sent requests", rt.c.spec.Name, o, rt.origin)}}
	}
	req = withTraceContext(req)
	if rt.streamable && req.Method == http.MethodGet && strings.Contains(req.Header.Get("Accept"), "text/event-stream") && req.Header.Get("Last-Event-ID") == "" {
		return rt.listen(req)
	}
	if req.Method == http.MethodPost && req.GetBody != nil && req.ContentLength > 0 && req.ContentLength < 1<<20 {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(body)
			body.Close()
			rt.c.ids.learn(b)
		}
	}
	resp, err := rt.send(req)
	if po, _ := req.Context().Value(postKey{}).(*postOutcome); po != nil && req.Method == http.MethodPost && err == nil && resp.StatusCode != http.StatusNotFound {
		po.accepted.Store(true)
	}
	if err == nil {
		if err = rt.bound(resp); err != nil {
			return nil, err
		}
	}
	if err == nil && !rt.streamable && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		// The legacy SSE stream: watch it for server-to-client requests,
		// which this transport cannot answer.
		resp.Body = &sseWatch{ReadCloser: resp.Body, c: rt.c}
	}
	return resp, err
}

// postKey keys the *postOutcome of a tool call's context.
type postKey struct{}

// postOutcome records whether the server answered a tool call's POST other
// than with 404 Not Found, that is, whether it may have processed the call.
type postOutcome struct{ accepted atomic.Bool }

// withTraceContext returns req carrying the W3C trace context
// (traceparent, tracestate) of the span its context holds, so that a server
// that traces joins the caller's trace. A request whose context has no span,
// or that already names a traceparent, is returned as it is.
func withTraceContext(req *http.Request) *http.Request {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() || req.Header.Get("traceparent") != "" {
		return req
	}
	req = req.Clone(ctx) // a RoundTripper must not change the caller's request
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req
}

// sseWatch passes a legacy SSE stream through and reports every JSON-RPC
// request in it: the SSE transport drops them unanswered, so a call waiting
// on one would hang until its deadline.
type sseWatch struct {
	io.ReadCloser
	c    *conn
	line []byte
}

func (w *sseWatch) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			if len(w.line) < 64<<10 {
				w.line = append(w.line, b)
			}
			continue
		}
		if data, ok := bytes.CutPrefix(bytes.TrimSpace(w.line), []byte("data:")); ok && bytes.Contains(data, []byte(`"method"`)) {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(data, &msg) == nil && len(msg.ID) > 0 && msg.Method != "" {
				w.c.serverRequestUnsupported(msg.Method)
			}
		}
		w.line = w.line[:0]
	}
	return n, err
}

// serverRequestUnsupported fails the calls in flight on a server that sent
// a request its transport cannot answer.
func (c *conn) serverRequestUnsupported(method string) {
	err := fmt.Errorf("server %q sent %s: %w", c.spec.Name, method, ErrServerRequestsUnsupported)
	c.log.Warn("mcp server request cannot be answered over SSE", zap.String("method", method))
	c.mu.Lock()
	defer c.mu.Unlock()
	for cl := range c.inflight {
		cl.cancel(err)
	}
}

// send sends req, authorized when the server uses OAuth.
func (rt *roundTripper) send(req *http.Request) (*http.Response, error) {
	if rt.c.auth != nil {
		return rt.c.auth.roundTrip(rt.next, req)
	}
	return rt.next.RoundTrip(req)
}

// listen opens the standalone GET stream. After listenLimit failures in a
// row it answers 405 itself, which tells mcp-go to stop listening instead of
// retrying every second forever. A response its bounds refuse (an
// Mcp-Session-Id over the limit) counts as a failure, and only its error
// is returned.
func (rt *roundTripper) listen(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	exhausted := rt.listenFails >= rt.listenLimit
	rt.mu.Unlock()
	if exhausted {
		return stopListening(req), nil
	}
	resp, err := rt.send(req)
	if err == nil {
		if err = rt.bound(resp); err != nil {
			resp = nil
		}
	}
	ok := err == nil && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound)
	rt.mu.Lock()
	if ok {
		rt.listenFails = 0
	} else {
		rt.listenFails++
		if rt.listenFails >= rt.listenLimit {
			rt.c.log.Warn("mcp GET stream failed repeatedly; no longer listening for server-initiated messages on this connection", zap.Int("attempts", rt.listenFails))
		}
	}
	rt.mu.Unlock()
	return resp, err
}

func stopListening(req *http.Request) *http.Response {
	return &http.Response{
		Status: "405 Method Not Allowed", StatusCode: http.StatusMethodNotAllowed,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(nil)), Request: req,
	}
}

// requestIDs maps the progress token of each tool call in flight to the
// JSON-RPC id it was sent with.
type requestIDs struct {
	mu  sync.Mutex
	ids map[string]json.RawMessage
}

func newRequestIDs() *requestIDs { return &requestIDs{ids: map[string]json.RawMessage{}} }

var toolsCallMethod = []byte(`"tools/call"`)

func (r *requestIDs) learn(body []byte) {
	if !bytes.Contains(body, toolsCallMethod) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta struct {
				ProgressToken any `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" || msg.Params.Meta.ProgressToken == nil {
		return
	}
	token, ok := msg.Params.Meta.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	r.ids[token] = msg.ID
	r.mu.Unlock()
}

func (r *requestIDs) take(token string) (json.RawMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.ids[token]
	delete(r.ids, token)
	return id, ok
}

// cancelRemote tells the server that a call was cancelled. mcp-go sends
// notifications/cancelled itself over stdio and the in-process transport
// passes the context through; over HTTP and SSE it sends nothing, so the
// manager does, with the id the request went out with.
func (c *conn) cancelRemote(cli *client.Client, req mcpgo.CallToolRequest, cause error) {
	if req.Params.Meta == nil {
		return
	}
	token, _ := req.Params.Meta.ProgressToken.(string)
	id, ok := c.ids.take(token)
	if !ok {
		return
	}
	var n mcpgo.JSONRPCNotification
	n.JSONRPC = mcpgo.JSONRPC_VERSION
	n.Method = "notifications/cancelled"
	n.Params.AdditionalFields = map[string]any{"requestId": id, "reason": cause.Error()}
	c.m.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := cli.GetTransport().SendNotification(ctx, n); err != nil {
			c.log.Debug("mcp cancel notification not sent", zap.Error(err))
		}
	})
}

// bound bounds what resp may hold: the messages of a 2xx body
// (MaxMessageBytes), the body of any other status (maxErrorBodyBytes, cut
// off there) and the session id. A session id over its bound, or with
// characters other than visible ASCII (as the MCP spec requires), fails the
// response.
func (rt *roundTripper) bound(resp *http.Response) error {
	if id := resp.Header.Get("Mcp-Session-Id"); len(id) > maxSessionIDBytes || !visibleASCII(id) {
		resp.Body.Close()
		return &transport.Error{Err: fmt.Errorf("mcp: server %q assigned an Mcp-Session-Id of %d bytes, over the limit of %d bytes or not visible ASCII; refused", rt.c.spec.Name, len(id), maxSessionIDBytes)}
	}
	if resp.StatusCode/100 == 2 {
		rt.limit(resp)
		return nil
	}
	resp.Body = &errorBody{r: io.LimitReader(resp.Body, maxErrorBodyBytes), c: resp.Body}
	return nil
}

// visibleASCII reports whether s holds only the characters 0x21 to 0x7E.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// errorBody is the body of a response that is not 2xx: its first
// maxErrorBodyBytes, then EOF.
type errorBody struct {
	r io.Reader
	c io.Closer
}

func (b *errorBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *errorBody) Close() error               { return b.c.Close() }

// limit bounds the messages of a response: a JSON body as a whole, an
// event stream event by event. Passing the limit cuts the connection.
func (rt *roundTripper) limit(resp *http.Response) {
	f := frameBody
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		f = frameEvent
	}
	c, w := rt.c, rt.w
	resp.Body = &limitReader{r: resp.Body, framing: f, max: c.m.cfg.MaxMessageBytes, server: c.spec.Name,
		onLimit: func(le *LimitError) {
			if w != nil {
				c.cutWire(w, le)
			}
		}}
}
