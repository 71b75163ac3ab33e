package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/resilience"
)

// HealthState is a server's state as the manager sees it.
type HealthState string

// The health states.
const (
	// HealthUnknown: no request has been made yet.
	HealthUnknown HealthState = "unknown"
	// HealthHealthy: the last request reached the server.
	HealthHealthy HealthState = "healthy"
	// HealthUnhealthy: the last request failed on the transport (connect
	// failure, dropped connection, dead subprocess).
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
	// InFlight counts calls running now.
	InFlight int
	// Failures counts transport failures in a row.
	Failures    int
	LastError   string
	LastErrorAt time.Time
	LastOKAt    time.Time
	// Protocol is the negotiated MCP revision of the connected client.
	Protocol string
	// LateProgress counts progress notifications that arrived after their
	// call had returned and were therefore dropped (see
	// Callbacks.Progress). Servers that write a call's progress before its
	// result over one ordered stream never cause any.
	LateProgress int64
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

	mu       sync.Mutex
	cli      *client.Client
	cmd      *exec.Cmd
	closed   bool
	inflight map[*call]struct{}
	hints    map[string]bool // tool -> safe to retry after the request went out
	ids      *requestIDs
	failures int
	lastErr  error
	lastErrAt,
	lastOKAt time.Time
	closers sync.WaitGroup
	late    atomic.Int64 // progress dropped because its call had returned

	auth *authorizer // nil without OAuth
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
		log:      m.log.With(zap.String("mcp_server", s.Name)),
		inflight: map[*call]struct{}{}, hints: map[string]bool{}, ids: newRequestIDs(),
	}
}

func (c *conn) health() Health {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := Health{
		Server: c.spec.Name, Transport: c.spec.transport(), Connected: c.cli != nil,
		InFlight: len(c.inflight), Failures: c.failures, LastErrorAt: c.lastErrAt, LastOKAt: c.lastOKAt,
		LateProgress: c.late.Load(),
	}
	if c.lastErr != nil {
		h.LastError = c.lastErr.Error()
	}
	if c.cmd != nil && c.cmd.Process != nil {
		h.PID = c.cmd.Process.Pid
	}
	if c.cli != nil {
		h.Protocol = c.cli.ProtocolVersion()
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

func (c *conn) setHints(tools []mcpgo.Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tools {
		a := t.Annotations
		c.hints[t.Name] = (a.ReadOnlyHint != nil && *a.ReadOnlyHint) || (a.IdempotentHint != nil && *a.IdempotentHint)
	}
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

// attempt sends one tools/call.
func (c *conn) attempt(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	cli, err := c.client(ctx)
	if err != nil {
		return nil, err
	}
	res, err := cli.CallTool(ctx, req)
	if err != nil && ctx.Err() != nil {
		c.cancelRemote(cli, req, ctx.Err())
		return nil, gaveUp(ctx)
	}
	if c.remote() {
		token, _ := req.Params.Meta.ProgressToken.(string)
		c.ids.take(token)
	}
	if err != nil {
		return nil, c.failed(ctx, cli, err, c.retrySafe(req.Params.Name))
	}
	c.succeeded()
	return res, nil
}

// failed records a request failure. Transport failures drop the client (the
// next attempt reconnects) and are retried when retrySafe; JSON-RPC errors
// are the server's answer and are not.
func (c *conn) failed(ctx context.Context, cli *client.Client, err error, retrySafe bool) error {
	if ctx.Err() != nil {
		return gaveUp(ctx)
	}
	var ae *AuthError
	if !isTransportError(err) || errors.As(err, &ae) {
		c.succeeded() // the server answered
		return resilience.MarkPermanent(err)
	}
	c.mu.Lock()
	c.failures++
	c.lastErr, c.lastErrAt = err, time.Now()
	c.mu.Unlock()
	c.drop(cli)
	c.log.Warn("mcp transport failure; reconnecting on next use", zap.Error(err))
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

// client returns the connected client, connecting first if needed.
// Connection failures are transient: nothing was sent.
func (c *conn) client(ctx context.Context) (*client.Client, error) {
	c.mu.Lock()
	cli, closed := c.cli, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrShutdown
	}
	if cli != nil {
		return cli, nil
	}
	select {
	case c.dialing <- struct{}{}:
	case <-ctx.Done():
		return nil, gaveUp(ctx)
	}
	defer func() { <-c.dialing }()
	c.mu.Lock()
	cli, closed = c.cli, c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrShutdown
	}
	if cli != nil {
		return cli, nil
	}
	cli, cmd, err := c.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, gaveUp(ctx)
		}
		c.mu.Lock()
		c.failures++
		c.lastErr, c.lastErrAt = err, time.Now()
		c.mu.Unlock()
		c.log.Warn("mcp connect failed", zap.Error(err))
		var ae *AuthError
		if errors.As(err, &ae) {
			return nil, resilience.MarkPermanent(ae)
		}
		return nil, markTransient(&transport.Error{Err: fmt.Errorf("connect to %q: %w", c.spec.Name, err)})
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.closeClient(cli, cmd)
		return nil, ErrShutdown
	}
	c.cli, c.cmd = cli, cmd
	c.mu.Unlock()
	c.log.Info("mcp connected", zap.String("protocol", cli.ProtocolVersion()))
	return cli, nil
}

// drop forgets cli if it is the current client and closes it in the
// background.
func (c *conn) drop(cli *client.Client) {
	c.mu.Lock()
	if c.cli != cli {
		c.mu.Unlock()
		return
	}
	cmd := c.cmd
	c.cli, c.cmd = nil, nil
	c.closers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.closers.Done()
		c.closeClient(cli, cmd)
	}()
}

// close closes the client for good and waits for every close to finish.
func (c *conn) close() {
	c.dialing <- struct{}{} // wait for a connect in progress
	c.mu.Lock()
	c.closed = true
	cli, cmd := c.cli, c.cmd
	c.cli, c.cmd = nil, nil
	c.mu.Unlock()
	<-c.dialing
	if cli != nil {
		c.closeClient(cli, cmd)
	}
	c.closers.Wait()
}

// closeClient closes cli and makes sure its subprocess and the process group
// it leads are gone.
func (c *conn) closeClient(cli *client.Client, cmd *exec.Cmd) {
	if err := cli.Close(); err != nil {
		c.log.Debug("mcp close", zap.Error(err))
	}
	if cmd != nil && cmd.Process != nil {
		// The server may have started children of its own (npx starts node).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// dial creates, starts and initializes a client for the server.
func (c *conn) dial(ctx context.Context) (*client.Client, *exec.Cmd, error) {
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
	var cli *client.Client
	var cmd *exec.Cmd
	switch s.transport() {
	case TransportStdio:
		env := make([]string, 0, len(s.Env))
		for k, v := range s.Env {
			env = append(env, k+"="+v)
		}
		tr := transport.NewStdioWithOptions(s.Command, env, s.Args,
			transport.WithCommandFunc(func(_ context.Context, command string, env, args []string) (*exec.Cmd, error) {
				cmd = exec.Command(command, args...)
				cmd.Env = append(os.Environ(), env...)
				cmd.Dir = s.Dir
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				return cmd, nil
			}),
			transport.WithCommandStderrWriter(&stderrLog{log: c.log}), transport.WithCommandLogger(slogger(c.log)))
		cli = client.NewClient(tr, opts...)
	case TransportHTTP:
		hc := c.httpClient()
		topts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(slogger(c.log))}
		if len(s.Headers) > 0 {
			topts = append(topts, transport.WithHTTPHeaders(s.Headers))
		}
		if !s.NoListen {
			topts = append(topts, transport.WithContinuousListening())
		}
		tr, err := transport.NewStreamableHTTP(s.URL, topts...)
		if err != nil {
			return nil, nil, err
		}
		cli = client.NewClient(tr, opts...)
	case TransportSSE:
		topts := []transport.ClientOption{transport.WithHTTPClient(c.httpClient()), transport.WithSSELogger(slogger(c.log))}
		if len(s.Headers) > 0 {
			topts = append(topts, transport.WithHeaders(s.Headers))
		}
		tr, err := transport.NewSSE(s.URL, topts...)
		if err != nil {
			return nil, nil, err
		}
		cli = client.NewClient(tr, opts...)
	case TransportInProcess:
		// Our own transport: mcp-go's may return a result before the
		// progress the server sent during the call (see inProcess).
		cli = client.NewClient(newInProcess(s.InProcess, elicitor{c}), opts...)
	}
	// The transport lives as long as the manager, not the first call.
	if err := cli.Start(c.m.base); err != nil {
		c.closeClient(cli, cmd)
		return nil, nil, fmt.Errorf("start: %w", err)
	}
	cli.OnNotification(func(n mcpgo.JSONRPCNotification) { c.notify(cli, n) })
	cli.OnConnectionLost(func(err error) {
		c.log.Info("mcp connection lost", zap.Error(err))
		c.drop(cli)
	})
	var hello mcpgo.InitializeRequest
	hello.Params.ProtocolVersion = ProtocolLegacy
	hello.Params.ClientInfo = mcpgo.Implementation{Name: c.m.cfg.ClientName, Version: c.m.cfg.ClientVersion}
	if s.transport() != TransportSSE {
		hello.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.m.base, cancel)
	defer stop()
	if _, err := cli.Initialize(ictx, hello); err != nil {
		c.closeClient(cli, cmd)
		return nil, nil, fmt.Errorf("initialize: %w", err)
	}
	return cli, cmd, nil
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
		p := Progress{Server: cl.server, Tool: cl.tool, Progress: number(f["progress"]), Total: number(f["total"])}
		p.Message, _ = f["message"].(string)
		if !cl.progress(p) {
			// Delivering it would put a call's progress after its end.
			c.late.Add(1)
			c.log.Debug("mcp progress after its call returned; dropped", zap.String("tool", cl.tool),
				zap.String("token", token), zap.Float64("progress", p.Progress), zap.String("message", p.Message))
		}
	case string(mcpgo.MethodNotificationToolsListChanged):
		c.log.Debug("mcp tools list changed")
		c.m.toolsChanged(c.spec.Name)
	case "notifications/message":
		level, _ := f["level"].(string)
		logger, _ := f["logger"].(string)
		fields := []zap.Field{zap.String("logger", logger), zap.Any("data", f["data"])}
		switch level {
		case "debug":
			c.log.Debug("mcp server log", fields...)
		case "info", "notice":
			c.log.Info("mcp server log", fields...)
		case "warning":
			c.log.Warn("mcp server log", fields...)
		default:
			c.log.Error("mcp server log", append(fields, zap.String("level", level))...)
		}
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

// stderrLog forwards a subprocess's stderr to the logger, one entry per
// write.
type stderrLog struct{ log *zap.Logger }

func (w *stderrLog) Write(p []byte) (int, error) {
	w.log.Debug("mcp server stderr", zap.ByteString("output", p))
	return len(p), nil
}
