package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// badServerEnv makes the test binary serve badServer over stdio; its value
// is the number of tool calls it answers before it stops answering
// anything (0: never stops).
const badServerEnv = "AGENTGRAPH_MCP_BAD_SERVER"

// badServer is a stdio MCP server that misbehaves on demand. Tools: ok
// (answers "ok"), wait (answers "ok" too; the test gives it no time
// limit), flood (starts an answer and sends 400 MB without a newline),
// huge (answers a text of "bytes" bytes), requests (sends "n" requests of
// "method" to the client, then answers) and refused (answers how many of
// those requests were refused for MaxServerRequests). After hangAfter
// calls it stops reading and answering, as a frozen server does.
func badServer(hangAfter int) {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	send := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		out.Write(append(b, '\n'))
		out.Flush()
	}
	calls, refused := 0, 0
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Cursor          string         `json:"cursor"`
				Name            string         `json:"name"`
				Arguments       map[string]any `json:"arguments"`
			} `json:"params"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil {
			continue // a notification
		}
		if req.Method == "" {
			// An answer to one of our requests.
			if req.Error != nil && strings.Contains(req.Error.Message, "MaxServerRequests") {
				refused++
			}
			continue
		}
		switch mode := os.Getenv(badModeEnv); {
		case req.Method == "initialize" && mode == "noinit":
			continue // never answers the handshake
		case req.Method == "tools/list" && mode == "pages":
			// Endless pages: one tool each and always a fresh cursor; a
			// "desc" mode adds a 10 KB description to each tool.
			n, _ := strconv.Atoi(strings.TrimPrefix(req.Params.Cursor, "c"))
			tool := map[string]any{"name": "t" + strconv.Itoa(n), "inputSchema": map[string]any{"type": "object"}}
			if os.Getenv(badModeArgEnv) == "desc" {
				tool["description"] = strings.Repeat("d", 10<<10)
			}
			send(req.ID, map[string]any{"tools": []any{tool}, "nextCursor": "c" + strconv.Itoa(n+1)})
			continue
		case req.Method == "tools/list" && mode == "garbage":
			// A reply nested deeper than encoding/json parses: the
			// transport drops it, so the request is never answered.
			depth := 20000
			out.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"tools":[{"name":"deep","inputSchema":` +
				strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}]}}\n")
			out.Flush()
			continue
		}
		switch req.Method {
		case "initialize":
			send(req.ID, map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "bad", "version": "1"}})
		case "ping":
			send(req.ID, map[string]any{})
		case "tools/list":
			var tools []map[string]any
			for _, name := range []string{"ok", "wait", "flood", "huge"} {
				tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}})
			}
			send(req.ID, map[string]any{"tools": tools})
		case "tools/call":
			calls++
			if hangAfter > 0 && calls > hangAfter {
				select {} // frozen: reads nothing more, answers nothing
			}
			switch req.Params.Name {
			case "requests":
				// Sends n requests of the given method without reading
				// the answers, then answers the call.
				n, _ := req.Params.Arguments["n"].(float64)
				method, _ := req.Params.Arguments["method"].(string)
				params := map[string]any{}
				if method == "elicitation/create" {
					params = map[string]any{"message": "hi", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
				}
				for i := range int(n) {
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "srv-" + strconv.Itoa(i), "method": method, "params": params})
					out.Write(append(b, '\n'))
				}
				send(req.ID, map[string]any{"content": []map[string]any{{"type": "text", "text": "sent"}}})
			case "refused":
				// Answers the number of its requests refused so far for
				// the MaxServerRequests limit.
				send(req.ID, map[string]any{"content": []map[string]any{{"type": "text", "text": strconv.Itoa(refused)}}})
			case "flood":
				out.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"`)
				chunk := strings.Repeat("a", 1<<20)
				for range 400 {
					if _, err := out.WriteString(chunk); err != nil {
						return
					}
				}
				out.Flush()
				select {}
			case "huge":
				n, _ := req.Params.Arguments["bytes"].(float64)
				send(req.ID, map[string]any{"content": []map[string]any{{"type": "text", "text": strings.Repeat("b", int(n))}}})
			default:
				send(req.ID, map[string]any{"content": []map[string]any{{"type": "text", "text": "ok"}}})
			}
		default:
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "no such method"}})
			out.Write(append(b, '\n'))
			out.Flush()
		}
	}
}

// badModeEnv selects how badServer misbehaves besides hanging: "noinit"
// never answers initialize, "pages" lists tools in endless pages, and
// "garbage" answers tools/list with a line too deeply nested to parse.
// badModeArgEnv refines a mode ("desc": pages of large tools).
const (
	badModeEnv    = "AGENTGRAPH_MCP_BAD_MODE"
	badModeArgEnv = "AGENTGRAPH_MCP_BAD_MODE_ARG"
)

// badModeServer describes badServer run as a subprocess in a mode.
func badModeServer(name, mode, arg string) mcp.Server {
	s := badStdioServer(name, 0)
	s.Env[badModeEnv] = mode
	s.Env[badModeArgEnv] = arg
	return s
}

// badStdioServer describes badServer run as a subprocess.
func badStdioServer(name string, hangAfter int) mcp.Server {
	return mcp.Server{Name: name, Command: os.Args[0], Env: map[string]string{badServerEnv: strconv.Itoa(hangAfter)}}
}

// children counts the live child processes of the test, or returns -1
// where /proc does not list them.
func children(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	me := strconv.Itoa(os.Getpid())
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == me {
			n++
		}
	}
	return n
}

// checkNoLeaks shuts m down, runs the test's own cleanup (may be nil), and
// checks that no goroutine started since ignore and no child process
// outlives them.
func checkNoLeaks(t *testing.T, m *mcp.Manager, ignore goleak.Option, kids int, cleanup func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if cleanup != nil {
		cleanup()
	}
	// Goroutines that end on their own may take a moment on a busy machine.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := goleak.Find(ignore)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines left after Shutdown: %v", err)
			break
		}
	}
	if kids >= 0 {
		if n := children(t); n > kids {
			t.Errorf("%d child processes after Shutdown; want at most %d, as before the test", n, kids)
		}
	}
}

// TestHungServerRestarted: a stdio server that stops answering after two
// calls. The next call runs out of its time limit; the manager pings, gets
// no answer, kills the server (failing the call still in flight with a
// *StallError); Health turns unhealthy, the breaker opens; once it cools
// down, calls reach a new process and succeed. Nothing leaks.
func TestHungServerRestarted(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	kids := children(t)
	r := fastRetry()
	r.Breaker.FailureThreshold = 2
	srv := badStdioServer("frozen", 2)
	// Generous limits: a hung server never answers, a healthy one is not
	// expected to take this long even on a loaded machine.
	srv.CallTimeout = 5 * time.Second
	srv.ToolTimeouts = map[string]time.Duration{"wait": -1} // no limit: only the stall ends it
	m := newManager(t, mcp.ManagerConfig{Resilience: r, PingTimeout: 5 * time.Second}, srv)
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	call := func(tool string) error {
		_, err := s.CallTool(ctx, mcp.ToolCall{Server: "frozen", Name: tool})
		return err
	}
	for range 2 {
		if err := call("ok"); err != nil {
			t.Fatal(err)
		}
	}
	first := health(t, m, "frozen")
	if first.State != mcp.HealthHealthy || first.PID == 0 || first.CallTimeout != 5*time.Second {
		t.Fatalf("health after two calls = %+v; want healthy, with a PID and CallTimeout 5s", first)
	}

	// The server is frozen now. A call without a limit of its own waits...
	var wg sync.WaitGroup
	var waitErr error
	wg.Go(func() { waitErr = call("wait") })
	waitFor(t, "the waiting call to be in flight", func() bool { return health(t, m, "frozen").InFlight == 1 })
	// ...while one with a limit runs out of time.
	err := call("ok")
	var te *mcp.TimeoutError
	var ce *mcp.CallError
	if !errors.As(err, &te) || te.Server != "frozen" || te.Tool != "ok" || !errors.As(err, &ce) || ce.Kind != mcp.KindTimeout {
		t.Fatalf("call to the frozen server: %v; want a *TimeoutError of kind timeout", err)
	}
	if !strings.Contains(err.Error(), "Server.ToolTimeouts") {
		t.Errorf("timeout error %q does not say how to change the limit", err)
	}
	// The ping after it gets no answer either: the server is killed and
	// the call in flight fails, saying why.
	wg.Wait()
	var se *mcp.StallError
	if !errors.As(waitErr, &se) || se.Server != "frozen" || !errors.As(waitErr, &ce) || ce.Kind != mcp.KindConnection {
		t.Fatalf("call in flight on the frozen server: %v; want a *StallError of kind connection", waitErr)
	}
	waitFor(t, "the frozen process to be reaped", func() bool { return pidGone(first.PID) })
	h := health(t, m, "frozen")
	if h.Timeouts != 1 || h.Restarts != 1 || h.Failures < 2 || h.Available() || !strings.Contains(h.LastError, "stopped answering") {
		t.Fatalf("health after the stall = %+v; want 1 timeout, 1 restart, 2+ failures, unavailable, the stall as last error", h)
	}
	err = call("ok")
	if breakerStillOpen(t, h, r.Breaker.RecoveryTime) {
		if h.State != mcp.HealthOpen {
			t.Fatalf("health state %q after two failures; want the breaker open", h.State)
		}
		if !errors.Is(err, mcp.ErrCircuitOpen) {
			t.Fatalf("call with the breaker open: %v; want ErrCircuitOpen", err)
		}
	}

	// Once the breaker cools down, a new process answers.
	waitFor(t, "a call to succeed after the breaker cools down", func() bool { return call("ok") == nil })
	h = health(t, m, "frozen")
	if h.State != mcp.HealthHealthy || h.PID == 0 || h.PID == first.PID || h.Failures != 0 {
		t.Fatalf("health after recovery = %+v; want healthy, a new PID, no failures", h)
	}
	checkNoLeaks(t, m, ignore, kids, nil)
}

// TestOversizedMessages: a 400 MB line is cut at MaxMessageBytes (not
// buffered whole), fails the call with a *LimitError that names the server
// and the limit, and the next call reaches a new process; a result over
// MaxResultBytes fails its call and leaves the connection alone.
func TestOversizedMessages(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	kids := children(t)
	const maxMsg, maxResult = 4 << 20, 1 << 20
	m := newManager(t, mcp.ManagerConfig{MaxMessageBytes: maxMsg, MaxResultBytes: maxResult}, badStdioServer("flood", 0))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.CallTool(ctx, mcp.ToolCall{Server: "flood", Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	first := health(t, m, "flood")
	if first.MaxMessageBytes != maxMsg || first.MaxResultBytes != maxResult {
		t.Fatalf("health limits = %d, %d; want %d, %d", first.MaxMessageBytes, first.MaxResultBytes, maxMsg, maxResult)
	}

	var peak uint64
	_, err := s.CallTool(ctx, mcp.ToolCall{Server: "flood", Name: "flood"})
	var le *mcp.LimitError
	if !errors.As(err, &le) || le.Server != "flood" || le.Limit != "MaxMessageBytes" || le.Max != maxMsg {
		t.Fatalf("flooded call: %v; want a *LimitError for MaxMessageBytes", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"flood"`) || !strings.Contains(msg, "MaxMessageBytes") || !strings.Contains(msg, strconv.Itoa(maxMsg)) {
		t.Errorf("error %q does not name the server, the limit and its value", msg)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak = ms.HeapSys
	if peak > 256<<20 {
		t.Errorf("heap reached %d bytes for a 400 MB line cut at 4 MiB; want it never buffered whole", peak)
	}
	waitFor(t, "the flooding process to be reaped", func() bool { return pidGone(first.PID) })
	if h := health(t, m, "flood"); h.Restarts != 1 || !strings.Contains(h.LastError, "MaxMessageBytes") {
		t.Errorf("health after the flood = %+v; want 1 restart and the limit as last error", h)
	}
	if _, err := s.CallTool(ctx, mcp.ToolCall{Server: "flood", Name: "ok"}); err != nil {
		t.Fatalf("call after the flood: %v", err)
	}
	second := health(t, m, "flood")
	if second.PID == first.PID || second.State != mcp.HealthHealthy {
		t.Fatalf("health after the flood and a call = %+v; want a new process, healthy", second)
	}

	_, err = s.CallTool(ctx, mcp.ToolCall{Server: "flood", Name: "huge", Arguments: map[string]any{"bytes": 2 << 20}})
	if !errors.As(err, &le) || le.Limit != "MaxResultBytes" || le.Max != maxResult || !strings.Contains(err.Error(), "MaxResultBytes") {
		t.Fatalf("huge result: %v; want a *LimitError for MaxResultBytes", err)
	}
	if _, err := s.CallTool(ctx, mcp.ToolCall{Server: "flood", Name: "ok"}); err != nil {
		t.Fatalf("call after the huge result: %v", err)
	}
	if h := health(t, m, "flood"); h.PID != second.PID {
		t.Errorf("the huge result restarted the server (PID %d, was %d); it answered, so it should not", h.PID, second.PID)
	}
	checkNoLeaks(t, m, ignore, kids, nil)
}

// TestHungHTTPServerReconnected: a streamable HTTP server that stops
// answering. The call runs out of time, the ping after it too, the manager
// drops the connection, and once the server answers again the next call
// reconnects.
func TestHungHTTPServerReconnected(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	h := server.NewStreamableHTTPServer(testserver.New("web").MCP)
	var frozen atomic.Bool
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if frozen.Load() && r.Method == http.MethodPost {
			// Never answers. Reading the body lets the server notice
			// when the client gives up and closes the connection.
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	stop := sync.OnceFunc(func() {
		close(release)
		hs.Close()
		// The manager's default HTTP client keeps idle connections.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	})
	defer stop()
	srv := mcp.Server{Name: "web", URL: hs.URL, NoListen: true, CallTimeout: 3 * time.Second}
	m := newManager(t, mcp.ManagerConfig{PingTimeout: 3 * time.Second}, srv)
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	echo := func() error {
		_, err := s.CallTool(ctx, mcp.ToolCall{Server: "web", Name: "echo", Arguments: map[string]any{"text": "hi"}})
		return err
	}
	if err := echo(); err != nil {
		t.Fatal(err)
	}
	frozen.Store(true)
	var te *mcp.TimeoutError
	if err := echo(); !errors.As(err, &te) {
		t.Fatalf("call to the frozen server: %v; want a *TimeoutError", err)
	}
	waitFor(t, "the stalled connection to be dropped", func() bool {
		h := health(t, m, "web")
		return h.Restarts == 1 && !h.Connected
	})
	if h := health(t, m, "web"); h.Timeouts != 1 || h.Available() || !strings.Contains(h.LastError, "stopped answering") {
		t.Fatalf("health after the stall = %+v; want 1 timeout, unavailable, the stall as last error", h)
	}
	frozen.Store(false)
	waitFor(t, "a call to succeed once the server answers again", func() bool { return echo() == nil })
	if h := health(t, m, "web"); h.State != mcp.HealthHealthy || !h.Connected {
		t.Fatalf("health after recovery = %+v; want healthy and connected", h)
	}
	checkNoLeaks(t, m, ignore, -1, stop)
}

// TestElicitationPausesCallTimeout: a call waiting for a person's answer is
// not a slow server. The answer comes after the call's time limit has
// passed, and the call still succeeds.
func TestElicitationPausesCallTimeout(t *testing.T) {
	for _, tr := range transports(t, "demo") {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			const limit = 4 * time.Second
			srv := tr.server
			srv.CallTimeout = limit
			m := newManager(t, mcp.ManagerConfig{}, srv)
			s := m.NewSession(mcp.Callbacks{
				Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
					select {
					case <-time.After(limit + 2*time.Second): // the person takes longer than the limit
					case <-ctx.Done():
						return elicit.Response{}, ctx.Err()
					}
					return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "ada"}}, nil
				},
			})
			defer s.Close()
			res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "ask"})
			if err != nil {
				t.Fatalf("call waiting for an answer past its time limit: %v", err)
			}
			if !strings.Contains(res.Text(), "hello ada") {
				t.Fatalf("result %q; want the answer used", res.Text())
			}
			if h := health(t, m, "demo"); h.Timeouts != 0 {
				t.Errorf("Health.Timeouts = %d; want 0", h.Timeouts)
			}
		})
	}
}
