package mcp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/agentgraph/agentgraph/resilience"
)

// ManagerConfig configures a [Manager]. The zero value is usable.
type ManagerConfig struct {
	// Logger receives connection events and the servers' logging
	// notifications. Nil means no logging.
	Logger *zap.Logger
	// MaxConcurrent bounds the calls in flight per server unless the
	// [Server] sets its own. A call whose server waits for the answer to
	// an elicitation does not count while it waits (its slot is taken
	// again before the answer goes back), so calls waiting for people
	// never hold up the server's other calls. A call with several
	// elicitations open at once takes its slot again only when the last
	// of them is answered: the work its server does meanwhile with the
	// earlier answers does not count (nor does CallTimeout run), since a
	// slot taken while a person is still to answer could wait in a cycle
	// for the caller's own. Zero means 10.
	MaxConcurrent int
	// ClientName and ClientVersion are sent in the initialize handshake.
	// Empty means "agentgraph" and "1.0.0".
	ClientName, ClientVersion string
	// Elicit answers elicitation requests that cannot be attributed to a
	// call's session (a legacy stdio request while several calls with
	// elicitation callbacks are in flight, or none is). Nil means such
	// requests are declined. It is called as Callbacks.Elicit is.
	Elicit elicit.Func
	// ElicitTimeout bounds how long an elicitation callback may take. Zero
	// means 10 minutes; the call's context also bounds it.
	ElicitTimeout time.Duration
	// ProgressLinger is how long a call's progress token stays known after
	// the call returns, so that progress arriving late is told apart from
	// progress for unknown tokens (late progress is dropped and counted in
	// Health.LateProgress; see Callbacks.Progress). Zero means 250 ms.
	ProgressLinger time.Duration
	// HTTPClient is the base client for HTTP and SSE servers. Nil means a
	// client with http.DefaultTransport and no overall timeout (streams are
	// long-lived; calls are bounded by their context). A request whose
	// context carries an OpenTelemetry span sends its W3C trace context
	// (the traceparent header), so a server that traces joins the
	// caller's trace. The manager uses a copy whose CheckRedirect refuses
	// redirects to another origin than the server's URL (then calls the
	// client's own CheckRedirect, if any), and bounds every response: a
	// 2xx body by MaxMessageBytes, another status's body to its first 64
	// KiB, the Mcp-Session-Id a server assigns to 1 KiB of visible ASCII.
	HTTPClient *http.Client
	// CallTimeout bounds each attempt of a tool call unless the [Server]
	// sets its own (Server.CallTimeout, Server.ToolTimeouts); the caller's
	// context bounds the call as a whole. An attempt that runs out of time
	// fails with a [*TimeoutError] and counts as a failure of the server,
	// for Health and the circuit breaker; it is retried only when the tool
	// is marked read-only or idempotent. The time a call waits for the
	// answer to an elicitation does not count (ElicitTimeout bounds it):
	// the limit starts again once the answer went back (with several
	// elicitations open at once, the last answer). Zero means 2
	// minutes; negative means no limit.
	CallTimeout time.Duration
	// ConnectTimeout bounds connecting to a server: starting its transport
	// (a stdio subprocess, an SSE stream's endpoint event) and the
	// initialize handshake. A server that does not finish in time fails the
	// connect with a [*TimeoutError] naming this field, which counts as a
	// failure of the server (for Health and the circuit breaker) and is
	// not retried. A connect that fails fails the calls that waited for it
	// too, rather than each connecting in turn. The time a person takes to
	// authorize the client during a connect (OAuth.Authorize) does not
	// count: the clock stops meanwhile and the caller's context bounds it.
	// Zero means 1 minute (room for npx to fetch a package); negative
	// means no limit.
	ConnectTimeout time.Duration
	// MaxTools bounds the tools listed per server: listing follows the
	// server's pages until it has them all, and fails with a [*LimitError]
	// naming this field once the server lists more tools (a page without
	// tools counts as one). The tool list as a whole is also held to
	// MaxMessageBytes. Zero means [DefaultMaxTools] (10,000). Unlike the
	// time limits, it has no "no limit": a negative value fails
	// [NewManager].
	MaxTools int
	// PingTimeout is how long the manager waits for the answer to the ping
	// it sends after a call ran out of time (its own limit or the caller's
	// deadline). A server that does not answer has stalled: the manager
	// cuts its connection, failing the calls in flight on it with a
	// [*StallError], and reconnects on the next call, which restarts a
	// stdio server. Zero means 10 s.
	PingTimeout time.Duration
	// MaxMessageBytes bounds one message from a server: a stdio line, a
	// server-sent event or a JSON response body. A server that sends more
	// has its connection cut (a [*LimitError]); the message is never read
	// past the limit. Zero means [DefaultMaxMessageBytes] (32 MiB).
	MaxMessageBytes int64
	// MaxResultBytes bounds one tool result, encoded as JSON: a larger one
	// fails the call with a [*LimitError]. Zero means
	// [DefaultMaxResultBytes] (8 MiB).
	MaxResultBytes int64
	// MaxQueuedProgress bounds the progress notifications waiting for one
	// session's Progress callback. A server that sends progress faster
	// than the callback takes it has the notifications over the limit
	// dropped (logged at debug level, counted in Health.DroppedProgress)
	// until the callback catches up, so that neither memory nor the time a
	// call takes to deliver its progress grows with the flood. Zero means
	// [DefaultMaxQueuedProgress] (256).
	MaxQueuedProgress int
	// MaxServerRequests bounds the requests one server sends the client
	// (elicitations, pings, roots and sampling requests) that are being
	// answered at once. A request over the limit is answered at once with
	// a JSON-RPC error (the text of a [*LimitError]) and counted in
	// Health.RejectedRequests, so that a server flooding requests gets no
	// callback (no question to the user) for each. Over stdio and in
	// process it gets no goroutine either, and a request counts until its
	// answer was handed to the transport. Over streamable HTTP the
	// transport (mcp-go's) starts a goroutine for every request before
	// the limit applies and posts every answer, refusals included, in an
	// HTTP request of its own (each up to 30 s); a request counts there
	// until its answer is ready, not until it was posted, so the
	// goroutines and posts of answers are not bounded by this limit.
	// Zero means [DefaultMaxServerRequests] (16).
	MaxServerRequests int
	// Resilience is the retry and circuit-breaker policy, one per server.
	// Nil means [resilience.MCP]: 3 attempts with backoff from 1 s to 30 s,
	// a breaker that opens after 5 failures in a row for 30 s. Only
	// transport failures are retried (never tool errors or the server's
	// JSON-RPC errors), and a failure after the request went out only for
	// tools the server's tool list marks read-only or idempotent (the
	// manager learns the marks whenever it lists a server's tools, as the
	// Registry does).
	Resilience *resilience.Config
}

// Manager owns one MCP client per server, created on first use, and runs
// every call through the server's concurrency limit, retry policy and
// circuit breaker. A Manager is safe for concurrent use. Call Shutdown to
// release its clients and subprocesses.
type Manager struct {
	cfg ManagerConfig
	log *zap.Logger

	base     context.Context // ends when Shutdown gives up waiting
	abort    context.CancelFunc
	routesMu sync.RWMutex
	routes   map[string]*call // progress token -> call, while progress may arrive
	bg       sync.WaitGroup
	calls    sync.WaitGroup
	mu       sync.Mutex
	closing  bool
	closed   chan struct{} // closed when Shutdown's cleanup has finished
	conns    map[string]*conn
	hooks    []toolsHook // one per open Registry
	hookSeq  uint64

	// Progress tokens of finished calls stay routed for ProgressLinger;
	// lingering holds them in expiry order, swept by one timer.
	lingerMu    sync.Mutex
	lingering   []lingerEntry
	lingerTimer *time.Timer
	now         func() time.Time // the clock of the linger period; tests replace it

	// Stdio subprocesses not reaped yet, so that a Shutdown whose ctx ends
	// kills them before it returns; hurried then, and since.
	procsMu   sync.Mutex
	procs     map[*exec.Cmd]struct{}
	hurried   bool
	hurry     chan struct{} // closed with hurried
	exitGrace time.Duration // exitGrace; tests lengthen it

	callbackGrace time.Duration // CallbackGrace; tests shorten it
}

type lingerEntry struct {
	until time.Time
	call  *call
}

// linger keeps a finished call's progress token routed for a while.
func (m *Manager) linger(cl *call) {
	m.lingerMu.Lock()
	defer m.lingerMu.Unlock()
	m.lingering = append(m.lingering, lingerEntry{until: m.now().Add(m.cfg.ProgressLinger), call: cl})
	if m.lingerTimer == nil {
		m.lingerTimer = time.AfterFunc(m.cfg.ProgressLinger, m.sweep)
	}
}

// sweep unroutes the tokens whose time is up.
func (m *Manager) sweep() {
	m.lingerMu.Lock()
	defer m.lingerMu.Unlock()
	now := m.now()
	i := 0
	for ; i < len(m.lingering) && !m.lingering[i].until.After(now); i++ {
		m.unroute(m.lingering[i].call)
		m.lingering[i] = lingerEntry{}
	}
	m.lingering = m.lingering[i:]
	if len(m.lingering) == 0 {
		m.lingering = nil
		m.lingerTimer = nil
		return
	}
	// Sweep in batches rather than once per token.
	m.lingerTimer = time.AfterFunc(m.lingering[0].until.Sub(now)+m.cfg.ProgressLinger/4, m.sweep)
}

func (m *Manager) route(cl *call) {
	m.routesMu.Lock()
	m.routes[cl.token] = cl
	m.routesMu.Unlock()
}

func (m *Manager) unroute(cl *call) {
	m.routesMu.Lock()
	if m.routes[cl.token] == cl {
		delete(m.routes, cl.token)
	}
	m.routesMu.Unlock()
}

func (m *Manager) routed(token string) *call {
	m.routesMu.RLock()
	defer m.routesMu.RUnlock()
	return m.routes[token]
}

// NewManager returns a manager with no servers; add them with Add. It fails
// only for an invalid Resilience config or a negative MaxTools.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	if cfg.MaxTools < 0 {
		return nil, fmt.Errorf("mcp: ManagerConfig.MaxTools is %d; a tool list is always bounded: use 0 for the default (%d) or a positive bound", cfg.MaxTools, DefaultMaxTools)
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 10
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "agentgraph"
	}
	if cfg.ClientVersion == "" {
		cfg.ClientVersion = "1.0.0"
	}
	if cfg.ElicitTimeout <= 0 {
		cfg.ElicitTimeout = 10 * time.Minute
	}
	if cfg.ProgressLinger <= 0 {
		cfg.ProgressLinger = 250 * time.Millisecond
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = time.Minute
	}
	if cfg.MaxTools == 0 {
		cfg.MaxTools = DefaultMaxTools
	}
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = 10 * time.Second
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.MaxServerRequests <= 0 {
		cfg.MaxServerRequests = DefaultMaxServerRequests
	}
	if cfg.MaxQueuedProgress <= 0 {
		cfg.MaxQueuedProgress = DefaultMaxQueuedProgress
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Resilience == nil {
		r := resilience.MCP()
		cfg.Resilience = &r
	}
	if _, err := newCallPolicy("check", *cfg.Resilience, nil); err != nil {
		return nil, fmt.Errorf("mcp: ManagerConfig.Resilience: %w", err)
	}
	base, abort := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, log: cfg.Logger, base: base, abort: abort, conns: map[string]*conn{}, routes: map[string]*call{}, now: time.Now,
		procs: map[*exec.Cmd]struct{}{}, hurry: make(chan struct{}), exitGrace: exitGrace,
		callbackGrace: CallbackGrace}, nil
}

// Add registers servers. A server whose name is already registered with the
// same settings is left alone; with different settings it is an error
// (Remove it first).
func (m *Manager) Add(servers ...Server) error {
	for i := range servers {
		if err := servers[i].validate(); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return ErrShutdown
	}
	for _, s := range servers {
		if old, ok := m.conns[s.Name]; ok {
			if old.spec.equal(&s) {
				continue
			}
			return fmt.Errorf("mcp: server %q is already registered with other settings; Remove it first", s.Name)
		}
		m.conns[s.Name] = newConn(m, s)
	}
	return nil
}

// Remove closes a server's client (reaping its subprocess) and forgets it.
// Calls in flight on it fail.
func (m *Manager) Remove(name string) error {
	m.mu.Lock()
	c, ok := m.conns[name]
	delete(m.conns, name)
	m.mu.Unlock()
	if !ok {
		return m.unknown(name)
	}
	c.close()
	return nil
}

// Servers returns the registered servers sorted by name.
func (m *Manager) Servers() []Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Server, 0, len(m.conns))
	for _, name := range slices.Sorted(maps.Keys(m.conns)) {
		out = append(out, m.conns[name].spec)
	}
	return out
}

// Check probes a server now, connecting first if needed, and returns its
// health: a ping on protocol 2025-11-25, a one-page tools/list on
// 2026-07-28 (which has no ping), within the server's CallTimeout (running
// out of it is a [*TimeoutError] and a failure of the server, like a call's). Use it for readiness probes; the health
// that calls record is in [Manager.Health] without any request.
func (m *Manager) Check(ctx context.Context, name string) (Health, error) {
	if err := m.begin(); err != nil {
		return Health{}, err
	}
	defer m.calls.Done()
	c, err := m.conn(name)
	if err != nil {
		return Health{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.base, cancel)
	defer stop()
	w, err := c.client(ctx)
	if err == nil {
		pctx, pcancel := ctx, context.CancelFunc(func() {})
		limit := c.timeout("")
		if limit > 0 {
			pctx, pcancel = context.WithTimeoutCause(ctx, limit, errAttemptTimeout)
		}
		request := "ping"
		if w.cli.ProtocolVersion() == ProtocolModern {
			request = "tools/list"
			_, err = w.cli.ListToolsByPage(pctx, mcpgo.ListToolsRequest{})
		} else {
			err = w.cli.Ping(pctx)
		}
		timedOut := err != nil && ctx.Err() == nil && errors.Is(context.Cause(pctx), errAttemptTimeout)
		pcancel()
		switch {
		case timedOut:
			te := &TimeoutError{Server: c.spec.Name, Limit: limit, Request: request}
			c.timedOut(w, te)
			err = te
		case err != nil:
			err = c.failed(ctx, w, err, false)
		default:
			c.succeeded()
		}
	}
	return c.health(), err
}

// count returns the number of registered servers.
func (m *Manager) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.conns)
}

// Health returns the health of every registered server, sorted by name.
func (m *Manager) Health() []Health {
	m.mu.Lock()
	conns := make([]*conn, 0, len(m.conns))
	for _, name := range slices.Sorted(maps.Keys(m.conns)) {
		conns = append(conns, m.conns[name])
	}
	m.mu.Unlock()
	out := make([]Health, len(conns))
	for i, c := range conns {
		out[i] = c.health()
	}
	return out
}

// ServerHealth returns the health of one server.
func (m *Manager) ServerHealth(name string) (Health, error) {
	c, err := m.conn(name)
	if err != nil {
		return Health{}, err
	}
	return c.health(), nil
}

func (m *Manager) conn(name string) (*conn, error) {
	m.mu.Lock()
	c, ok := m.conns[name]
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return nil, ErrShutdown
	}
	if !ok {
		return nil, m.unknown(name)
	}
	return c, nil
}

func (m *Manager) unknown(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &UnknownServerError{Name: name, Known: slices.Sorted(maps.Keys(m.conns))}
}

// toolsHook is a function run when a server says its tool list changed.
type toolsHook struct {
	id uint64
	f  func(server string)
}

// onToolsChanged registers f to run (without blocking) when a server says
// its tool list changed, until the returned function removes it.
func (m *Manager) onToolsChanged(f func(server string)) (remove func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hookSeq++
	id := m.hookSeq
	m.hooks = append(m.hooks, toolsHook{id: id, f: f})
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.hooks = slices.DeleteFunc(m.hooks, func(h toolsHook) bool { return h.id == id })
	}
}

func (m *Manager) toolsChanged(server string) {
	m.mu.Lock()
	hooks := slices.Clone(m.hooks)
	m.mu.Unlock()
	for _, h := range hooks {
		h.f(server)
	}
}

// begin admits one unit of work unless the manager is shutting down.
func (m *Manager) begin() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return ErrShutdown
	}
	m.calls.Add(1)
	return nil
}

// go runs f on a goroutine that Shutdown waits for.
func (m *Manager) goBackground(f func()) {
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		f()
	}()
}

// Shutdown refuses new work, waits for calls in flight until ctx ends, then
// cancels what is left, closes every client and reaps every subprocess. A
// stdio server has exitGrace (2 s) after its stdin is closed to exit, and
// the children in its process group to end, before the group is killed;
// reaping it then waits at most pipeGrace (1 s) for its stderr (a child
// that left the group may keep it open). Closing an HTTP client may take
// the 5 s mcp-go gives the DELETE that ends its session, and a connect
// waiting on an OAuth.Authorize that ignores its ctx keeps its server's
// close waiting until Authorize returns. Shutdown returns ctx's error if
// calls had to be cancelled, or if ctx ended before every client was
// closed: it then kills every subprocess (and its process group) before it
// returns, and leaves the rest of the cleanup (reaping, within pipeGrace
// per server, and closing the other clients, bounded as above) to finish
// in the background. A later call waits, until its own ctx ends, for the
// first one's cleanup to finish.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if m.closing {
		closed := m.closed
		m.mu.Unlock()
		select {
		case <-closed:
			return nil // finished, even if ctx has ended too
		default:
		}
		select {
		case <-closed:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("mcp: shutdown: servers still closing in the background: %w", ctx.Err())
		}
	}
	m.closing = true
	closed := make(chan struct{})
	m.closed = closed
	conns := slices.Collect(maps.Values(m.conns))
	m.mu.Unlock()

	done := make(chan struct{})
	go func() { m.calls.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("mcp: shutdown: calls still in flight were cancelled: %w", ctx.Err())
		m.abort()
		<-done
	}
	m.abort()
	go func() {
		defer close(closed)
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(c.close)
		}
		wg.Wait()
		m.bg.Wait()
		m.lingerMu.Lock()
		if m.lingerTimer != nil {
			m.lingerTimer.Stop()
			m.lingerTimer = nil
		}
		m.lingering = nil
		m.lingerMu.Unlock()
	}()
	select {
	case <-closed:
		return err
	case <-ctx.Done():
		// The process may exit right after: kill the subprocesses now
		// rather than after their grace, so that none is left behind
		// (reaping them is left to the background).
		m.killProcs()
		if err != nil {
			return err
		}
		return fmt.Errorf("mcp: shutdown: servers still closing, left to finish in the background: %w", ctx.Err())
	}
}

// addProc records a stdio subprocess that was started, killing it at once
// if Shutdown has given up waiting already.
func (m *Manager) addProc(cmd *exec.Cmd) {
	m.procsMu.Lock()
	defer m.procsMu.Unlock()
	if m.hurried {
		killGroup(cmd)
	}
	m.procs[cmd] = struct{}{}
}

// dropProc forgets a stdio subprocess that was reaped.
func (m *Manager) dropProc(cmd *exec.Cmd) {
	m.procsMu.Lock()
	delete(m.procs, cmd)
	m.procsMu.Unlock()
}

// killProcs kills every stdio subprocess not reaped yet (and the process
// group it leads), and every one started from now on; closeClient then
// no longer gives any a grace.
func (m *Manager) killProcs() {
	m.procsMu.Lock()
	defer m.procsMu.Unlock()
	if !m.hurried {
		m.hurried = true
		close(m.hurry)
	}
	for cmd := range m.procs {
		killGroup(cmd)
	}
}

// newToken returns a progress token unique within the manager and
// unpredictable (128 random bits), so that a server cannot guess the
// tokens of calls made to other servers.
func newToken() string {
	return "ag-" + rand.Text()
}

// callKey keys the *call in a call's context, for elicitation routing.
type callKey struct{}

// call is one tool call in flight.
type call struct {
	session *Session
	conn    *conn  // the server's connection bookkeeping: only its progress reaches the call
	name    string // the name the call was made with (ToolCall.Name)
	server  string
	tool    string
	token   string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	// finished is set when the call has its result (or gave up): progress
	// routed to it from then on is late.
	mu       sync.Mutex
	finished bool
	timer    *attemptTimer // the running attempt's time limit, if any
	// abandoned is set when the caller returned without waiting for the
	// call's callbacks still queued; guarded by session.mu.
	abandoned bool

	// The call's share of its server's concurrency limit (conn.sem): held
	// while the call runs, given up while the server waits for a person to
	// answer one of its elicitations, so that calls waiting for people
	// cannot hold every slot of a server (nor a caller's own slots, taken
	// while it answers, wait for one in a cycle).
	slotMu   sync.Mutex
	sem      chan struct{}
	held     bool
	asking   int  // elicitations waiting for their answer
	slotDone bool // the call returned: its slot is not taken again
}

// waiting reports whether the call waits for a person to answer one of its
// elicitations.
func (cl *call) waiting() bool {
	cl.slotMu.Lock()
	defer cl.slotMu.Unlock()
	return cl.asking > 0
}

// yieldSlot gives the call's concurrency slot up while an elicitation
// waits for its answer.
func (cl *call) yieldSlot() {
	cl.slotMu.Lock()
	defer cl.slotMu.Unlock()
	cl.asking++
	if cl.held {
		cl.held = false
		<-cl.sem
	}
}

// reclaimSlot takes a slot again once an elicitation's answer came, before
// the answer goes back to the server, waiting for one until ctx ends. The
// slot is taken when the last of the call's elicitations was answered (and
// a later attempt has not taken it already).
func (cl *call) reclaimSlot(ctx context.Context) error {
	cl.slotMu.Lock()
	cl.asking--
	last := cl.asking == 0 && !cl.slotDone && !cl.held
	cl.slotMu.Unlock()
	if !last {
		return nil
	}
	select {
	case cl.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	cl.slotMu.Lock()
	defer cl.slotMu.Unlock()
	if cl.asking > 0 || cl.slotDone || cl.held {
		// Another elicitation began meanwhile, the call returned, or
		// another answer's reclaim took the slot first.
		<-cl.sem
		return nil
	}
	cl.held = true
	return nil
}

// holdSlot takes the call's slot before an attempt, if the call does not
// hold it, waiting for one until ctx ends: an attempt that follows one
// that ended while its elicitation waited (whose answer's reclaimSlot may
// still wait) runs with a slot like any other.
func (cl *call) holdSlot(ctx context.Context) error {
	cl.slotMu.Lock()
	need := !cl.held && !cl.slotDone
	cl.slotMu.Unlock()
	if !need {
		return nil
	}
	select {
	case cl.sem <- struct{}{}:
	case <-ctx.Done():
		return gaveUp(ctx)
	}
	cl.slotMu.Lock()
	defer cl.slotMu.Unlock()
	if cl.held || cl.slotDone {
		// An answer's reclaim took it first, or the call returned.
		<-cl.sem
		return nil
	}
	cl.held = true
	return nil
}

// endSlot gives the slot back when the call returns.
func (cl *call) endSlot() {
	cl.slotMu.Lock()
	defer cl.slotMu.Unlock()
	cl.slotDone = true
	if cl.held {
		cl.held = false
		<-cl.sem
	}
}

func (cl *call) setTimer(t *attemptTimer) {
	cl.mu.Lock()
	cl.timer = t
	cl.mu.Unlock()
}

func (cl *call) attemptTimer() *attemptTimer {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.timer
}

// progress queues p for the call's session unless the call has finished,
// and says what became of it.
func (cl *call) progress(p Progress) progressOutcome {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.finished {
		return progressLate
	}
	return cl.session.reportProgress(p, cl.deliverProgress)
}

// deliver reports, on the session's callback goroutine, whether a callback
// of the call queued earlier is still to run: not once the caller gave up
// waiting for them (see abandon). The callback it lets run is the call's:
// abandon ends its context.
func (cl *call) deliver() bool {
	return cl.session.own(cl)
}

// deliverProgress is deliver for a progress notification, which it counts
// as dropped when it is not delivered.
func (cl *call) deliverProgress() bool {
	if !cl.deliver() {
		cl.conn.droppedProgress.Add(1)
		return false
	}
	return true
}

// abandon drops the call's progress and content callbacks still queued,
// and ends the context of the one running: its caller returned without
// waiting for them, and they must not follow the call's end.
func (cl *call) abandon() {
	cl.session.abandon(cl)
}

// finish marks the call finished: progress that has not been queued yet is
// late. Callbacks queued before are flushed when callTool returns.
func (cl *call) finish() {
	cl.mu.Lock()
	cl.finished = true
	cl.mu.Unlock()
}

// callTool runs one call for session s. Every callback of the call,
// including progress received before its result, has run when it returns.
// When ctx ends (or the session closes, or the manager shuts down) while
// they are still being delivered, the call's own progress, content and
// error callbacks still queued are dropped, the context of its callback
// running ends, and it waits at most CallbackGrace more for the callbacks
// running and queued before (those of other calls among them). A call
// that had its result returns that result with a *CallError wrapping
// ErrCallbacksDropped and the context's error.
func (m *Manager) callTool(ctx context.Context, s *Session, name, server, tool string, args any) (*toolresult.Result, error) {
	start := time.Now()
	var cl *call
	res, err := m.runCall(ctx, s, name, server, tool, args, start, &cl)
	done := s.flushed()
	if done == nil {
		return res, err
	}
	select {
	case <-done:
		return res, err
	case <-ctx.Done():
	case <-s.ctx.Done():
	case <-m.base.Done():
	}
	select {
	case <-done:
		return res, err
	default:
	}
	if cl != nil {
		cl.abandon()
	}
	if err == nil {
		// The result came, but the caller gave up while the callbacks
		// before it were still running: the tool ran, so the result is
		// returned, with an error that says its callbacks were dropped.
		kind, cause := KindCancelled, error(context.Canceled)
		if ctx.Err() != nil {
			kind, cause = ctxKind(ctx), ctx.Err()
		}
		ce := &CallError{Server: server, Tool: tool, Kind: kind,
			Err: resilience.Mark(fmt.Errorf("%w: %w", ErrCallbacksDropped, cause), resilience.Canceled)}
		if kind != KindCancelled {
			s.reportError(ce)
		}
		err = ce
	}
	s.settle()
	return res, err
}

// runCall runs one call for session s, setting *called to the call once
// it has one.
func (m *Manager) runCall(ctx context.Context, s *Session, name, server, tool string, args any, start time.Time, called **call) (*toolresult.Result, error) {
	res := &toolresult.Result{Server: server, Tool: tool}
	fail := func(kind ErrorKind, err error) (*toolresult.Result, error) {
		res.Duration = time.Since(start)
		res.IsError = true
		res.Error = err.Error()
		ce := &CallError{Server: server, Tool: tool, Kind: kind, Err: err}
		if kind != KindCancelled {
			s.reportError(ce)
		}
		return res, ce
	}
	if err := m.begin(); err != nil {
		return fail(KindConnection, err)
	}
	defer m.calls.Done()
	c, err := m.conn(server)
	if err != nil {
		return fail(KindConnection, err)
	}
	// Closing the session, and Shutdown's deadline, cancel the call.
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	cancel := func() { cancelCause(context.Canceled) }
	stopSession := context.AfterFunc(s.ctx, cancel)
	defer stopSession()
	stop := context.AfterFunc(m.base, cancel)
	defer stop()

	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return fail(ctxKind(ctx), ctx.Err())
	}

	cl := &call{session: s, conn: c, name: name, server: server, tool: tool, token: newToken(), cancel: cancelCause,
		sem: c.sem, held: true}
	*called = cl
	defer cl.endSlot()
	ctx = context.WithValue(ctx, callKey{}, cl)
	cl.ctx = ctx
	if s.hasProgress() {
		m.route(cl)
	}
	c.track(cl, true)
	defer func() {
		c.track(cl, false)
		if s.hasProgress() {
			m.linger(cl)
		}
	}()

	var req mcpgo.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	// The token routes progress, and over HTTP it finds the request to
	// cancel; elsewhere it is left out when nobody listens to progress.
	if s.hasProgress() || c.remote() {
		req.Params.Meta = &mcpgo.Meta{ProgressToken: cl.token}
	}

	out, err := c.policy.Do(ctx, func(ctx context.Context) (*mcpgo.CallToolResult, error) {
		if err := cl.holdSlot(ctx); err != nil {
			return nil, err
		}
		return c.attempt(ctx, req)
	})
	// The transports hand notifications over before the response that
	// follows them, so progress still to come is late: it is dropped.
	cl.finish()
	if err != nil {
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); errors.Is(cause, ErrServerRequestsUnsupported) {
				return fail(KindConnection, cause)
			}
			return fail(ctxKind(ctx), err)
		}
		return fail(classify(err), err)
	}
	res.Duration = time.Since(start)
	res.Contents = normalise(out)
	res.Structured = out.StructuredContent
	if out.Meta != nil && len(out.Meta.AdditionalFields) > 0 {
		res.Metadata = out.Meta.AdditionalFields
	}
	if out.IsError {
		res.IsError = true
		res.Error = res.Text()
		if res.Error == "" {
			res.Error = "tool reported an error"
		}
		s.reportErrorIf(&CallError{Server: server, Tool: tool, Kind: KindExecution, Err: errors.New(res.Error)}, cl.deliver)
	} else if oc := c.output(tool); oc != nil {
		// The check runs on this goroutine, bounded in cost, without
		// the server's concurrency slot.
		cl.endSlot()
		if msg := oc.check(server, tool, out, c.log); msg != "" {
			// The model sees the mismatch first, then what the tool
			// returned.
			res.IsError, res.Error = true, msg
			res.Contents = append([]toolresult.Content{{Kind: toolresult.KindText, MIMEType: toolresult.MIMEText, Text: msg}}, res.Contents...)
			s.reportErrorIf(&CallError{Server: server, Tool: tool, Kind: KindValidation, Err: errors.New(msg)}, cl.deliver)
		}
	}
	s.reportContents(name, res, cl.deliver)
	return res, nil
}

func ctxKind(ctx context.Context) ErrorKind {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return KindTimeout
	}
	return KindCancelled
}

// classify maps a call failure to its kind.
func classify(err error) ErrorKind {
	switch {
	case errors.Is(err, ErrCircuitOpen), errors.Is(err, ErrShutdown), isTransportError(err), errors.Is(err, resilience.ErrBulkheadFull):
		return KindConnection
	case errors.Is(err, mcpgo.ErrInvalidParams):
		return KindValidation
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, new(*TimeoutError)):
		return KindTimeout
	default:
		return KindExecution
	}
}

// listTools lists every tool of a server (following pages, within its
// CallTimeout, MaxTools and MaxMessageBytes), retrying transport failures.
func (m *Manager) listTools(ctx context.Context, server string) ([]mcpgo.Tool, error) {
	if err := m.begin(); err != nil {
		return nil, err
	}
	defer m.calls.Done()
	c, err := m.conn(server)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.base, cancel)
	defer stop()
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	var tools []mcpgo.Tool
	var gen uint64
	_, err = c.policy.Do(ctx, func(ctx context.Context) (*mcpgo.CallToolResult, error) {
		w, err := c.client(ctx)
		if err != nil {
			return nil, err
		}
		gen = c.listingGen()
		tools, err = c.listAll(ctx, w)
		if err != nil {
			return nil, err
		}
		c.succeeded()
		return nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("mcp: list tools of %q: %w", server, err)
	}
	c.setTools(tools, gen)
	return tools, nil
}

// Client returns the mcp-go client of a server, connecting if needed, for
// requests this package does not wrap (resources, prompts, completion). The
// client stays owned by the manager: do not close it. It is replaced after a
// reconnect, so fetch it again rather than keeping it.
func (m *Manager) Client(ctx context.Context, server string) (*client.Client, error) {
	c, err := m.conn(server)
	if err != nil {
		return nil, err
	}
	w, err := c.client(ctx)
	if err != nil {
		return nil, err
	}
	return w.cli, nil
}

// listAll lists every tool of the server over w, page by page: within the
// server's CallTimeout (a [*TimeoutError], a failure of the server), at
// most MaxTools tools and empty pages, and at most MaxMessageBytes of tools
// encoded as JSON (a [*LimitError], not retried).
func (c *conn) listAll(ctx context.Context, w *wire) ([]mcpgo.Tool, error) {
	limit := c.timeout("")
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if limit > 0 {
		t := time.AfterFunc(limit, func() { cancel(errAttemptTimeout) })
		defer t.Stop()
	}
	maxTools, maxBytes := c.m.cfg.MaxTools, c.m.cfg.MaxMessageBytes
	var tools []mcpgo.Tool
	var req mcpgo.ListToolsRequest
	count, size := 0, int64(0)
	for {
		res, err := w.cli.ListToolsByPage(lctx, req)
		if err != nil {
			if lctx.Err() != nil && ctx.Err() == nil {
				te := &TimeoutError{Server: c.spec.Name, Limit: limit, Request: "tools/list"}
				c.timedOut(w, te)
				return nil, &noRetry{te} // the ping timedOut sends tells whether the server still answers
			}
			return nil, c.failed(ctx, w, err, true)
		}
		count += max(len(res.Tools), 1)
		if count > maxTools {
			return nil, c.overLimit(&LimitError{Server: c.spec.Name, Limit: "MaxTools", Max: int64(maxTools), Size: int64(count)})
		}
		size += encodedSize(res.Tools, maxBytes-size)
		if size > maxBytes {
			return nil, c.overLimit(&LimitError{Server: c.spec.Name, Limit: "MaxMessageBytes", Max: maxBytes, Size: size, list: true})
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		req.Params.Cursor = res.NextCursor
	}
}

// overLimit records a server that broke one of the manager's limits
// without its connection being cut, and returns the error, not retried.
func (c *conn) overLimit(le *LimitError) error {
	c.mu.Lock()
	c.failures++
	c.lastErr, c.lastErrAt = le, time.Now()
	c.mu.Unlock()
	c.log.Warn("mcp server over a limit", zap.Error(le))
	return resilience.MarkPermanent(le)
}
