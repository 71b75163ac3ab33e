package mcp

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// poll waits until cond holds, failing the test after a minute.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCallGivesUpOnQueuedProgress: a call has its result while its
// progress still waits for a stuck Progress callback. Once the caller
// gives up, the call's progress still queued is dropped (counted), so the
// call returns, with the context's error, as soon as the callback running
// returns, not after the whole backlog.
func TestCallGivesUpOnQueuedProgress(t *testing.T) {
	const n = 50
	srv := server.NewMCPServer("burst", "1.0.0")
	srv.AddTool(mcpgo.NewTool("burst"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		for i := range n {
			for {
				err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "total": n})
				if !errors.Is(err, server.ErrNotificationChannelBlocked) {
					break
				}
				runtime.Gosched()
			}
		}
		return mcpgo.NewToolResultText("done"), nil
	})
	m, err := NewManager(ManagerConfig{ProgressLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "burst", InProcess: srv}); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var delivered atomic.Int64
	s := m.NewSession(Callbacks{Progress: func(Progress) {
		if delivered.Add(1) == 1 {
			close(entered)
			<-release
		}
	}})
	defer s.Close()
	unstick := sync.OnceFunc(func() { close(release) })
	defer unstick() // before Close, which waits for the callback
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		err   error
		isErr bool
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.CallTool(ctx, ToolCall{Server: "burst", Name: "burst"})
		done <- outcome{err, res.IsError}
	}()
	<-entered
	theCall := func() *call {
		m.routesMu.RLock()
		defer m.routesMu.RUnlock()
		for _, cl := range m.routes {
			return cl
		}
		return nil
	}
	finished := func() bool {
		cl := theCall()
		if cl == nil {
			return false
		}
		cl.mu.Lock()
		defer cl.mu.Unlock()
		return cl.finished
	}
	// The call has its result; its other progress waits behind the stuck
	// callback.
	poll(t, "the call to have its result", finished)
	cancel()
	poll(t, "the call to give up on its queued progress", func() bool { return theCall().abandoned.Load() })
	unstick()
	out := <-done
	var ce *CallError
	if !errors.As(out.err, &ce) || ce.Kind != KindCancelled || !errors.Is(out.err, context.Canceled) || !out.isErr {
		t.Fatalf("call cancelled while its progress was delivered: %v (IsError %v); want a *CallError of kind cancelled", out.err, out.isErr)
	}
	h, _ := m.ServerHealth("burst")
	if got := delivered.Load(); got != 1 || h.DroppedProgress != n-1 {
		t.Fatalf("%d notifications delivered, %d dropped; want the one in the callback delivered and the %d queued behind it dropped", got, h.DroppedProgress, n-1)
	}
}
