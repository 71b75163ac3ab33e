// Package stalltest simulates, for tests of HTTP servers, clients that stop
// reading their responses: a [Listener]'s connections accept no written
// byte, so every write blocks until the connection's write deadline passes
// (failing with os.ErrDeadlineExceeded) or the connection closes, just as a
// write to a client that does not read blocks once the buffers between are
// full.
package stalltest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// Listener passes its connections' reads through and stalls their writes.
// Use it as an httptest.Server's Listener (before Start).
type Listener struct {
	net.Listener
	once     sync.Once
	timedOut chan struct{}

	mu    sync.Mutex
	conns []*conn
	head  []byte // the start of the write that first timed out
}

// New returns a Listener on ln.
func New(ln net.Listener) *Listener {
	return &Listener{Listener: ln, timedOut: make(chan struct{})}
}

// TimedOut is closed when a write of one of the connections first fails
// at its deadline.
func (l *Listener) TimedOut() <-chan struct{} { return l.timedOut }

// Head returns the start (up to 1 KiB) of the first write of the
// connection whose write first timed out, once TimedOut is closed: for an
// HTTP server, the status line and headers of the answer it could not send.
func (l *Listener) Head() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head
}

// Accept returns the next connection, whose writes stall.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &conn{Conn: c, l: l, closed: make(chan struct{}), changed: make(chan struct{})}
	l.mu.Lock()
	l.conns = append(l.conns, sc)
	l.mu.Unlock()
	return sc, nil
}

// Close closes the listener and every connection it accepted, failing
// their blocked writes, so that a server's Close does not wait forever on
// a handler blocked in one.
func (l *Listener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	conns := l.conns
	l.conns = nil
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return err
}

type conn struct {
	net.Conn
	l         *Listener
	closeOnce sync.Once
	closed    chan struct{}

	mu       sync.Mutex
	deadline time.Time
	changed  chan struct{} // closed and replaced when deadline changes
	head     []byte        // the start of the first write
}

// Write blocks until the write deadline passes or the connection closes;
// it writes nothing.
func (c *conn) Write(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if c.head == nil {
			c.head = append([]byte{}, p[:min(len(p), 1<<10)]...)
		}
		d, changed, head := c.deadline, c.changed, c.head
		c.mu.Unlock()
		var expired <-chan time.Time
		var t *time.Timer
		if !d.IsZero() {
			t = time.NewTimer(time.Until(d))
			expired = t.C
		}
		select {
		case <-expired:
			c.l.once.Do(func() {
				c.l.mu.Lock()
				c.l.head = head
				c.l.mu.Unlock()
				close(c.l.timedOut)
			})
			return 0, os.ErrDeadlineExceeded
		case <-c.closed:
			return 0, net.ErrClosed
		case <-changed:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// SetWriteDeadline sets the deadline of writes, those blocked included.
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// SetDeadline sets the read and write deadlines.
func (c *conn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// Close closes the connection, failing blocked writes.
func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// CheckWriteStall serves h on a Listener and sends it a POST to path of
// the JSON body that asks for an event stream, whose answer it never
// reads: it fails t unless a write of the answer fails within a minute (a
// handler bounding each write, as with a WriteStall of 50ms, gives up on
// such a client instead of being held by it for ever), and unless that
// answer is an event stream (status 200, Content-Type text/event-stream),
// so that a refusal or a JSON answer with a write deadline does not pass.
func CheckWriteStall(t *testing.T, h http.Handler, path, body string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln := New(srv.Listener)
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	select {
	case <-ln.TimedOut():
	case <-time.After(60 * time.Second):
		t.Fatal("a write to a client that does not read has blocked for 60s")
	}
	head := string(ln.Head())
	if !strings.HasPrefix(head, "HTTP/1.1 200 ") || !strings.Contains(strings.ToLower(head), "content-type: text/event-stream") {
		t.Fatalf("the answer whose write timed out is not an event stream: %q", head)
	}
}
