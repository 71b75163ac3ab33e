package chatbot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// pipeListener is a net.Listener whose connections are in-memory pipes
// (net.Pipe), which buffer nothing: a client that reads nothing blocks
// the server's first write of a response at once, whatever the machine.
type pipeListener struct {
	conns     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

// serveOn serves h on l until the test ends.
func serveOn(t *testing.T, l net.Listener, h http.Handler) {
	t.Helper()
	srv := &http.Server{Handler: h}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		<-served
	})
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client's end of a new connection to the server.
func (l *pipeListener) dial(t *testing.T) net.Conn {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
	case <-time.After(time.Minute): // bounds a broken test only
		t.Fatal("the server accepts no connection")
	}
	return client
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestStalledReaderFreesSlots: a client that starts a chat stream and then
// reads nothing (a connection that buffers nothing) holds neither its
// principal's share of Config.MaxStreams nor the bot's running slot for
// long: its turn's work runs to its end without waiting for the writer,
// the writer is disconnected once a write has stalled for
// Config.WriteStall (for a turn that is not resumable as for a resumable
// one), and a resumable turn's events are all there for the client that
// resumes it.
func TestStalledReaderFreesSlots(t *testing.T) {
	const aliceToken, bobToken = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef00"
	b, err := openTestBot(t, Config{DataDir: t.TempDir(), Tokens: map[string]string{aliceToken: "alice", bobToken: "bob"},
		MaxStreams: 1, MaxRunningTurns: 1, TurnTimeout: 10 * time.Minute, WriteStall: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := b.Handler()
	plain := httptest.NewServer(h)
	defer plain.Close()
	pipes := newPipeListener()
	serveOn(t, pipes, h)

	get := func(token, path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, plain.URL+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultClient.Do(req)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute) // bounds a broken test only
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("after a minute, still not: %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// openStalled starts a turn of alice's over a pipe and reads the
	// response's status code, which must be 200 (its stream is open),
	// then nothing more.
	openStalled := func(body string) net.Conn {
		conn := b.testDial(t, pipes)
		go func() {
			_, _ = fmt.Fprintf(conn, "POST /api/v1/chat HTTP/1.1\r\nHost: chat.example.com\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", aliceToken, len(body), body)
		}()
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // bounds a broken test only
		status := make([]byte, len("HTTP/1.1 200"))
		if _, err := io.ReadFull(conn, status); err != nil {
			t.Fatalf("reading the response's status: %v", err)
		}
		if string(status) != "HTTP/1.1 200" {
			t.Fatalf("response status %q, want HTTP/1.1 200: no stream was opened", status)
		}
		waitFor("alice's stream is counted", func() bool { return b.guard.Streams("alice") == 1 })
		return conn
	}

	for _, resumable := range []bool{false, true} {
		conv, id := fmt.Sprintf("c-%v", resumable), fmt.Sprintf("r-%v", resumable)
		body, _ := json.Marshal(map[string]any{"conversation_id": conv, "request_id": id, "resumable": resumable,
			"message": "Compare our pricing to competitors"})
		conn := openStalled(string(body))
		if resumable {
			// The turn's work ends without a reader: its exchange is in
			// the conversation.
			waitFor("the resumable turn's exchange is in its conversation", func() bool {
				resp, err := get(aliceToken, "/api/v1/chat/"+conv+"/history")
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var hist struct {
					Messages []HistoryMessage `json:"messages"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&hist)
				return len(hist.Messages) == 2
			})
			// Another principal's turn takes the one running slot.
			resp, err := http.DefaultClient.Do(bobChat(t, plain.URL, bobToken))
			if err != nil {
				t.Fatal(err)
			}
			evs := readSSE(t, resp.Body)
			resp.Body.Close()
			if len(evs) == 0 || evs[len(evs)-1].Type != chatevent.TypeResponseDone {
				t.Errorf("bob's turn while alice's client reads nothing: %d events, want it answered", len(evs))
			}
		}
		// The stalled writer is disconnected: alice's share of MaxStreams
		// is free again.
		waitFor(fmt.Sprintf("alice's stalled stream (resumable %v) is given up", resumable), func() bool { return b.guard.Streams("alice") == 0 })
		_ = conn.Close()
		if resumable {
			// Nothing is lost: resuming gets every event, to the end.
			resp, err := get(aliceToken, "/api/v1/chat/stream/"+id)
			if err != nil {
				t.Fatal(err)
			}
			evs := readSSE(t, resp.Body)
			resp.Body.Close()
			if len(evs) == 0 || evs[0].Seq != 1 || evs[len(evs)-1].Type != chatevent.TypeResponseDone {
				t.Errorf("resumed stream: %d events, want all of them from the first to response.done", len(evs))
			}
			for i, ev := range evs {
				if ev.Seq != uint64(i+1) {
					t.Errorf("resumed event %d has id %d, want %d: events were lost", i, ev.Seq, i+1)
					break
				}
			}
		}
	}
}

// testDial dials the pipe server (a method only to keep the test's
// helpers apart from the package's names).
func (b *Bot) testDial(t *testing.T, l *pipeListener) net.Conn { return l.dial(t) }

// bobChat is a request for a turn of bob's.
func bobChat(t *testing.T, url, token string) *http.Request {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/api/v1/chat",
		strings.NewReader(`{"conversation_id": "bob-1", "message": "Hello!"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// readSSE reads a stream's events to its end.
func readSSE(t *testing.T, r io.Reader) []event.Event {
	t.Helper()
	var out []event.Event
	for ev, err := range sse.ReadEvents(r) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// slowConn is a server's end of a connection to a client that reads rate
// bytes a second, in simulated time: a write that would take that client
// longer than what is left of the write deadline fails with
// os.ErrDeadlineExceeded, whatever the machine's speed.
type slowConn struct {
	net.Conn
	rate   float64       // bytes a second
	budget time.Duration // left before the write deadline; negative: none
}

func (c *slowConn) SetWriteDeadline(d time.Time) error {
	c.budget = -1
	if !d.IsZero() {
		c.budget = time.Until(d)
	}
	return c.Conn.SetWriteDeadline(time.Time{})
}

func (c *slowConn) SetDeadline(d time.Time) error {
	_ = c.SetWriteDeadline(d)
	return c.Conn.SetReadDeadline(d)
}

func (c *slowConn) Write(p []byte) (int, error) {
	if c.budget >= 0 {
		cost := time.Duration(float64(len(p)) / c.rate * float64(time.Second))
		if cost > c.budget {
			return 0, os.ErrDeadlineExceeded
		}
		c.budget -= cost
	}
	return c.Conn.Write(p)
}

// TestWriteStallSlowReader: a client that reads slowly but steadily (256
// kbit/s) gets a 2 MB write (a resumed stream's replay), which takes it
// longer than WriteStall, in full: WriteStall bounds each piece of it.
func TestWriteStallSlowReader(t *testing.T) {
	const size = 2 << 20
	const stall = 30 * time.Second
	pipes := newPipeListener()
	serveOn(t, slowListener{pipes}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: stall, limit: time.Now().Add(time.Hour)}
		if _, err := sw.Write(make([]byte, size)); err != nil {
			t.Errorf("writing %d bytes to a client reading 32 kB/s with WriteStall %v: %v", size, stall, err)
		}
	}))
	conn := pipes.dial(t)
	defer conn.Close()
	go func() { _, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: chat.example.com\r\n\r\n") }()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // bounds a broken test only
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != size {
		t.Errorf("the slow client read %d bytes, want %d", n, size)
	}
}

// slowListener accepts pipes' connections as slowConns of 256 kbit/s.
type slowListener struct{ *pipeListener }

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.pipeListener.Accept()
	if err != nil {
		return nil, err
	}
	return &slowConn{Conn: c, rate: 32_000, budget: -1}, nil
}
