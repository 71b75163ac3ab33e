// Package stdio serves an mcp-go server over standard input and output, like
// server.ServeStdio from github.com/mark3labs/mcp-go, with one difference: a
// request's response is written after every notification the server sent
// while handling it (and so is a request the server sends the client, such
// as an elicitation).
//
// mcp-go's stdio server writes responses from the goroutine that handled
// the request and notifications from a goroutine of their own, fed by a
// channel. A tool that reports progress and returns can therefore have its
// result written before its progress, and a client then sees the call's
// progress after the call ended. [Serve] keeps mcp-go's server (and all it
// does: worker pool, cancellation, elicitation, sampling, roots, logging)
// and reorders its output: a response (or a request to the client) is held
// back, a marker goes into the same notification channel, and the message
// is written when the marker comes out, after every notification queued
// before it.
//
// If the marker cannot be queued (the server's notification channel is full,
// or the session is not initialized yet, as for the initialize response),
// the response is written at once, as mcp-go would. When the input ends,
// mcp-go stops writing notifications (those still queued are not written,
// as with its own stdio server); responses still held are written then.
package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// sessionID is the ID mcp-go gives its single stdio session.
const sessionID = "stdio"

// markerMethod names the marker notification; it is never written out.
const markerMethod = "agentgraph/stdio-marker"

// Serve serves srv on in and out until in ends or ctx is cancelled, with
// mcp-go's stdio server options. It returns nil when in ends or ctx is
// cancelled, else the error that stopped it.
func Serve(ctx context.Context, srv *server.MCPServer, in io.Reader, out io.Writer, opts ...server.StdioOption) error {
	s := server.NewStdioServer(srv)
	for _, o := range opts {
		o(s)
	}
	w := &writer{srv: srv, out: out, held: map[uint64][]byte{}}
	err := s.Listen(ctx, in, w)
	// mcp-go stops writing notifications as soon as the input ends, while
	// the last requests may still finish: write what is held.
	if ferr := w.flush(); err == nil {
		err = ferr
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// writer is the stdout that mcp-go's stdio server writes to, one JSON-RPC
// message per Write.
type writer struct {
	srv *server.MCPServer

	mu   sync.Mutex // serialises writes to out and guards held and next
	out  io.Writer
	held map[uint64][]byte // responses waiting for their marker
	next uint64
}

// message is what writer reads of a message to tell its kind.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Marker *uint64 `json:"marker"`
	} `json:"params"`
}

func (w *writer) Write(p []byte) (int, error) {
	var m message
	if err := json.Unmarshal(bytes.TrimSpace(p), &m); err != nil {
		return w.write(p)
	}
	switch {
	case m.Method == markerMethod && m.Params.Marker != nil:
		w.mu.Lock()
		defer w.mu.Unlock()
		b, ok := w.held[*m.Params.Marker]
		delete(w.held, *m.Params.Marker)
		if !ok {
			return len(p), nil
		}
		if _, err := w.out.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	case len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null")):
		// A response, or a request to the client (elicitation, sampling,
		// roots): hold it until the notifications queued before it are
		// out. This may run under mcp-go's write lock, so queuing the
		// marker must not block (SendNotificationToSpecificClient does not).
		w.mu.Lock()
		n := w.next
		w.next++
		w.held[n] = bytes.Clone(p)
		w.mu.Unlock()
		err := w.srv.SendNotificationToSpecificClient(sessionID, markerMethod, map[string]any{"marker": n})
		if err == nil {
			return len(p), nil
		}
		w.mu.Lock()
		delete(w.held, n)
		w.mu.Unlock()
		return w.write(p)
	default:
		return w.write(p)
	}
}

// flush writes the messages still held, in the order they were held.
func (w *writer) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range slices.Sorted(maps.Keys(w.held)) {
		b := w.held[n]
		delete(w.held, n)
		if _, err := w.out.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}
