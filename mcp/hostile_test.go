package mcp_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// tokenServer is an MCP server whose tool "hold" hands the call's progress
// token to the test and answers once released, and whose tool "spoof"
// sends progress for the token given as its argument.
type tokenServer struct {
	srv     *server.MCPServer
	tokens  chan string
	release chan struct{}
}

func newTokenServer(name string) *tokenServer {
	ts := &tokenServer{srv: server.NewMCPServer(name, "1.0.0"), tokens: make(chan string, 16), release: make(chan struct{})}
	ts.srv.AddTool(mcpgo.NewTool("hold"), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		token := ""
		if req.Params.Meta != nil {
			token, _ = req.Params.Meta.ProgressToken.(string)
		}
		ts.tokens <- token
		select {
		case <-ts.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mcpgo.NewToolResultText("held"), nil
	})
	ts.srv.AddTool(mcpgo.NewTool("spoof", mcpgo.WithString("token")), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		for i := range 3 {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.GetString("token", ""), "progress": i, "total": 3, "message": "spoofed"})
		}
		return mcpgo.NewToolResultText("sent"), nil
	})
	ts.srv.AddTool(mcpgo.NewTool("flood", mcpgo.WithNumber("n")), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if err := sendProgress(ctx, req, int(req.GetFloat("n", 1))); err != nil {
			return nil, err
		}
		return mcpgo.NewToolResultText("flooded"), nil
	})
	return ts
}

// sendProgress sends n progress notifications for req's token, waiting
// rather than dropping one when the in-process session's channel is full.
func sendProgress(ctx context.Context, req mcpgo.CallToolRequest, n int) error {
	srv := server.ServerFromContext(ctx)
	for i := range n {
		for {
			err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "total": n})
			if !errors.Is(err, server.ErrNotificationChannelBlocked) {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			runtime.Gosched()
		}
	}
	return nil
}

// TestProgressOfAnotherServerDropped: a server that names the progress
// token of a call made to another server (here it is told the token; a
// real one would guess) does not reach that call's session.
func TestProgressOfAnotherServerDropped(t *testing.T) {
	victim, attacker := newTokenServer("victim"), newTokenServer("attacker")
	m := newManager(t, mcp.ManagerConfig{},
		mcp.Server{Name: "victim", InProcess: victim.srv}, mcp.Server{Name: "attacker", InProcess: attacker.srv})
	var mu sync.Mutex
	var seen []mcp.Progress
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, p mcp.Progress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	}})
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "victim", Name: "hold"})
		done <- err
	}()
	token := <-victim.tokens
	if token == "" {
		t.Fatal("the call to the victim carried no progress token")
	}
	// The attacker's call runs in a session of its own, with a progress
	// callback so that its progress is routed too.
	other := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) {}})
	defer other.Close()
	if _, err := other.CallTool(context.Background(), mcp.ToolCall{Server: "attacker", Name: "spoof", Arguments: map[string]any{"token": token}}); err != nil {
		t.Fatal(err)
	}
	// The in-process transport hands the attacker's notifications over
	// before its result: they have all been routed by now.
	close(victim.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Fatalf("the victim's session received %d progress notifications the attacker sent (first %+v); want none", len(seen), seen[0])
	}
}

// TestProgressTokensUnpredictable: progress tokens do not follow a
// sequence a server could guess from its own: the first call of two
// managers carries different tokens.
func TestProgressTokensUnpredictable(t *testing.T) {
	var tokens []string
	for range 2 {
		ts := newTokenServer("demo")
		m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.srv})
		s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) {}})
		close(ts.release)
		if _, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "hold"}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		tokens = append(tokens, <-ts.tokens)
	}
	if tokens[0] == tokens[1] || len(tokens[0]) < 20 {
		t.Fatalf("first tokens of two managers: %q and %q; want different tokens of 128 random bits", tokens[0], tokens[1])
	}
}

// TestProgressFloodBounded: a server sends progress far faster than the
// session's callback takes it. At most MaxQueuedProgress notifications
// wait for the callback; the others are dropped and counted, and the call
// returns once the few queued ones are delivered.
func TestProgressFloodBounded(t *testing.T) {
	const n, queue = 300, 16
	ts := newTokenServer("flood")
	m := newManager(t, mcp.ManagerConfig{MaxQueuedProgress: queue}, mcp.Server{Name: "flood", InProcess: ts.srv})
	entered, release := make(chan struct{}), make(chan struct{})
	var delivered atomic.Int64
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, p mcp.Progress) {
		if delivered.Add(1) == 1 {
			close(entered)
			<-release // the callback is stuck while the flood arrives
		}
	}})
	defer s.Close()
	unstick := sync.OnceFunc(func() { close(release) })
	defer unstick() // before Close, which waits for the callback
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "flood", Name: "flood", Arguments: map[string]any{"n": n}})
		done <- err
	}()
	<-entered
	// The first notification is in the callback, up to queue more wait,
	// the rest are dropped.
	waitFor(t, "the notifications over the limit to be dropped", func() bool { return health(t, m, "flood").DroppedProgress >= n-1-queue })
	unstick()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h := health(t, m, "flood")
	if got := delivered.Load(); got > queue+1 || got+h.DroppedProgress != n {
		t.Fatalf("%d notifications delivered, %d dropped; want at most %d delivered (the queue and the one in the callback) and %d in all", got, h.DroppedProgress, queue+1, n)
	}
}

// TestServerRequestFloodBounded: a stdio server sends a burst of
// elicitation requests without reading the answers. At most
// MaxServerRequests reach the Elicit callback (and get a goroutine); the
// others are answered at once with a JSON-RPC error naming the limit,
// counted in Health.RejectedRequests and logged through the manager's
// logger.
func TestServerRequestFloodBounded(t *testing.T) {
	const n, limit = 100, 4
	core, logs := observer.New(zap.WarnLevel)
	var inside, most atomic.Int64
	release := make(chan struct{})
	unstick := sync.OnceFunc(func() { close(release) })
	defer unstick()
	cfg := mcp.ManagerConfig{Logger: zap.New(core), MaxServerRequests: limit,
		Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
			now := inside.Add(1)
			defer inside.Add(-1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return elicit.Response{Action: elicit.Decline}, nil
		}}
	m := newManager(t, cfg, badStdioServer("asker", 0))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx := context.Background()
	if _, err := s.CallTool(ctx, mcp.ToolCall{Server: "asker", Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	res, err := s.CallTool(ctx, mcp.ToolCall{Server: "asker", Name: "requests", Arguments: map[string]any{"n": n, "method": "elicitation/create"}})
	if err != nil || res.Text() != "sent" {
		t.Fatalf("flooding call: %v, %q", err, res.Text())
	}
	// The server wrote its requests before the call's answer, so every one
	// has been taken in or refused by now.
	waitFor(t, "the callbacks to start", func() bool { return inside.Load() >= limit })
	if g := runtime.NumGoroutine(); g > before+n/2 {
		t.Errorf("%d goroutines during a burst of %d requests, %d before; want about one per request taken in (%d)", g, n, before, limit)
	}
	if h := health(t, m, "asker"); h.RejectedRequests != n-limit {
		t.Errorf("Health.RejectedRequests = %d; want %d (all but the %d taken in)", h.RejectedRequests, n-limit, limit)
	}
	res, err = s.CallTool(ctx, mcp.ToolCall{Server: "asker", Name: "refused"})
	if err != nil || res.Text() != strconv.Itoa(n-limit) {
		t.Errorf("the server counts %q answers refusing its requests for MaxServerRequests (%v); want %d", res.Text(), err, n-limit)
	}
	unstick()
	if got := most.Load(); got != limit {
		t.Errorf("at most %d Elicit callbacks ran at once; want %d (MaxServerRequests)", got, limit)
	}
	if logs.FilterMessage("mcp server request refused: too many in flight").Len() == 0 {
		t.Error("the refusals were not logged through ManagerConfig.Logger")
	}
}

// TestElicitationsOverLimitRefused: on every transport that carries the
// server's requests, an elicitation while MaxServerRequests are being
// answered is refused at once, and the server's tool sees why.
func TestElicitationsOverLimitRefused(t *testing.T) {
	for _, tr := range transports(t, "demo") {
		t.Run(tr.name, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			unstick := sync.OnceFunc(func() { close(release) })
			defer unstick()
			m := newManager(t, mcp.ManagerConfig{MaxServerRequests: 1}, tr.server)
			enter := sync.OnceFunc(func() { close(entered) })
			s := m.NewSession(mcp.Callbacks{Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
				enter() // the second elicitation is refused before it gets here
				select {
				case <-release:
				case <-ctx.Done():
				}
				return elicit.Response{Action: elicit.Decline}, nil
			}})
			defer s.Close()
			ctx := context.Background()
			first := make(chan error, 1)
			go func() {
				_, err := s.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "ask"})
				first <- err
			}()
			<-entered
			res, err := s.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "ask"})
			if err != nil || !strings.Contains(res.Text(), "MaxServerRequests") {
				t.Errorf("second elicitation while the first waits: %v, %q; want the tool told of the MaxServerRequests limit", err, res.Text())
			}
			if h := health(t, m, "demo"); h.RejectedRequests != 1 {
				t.Errorf("Health.RejectedRequests = %d; want 1", h.RejectedRequests)
			}
			unstick()
			if err := <-first; err != nil {
				t.Fatal(err)
			}
		})
	}
}
