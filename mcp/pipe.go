package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// pipe is the client transport to a stdio server: one JSON-RPC message a
// line, read from the server's stdout and written to its stdin.
//
// It stands in for mcp-go's stdio transport, which starts a goroutine for
// every request the server sends (a server that floods requests makes as
// many goroutines, each blocked writing its answer to a server that does
// not read it) and logs to slog.Default. Here the server's requests go
// through its conn's limit (ManagerConfig.MaxServerRequests): a request
// over the limit is answered at once with a JSON-RPC error and gets no
// goroutine; everything is written by one writer goroutine, which callers
// wait for no longer than their context; and the transport logs to the
// manager's logger.
type pipe struct {
	c   *conn
	in  *bufio.Reader
	out io.WriteCloser
	log *zap.Logger

	writes   chan []byte // lines for the writer goroutine
	done     chan struct{}
	doneOnce sync.Once

	hmu     sync.RWMutex
	notify  func(mcpgo.JSONRPCNotification)
	handler transport.RequestHandler

	mu      sync.Mutex
	started bool
	ctx     context.Context // the server's requests are handled under it
	cancel  context.CancelFunc
	pending map[string]chan *transport.JSONRPCResponse // request ID -> its answer
}

// pipeWrites is how many lines may wait for the writer goroutine: the
// reader's answers to requests it refuses are dropped only when this many
// wait, that is when the server has stopped reading its input.
const pipeWrites = 256

var _ transport.BidirectionalInterface = (*pipe)(nil)

func newPipe(c *conn, stdout io.Reader, stdin io.WriteCloser) *pipe {
	return &pipe{c: c, in: bufio.NewReader(stdout), out: stdin, log: c.log, writes: make(chan []byte, pipeWrites),
		done: make(chan struct{}), pending: map[string]chan *transport.JSONRPCResponse{}}
}

// Start starts reading and writing. The server's requests are handled
// under ctx until the transport closes.
func (p *pipe) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return nil
	}
	select {
	case <-p.done:
		return transport.ErrTransportClosed
	default:
	}
	p.started = true
	p.ctx, p.cancel = context.WithCancel(ctx)
	go p.writer()
	go p.reader()
	return nil
}

// closeDone ends the transport: requests waiting for an answer fail with
// transport.ErrTransportClosed, and the server's requests being handled
// are cancelled (their answers could not be sent), giving back their
// slots of the server's limit.
func (p *pipe) closeDone() {
	p.doneOnce.Do(func() { close(p.done) })
	p.mu.Lock()
	if p.cancel != nil {
		p.cancel()
	}
	p.mu.Unlock()
}

// Close ends the transport and closes the server's stdin (the manager
// reaps the process). The reader ends when the server's stdout does, the
// writer at once or, if it is blocked writing to a server that does not
// read, when the write fails (Close does not wait for it: where closing a
// pipe does not end a write blocked on it, the process's end does).
func (p *pipe) Close() error {
	p.closeDone()
	err := p.out.Close()
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return fmt.Errorf("close stdin: %w", err)
	}
	return nil
}

func (p *pipe) GetSessionId() string { return "" }

func (p *pipe) SetNotificationHandler(h func(mcpgo.JSONRPCNotification)) {
	p.hmu.Lock()
	p.notify = h
	p.hmu.Unlock()
}

func (p *pipe) SetRequestHandler(h transport.RequestHandler) {
	p.hmu.Lock()
	p.handler = h
	p.hmu.Unlock()
}

// writer writes the queued lines in order until the transport closes. A
// failed write ends the transport: the server's stdin is gone.
func (p *pipe) writer() {
	for {
		select {
		case <-p.done:
			return
		case b := <-p.writes:
			if _, err := p.out.Write(b); err != nil {
				p.log.Debug("mcp stdio write failed; connection ends", zap.Error(err))
				p.closeDone()
				return
			}
		}
	}
}

// write queues a line for the writer, waiting for room until ctx ends or
// the transport closes.
func (p *pipe) write(ctx context.Context, msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("marshal message: %w", err)
	}
	select {
	case p.writes <- append(b, '\n'):
		return nil
	case <-p.done:
		return transport.ErrTransportClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendRequest sends req and waits for its answer until ctx ends or the
// transport closes.
func (p *pipe) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	select {
	case <-p.done:
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	key := req.ID.String()
	answer := make(chan *transport.JSONRPCResponse, 1)
	p.mu.Lock()
	p.pending[key] = answer
	p.mu.Unlock()
	forget := func() {
		p.mu.Lock()
		delete(p.pending, key)
		p.mu.Unlock()
	}
	if err := p.write(ctx, req); err != nil {
		forget()
		return nil, err
	}
	select {
	case r := <-answer:
		return r, nil
	case <-p.done:
		// An answer read just before the end still counts.
		select {
		case r := <-answer:
			return r, nil
		default:
		}
		forget()
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// SendNotification sends n, waiting for room to write it until ctx ends.
func (p *pipe) SendNotification(ctx context.Context, n mcpgo.JSONRPCNotification) error {
	select {
	case <-p.done:
		return transport.ErrTransportClosed
	default:
	}
	return p.write(ctx, n)
}

// message is any JSON-RPC message from the server.
type message struct {
	ID     *mcpgo.RequestId           `json:"id,omitempty"`
	Method string                     `json:"method,omitempty"`
	Params json.RawMessage            `json:"params,omitempty"`
	Result json.RawMessage            `json:"result,omitempty"`
	Error  *mcpgo.JSONRPCErrorDetails `json:"error,omitempty"`
}

// reader reads the server's messages until its stdout ends, then ends the
// transport. Notifications are handed over on this goroutine, in order.
func (p *pipe) reader() {
	defer p.closeDone()
	for {
		line, err := p.in.ReadBytes('\n')
		if len(line) > 0 && (err == nil || errors.Is(err, io.EOF)) {
			p.dispatch(line)
		}
		if err != nil {
			var le *LimitError
			if !errors.Is(err, io.EOF) && !errors.As(err, &le) { // onLimit reported the limit
				p.log.Debug("mcp stdio read failed; connection ends", zap.Error(err))
			}
			return
		}
	}
}

// dispatch routes one message: a notification to the handler, a request to
// the request handler (within the server's limit), an answer to the request
// waiting for it.
func (p *pipe) dispatch(line []byte) {
	var msg message
	if err := json.Unmarshal(line, &msg); err != nil {
		p.log.Debug("mcp stdio: a line that is not a JSON-RPC message; ignored", zap.Error(err), zap.Int("bytes", len(line)))
		return
	}
	switch {
	case msg.Method != "" && msg.ID == nil:
		n := mcpgo.JSONRPCNotification{JSONRPC: mcpgo.JSONRPC_VERSION, Notification: mcpgo.Notification{Method: msg.Method}}
		if len(msg.Params) > 0 {
			if err := json.Unmarshal(msg.Params, &n.Params); err != nil {
				p.log.Debug("mcp stdio: notification with bad params; ignored", zap.String("method", msg.Method), zap.Error(err))
				return
			}
		}
		p.hmu.RLock()
		h := p.notify
		p.hmu.RUnlock()
		if h != nil {
			h(n)
		}
	case msg.Method != "":
		req := transport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION, ID: *msg.ID, Method: msg.Method}
		if len(msg.Params) > 0 {
			req.Params = msg.Params
		}
		p.request(req)
	case msg.ID != nil:
		r := &transport.JSONRPCResponse{JSONRPC: mcpgo.JSONRPC_VERSION, ID: *msg.ID, Result: msg.Result, Error: msg.Error}
		key := msg.ID.String()
		p.mu.Lock()
		answer, ok := p.pending[key]
		delete(p.pending, key)
		p.mu.Unlock()
		if ok {
			answer <- r // buffered, and read once
		} else {
			p.log.Debug("mcp stdio: an answer to no request waiting; ignored", zap.String("id", key))
		}
	default:
		p.log.Debug("mcp stdio: a message with neither method nor id; ignored")
	}
}

// request handles one of the server's requests on a goroutine of its own,
// within the server's limit on requests in flight; one over the limit is
// answered at once with a JSON-RPC error.
func (p *pipe) request(req transport.JSONRPCRequest) {
	p.hmu.RLock()
	h := p.handler
	p.hmu.RUnlock()
	if h == nil {
		p.reply(transport.NewJSONRPCErrorResponse(req.ID, mcpgo.METHOD_NOT_FOUND, "no request handler configured", nil))
		return
	}
	select {
	case <-p.done:
		return // its answer could not be sent
	default:
	}
	if !p.c.admit(req.Method) {
		p.reply(p.c.busy(req))
		return
	}
	ctx := p.ctx
	go func() {
		defer p.c.release()
		resp, err := h(ctx, req)
		if err != nil {
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcpgo.INTERNAL_ERROR, err.Error(), nil)
		}
		if resp == nil {
			return
		}
		if err := p.write(ctx, resp); err != nil {
			p.log.Debug("mcp stdio: answer to the server's request not sent", zap.String("method", req.Method), zap.Error(err))
		}
	}()
}

// reply queues an answer from the reader goroutine without waiting: when
// the writer is behind (the server does not read what it is sent), the
// answer is dropped rather than the reader blocked.
func (p *pipe) reply(r *transport.JSONRPCResponse) {
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	select {
	case p.writes <- append(b, '\n'):
	default:
		p.log.Debug("mcp stdio: answer to the server's request dropped: the server is not reading its input", zap.String("id", r.ID.String()))
	}
}
