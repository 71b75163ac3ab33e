package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/agentgraph/agentgraph/internal/utf8clip"
	"github.com/agentgraph/agentgraph/resilience"
)

// TimeoutError reports a request that ran out of its time limit: a call
// attempt, connecting to a server, or listing its tools. It counts as a
// failure of the server (for Health and the circuit breaker).
type TimeoutError struct {
	Server, Tool string
	Limit        time.Duration
	// Request is what ran out of time: "" for a tool call (Tool names
	// it), "initialize" for connecting (starting the transport and the
	// initialize handshake, bounded by ManagerConfig.ConnectTimeout) and
	// "tools/list" for listing the server's tools and "ping" for
	// [Manager.Check]'s probe (both bounded by its CallTimeout).
	Request string
}

// Error names the server, the request, the limit and the fields that set it.
func (e *TimeoutError) Error() string {
	switch e.Request {
	case "initialize":
		return fmt.Sprintf("mcp: server %q: connecting (start and initialize) did not finish within %s (raise ManagerConfig.ConnectTimeout)", e.Server, e.Limit)
	case "tools/list", "ping":
		return fmt.Sprintf("mcp: server %q: "+e.Request+" did not finish within %s (raise Server.CallTimeout or ManagerConfig.CallTimeout)", e.Server, e.Limit)
	}
	return fmt.Sprintf("mcp: server %q: tool %q did not answer within %s (raise Server.ToolTimeouts[%q], Server.CallTimeout or ManagerConfig.CallTimeout)",
		e.Server, e.Tool, e.Limit, e.Tool)
}

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// StallError reports a server that stopped answering: after a call ran out
// of time, a ping got no answer within ManagerConfig.PingTimeout. The
// manager cut the connection, failing the calls in flight on it with this
// error; the next call reconnects, starting a stdio server afresh.
type StallError struct {
	Server string
	Wait   time.Duration
	Err    error // the ping's error
}

// Error names the server and says what the manager did.
func (e *StallError) Error() string {
	return fmt.Sprintf("mcp: server %q stopped answering (no answer to a ping within %s after a call timed out); the manager cut the connection and reconnects on the next call", e.Server, e.Wait)
}

// Unwrap returns the ping's error.
func (e *StallError) Unwrap() error { return e.Err }

// HealthState is a server's state as the manager sees it.
type HealthState string

// The health states.
const (
	// HealthUnknown: no request has been made yet.
	HealthUnknown HealthState = "unknown"
	// HealthHealthy: the last request reached the server.
	HealthHealthy HealthState = "healthy"
	// HealthUnhealthy: the last request failed on the transport (connect
	// failure, dropped connection, dead subprocess, a call that ran out of
	// time, a server that stopped answering or broke a size limit).
	HealthUnhealthy HealthState = "unhealthy"
	// HealthOpen: the circuit breaker is open; calls fail fast until it
	// cools down.
	HealthOpen HealthState = "open"
)

// Health describes one server's connection.
type Health struct {
	Server    string
	Transport Transport
	State     HealthState
	// Connected reports whether a client is connected now.
	Connected bool
	// PID is the subprocess of a connected stdio server, else 0.
	PID int
	// InFlight counts the calls running now on the server: the load it
	// carries. A call whose server waits for a person to answer one of its
	// elicitations is counted in Waiting instead, until the answer comes.
	InFlight int
	// Waiting counts the calls whose server waits for a person to answer
	// an elicitation. They hold none of the server's concurrency slots
	// (MaxConcurrent) meanwhile, and their time limits are paused.
	Waiting int
	// Failures counts failures in a row: transport failures and calls that
	// ran out of time.
	Failures    int
	LastError   string
	LastErrorAt time.Time
	LastOKAt    time.Time
	// Timeouts counts the requests that ran out of their time limit since
	// the server was added: call attempts, tool listings and Check probes
	// (CallTimeout) and connects (ConnectTimeout). Each also counts in
	// Failures.
	Timeouts int
	// Restarts counts the connections the manager cut since the server was
	// added because the server stopped answering ([*StallError]) or sent a
	// message over MaxMessageBytes ([*LimitError]). The next call
	// reconnects, starting a stdio server afresh.
	Restarts int
	// CallTimeout is the server's default limit per call attempt (zero: no
	// limit); ToolTimeouts are the tools' own limits.
	CallTimeout  time.Duration
	ToolTimeouts map[string]time.Duration
	// ConnectTimeout is the manager's limit on connecting (zero: no
	// limit).
	ConnectTimeout time.Duration
	// MaxTools, MaxMessageBytes and MaxResultBytes are the size limits in
	// force.
	MaxTools                        int
	MaxMessageBytes, MaxResultBytes int64
	// Protocol is the negotiated MCP revision of the connected client.
	Protocol string
	// LateProgress counts progress notifications that arrived after their
	// call had returned and were therefore dropped (see
	// Callbacks.Progress). Servers that write a call's progress before its
	// result over one ordered stream never cause any.
	LateProgress int64
	// DroppedProgress counts progress notifications dropped because the
	// Progress callback of the call's session was behind by
	// ManagerConfig.MaxQueuedProgress notifications already, or because
	// the caller gave up before they were delivered (see
	// Callbacks.Progress).
	DroppedProgress int64
	// RejectedRequests counts the requests the server sent the client
	// (elicitations, pings, roots and sampling requests) that were answered
	// at once with a JSON-RPC error, a [*LimitError] for MaxServerRequests,
	// because ManagerConfig.MaxServerRequests of its requests were being
	// answered already.
	RejectedRequests int64
	// SuppressedLogs counts the server's log notifications
	// (notifications/message) and, for a stdio server, writes to its
	// stderr that were not logged because the server sent more than its
	// budget, one for each: 100 at once, then 20 a second. (An entry
	// logged carries at most 4 KiB of the notification's data or of the
	// write, and a level the protocol does not define is logged at Warn,
	// not Error.) Entries below the logger's level take none of the
	// budget.
	SuppressedLogs int64
	// RefusedTools says, by the server's name for each, why a [Registry]
	// refuses some of the server's tools (an input schema over
	// MaxInputSchemaBytes); the registry lists them as unavailable. Only
	// [Registry.Health] fills it.
	RefusedTools map[string]string
}

// Available reports whether calls to the server are expected to work: it is
// neither unhealthy nor behind an open breaker.
func (h Health) Available() bool {
	return h.State == HealthUnknown || h.State == HealthHealthy
}

// conn is one server's client and its bookkeeping.
type conn struct {
	m      *Manager
	spec   Server
	sem    chan struct{}
	policy *callPolicy
	log    *zap.Logger

	dialing chan struct{} // a one-slot lock that serialises connecting; waiting for it honours ctx
	dials   uint64        // connects finished (not given up by their caller); guarded by mu
	dialErr error         // the error of the last of them, nil if it connected; guarded by mu
	// dialCancel ends the connect in progress (nil when none), so that
	// close does not wait for one held up by OAuth.Authorize; guarded by mu.
	dialCancel context.CancelCauseFunc

	mu       sync.Mutex
	w        *wire // nil when not connected
	closed   bool
	inflight map[*call]struct{}
	hints    map[string]bool         // tool -> safe to retry after the request went out
	outputs  map[string]*outputCheck // tool -> its declared output schema; nil when none was listed, or stale
	// toolsGen counts what makes a listing of the tools stale: a
	// tools list_changed notice, and a new connection.
	toolsGen uint64
	ids      *requestIDs
	failures int
	timeouts int
	restarts int
	lastErr  error
	lastErrAt,
	lastOKAt time.Time
	closers sync.WaitGroup
	late    atomic.Int64 // progress dropped because its call had returned
	// progress dropped because the session's callback was behind or the
	// caller gave up
	droppedProgress atomic.Int64
	requests        chan struct{} // one token per server request being answered (MaxServerRequests)
	rejected        atomic.Int64  // server requests refused over the limit
	logs            logBudget     // the server's log notifications
	stderr          logBudget     // a stdio server's stderr

	auth *authorizer // nil without OAuth
}

// wire is one connection to a server: its client and, over stdio, its
// subprocess.
type wire struct {
	cli *client.Client
	cmd *exec.Cmd
	// cut is why the manager cut the connection (a *StallError or a
	// *LimitError); calls in flight on it fail with it. Guarded by conn.mu.
	cut     error
	probing atomic.Bool // a liveness probe is running
}

func newConn(m *Manager, s Server) *conn {
	c := newConnNoPolicy(m, s)
	if s.OAuth != nil && (s.transport() == TransportHTTP || s.transport() == TransportSSE) {
		c.auth = newAuthorizer(c)
	}
	// The config was validated by NewManager.
	c.policy, _ = newCallPolicy(s.Name, *m.cfg.Resilience, c.log)
	return c
}

func newConnNoPolicy(m *Manager, s Server) *conn {
	n := s.MaxConcurrent
	if n <= 0 {
		n = m.cfg.MaxConcurrent
	}
	return &conn{
		m: m, spec: s, sem: make(chan struct{}, n), dialing: make(chan struct{}, 1),
		requests: make(chan struct{}, cmp.Or(max(m.cfg.MaxServerRequests, 0), DefaultMaxServerRequests)),
		log:      m.log.With(zap.String("mcp_server", s.Name)),
		inflight: map[*call]struct{}{}, hints: map[string]bool{}, ids: newRequestIDs(),
	}
}

func (c *conn) health() Health {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := Health{
		Server: c.spec.Name, Transport: c.spec.transport(), Connected: c.w != nil,
		Failures: c.failures, LastErrorAt: c.lastErrAt, LastOKAt: c.lastOKAt,
		LateProgress: c.late.Load(), DroppedProgress: c.droppedProgress.Load(), RejectedRequests: c.rejected.Load(), SuppressedLogs: c.logs.suppressed.Load() + c.stderr.suppressed.Load(), Timeouts: c.timeouts, Restarts: c.restarts,
		CallTimeout: c.timeout(""), ToolTimeouts: maps.Clone(c.spec.ToolTimeouts),
		ConnectTimeout: max(c.m.cfg.ConnectTimeout, 0), MaxTools: c.m.cfg.MaxTools,
		MaxMessageBytes: c.m.cfg.MaxMessageBytes, MaxResultBytes: c.m.cfg.MaxResultBytes,
	}
	for cl := range c.inflight {
		if cl.waiting() {
			h.Waiting++
		} else {
			h.InFlight++
		}
	}
	if c.lastErr != nil {
		h.LastError = c.lastErr.Error()
	}
	if c.w != nil && c.w.cmd != nil && c.w.cmd.Process != nil {
		h.PID = c.w.cmd.Process.Pid
	}
	if c.w != nil {
		h.Protocol = c.w.cli.ProtocolVersion()
	}
	switch {
	case c.policy.Breaker().State == resilience.BreakerOpen:
		h.State = HealthOpen
	case c.failures > 0:
		h.State = HealthUnhealthy
	case !c.lastOKAt.IsZero():
		h.State = HealthHealthy
	default:
		h.State = HealthUnknown
	}
	return h
}

// remote reports whether the server is reached over HTTP.
func (c *conn) remote() bool {
	t := c.spec.transport()
	return t == TransportHTTP || t == TransportSSE
}

func (c *conn) track(cl *call, add bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if add {
		c.inflight[cl] = struct{}{}
	} else {
		delete(c.inflight, cl)
	}
}

// soleElicitingCall returns the only call in flight whose session has an
// elicitation callback, or nil when there is none or more than one.
func (c *conn) soleElicitingCall() *call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found *call
	for cl := range c.inflight {
		if cl.session.cb.Elicit == nil {
			continue
		}
		if found != nil {
			return nil
		}
		found = cl
	}
	return found
}

// setTools records the retry hints and the output schemas of a server's
// full tool list, replacing the previous list's: tools the server no
// longer lists are forgotten. Both maps are bounded by ManagerConfig.MaxTools.
// gen is toolsGen when the listing began: when the list went stale since,
// the output schemas are not kept, and results go unchecked until the
// next listing.
func (c *conn) setTools(tools []mcpgo.Tool, gen uint64) {
	hints := make(map[string]bool, len(tools))
	var outputs map[string]*outputCheck
	for _, t := range tools {
		a := t.Annotations
		hints[t.Name] = (a.ReadOnlyHint != nil && *a.ReadOnlyHint) || (a.IdempotentHint != nil && *a.IdempotentHint)
		if o := newOutputCheck(t); o != nil {
			if outputs == nil {
				outputs = map[string]*outputCheck{}
			}
			outputs[t.Name] = o
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.toolsGen != gen {
		outputs = nil
	}
	c.hints, c.outputs = hints, outputs
}

// listingGen returns toolsGen, for a listing about to begin.
func (c *conn) listingGen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toolsGen
}

// toolsStale forgets the output schemas of the last listing, which a
// tools list_changed notice or a new connection made stale: results go
// unchecked until the next listing rather than checked against schemas
// the server may have changed.
func (c *conn) toolsStale() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.toolsGen++
	c.outputs = nil
}

// output returns the check of tool's results, or nil when the last
// listing of the server's tools gave it no output schema (or the tools
// were never listed).
func (c *conn) output(tool string) *outputCheck {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outputs[tool]
}

func (c *conn) retrySafe(tool string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hints[tool]
}

func (c *conn) succeeded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = 0
	c.lastOKAt = time.Now()
}

// timeout returns the time limit of one attempt to call tool (the
// server's default for ""), zero for none.
func (c *conn) timeout(tool string) time.Duration {
	d, ok := c.spec.ToolTimeouts[tool]
	if !ok || tool == "" {
		d = cmp.Or(c.spec.CallTimeout, c.m.cfg.CallTimeout)
	}
	return max(d, 0)
}

// attempt sends one tools/call.
func (c *conn) attempt(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	w, err := c.client(ctx)
	if err != nil {
		return nil, err
	}
	tool := req.Params.Name
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	limit := c.timeout(tool)
	if limit > 0 {
		at := newAttemptTimer(limit, func() { cancel(errAttemptTimeout) })
		defer at.stop()
		if cl, _ := ctx.Value(callKey{}).(*call); cl != nil {
			cl.setTimer(at)
			defer cl.setTimer(nil)
		}
	}
	post := new(postOutcome)
	res, err := w.cli.CallTool(context.WithValue(actx, postKey{}, post), req)
	if err != nil && actx.Err() != nil {
		c.cancelRemote(w.cli, req, actx.Err())
		if ctx.Err() == nil {
			// The call's own limit: a failure of the server.
			te := &TimeoutError{Server: c.spec.Name, Tool: tool, Limit: limit}
			c.timedOut(w, te)
			if c.retrySafe(tool) {
				return nil, markTransient(te)
			}
			return nil, &noRetry{te}
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The caller's deadline: not held against the server unless
			// it stopped answering altogether.
			c.probe(w)
		}
		return nil, gaveUp(ctx)
	}
	if c.remote() {
		token, _ := req.Params.Meta.ProgressToken.(string)
		c.ids.take(token)
	}
	if err != nil {
		// A session the server no longer knows: the call was not processed
		// if its POST got the 404 or never went out (the session had
		// already ended), so even a call that is not safe to repeat is
		// sent again, on a new session. A 404 that came later, when
		// resuming the response stream of a POST the server accepted, says
		// nothing of whether the tool ran.
		unprocessed := errors.Is(err, transport.ErrSessionTerminated) && !post.accepted.Load()
		return nil, c.failed(ctx, w, err, c.retrySafe(tool) || unprocessed)
	}
	c.succeeded()
	if max := c.m.cfg.MaxResultBytes; max > 0 {
		if n := resultSize(res, max); n > max {
			return nil, resilience.MarkPermanent(&LimitError{Server: c.spec.Name, Limit: "MaxResultBytes", Max: max, Size: n})
		}
	}
	return res, nil
}

// errAttemptTimeout is the cause of an attempt's context ended by the
// call's time limit.
var errAttemptTimeout = errors.New("mcp: call attempt timed out")

// attemptTimer ends an attempt after its time limit. It is paused while the
// server waits for the answer to an elicitation (ElicitTimeout bounds that)
// and starts again from the full limit once the answer went back.
type attemptTimer struct {
	mu      sync.Mutex
	t       *time.Timer
	limit   time.Duration
	paused  int
	stopped bool
}

func newAttemptTimer(limit time.Duration, expire func()) *attemptTimer {
	return &attemptTimer{t: time.AfterFunc(limit, expire), limit: limit}
}

func (a *attemptTimer) pause() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.paused++
	if a.paused == 1 {
		a.t.Stop()
	}
}

func (a *attemptTimer) resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.paused--
	if a.paused == 0 && !a.stopped {
		a.t.Reset(a.limit)
	}
}

func (a *attemptTimer) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
	a.t.Stop()
}

// resultSize returns the size of res encoded as JSON, counting no further
// than just past max.
func resultSize(res *mcpgo.CallToolResult, max int64) int64 {
	return encodedSize(res, max)
}

// encodedSize returns the size of v encoded as JSON, counting no further
// than just past max.
func encodedSize(v any, max int64) int64 {
	cw := &countWriter{max: max}
	_ = json.NewEncoder(cw).Encode(v)
	return cw.n
}

// countWriter counts bytes and fails once past max, which stops the encoder.
type countWriter struct{ n, max int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.n > w.max {
		return 0, errors.New("over the limit")
	}
	return len(p), nil
}

// timedOut records an attempt that ran out of its time limit, and checks
// whether the server still answers.
func (c *conn) timedOut(w *wire, te *TimeoutError) {
	c.mu.Lock()
	c.failures++
	c.timeouts++
	c.lastErr, c.lastErrAt = te, time.Now()
	c.mu.Unlock()
	c.log.Warn("mcp call timed out", zap.String("tool", te.Tool), zap.Duration("limit", te.Limit))
	c.probe(w)
}

// probe pings the server in the background after a call timed out. A
// server that does not answer within PingTimeout has stalled: its
// connection is cut, failing the calls in flight on it, and the next call
// reconnects (restarting a stdio server).
func (c *conn) probe(w *wire) {
	if !w.probing.CompareAndSwap(false, true) {
		return
	}
	c.m.goBackground(func() {
		defer w.probing.Store(false)
		ctx, cancel := context.WithTimeout(c.m.base, c.m.cfg.PingTimeout)
		defer cancel()
		var err error
		if w.cli.ProtocolVersion() == ProtocolModern {
			_, err = w.cli.ListToolsByPage(ctx, mcpgo.ListToolsRequest{})
		} else {
			err = w.cli.Ping(ctx)
		}
		if err == nil || c.m.base.Err() != nil || (ctx.Err() == nil && !isTransportError(err)) {
			return // it answered (an error answer is an answer too), or the manager is closing
		}
		c.cutWire(w, &StallError{Server: c.spec.Name, Wait: c.m.cfg.PingTimeout, Err: err})
	})
}

// cutWire records why w is unusable and, if it is still the current
// connection, drops it now, killing a stdio server at once.
func (c *conn) cutWire(w *wire, cause error) {
	c.mu.Lock()
	if w.cut != nil {
		c.mu.Unlock()
		return
	}
	w.cut = cause
	current := c.w == w
	c.failures++
	c.lastErr, c.lastErrAt = cause, time.Now()
	if current {
		c.restarts++
	}
	c.mu.Unlock()
	if current {
		c.log.Warn("mcp connection cut; reconnecting on next use", zap.Error(cause))
		c.drop(w)
	}
}

// failed records a request failure. Transport failures drop the client (the
// next attempt reconnects) and are retried when retrySafe; JSON-RPC errors
// are the server's answer and are not.
func (c *conn) failed(ctx context.Context, w *wire, err error, retrySafe bool) error {
	if ctx.Err() != nil {
		return gaveUp(ctx)
	}
	c.mu.Lock()
	cut := w.cut
	c.mu.Unlock()
	if cut != nil {
		// The manager cut this connection: say why.
		err = &transport.Error{Err: fmt.Errorf("%w (%w)", cut, err)}
	}
	var ae *AuthError
	if errors.As(err, &ae) && ae.Transient() {
		// The server answered; its authorization server did not: the
		// request was refused before it ran, so trying again is safe.
		c.succeeded()
		return markTransient(err)
	}
	if !isTransportError(err) || ae != nil {
		c.succeeded() // the server answered
		return resilience.MarkPermanent(err)
	}
	if cut == nil && errors.Is(err, transport.ErrSessionTerminated) && w.cli.ProtocolVersion() == ProtocolModern {
		// Protocol 2026-07-28 has no sessions: a 404 is the server's
		// answer that it has no such method, not a transport failure.
		c.succeeded()
		return resilience.MarkPermanent(fmt.Errorf("mcp: server %q answered 404 Not Found, method not found under protocol %s (%v)", c.spec.Name, ProtocolModern, err))
	}
	if cut == nil {
		c.mu.Lock()
		c.failures++
		c.lastErr, c.lastErrAt = err, time.Now()
		c.mu.Unlock()
		c.drop(w)
		c.log.Warn("mcp transport failure; reconnecting on next use", zap.Error(err))
	}
	if isOriginError(err) {
		return resilience.MarkPermanent(err) // trying again is refused again
	}
	if retrySafe {
		return markTransient(err)
	}
	return &noRetry{err}
}

// gaveUp is the error of an attempt whose caller's context ended: it is
// neither retried nor held against the server.
func gaveUp(ctx context.Context) error {
	return resilience.Mark(ctx.Err(), resilience.Canceled)
}

func isTransportError(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed)
}

// client returns the connection, connecting first if needed. Connection
// failures are transient: nothing was sent.
func (c *conn) client(ctx context.Context) (*wire, error) {
	c.mu.Lock()
	w, closed, dials := c.w, c.closed, c.dials
	c.mu.Unlock()
	if closed {
		return nil, ErrShutdown
	}
	if w != nil {
		return w, nil
	}
	select {
	case c.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, gaveUp(ctx)
	}
	defer func() { <-c.dialing }()
	dctx, dcancel := context.WithCancelCause(ctx)
	defer dcancel(nil)
	c.mu.Lock()
	w, closed = c.w, c.closed
	shared := c.dials != dials && c.dialErr != nil
	dialErr := c.dialErr
	if !closed && w == nil && !shared {
		c.dialCancel = dcancel
	}
	c.mu.Unlock()
	if closed {
		return nil, ErrShutdown
	}
	if w != nil {
		return w, nil
	}
	if shared {
		// A connect failed while this caller waited for it: its failure
		// is this caller's too, rather than a connect of its own that
		// would make the callers behind it wait once more.
		return nil, dialErr
	}
	w, err := c.dial(dctx)
	c.mu.Lock()
	c.dialCancel = nil
	closed = c.closed
	c.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return nil, gaveUp(ctx)
		}
		if closed {
			return nil, ErrShutdown // close ended the connect
		}
		c.log.Warn("mcp connect failed", zap.Error(err))
		cause := err
		var ae *AuthError
		var te *TimeoutError
		switch {
		case errors.As(err, &ae) && ae.Transient():
			err = markTransient(ae) // the authorization server is down, not refusing
		case errors.As(err, &ae):
			err = resilience.MarkPermanent(ae)
		case errors.As(err, &te):
			// A server that did not connect within ConnectTimeout is not
			// tried again at once.
			err = &noRetry{te}
		case isOriginError(err):
			err = resilience.MarkPermanent(&transport.Error{Err: fmt.Errorf("connect to %q: %w", c.spec.Name, err)})
		default:
			err = markTransient(&transport.Error{Err: fmt.Errorf("connect to %q: %w", c.spec.Name, err)})
		}
		c.mu.Lock()
		c.failures++
		if te != nil {
			c.timeouts++
		}
		c.lastErr, c.lastErrAt = cause, time.Now()
		c.dials++
		c.dialErr = err
		c.mu.Unlock()
		return nil, err
	}
	c.mu.Lock()
	c.dials++
	c.dialErr = nil
	if c.closed {
		c.mu.Unlock()
		c.closeClient(w)
		return nil, ErrShutdown
	}
	c.w = w
	c.toolsGen++
	c.outputs = nil // the new connection's tools are not listed yet
	c.mu.Unlock()
	c.log.Info("mcp connected", zap.String("protocol", w.cli.ProtocolVersion()))
	return w, nil
}

// drop forgets w if it is the current connection and closes it in the
// background.
func (c *conn) drop(w *wire) {
	c.mu.Lock()
	if c.w != w {
		c.mu.Unlock()
		return
	}
	c.w = nil
	c.closers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.closers.Done()
		c.closeClient(w)
	}()
}

// close closes the client for good and waits for every close to finish.
func (c *conn) close() {
	c.mu.Lock()
	c.closed = true
	if c.dialCancel != nil {
		c.dialCancel(ErrShutdown) // a connect may wait for OAuth.Authorize
	}
	c.mu.Unlock()
	c.dialing <- struct{}{} // wait for a connect in progress
	c.mu.Lock()
	w := c.w
	c.w = nil
	c.mu.Unlock()
	<-c.dialing
	if w != nil {
		c.closeClient(w)
	}
	c.closers.Wait()
}

// exitGrace is how long a stdio server has to exit once its stdin is
// closed before it is killed.
const exitGrace = 2 * time.Second

// pipeGrace is how long the reaping of a stdio server that exited waits for
// the end of its stderr before closing it: a child the server started may
// keep it open (one that left the process group, out of killGroup's reach),
// and must not keep the connection's close, and Shutdown, waiting.
const pipeGrace = time.Second

// closeClient closes w's client and makes sure its subprocess and the
// process group it leads are gone. A server whose connection was cut is
// killed at once.
func (c *conn) closeClient(w *wire) {
	c.mu.Lock()
	cut := w.cut != nil
	c.mu.Unlock()
	if cut && w.cmd != nil {
		killGroup(w.cmd)
	}
	if err := w.cli.Close(); err != nil {
		c.log.Debug("mcp close", zap.Error(err))
	}
	if w.cmd == nil {
		return
	}
	exited := make(chan struct{})
	go func() {
		_ = w.cmd.Wait()
		c.m.dropProc(w.cmd)
		close(exited)
	}()
	t := time.NewTimer(c.m.exitGrace)
	defer t.Stop()
	select {
	case <-exited:
		// The server may have started children of its own in its process
		// group (npx starts node) that need the rest of the grace to end.
		c.awaitGroup(w.cmd, t.C)
	case <-t.C:
	case <-c.m.hurry:
	}
	killGroup(w.cmd)
	<-exited
}

// groupPoll is how often awaitGroup checks whether a process group has
// members left.
const groupPoll = 20 * time.Millisecond

// awaitGroup waits, until grace ends or Shutdown gives up waiting, for the
// process group cmd led to have no members left.
func (c *conn) awaitGroup(cmd *exec.Cmd, grace <-chan time.Time) {
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for groupAlive(cmd) {
		select {
		case <-grace:
			return
		case <-c.m.hurry:
			return
		case <-tick.C:
		}
	}
}

// errConnectTimeout is the cause of a connect's context ended by
// ConnectTimeout.
var errConnectTimeout = errors.New("mcp: connect timed out")

// errConnectAbandoned marks the wire of a connect that was given up.
var errConnectAbandoned = errors.New("mcp: connect given up before it finished")

// dial creates, starts and initializes a client for the server within
// ConnectTimeout; running out of it fails with a [*TimeoutError].
func (c *conn) dial(ctx context.Context) (*wire, error) {
	limit := c.m.cfg.ConnectTimeout
	if limit <= 0 {
		return c.dialWithin(context.WithValue(ctx, connectClockKey{}, &connectClock{done: ctx}))
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clock := &connectClock{left: limit, stop: func() { cancel(errConnectTimeout) }, done: cctx}
	clock.resume()
	defer clock.pause()
	w, err := c.dialWithin(context.WithValue(cctx, connectClockKey{}, clock))
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errConnectTimeout) {
		return nil, &TimeoutError{Server: c.spec.Name, Limit: limit, Request: "initialize"}
	}
	return w, err
}

// connectClockKey keys the *connectClock of a connect's context.
type connectClockKey struct{}

// connectClock is a connect's ConnectTimeout, paused while a person
// authorizes the client (OAuth.Authorize): the caller's context bounds
// that time, not ConnectTimeout.
type connectClock struct {
	mu     sync.Mutex
	left   time.Duration
	since  time.Time
	t      *time.Timer
	paused int
	stop   func() // nil without ConnectTimeout
	// done is the connect's context: the caller's, ended too by close
	// and by ConnectTimeout. OAuth.Authorize runs under it even where the
	// request that asked for it (an SSE stream's) runs under the manager's.
	done context.Context
}

// pause stops the clock, keeping the time left.
func (k *connectClock) pause() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.paused++; k.paused == 1 && k.t != nil {
		k.t.Stop()
		k.left -= time.Since(k.since)
		k.t = nil
	}
}

// resume starts the clock again with the time left (the first call starts
// it; every other one undoes a pause).
func (k *connectClock) resume() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.since.IsZero() {
		k.paused = 1 // not started yet
	}
	if k.paused--; k.paused == 0 && k.stop != nil {
		k.since = time.Now()
		k.t = time.AfterFunc(max(k.left, 0), k.stop)
	}
}

// pauseConnectClock pauses the ConnectTimeout of the connect ctx belongs
// to, if any, and returns the function that resumes it.
func pauseConnectClock(ctx context.Context) (resume func()) {
	k, _ := ctx.Value(connectClockKey{}).(*connectClock)
	if k == nil {
		return func() {}
	}
	k.pause()
	return k.resume
}

// connectBound returns ctx, ended too when the connect ctx belongs to (if
// any) ends, and the function that releases it.
func connectBound(ctx context.Context) (context.Context, func()) {
	k, _ := ctx.Value(connectClockKey{}).(*connectClock)
	if k == nil || k.done == nil {
		return ctx, func() {}
	}
	bctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(k.done, func() { cancel(context.Cause(k.done)) })
	return bctx, func() {
		stop()
		cancel(nil)
	}
}

// dialWithin creates, starts and initializes a client for the server, until
// ctx ends.
func (c *conn) dialWithin(ctx context.Context) (*wire, error) {
	s := &c.spec
	var opts []client.ClientOption
	switch s.ProtocolVersion {
	case ProtocolProbe:
	case "":
		opts = append(opts, client.WithProtocolVersion(ProtocolLegacy))
	default:
		opts = append(opts, client.WithProtocolVersion(s.ProtocolVersion))
	}
	if s.transport() != TransportSSE {
		opts = append(opts, client.WithElicitationHandler(elicitor{c}))
	}
	w := &wire{}
	var cli *client.Client
	switch s.transport() {
	case TransportStdio:
		tr, err := c.spawn(w)
		if err != nil {
			return nil, err
		}
		cli = client.NewClient(tr, opts...)
	case TransportHTTP:
		hc := c.httpClient(w)
		topts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(slogger(c.log))}
		if len(s.Headers) > 0 {
			topts = append(topts, transport.WithHTTPHeaders(s.Headers))
		}
		if !s.NoListen {
			topts = append(topts, transport.WithContinuousListening())
		}
		tr, err := transport.NewStreamableHTTP(s.URL, topts...)
		if err != nil {
			return nil, err
		}
		cli = client.NewClient(limitedHTTP{tr, c}, opts...)
	case TransportSSE:
		topts := []transport.ClientOption{transport.WithHTTPClient(c.httpClient(w)), transport.WithSSELogger(slogger(c.log))}
		if len(s.Headers) > 0 {
			topts = append(topts, transport.WithHeaders(s.Headers))
		}
		tr, err := transport.NewSSE(s.URL, topts...)
		if err != nil {
			return nil, err
		}
		cli = client.NewClient(tr, opts...)
	case TransportInProcess:
		// Our own transport: mcp-go's may return a result before the
		// progress the server sent during the call (see inProcess).
		cli = client.NewClient(newInProcess(s.InProcess, limitedElicitor{elicitor{c}}), opts...)
	}
	w.cli = cli
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(c.m.base, func() { cancel(context.Canceled) })
	defer stop()
	// The transport lives as long as the manager, not the first call, so
	// it starts under the manager's context; ctx bounds the wait (an SSE
	// server may never send its endpoint event), and closing the client
	// ends a start that is still waiting.
	started := make(chan error, 1)
	// The connect's clock goes along, so that an OAuth authorization the
	// stream's first request asks for pauses ConnectTimeout and ends with
	// the connect.
	sctx := context.WithValue(c.m.base, connectClockKey{}, ctx.Value(connectClockKey{}))
	go func() { started <- cli.Start(sctx) }()
	select {
	case err := <-started:
		if err != nil {
			c.closeClient(w)
			return nil, fmt.Errorf("start: %w", err)
		}
	case <-ictx.Done():
		c.abandon(w)
		<-started
		return nil, fmt.Errorf("start: %w", context.Cause(ictx))
	}
	cli.OnNotification(func(n mcpgo.JSONRPCNotification) { c.notify(cli, n) })
	cli.OnConnectionLost(func(err error) {
		c.log.Info("mcp connection lost", zap.Error(err))
		c.drop(w)
	})
	var hello mcpgo.InitializeRequest
	if s.ProtocolVersion != ProtocolModern && s.ProtocolVersion != ProtocolProbe {
		// Else the client's own preference (WithProtocolVersion above)
		// decides, which lets it try server/discover first.
		hello.Params.ProtocolVersion = ProtocolLegacy
	}
	hello.Params.ClientInfo = mcpgo.Implementation{Name: c.m.cfg.ClientName, Version: c.m.cfg.ClientVersion}
	if s.transport() != TransportSSE {
		hello.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
	}
	if _, err := cli.Initialize(ictx, hello); err != nil {
		c.mu.Lock()
		cut := w.cut
		c.mu.Unlock()
		if ictx.Err() != nil {
			c.abandon(w)
		} else {
			c.closeClient(w)
		}
		if cut != nil {
			err = cut
		}
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return w, nil
}

// abandon closes the client of a connection that did not finish
// connecting in time, killing a stdio server at once rather than giving it
// exitGrace: a server that does not answer initialize would not exit
// either.
func (c *conn) abandon(w *wire) {
	c.mu.Lock()
	if w.cut == nil {
		w.cut = errConnectAbandoned
	}
	c.mu.Unlock()
	c.closeClient(w)
}

// spawn starts a stdio server for w and returns the transport over its
// stdin and stdout. The manager owns the process: it reads stdout through
// a limit on the size of one message, and kills the process group when the
// connection closes.
func (c *conn) spawn(w *wire) (transport.Interface, error) {
	s := &c.spec
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = s.Dir
	cmd.Stderr = &stderrLog{c: c}
	cmd.WaitDelay = pipeGrace
	startGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Command, err)
	}
	w.cmd = cmd
	c.m.addProc(cmd)
	out := stdioReader(stdout, c.m.cfg.MaxMessageBytes, s.Name, func(le *LimitError) { c.cutWire(w, le) })
	return newPipe(c, out, stdin), nil
}

// stdioReader is a server's stdout within MaxMessageBytes: a line over it
// ends the stream with the *LimitError, so that the part of it read is
// never taken for a message (only a real end of the stream dispatches a
// last line without a newline).
func stdioReader(stdout io.Reader, max int64, server string, onLimit func(*LimitError)) io.Reader {
	return &limitReader{r: stdout, framing: frameLine, max: max, server: server, onLimit: onLimit}
}

// admit takes one of the server's slots for requests it sends the client
// (elicitations, pings, roots and sampling requests), reporting false when
// MaxServerRequests of them are being answered already.
func (c *conn) admit(method string) bool {
	select {
	case c.requests <- struct{}{}:
		return true
	default:
	}
	n := c.rejected.Add(1)
	if n&(n-1) == 0 { // the 1st, 2nd, 4th, 8th...: a flood does not flood the log
		c.log.Warn("mcp server request refused: too many in flight", zap.String("method", method),
			zap.Int("limit", cap(c.requests)), zap.Int64("refused", n))
	} else {
		c.log.Debug("mcp server request refused: too many in flight", zap.String("method", method))
	}
	return false
}

// release gives back a slot taken by admit.
func (c *conn) release() { <-c.requests }

// busy is the answer to a request that admit refused.
func (c *conn) busy(req transport.JSONRPCRequest) *transport.JSONRPCResponse {
	le := &LimitError{Server: c.spec.Name, Limit: "MaxServerRequests", Max: int64(cap(c.requests)), Size: int64(cap(c.requests)) + 1}
	return transport.NewJSONRPCErrorResponse(req.ID, mcpgo.INTERNAL_ERROR, le.Error(), nil)
}

// limitRequests wraps the handler of the server's requests in the
// server's limit: a request over it is answered at once with a JSON-RPC
// error. The transport calls it on a goroutine of its own per request and
// sends the answer after it returned: the slot bounds the handlers running
// (and the callbacks), not those goroutines nor the sending of answers.
func (c *conn) limitRequests(h transport.RequestHandler) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if !c.admit(req.Method) {
			return c.busy(req), nil
		}
		defer c.release()
		return h(ctx, req)
	}
}

// limitedHTTP is mcp-go's streamable HTTP transport with the server's
// requests handled within the server's limit (MaxServerRequests).
type limitedHTTP struct {
	*transport.StreamableHTTP
	c *conn
}

func (t limitedHTTP) SetRequestHandler(h transport.RequestHandler) {
	t.StreamableHTTP.SetRequestHandler(t.c.limitRequests(h))
}

// limitedElicitor answers an in-process server's elicitations within the
// server's limit on requests in flight (MaxServerRequests).
type limitedElicitor struct{ elicitor }

func (e limitedElicitor) Elicit(ctx context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	c := e.c
	if !c.admit(string(mcpgo.MethodElicitationCreate)) {
		return nil, &LimitError{Server: c.spec.Name, Limit: "MaxServerRequests", Max: int64(cap(c.requests)), Size: int64(cap(c.requests)) + 1}
	}
	defer c.release()
	return e.elicitor.Elicit(ctx, req)
}

// notify handles a server notification on the transport's reader goroutine:
// it only routes and never blocks.
func (c *conn) notify(cli *client.Client, n mcpgo.JSONRPCNotification) {
	f := n.Params.AdditionalFields
	switch n.Method {
	case "notifications/progress":
		token := fmt.Sprint(f["progressToken"])
		cl := c.m.routed(token)
		if cl == nil {
			c.log.Debug("mcp progress for an unknown or finished call", zap.String("token", token))
			return
		}
		if cl.conn != c {
			// Tokens are unique within the manager, so a server can only
			// name another server's call on purpose (or by guessing):
			// its progress must not reach that call's session.
			c.log.Debug("mcp progress for a call to another server; dropped", zap.String("token", token), zap.String("call_server", cl.server))
			return
		}
		p := Progress{Server: cl.server, Tool: cl.tool, Call: cl.name, Progress: number(f["progress"]), Total: number(f["total"])}
		p.Message, _ = f["message"].(string)
		switch cl.progress(p) {
		case progressLate:
			// Delivering it would put a call's progress after its end.
			c.late.Add(1)
			c.log.Debug("mcp progress after its call returned; dropped", zap.String("tool", cl.tool),
				zap.String("token", token), zap.Float64("progress", p.Progress), zap.String("message", p.Message))
		case progressDropped:
			// The session's Progress callback is behind by
			// MaxQueuedProgress notifications already.
			c.droppedProgress.Add(1)
			c.log.Debug("mcp progress dropped: the session's Progress callback is behind (ManagerConfig.MaxQueuedProgress)",
				zap.String("tool", cl.tool), zap.String("token", token), zap.Float64("progress", p.Progress))
		case progressClosed:
			// Nobody listens any more; the call is being cancelled.
			c.log.Debug("mcp progress for a call of a closed session; dropped", zap.String("tool", cl.tool), zap.String("token", token))
		}
	case string(mcpgo.MethodNotificationToolsListChanged):
		c.log.Debug("mcp tools list changed")
		c.toolsStale()
		c.m.toolsChanged(c.spec.Name)
	case "notifications/message":
		c.serverLog(f)
	}
}

func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}

// Bounds on a server's log notifications (notifications/message): each
// entry's data is cut to maxServerLogBytes, its logger name to
// maxServerLogName, and a server logs at most serverLogBurst entries at
// once, then serverLogRate a second; the rest are counted in
// Health.SuppressedLogs.
const (
	maxServerLogBytes = 4 << 10
	maxServerLogName  = 128
	serverLogBurst    = 100
	serverLogRate     = 20
)

// serverLog logs a server's log notification at its level (below Error for
// a level the protocol does not define) within the server's budget.
func (c *conn) serverLog(f map[string]any) {
	level, _ := f["level"].(string)
	lvl, known := serverLogLevel(level)
	ok, skipped := c.budgeted(&c.logs, lvl)
	if !ok {
		return
	}
	logger, _ := f["logger"].(string)
	fields := []zap.Field{zap.String("logger", utf8clip.Clip(logger, maxServerLogName)), serverLogData(f["data"])}
	if skipped > 0 {
		fields = append(fields, zap.Int64("suppressed_before", skipped))
	}
	if lvl >= zapcore.ErrorLevel || !known {
		// A level the protocol does not define is logged at Warn: the
		// server cannot choose to be reported as an error.
		fields = append(fields, zap.String("level", utf8clip.Clip(level, maxServerLogName)))
	}
	c.log.Log(lvl, "mcp server log", fields...)
}

// budgeted reports whether an entry of the server's logs (a log
// notification or a write to its stderr) at lvl is to be logged, within
// budget b, and if so how many were suppressed before it. An
// entry below the logger's level is not logged and takes none of the
// budget.
func (c *conn) budgeted(b *logBudget, lvl zapcore.Level) (ok bool, skipped int64) {
	if !c.log.Core().Enabled(lvl) {
		return false, 0
	}
	ok, skipped = b.take(time.Now())
	if !ok {
		if n := b.suppressed.Add(1); n&(n-1) == 0 { // the 1st, 2nd, 4th...: a flood does not flood the log
			c.log.Warn("mcp server log suppressed: the server logs faster than its budget",
				zap.Int("burst", serverLogBurst), zap.Int("per_second", serverLogRate), zap.Int64("suppressed", n))
		}
	}
	return ok, skipped
}

// serverLogLevel maps a level of the protocol's notifications/message to
// the logger's, and reports whether the protocol defines it (one it does
// not is Warn).
func serverLogLevel(level string) (zapcore.Level, bool) {
	switch level {
	case "debug":
		return zapcore.DebugLevel, true
	case "info", "notice":
		return zapcore.InfoLevel, true
	case "warning":
		return zapcore.WarnLevel, true
	case "error", "critical", "alert", "emergency":
		return zapcore.ErrorLevel, true
	}
	return zapcore.WarnLevel, false
}

// serverLogData is the data of a server's log entry, as it came when it
// takes at most maxServerLogBytes (as JSON for a value that is not a
// string), otherwise as text cut to that size, with its whole size.
func serverLogData(data any) zap.Field {
	s, ok := data.(string)
	if !ok {
		b, err := json.Marshal(data)
		if err != nil || len(b) <= maxServerLogBytes {
			return zap.Any("data", data)
		}
		s = string(b)
	}
	if len(s) <= maxServerLogBytes {
		return zap.String("data", s)
	}
	return zap.Dict("data", zap.String("text", utf8clip.Clip(s, maxServerLogBytes)), zap.Int("bytes", len(s)))
}

// logBudget is a token bucket for a server's log notifications.
type logBudget struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time // of the last refill; zero before the first entry
	skipped    int64     // suppressed since the last entry logged
	suppressed atomic.Int64
}

// take reports whether one more entry may be logged at now and, if so, how
// many were suppressed since the last one logged.
func (b *logBudget) take(now time.Time) (ok bool, skipped int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.tokens = serverLogBurst
	} else if d := now.Sub(b.last); d > 0 {
		b.tokens = min(serverLogBurst, b.tokens+d.Seconds()*serverLogRate)
	}
	b.last = now
	if b.tokens < 1 {
		b.skipped++
		return false, 0
	}
	b.tokens--
	skipped, b.skipped = b.skipped, 0
	return true, skipped
}

// stderrLog forwards a subprocess's stderr to the logger at Debug, one
// entry per write, within a log budget of its own (as the server's log
// notifications are, so that neither starves the other) and cut to
// maxServerLogBytes as they are.
type stderrLog struct{ c *conn }

func (w *stderrLog) Write(p []byte) (int, error) {
	ok, skipped := w.c.budgeted(&w.c.stderr, zapcore.DebugLevel)
	if !ok {
		return len(p), nil
	}
	fields := []zap.Field{serverLogOutput(p)}
	if skipped > 0 {
		fields = append(fields, zap.Int64("suppressed_before", skipped))
	}
	w.c.log.Debug("mcp server stderr", fields...)
	return len(p), nil
}

// serverLogOutput is a write of a server's stderr, whole when it takes at
// most maxServerLogBytes, otherwise cut to that size, with its whole size.
func serverLogOutput(p []byte) zap.Field {
	if len(p) <= maxServerLogBytes {
		return zap.ByteString("output", p)
	}
	return zap.Dict("output", zap.String("text", utf8clip.Clip(string(p[:maxServerLogBytes+1]), maxServerLogBytes)), zap.Int("bytes", len(p)))
}
