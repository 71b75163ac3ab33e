package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// inProcess is the client transport to an mcp-go server in the same binary.
//
// mcp-go's own in-process transport returns a request's response as soon as
// the server's handler returns, while the notifications the handler sent
// (progress) travel through the session's channel to a forwarding goroutine:
// a call could return before its progress reached the client. This
// transport sends a marker into the same channel after the handler returns
// and hands the response back only once the forwarder has reached the
// marker, so every notification sent while a request was handled has gone
// to the notification handler, in the order sent, before the response. The
// server's elicitation requests wait for the notifications sent before them
// the same way.
type inProcess struct {
	srv     *server.MCPServer
	session *server.InProcessSession

	handlerMu sync.RWMutex
	handler   func(mcpgo.JSONRPCNotification)

	mu      sync.Mutex
	started bool
	closed  bool
	done    chan struct{}
	fwd     sync.WaitGroup
}

// markerMethod names the in-memory marker notification; it never leaves
// this transport.
const markerMethod = "agentgraph/delivered"

func newInProcess(srv *server.MCPServer, elicit server.ElicitationHandler) *inProcess {
	t := &inProcess{srv: srv, done: make(chan struct{})}
	t.session = server.NewInProcessSessionWithHandlers(srv.GenerateInProcessSessionID(), nil, orderedElicit{t, elicit}, nil)
	return t
}

// orderedElicit hands an elicitation to the client after the notifications
// the server sent before it, like a response.
type orderedElicit struct {
	t    *inProcess
	next server.ElicitationHandler
}

func (e orderedElicit) Elicit(ctx context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	e.t.delivered(ctx)
	return e.next.Elicit(ctx, req)
}

var _ transport.Interface = (*inProcess)(nil)

func (t *inProcess) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return transport.ErrTransportClosed
	}
	if t.started {
		return nil
	}
	if err := t.srv.RegisterSession(ctx, t.session); err != nil {
		return fmt.Errorf("register in-process session: %w", err)
	}
	t.started = true
	t.fwd.Go(t.forward)
	return nil
}

// forward hands the server's notifications to the handler in the order the
// server sent them, and releases each marker it reaches.
func (t *inProcess) forward() {
	in := t.session.ClientNotifications()
	for {
		select {
		case <-t.done:
			return
		case n := <-in:
			if n.Method == markerMethod {
				if reached, ok := n.Params.AdditionalFields["reached"].(chan struct{}); ok {
					close(reached)
					continue
				}
			}
			t.handlerMu.RLock()
			h := t.handler
			t.handlerMu.RUnlock()
			if h != nil {
				h(n)
			}
		}
	}
}

// delivered waits until the forwarder has handled every notification the
// server sent so far. It gives up when ctx ends or the transport closes.
func (t *inProcess) delivered(ctx context.Context) {
	reached := make(chan struct{})
	marker := mcpgo.JSONRPCNotification{JSONRPC: mcpgo.JSONRPC_VERSION, Notification: mcpgo.Notification{
		Method: markerMethod, Params: mcpgo.NotificationParams{AdditionalFields: map[string]any{"reached": reached}},
	}}
	select {
	case t.session.NotificationChannel() <- marker:
	case <-t.done:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-reached:
	case <-t.done:
	case <-ctx.Done():
	}
}

func (t *inProcess) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	t.mu.Lock()
	started, closed := t.started, t.closed
	t.mu.Unlock()
	if closed {
		return nil, transport.ErrTransportClosed
	}
	if !started {
		return nil, fmt.Errorf("in-process transport not started")
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("marshal request: %w", err)
	}
	msg := t.srv.HandleMessage(t.srv.WithContext(ctx, t.session), b)
	t.delivered(ctx)
	if r, ok := msg.(mcpgo.JSONRPCResponse); ok {
		// A result is encoded once, as the client reads it from
		// JSONRPCResponse.Result, rather than encoded with its envelope
		// and decoded back into it (the client decodes it anyway).
		res, err := json.Marshal(r.Result)
		if err != nil {
			return nil, fmt.Errorf("marshal response: %w", err)
		}
		return &transport.JSONRPCResponse{JSONRPC: r.JSONRPC, ID: r.ID, Result: res}, nil
	}
	b, err = json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("marshal response: %w", err)
	}
	var resp transport.JSONRPCResponse
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("unmarshal response: %w", err)
	}
	return &resp, nil
}

func (t *inProcess) SendNotification(ctx context.Context, n mcpgo.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("marshal notification: %w", err)
	}
	t.srv.HandleMessage(t.srv.WithContext(ctx, t.session), b)
	return nil
}

func (t *inProcess) SetNotificationHandler(h func(mcpgo.JSONRPCNotification)) {
	t.handlerMu.Lock()
	t.handler = h
	t.handlerMu.Unlock()
}

func (t *inProcess) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	started := t.started
	close(t.done)
	t.mu.Unlock()
	t.fwd.Wait()
	if started {
		t.srv.UnregisterSession(context.Background(), t.session.SessionID())
	}
	return nil
}

func (t *inProcess) GetSessionId() string { return "" }
