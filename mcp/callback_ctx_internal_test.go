package mcp

import (
	"context"
	"errors"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// progressManager returns a manager with one in-process server whose tool
// "tick" sends one progress notification and then returns.
func progressManager(t *testing.T, log *zap.Logger) *Manager {
	t.Helper()
	srv := server.NewMCPServer("ticker", "1.0.0")
	srv.AddTool(mcpgo.NewTool("tick"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "total": 2})
		if err != nil {
			return nil, err
		}
		return mcpgo.NewToolResultText("done"), nil
	})
	m, err := NewManager(ManagerConfig{Logger: log, ProgressLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	if err := m.Add(Server{Name: "ticker", InProcess: srv}); err != nil {
		t.Fatal(err)
	}
	return m
}

// awaitClosed waits for done, failing the test if it does not come:
// what it waits for would otherwise hang forever.
func awaitClosed(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s still blocked after a minute", what)
	}
}

// TestCallbackContextEnds: a Progress callback that blocks until its
// context ends (a reporter whose consumer went away) is released when the
// caller gives up on the call, and when the session closes; neither the
// call nor Close hangs on it.
func TestCallbackContextEnds(t *testing.T) {
	for _, how := range []string{"call ctx", "session close"} {
		t.Run(how, func(t *testing.T) {
			m := progressManager(t, nil)
			entered, released := make(chan struct{}), make(chan error, 1)
			s := m.NewSession(Callbacks{Progress: func(ctx context.Context, _ Progress) {
				close(entered)
				<-ctx.Done()
				released <- ctx.Err()
			}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			called := make(chan struct{})
			var err error
			go func() {
				defer close(called)
				_, err = s.CallTool(ctx, ToolCall{Server: "ticker", Name: "tick"})
			}()
			<-entered
			closed := make(chan struct{})
			if how == "call ctx" {
				cancel()
				awaitClosed(t, "CallTool after its ctx ended", called)
				go func() { s.Close(); close(closed) }()
			} else {
				go func() { s.Close(); close(closed) }()
				awaitClosed(t, "CallTool after its session closed", called)
			}
			awaitClosed(t, "Close", closed)
			if cerr := <-released; !errors.Is(cerr, context.Canceled) {
				t.Errorf("callback context ended with %v; want context.Canceled", cerr)
			}
			// Once the session closed, the callbacks still queued may
			// run (with their context ended) before the call gives up.
			if how == "call ctx" && !errors.Is(err, context.Canceled) {
				t.Errorf("call: %v; want an error wrapping context.Canceled", err)
			}
		})
	}
}

// TestCallbackIgnoringContext: a callback that ignores its context does
// not hold the call nor Close past the grace; the manager logs that it was
// left running.
func TestCallbackIgnoringContext(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	m := progressManager(t, zap.New(core))
	m.callbackGrace = time.Millisecond
	entered, release := make(chan struct{}), make(chan struct{})
	s := m.NewSession(Callbacks{Progress: func(context.Context, Progress) {
		close(entered)
		<-release
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan struct{})
	go func() {
		defer close(called)
		_, _ = s.CallTool(ctx, ToolCall{Server: "ticker", Name: "tick"})
	}()
	<-entered
	cancel()
	awaitClosed(t, "CallTool whose callback ignores its ctx", called)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	awaitClosed(t, "Close while a callback ignores its ctx", closed)
	var left int
	for _, e := range logs.All() {
		if e.ContextMap()["tool"] == "tick" {
			left++
		}
	}
	if left == 0 {
		t.Errorf("no warning names the callback left running; logged: %v", logs.All())
	}
	// The callback left running still ends: the session's callback
	// goroutine is gone once it returns.
	close(release)
	s.runner.Wait()
}
