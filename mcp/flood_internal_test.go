package mcp

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/operator/elicit"

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
	for _, toolFails := range []bool{false, true} {
		t.Run(map[bool]string{false: "result", true: "isError"}[toolFails], func(t *testing.T) {
			testCallGivesUpOnQueuedProgress(t, toolFails, false)
		})
	}
	t.Run("shutdown", func(t *testing.T) { testCallGivesUpOnQueuedProgress(t, false, true) })
}

// testCallGivesUpOnQueuedProgress: the result that came is returned with
// ErrCallbacksDropped (the tool ran), and no callback of the call follows
// its end: not even the Error of a tool that reported failure. With
// shutdown, the manager's Shutdown rather than the caller gives up.
func testCallGivesUpOnQueuedProgress(t *testing.T, toolFails, shutdown bool) {
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
		if toolFails {
			return mcpgo.NewToolResultError("failed"), nil
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
	var delivered, errorsDelivered atomic.Int64
	s := m.NewSession(Callbacks{Progress: func(_ context.Context, _ Progress) {
		if delivered.Add(1) == 1 {
			close(entered)
			<-release
		}
	}, Error: func(_ context.Context, e *CallError) {
		t.Logf("Error callback: %v", e)
		errorsDelivered.Add(1)
	}})
	defer s.Close()
	unstick := sync.OnceFunc(func() { close(release) })
	defer unstick() // before Close, which waits for the callback
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		err   error
		isErr bool
		text  string
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.CallTool(ctx, ToolCall{Server: "burst", Name: "burst"})
		done <- outcome{err, res.IsError, res.Text()}
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
	theConn := theCall().conn
	if shutdown {
		shut := make(chan error, 1)
		go func() { shut <- m.Shutdown(context.Background()) }()
		defer func() {
			if err := <-shut; err != nil {
				t.Errorf("shutdown: %v", err)
			}
		}()
	} else {
		cancel()
	}
	poll(t, "the call to give up on its queued progress", func() bool {
		cl := theCall()
		cl.session.mu.Lock()
		defer cl.session.mu.Unlock()
		return cl.abandoned
	})
	unstick()
	out := <-done
	var ce *CallError
	if !errors.As(out.err, &ce) || ce.Kind != KindCancelled || !errors.Is(out.err, context.Canceled) || !errors.Is(out.err, ErrCallbacksDropped) {
		t.Fatalf("call cancelled while its progress was delivered: %v; want a *CallError of kind cancelled wrapping ErrCallbacksDropped", out.err)
	}
	wantText := map[bool]string{false: "done", true: "failed"}[toolFails]
	if out.isErr != toolFails || out.text != wantText {
		t.Fatalf("result IsError %v text %q; want the result that came (IsError %v, %q)", out.isErr, out.text, toolFails, wantText)
	}
	s.Close() // every callback queued has run
	if got := errorsDelivered.Load(); got != 0 {
		t.Fatalf("%d Error callbacks after the call gave up; want none (a cancelled call is not an error)", got)
	}
	if got, dropped := delivered.Load(), theConn.droppedProgress.Load(); got != 1 || dropped != n-1 {
		t.Fatalf("%d notifications delivered, %d dropped; want the one in the callback delivered and the %d queued behind it dropped", got, dropped, n-1)
	}
}

// TestWithdrawnElicitationNeverReachesTheUser: a question that waits for
// its call's progress to be delivered, and whose call ends meanwhile, is
// answered "cancel" without the Elicit callback being called.
func TestWithdrawnElicitationNeverReachesTheUser(t *testing.T) {
	srv := server.NewMCPServer("ask", "1.0.0", server.WithElicitation())
	answered := make(chan string, 1)
	srv.AddTool(mcpgo.NewTool("ask"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": req.Params.Meta.ProgressToken, "progress": 1})
		res, err := srv.RequestElicitation(context.WithoutCancel(ctx), mcpgo.ElicitationRequest{Params: mcpgo.ElicitationParams{
			Message: "name?", RequestedSchema: map[string]any{"type": "object"}}})
		if err != nil {
			answered <- err.Error()
		} else {
			answered <- string(res.Action)
		}
		return mcpgo.NewToolResultText("done"), nil
	})
	m, err := NewManager(ManagerConfig{ProgressLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "ask", InProcess: srv}); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var asked atomic.Int64
	s := m.NewSession(Callbacks{Progress: func(_ context.Context, _ Progress) {
		close(entered)
		<-release
	}, Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
		asked.Add(1)
		return elicit.Response{Action: elicit.Decline}, nil
	}})
	defer s.Close()
	unstick := sync.OnceFunc(func() { close(release) })
	defer unstick()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, ToolCall{Server: "ask", Name: "ask"})
		done <- err
	}()
	<-entered
	// The question waits for the progress before it to be delivered.
	poll(t, "the question to wait", func() bool {
		h, _ := m.ServerHealth("ask")
		return h.Waiting == 1
	})
	cancel()
	unstick() // the call waits for the callback running
	<-done
	if got := <-answered; got != string(elicit.Cancel) {
		t.Fatalf("the server's withdrawn question was answered %q; want %q", got, elicit.Cancel)
	}
	s.Close()
	if n := asked.Load(); n != 0 {
		t.Fatalf("the Elicit callback was called %d times for a question withdrawn before it reached the user; want 0", n)
	}
}

// TestProgressAfterCloseIsNotCountedAsBehind: progress for a call of a
// closed session is dropped without being counted in DroppedProgress,
// which says the session's callback is behind.
func TestProgressAfterCloseIsNotCountedAsBehind(t *testing.T) {
	srv := server.NewMCPServer("slow", "1.0.0")
	started := make(chan struct{})
	srv.AddTool(mcpgo.NewTool("slow"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	m, err := NewManager(ManagerConfig{ProgressLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "slow", InProcess: srv}); err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(Callbacks{Progress: func(_ context.Context, _ Progress) {}})
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.CallTool(context.Background(), ToolCall{Server: "slow", Name: "slow"})
	}()
	defer func() {
		s.cancel() // the rest of Close
		<-done
	}()
	<-started
	var token string
	m.routesMu.RLock()
	for tok := range m.routes {
		token = tok
	}
	m.routesMu.RUnlock()
	c, err := m.conn("slow")
	if err != nil {
		t.Fatal(err)
	}
	// Close has marked the session closed and not yet cancelled its call.
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	n := mcpgo.JSONRPCNotification{Notification: mcpgo.Notification{Method: "notifications/progress"}}
	n.Params.AdditionalFields = map[string]any{"progressToken": token, "progress": 1}
	c.notify(nil, n)
	if h, _ := m.ServerHealth("slow"); h.DroppedProgress != 0 {
		t.Fatalf("progress for a closed session counted in DroppedProgress (%d); want 0: the callback is not behind", h.DroppedProgress)
	}
}
