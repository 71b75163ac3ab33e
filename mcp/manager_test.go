package mcp_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// waitFor polls cond until it holds. The deadline is generous: it only
// bounds how long a broken test hangs, and a loaded machine may be slow.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func health(t *testing.T, m *mcp.Manager, server string) mcp.Health {
	t.Helper()
	h, err := m.ServerHealth(server)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// breakerStillOpen reports whether a server's breaker, opened by the
// failure h records last, must still be open: less than recovery has
// passed since h.LastErrorAt. The manager records a failure before its
// call returns to the breaker, and an open breaker runs no call that could
// fail, so the breaker opened no earlier than that. A test checks an open
// breaker only then: on a machine loaded enough to get there later, the
// breaker has rightly half-opened, and the check is logged as skipped.
func breakerStillOpen(t *testing.T, h mcp.Health, recovery time.Duration) bool {
	t.Helper()
	if passed := time.Since(h.LastErrorAt); passed >= recovery {
		t.Logf("%v passed since the breaker of %s opened, RecoveryTime is %v: it may have half-opened; the open breaker is not checked", passed, h.Server, recovery)
		return false
	}
	return true
}

func echo(ctx context.Context, s *mcp.Session, server, text string) (*toolresult.Result, error) {
	return s.CallTool(ctx, mcp.ToolCall{Server: server, Name: "echo", Arguments: map[string]any{"text": text}})
}

func TestCrashReconnect(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{}, stdioServer("crashy"))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	if _, err := echo(ctx, s, "crashy", "hi"); err != nil {
		t.Fatal(err)
	}
	h := health(t, m, "crashy")
	if h.State != mcp.HealthHealthy || h.PID == 0 || h.Protocol != mcp.ProtocolLegacy {
		t.Fatalf("health after a call = %+v", h)
	}
	pid := h.PID

	res, err := s.CallTool(ctx, mcp.ToolCall{Server: "crashy", Name: "crash"})
	var ce *mcp.CallError
	if !errors.As(err, &ce) || ce.Kind != mcp.KindConnection || !res.IsError {
		t.Fatalf("crash: %v (%+v), want a connection CallError", err, res)
	}
	h = health(t, m, "crashy")
	// One failure: a call that may have had effects is not retried.
	if h.State != mcp.HealthUnhealthy || h.Failures != 1 || h.Connected || h.Available() {
		t.Errorf("health after the crash = %+v", h)
	}
	waitFor(t, "the crashed server to be reaped", func() bool { return pidGone(pid) })

	res, err = echo(ctx, s, "crashy", "again")
	if err != nil || res.Text() != "again" {
		t.Fatalf("call after the crash: %v, %+v", err, res)
	}
	h = health(t, m, "crashy")
	if h.State != mcp.HealthHealthy || h.PID == pid || h.PID == 0 {
		t.Errorf("health after reconnecting = %+v (old pid %d)", h, pid)
	}
}

func TestRetryOfReadOnlyTool(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{}, stdioServer("flaky"))
	r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.Tools(ctx); err != nil { // learns echo is read-only
		t.Fatal(err)
	}
	pid := health(t, m, "flaky").PID
	if err := killPID(pid); err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := echo(ctx, s, "flaky", "retried")
	if err != nil || res.Text() != "retried" {
		t.Fatalf("read-only call over a dead connection: %v, %+v; want a transparent retry", err, res)
	}
	if h := health(t, m, "flaky"); h.PID == pid || h.State != mcp.HealthHealthy {
		t.Errorf("health = %+v", h)
	}
}

func TestBreaker(t *testing.T) {
	retry := fastRetry()
	retry.Breaker.FailureThreshold = 2
	retry.Breaker.RecoveryTime = 200 * time.Millisecond
	m := newManager(t, mcp.ManagerConfig{Resilience: retry}, stdioServer("crashy"))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	for range 2 {
		if _, err := s.CallTool(ctx, mcp.ToolCall{Server: "crashy", Name: "crash"}); err == nil {
			t.Fatal("crash returned no error")
		}
	}
	opened := health(t, m, "crashy")
	_, err := echo(ctx, s, "crashy", "x")
	h := health(t, m, "crashy")
	if breakerStillOpen(t, opened, retry.Breaker.RecoveryTime) {
		var ce *mcp.CallError
		if !errors.Is(err, mcp.ErrCircuitOpen) || !errors.As(err, &ce) || ce.Kind != mcp.KindConnection {
			t.Fatalf("call with the breaker open: %v, want ErrCircuitOpen", err)
		}
		if h.State != mcp.HealthOpen || h.Available() {
			t.Errorf("health = %+v, want open", h)
		}
	}
	time.Sleep(retry.Breaker.RecoveryTime)
	if _, err := echo(ctx, s, "crashy", "x"); err != nil {
		t.Fatalf("call after the cool-down: %v", err)
	}
}

func TestConnectFailure(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "missing", Command: "/nonexistent/mcp-server"})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	_, err := echo(context.Background(), s, "missing", "x")
	var ce *mcp.CallError
	if !errors.As(err, &ce) || ce.Kind != mcp.KindConnection {
		t.Fatalf("err = %v, want a connection CallError", err)
	}
	if h := health(t, m, "missing"); h.Failures != 3 || h.LastError == "" {
		t.Errorf("health = %+v; want 3 failed attempts (connecting is always retried)", h)
	}
}

func TestShutdown(t *testing.T) {
	t.Run("waits for calls in flight", func(t *testing.T) {
		ts := testserver.New("demo")
		m, _ := mcp.NewManager(mcp.ManagerConfig{})
		if err := m.Add(mcp.Server{Name: "demo", InProcess: ts.MCP}, stdioServer("sub")); err != nil {
			t.Fatal(err)
		}
		s := m.NewSession(mcp.Callbacks{})
		defer s.Close()
		if _, err := echo(context.Background(), s, "sub", "x"); err != nil {
			t.Fatal(err)
		}
		pid := health(t, m, "sub").PID
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "slow", Arguments: map[string]any{"ms": 50}})
			done <- err
		}()
		waitFor(t, "the call to start", func() bool { return ts.Active.Load() == 1 })
		if err := m.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Errorf("call in flight during Shutdown: %v", err)
		}
		if !pidGone(pid) {
			t.Errorf("subprocess %d still exists after Shutdown", pid)
		}
		if _, err := echo(context.Background(), s, "demo", "x"); !errors.Is(err, mcp.ErrShutdown) {
			t.Errorf("call after Shutdown: %v, want ErrShutdown", err)
		}
		if err := m.Add(stdioServer("late")); !errors.Is(err, mcp.ErrShutdown) {
			t.Errorf("Add after Shutdown: %v", err)
		}
	})
	t.Run("cancels calls at the deadline", func(t *testing.T) {
		m, _ := mcp.NewManager(mcp.ManagerConfig{})
		if err := m.Add(stdioServer("sub")); err != nil {
			t.Fatal(err)
		}
		s := m.NewSession(mcp.Callbacks{})
		defer s.Close()
		if _, err := echo(context.Background(), s, "sub", "x"); err != nil {
			t.Fatal(err)
		}
		pid := health(t, m, "sub").PID
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "sub", Name: "slow", Arguments: map[string]any{"ms": 30000}})
			done <- err
		}()
		waitFor(t, "the call to start", func() bool { return health(t, m, "sub").InFlight == 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := m.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Shutdown took %v", d)
		}
		if err := <-done; err == nil {
			t.Error("call outlived Shutdown")
		}
		// The deadline left the reaping to finish in the background; a
		// later Shutdown waits for it.
		if err := m.Shutdown(context.Background()); err != nil {
			t.Errorf("second Shutdown: %v", err)
		}
		if !pidGone(pid) {
			t.Errorf("subprocess %d still exists after Shutdown", pid)
		}
	})
}

func TestServerLogsGoToTheLogger(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	m := newManager(t, mcp.ManagerConfig{Logger: zap.New(core)}, stdioServer("demo"))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	if _, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "log", Arguments: map[string]any{"text": "disk almost full"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server's log entry", func() bool {
		for _, e := range logs.FilterMessage("mcp server log").All() {
			f := e.ContextMap()
			if e.Level == zap.ErrorLevel && f["data"] == "disk almost full" && f["mcp_server"] == "demo" && f["logger"] == "testserver" {
				return true
			}
		}
		return false
	})
}

// TestServerLogFlood: a server that floods the log with notifications at
// a level the protocol does not define, each with 64 KiB of data, is
// logged below Error, with its data cut (whole UTF-8 characters), and
// what its budget suppresses is counted (TestLogBudget checks the budget
// on a clock of its own).
func TestServerLogFlood(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	m := newManager(t, mcp.ManagerConfig{Logger: zap.New(core)}, stdioServer("demo"))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	const sent = 200
	args := map[string]any{"level": "bogus", "count": sent, "text": "é", "repeat": 32 << 10}
	if _, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "log", Arguments: args}); err != nil {
		t.Fatal(err)
	}
	var entries []observer.LoggedEntry
	waitFor(t, "every notification logged or counted", func() bool {
		entries = logs.FilterMessage("mcp server log").All()
		return int64(len(entries))+health(t, m, "demo").SuppressedLogs == sent
	})
	for _, e := range entries {
		f := e.ContextMap()
		if e.Level != zap.WarnLevel || f["level"] != "bogus" {
			t.Fatalf("entry at %v with level %v, want Warn, bogus", e.Level, f["level"])
		}
		data, _ := f["data"].(map[string]any)
		text, _ := data["text"].(string)
		if len(text) == 0 || len(text) > 4<<10 || !utf8.ValidString(text) || data["bytes"] != int64(64<<10) {
			t.Fatalf("data of %d bytes (valid UTF-8: %v, whole: %v), want at most 4 KiB of whole characters and the size", len(text), utf8.ValidString(text), data["bytes"])
		}
	}
}

func TestHTTPSessionExpiry(t *testing.T) {
	ts := testserver.New("remote")
	hs := ts.HTTP()
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "remote", URL: hs.URL})
	r, _ := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	ctx := context.Background()
	if _, err := r.Tools(ctx); err != nil { // learns echo is read-only
		t.Fatal(err)
	}
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	if _, err := echo(ctx, s, "remote", "before"); err != nil {
		t.Fatal(err)
	}
	// The server forgets the session (restart, expiry): mcp-go only reports
	// 404; the manager reconnects and retries the read-only call.
	hs.ExpireSessions()
	res, err := echo(ctx, s, "remote", "after")
	if err != nil || res.Text() != "after" {
		t.Fatalf("call after the session expired: %v %+v", err, res)
	}
	if h := health(t, m, "remote"); h.State != mcp.HealthHealthy || !h.Connected {
		t.Errorf("health = %+v", h)
	}
}

// A call that is not safe to repeat is sent again on a new session when the
// server answered 404 for the session: the server did not process it.
func TestHTTPSessionExpiryRetriesUnsafeCall(t *testing.T) {
	ts := testserver.New("remote")
	// A server that knows the sessions it issued, and answers 404 for the
	// others (testserver's HTTP accepts any).
	h := server.NewStreamableHTTPServer(ts.MCP, server.WithStateful(true))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "remote", URL: hs.URL, NoListen: true})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	progress := func() error {
		_, err := s.CallTool(ctx, mcp.ToolCall{Server: "remote", Name: "progress", Arguments: map[string]any{"steps": 1}})
		return err
	}
	if err := progress(); err != nil {
		t.Fatal(err)
	}
	h.CloseSessions(ctx) // the server forgets the session (expiry, restart)
	before := ts.Calls.Load()
	if err := progress(); err != nil {
		t.Fatalf("call after the session expired: %v", err)
	}
	if n := ts.Calls.Load() - before; n != 1 {
		t.Errorf("the server ran the call %d times, want 1", n)
	}
}

func TestCheck(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{}, stdioServer("demo"), mcp.Server{Name: "missing", Command: "/nonexistent/mcp-server"})
	ctx := context.Background()
	h, err := m.Check(ctx, "demo")
	if err != nil || h.State != mcp.HealthHealthy || !h.Connected || h.PID == 0 {
		t.Fatalf("Check(demo) = %+v, %v", h, err)
	}
	// The subprocess dies between calls: the check notices, the next one
	// reconnects.
	if err := killPID(h.PID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the check to notice", func() bool {
		h, err := m.Check(ctx, "demo")
		return err != nil && h.State == mcp.HealthUnhealthy
	})
	if h, err := m.Check(ctx, "demo"); err != nil || h.State != mcp.HealthHealthy {
		t.Errorf("Check after reconnecting = %+v, %v", h, err)
	}
	if h, err := m.Check(ctx, "missing"); err == nil || h.State != mcp.HealthUnhealthy || h.LastError == "" {
		t.Errorf("Check(missing) = %+v, %v", h, err)
	}
	var unknown *mcp.UnknownServerError
	if _, err := m.Check(ctx, "nope"); !errors.As(err, &unknown) {
		t.Errorf("Check(nope) = %v", err)
	}
}

// A tool call over HTTP made under a span carries the span's trace context
// in a traceparent header; one made without a span carries none.
func TestHTTPTraceContext(t *testing.T) {
	ts := testserver.New("remote")
	hs := ts.HTTP()
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "remote", URL: hs.URL})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "agent turn")
	if _, err := echo(ctx, s, "remote", "traced"); err != nil {
		t.Fatal(err)
	}
	span.End()
	if _, err := echo(context.Background(), s, "remote", "untraced"); err != nil {
		t.Fatal(err)
	}
	sc := span.SpanContext()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	if got := ts.Traceparents(); len(got) != 2 || got[0] != want || got[1] != "" {
		t.Fatalf("traceparents seen by the server = %q, want [%q \"\"]", got, want)
	}
}
