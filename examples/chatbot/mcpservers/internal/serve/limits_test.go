package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/serve"
)

// legacy is a protocol version with sessions (before 2026-07-28).
const legacy = "2025-11-25"

// testServer is a Handler behind a real HTTP server.
type testServer struct {
	t      *testing.T
	s      *server.MCPServer
	h      *serve.Handler
	url    string
	client *http.Client
}

// newMCPServer returns an MCP server with the tool "spam", which sends the
// number of progress notifications its argument n asks for, each of
// argument size bytes, before it answers.
func newMCPServer() *server.MCPServer {
	s := server.NewMCPServer("t", "1.0.0")
	s.AddTool(mcp.NewTool("spam", mcp.WithNumber("n"), mcp.WithNumber("size")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, size := req.GetInt("n", 0), req.GetInt("size", 1)
		var token any = "p"
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			token = req.Params.Meta.ProgressToken
		}
		srv := server.ServerFromContext(ctx)
		for i := range n {
			if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": token, "progress": i + 1, "total": n, "message": strings.Repeat("x", size)}); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText("done"), nil
	})
	s.AddTool(mcp.NewTool("block"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		blockStarted <- struct{}{}
		select {
		case <-blockRelease:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mcp.NewToolResultText("released"), nil
	})
	s.AddTool(mcp.NewTool("sleep", mcp.WithNumber("ms"), mcp.WithBoolean("notify")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.GetBool("notify", false) {
			// The response becomes a stream, written to before the wait.
			if err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
				map[string]any{"level": "info", "data": "sleeping"}); err != nil {
				return nil, err
			}
		}
		select {
		case <-time.After(time.Duration(req.GetInt("ms", 0)) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mcp.NewToolResultText("slept"), nil
	})
	return s
}

// The tool "block" sends to blockStarted once it runs, then waits for
// blockRelease.
var blockStarted, blockRelease = make(chan struct{}, 16), make(chan struct{}, 16)

func newTestServer(t *testing.T, lim serve.Limits) *testServer {
	t.Helper()
	return newTestServerOn(t, lim, nil)
}

// newTestServerOn is newTestServer with the listener wrap makes of the
// server's, when wrap is not nil.
func newTestServerOn(t *testing.T, lim serve.Limits, wrap func(net.Listener) net.Listener) *testServer {
	return newTestServerTLS(t, lim, wrap, false)
}

// newTestServerTLS is newTestServerOn, serving TLS and HTTP/2 when tlsH2.
func newTestServerTLS(t *testing.T, lim serve.Limits, wrap func(net.Listener) net.Listener, tlsH2 bool) *testServer {
	t.Helper()
	s := newMCPServer()
	h, err := serve.NewHandler(s, serve.Auth{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(h)
	if wrap != nil {
		hs.Listener = wrap(hs.Listener)
	}
	client := http.DefaultClient
	if tlsH2 {
		hs.EnableHTTP2 = true
		hs.StartTLS()
		client = hs.Client()
	} else {
		hs.Start()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		hs.Close()
	})
	return &testServer{t: t, s: s, h: h, url: hs.URL, client: client}
}

// do sends an MCP request: method, the session ID (none when empty), the
// body (none when empty) and extra headers as name, value pairs.
func (ts *testServer) do(method, session, body string, headers ...string) *http.Response {
	ts.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ts.t.Context(), method, ts.url, r)
	if err != nil {
		ts.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", legacy)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp
}

// status sends a request like do and returns its status, the body read.
func (ts *testServer) status(method, session, body string, headers ...string) int {
	ts.t.Helper()
	resp := ts.do(method, session, body, headers...)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_, _ = io.Copy(io.Discard, resp.Body) // a stream may never end: closed unread
	}
	resp.Body.Close()
	return resp.StatusCode
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + legacy +
	`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// open initializes a session and returns its ID.
func (ts *testServer) open() string {
	ts.t.Helper()
	resp := ts.do(http.MethodPost, "", initialize)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		ts.t.Fatalf("initialize: status %d, session %q", resp.StatusCode, id)
	}
	if got := ts.status(http.MethodPost, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); got != http.StatusAccepted {
		ts.t.Fatalf("notifications/initialized: status %d", got)
	}
	return id
}

const madeUp = "mcp-session-0b6c3f4e-5d1a-4c4e-9e7a-2f1d8e3c9a10"

func TestUnknownSessionRefused(t *testing.T) {
	ts := newTestServer(t, serve.Limits{})
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, tc := range []struct {
		name, method, session, body string
		want                        int
	}{
		{"GET made-up", http.MethodGet, madeUp, "", http.StatusNotFound},
		{"GET none", http.MethodGet, "", "", http.StatusBadRequest},
		{"GET not an ID", http.MethodGet, "anything", "", http.StatusNotFound},
		{"POST made-up", http.MethodPost, madeUp, ping, http.StatusNotFound},
		{"DELETE made-up", http.MethodDelete, madeUp, "", http.StatusNotFound},
	} {
		if got := ts.status(tc.method, tc.session, tc.body); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	if n := ts.h.Sessions(); n != 0 {
		t.Errorf("%d sessions live after requests naming unknown sessions, want 0", n)
	}

	// A session the server issued is served, until it is deleted.
	id := ts.open()
	if got := ts.status(http.MethodPost, id, ping); got != http.StatusOK {
		t.Errorf("POST on an issued session: status %d, want 200", got)
	}
	if got := ts.status(http.MethodDelete, id, ""); got != http.StatusOK {
		t.Errorf("DELETE on an issued session: status %d, want 200", got)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		body := ""
		if m == http.MethodPost {
			body = ping
		}
		if got := ts.status(m, id, body); got != http.StatusNotFound {
			t.Errorf("%s on a deleted session: status %d, want 404", m, got)
		}
	}
}

func TestSessionCap(t *testing.T) {
	ts := newTestServer(t, serve.Limits{MaxSessions: 2})
	a := ts.open()
	ts.open()
	resp := ts.do(http.MethodPost, "", initialize)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "MaxSessions") {
		t.Errorf("initialize beyond MaxSessions: status %d, Retry-After %q, body %q; want 503 with Retry-After naming MaxSessions",
			resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if n := ts.h.Sessions(); n != 2 {
		t.Errorf("%d sessions live, want 2", n)
	}
	if got := ts.status(http.MethodDelete, a, ""); got != http.StatusOK {
		t.Fatalf("DELETE: status %d", got)
	}
	ts.open() // the place a is freed takes a new session
}

func TestIdleSessionExpires(t *testing.T) {
	ts := newTestServer(t, serve.Limits{SessionIdleTTL: time.Second})
	id := ts.open()
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	deadline := time.Now().Add(30 * time.Second)
	for ts.h.Sessions() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("an idle session is still live 30s after its SessionIdleTTL of 1s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := ts.status(http.MethodPost, id, ping); got != http.StatusNotFound {
		t.Errorf("POST on an expired session: status %d, want 404", got)
	}
}

func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t, serve.Limits{MaxBodyBytes: 1024})
	id := ts.open()
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 2048) + `"}}}`
	if got := ts.status(http.MethodPost, id, big); got != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of %d bytes with MaxBodyBytes 1024: status %d, want 413", len(big), got)
	}
	if got := ts.status(http.MethodPost, id, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != http.StatusOK {
		t.Errorf("POST within the limit: status %d, want 200", got)
	}
}

func TestInFlightLimit(t *testing.T) {
	ts := newTestServer(t, serve.Limits{MaxInFlight: 1})
	id := ts.open()
	stream := ts.do(http.MethodGet, id, "") // held open: the one request in flight
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: status %d", stream.StatusCode)
	}
	resp := ts.do(http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("request beyond MaxInFlight: status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// eventIDs returns the SSE event IDs of resp's body, which it reads to its
// end.
func eventIDs(t *testing.T, resp *http.Response) []string {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("response of type %q, status %d, want an event stream", ct, resp.StatusCode)
	}
	var ids []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func TestEventsKeptBounded(t *testing.T) {
	const maxEvents = 8
	ts := newTestServer(t, serve.Limits{MaxSessionEvents: maxEvents, MaxSessionEventBytes: 64 << 10})
	id := ts.open()
	call := func(n, size int) []string {
		return eventIDs(t, ts.do(http.MethodPost, id, fmt.Sprintf(
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"spam","arguments":{"n":%d,"size":%d}}}`, 10+n, n, size)))
	}
	first := call(3, 10)
	if len(first) != 4 { // 3 notifications and the result
		t.Fatalf("first call: %d events, want 4", len(first))
	}
	resume := func(last string) int {
		return ts.status(http.MethodGet, id, "", "Last-Event-ID", last)
	}
	if got := resume(first[0]); got != http.StatusOK {
		t.Fatalf("resuming after the first event while it is kept: status %d, want 200", got)
	}

	// More events than the session keeps: the oldest are dropped.
	second := call(2*maxEvents, 10)
	if got := resume(first[0]); got != http.StatusBadRequest {
		t.Errorf("resuming after an event %d events ago with MaxSessionEvents %d: status %d, want 400 (dropped)", len(second), maxEvents, got)
	}
	if got := resume(second[len(second)-maxEvents]); got != http.StatusOK {
		t.Errorf("resuming after one of the last %d events: status %d, want 200", maxEvents, got)
	}

	// Events larger than the byte bound: a few fill it.
	third := call(4, 30<<10)
	if got := resume(third[0]); got != http.StatusBadRequest {
		t.Errorf("resuming after the first of 4 events of 30 KiB with MaxSessionEventBytes 64 KiB: status %d, want 400 (dropped)", got)
	}
	if got := resume(third[len(third)-2]); got != http.StatusOK {
		t.Errorf("resuming after a recent event: status %d, want 200", got)
	}
}

func TestLimitsInvalid(t *testing.T) {
	_, err := serve.NewHandler(server.NewMCPServer("t", "1.0.0"), serve.Auth{}, serve.Limits{MaxSessions: -1})
	if err == nil || !strings.Contains(err.Error(), "MaxSessions") {
		t.Errorf("NewHandler with MaxSessions -1: %v, want an error naming MaxSessions", err)
	}
}

func TestServerTimeouts(t *testing.T) {
	h, err := serve.NewHandler(server.NewMCPServer("t", "1.0.0"), serve.Auth{}, serve.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown(context.Background())
	hs := h.Server()
	if hs.ReadHeaderTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Errorf("Server: ReadHeaderTimeout %v, IdleTimeout %v, MaxHeaderBytes %d; want each bounded", hs.ReadHeaderTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	}
	if hs.ReadTimeout != 0 || hs.WriteTimeout != 0 {
		t.Errorf("Server: ReadTimeout %v, WriteTimeout %v; want none (they cut streams)", hs.ReadTimeout, hs.WriteTimeout)
	}
}

// stallListener reports the first write to one of its connections that
// failed at its deadline.
type stallListener struct {
	net.Listener
	once     sync.Once
	timedOut chan struct{}
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c, l: l}, nil
}

type stallConn struct {
	net.Conn
	l *stallListener
}

func (c *stallConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.l.once.Do(func() { close(c.l.timedOut) })
	}
	return n, err
}

func TestWriteStallBounded(t *testing.T) {
	ln := &stallListener{timedOut: make(chan struct{})}
	ts := newTestServerOn(t, serve.Limits{WriteStall: 100 * time.Millisecond}, func(l net.Listener) net.Listener {
		ln.Listener = l
		return ln
	})
	id := ts.open()

	// A client that opens the session's stream and never reads it.
	u, err := url.Parse(ts.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Protocol-Version: %s\r\nMcp-Session-Id: %s\r\n\r\n", u.Host, legacy, id)

	// Messages for the session until the server gives up writing them.
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		big := strings.Repeat("x", 32<<10)
		for ctx.Err() == nil {
			if ts.s.SendNotificationToSpecificClient(id, "notifications/message", map[string]any{"level": "info", "data": big}) != nil {
				time.Sleep(time.Millisecond) // its queue is full
			}
		}
	})
	defer func() { cancel(); wg.Wait() }()
	select {
	case <-ln.timedOut:
	case <-time.After(60 * time.Second):
		t.Fatal("a write to a client that does not read has blocked for 60s with WriteStall 100ms")
	}
}

// A session with a call in flight is not idle, however long the call takes:
// the call's answer arrives, and the session lives on.
func TestCallInFlightKeepsSession(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for three times the idle TTL")
	}
	ts := newTestServer(t, serve.Limits{SessionIdleTTL: time.Second})
	id := ts.open()
	resp := ts.do(http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":3000}}}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "slept") {
		t.Fatalf("call longer than the idle TTL: status %d, %v, body %q; want its answer", resp.StatusCode, err, body)
	}
	if got := ts.status(http.MethodPost, id, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != http.StatusOK {
		t.Errorf("POST on the session right after its long call: status %d, want 200", got)
	}
}

// Over HTTP/2 a response stream quiet for longer than WriteStall between
// two writes is not reset: the write deadline is lifted after each write.
func TestQuietStreamOverHTTP2(t *testing.T) {
	ts := newTestServerTLS(t, serve.Limits{WriteStall: 100 * time.Millisecond}, nil, true)
	id := ts.open()
	resp := ts.do(http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":500,"notify":true}}}`)
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(body), "slept") {
		t.Fatalf("a stream quiet for 500ms with WriteStall 100ms: %v, body %q; want the answer", err, body)
	}
}

// A session whose client keeps its listening stream open lives on past
// SessionIdleTTL: the stream is sent pings, which count as use.
func TestListeningSessionKeptAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for twice the idle TTL")
	}
	const ttl = 4 * time.Second // pings every second
	ts := newTestServer(t, serve.Limits{SessionIdleTTL: ttl})
	id := ts.open()
	other := ts.open() // no stream: it expires
	stream := ts.do(http.MethodGet, id, "")
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: status %d", stream.StatusCode)
	}
	pings := 0
	sc := bufio.NewScanner(stream.Body)
	for pings < 8 && sc.Scan() { // 8 pings: twice the TTL
		if strings.Contains(sc.Text(), `"method":"ping"`) {
			pings++
		}
	}
	if pings < 8 {
		t.Fatalf("the stream ended after %d pings: %v", pings, sc.Err())
	}
	deadline := time.Now().Add(30 * time.Second)
	for ts.status(http.MethodPost, other, `{"jsonrpc":"2.0","id":2,"method":"ping"}`) != http.StatusNotFound {
		if time.Now().After(deadline) {
			t.Fatal("the session without a stream is still live 30s after its SessionIdleTTL")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := ts.status(http.MethodPost, id, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != http.StatusOK {
		t.Errorf("POST on the session with an open stream, after twice its idle TTL: status %d, want 200", got)
	}
}

func TestSessionRequestBudget(t *testing.T) {
	ts := newTestServer(t, serve.Limits{MaxSessionRequests: 3})
	id := ts.open() // notifications/initialized is the first request
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	// The client's answer to a request of the server does not count.
	if got := ts.status(http.MethodPost, id, `{"jsonrpc":"2.0","id":7,"result":{}}`); got != http.StatusAccepted {
		t.Fatalf("answer to a ping: status %d, want 202", got)
	}
	for i := range 2 {
		if got := ts.status(http.MethodPost, id, ping); got != http.StatusOK {
			t.Fatalf("request %d of 3: status %d, want 200", i+2, got)
		}
	}
	if n := ts.h.Sessions(); n != 0 {
		t.Errorf("%d sessions live after the session served its 3 requests, want 0", n)
	}
	if got := ts.status(http.MethodPost, id, ping); got != http.StatusNotFound {
		t.Errorf("request 4 of 3: status %d, want 404", got)
	}
	ts.open() // a new session is served
}

// A session that has served its requests while others are in flight
// serves more, so that its client does not drop the session under the calls
// in flight; it ends once none is.
func TestSessionRequestBudgetWithCallsInFlight(t *testing.T) {
	ts := newTestServer(t, serve.Limits{MaxSessionRequests: 2})
	id := ts.open() // notifications/initialized is the first request
	done := make(chan string, 1)
	go func() {
		resp := ts.do(http.MethodPost, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(body)
	}()
	<-blockStarted // request 2 of 2 is in flight
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	for i := range 3 {
		if got := ts.status(http.MethodPost, id, ping); got != http.StatusOK {
			t.Errorf("request %d of 2 while a call is in flight: status %d, want 200", i+3, got)
			break
		}
	}
	blockRelease <- struct{}{}
	if body := <-done; !strings.Contains(body, "released") {
		t.Fatalf("the call in flight: %q, want its answer", body)
	}
	if n := ts.h.Sessions(); n != 0 {
		t.Errorf("%d sessions live after the session's last call ended, want 0", n)
	}
	if got := ts.status(http.MethodPost, id, ping); got != http.StatusNotFound {
		t.Errorf("request after the session ended: status %d, want 404", got)
	}
}

// What a session keeps of each finished response stream is small: mcp-go
// keeps every stream's writer until the session ends, and the handler's
// writer lets go of the response (and its request) once it is over.
func TestFinishedStreamsKeepLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("makes thousands of calls")
	}
	ts := newTestServer(t, serve.Limits{MaxSessionRequests: 1 << 30})
	id := ts.open()
	call := func(i int) {
		resp := ts.do(http.MethodPost, id, fmt.Sprintf(
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"spam","arguments":{"n":1,"size":10}}}`, i))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	for i := range 1500 { // past MaxSessionEvents: the kept events stop growing
		call(i)
	}
	before := heap()
	const n = 3000
	for i := range n {
		call(2000 + i)
	}
	// About 3.6 KB a call when the whole response was kept, under 0.4 KB
	// without it.
	if per := (heap() - before) / n; per > 1500 {
		t.Errorf("the heap grew by %d bytes per finished call, want at most 1500", per)
	}
}
