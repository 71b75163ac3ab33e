package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
)

// TestProgressTokensExpire: a finished call's token stays routed for
// ProgressLinger, then the sweep unroutes it. The clock is the test's, so
// a slow machine cannot make the tokens expire early.
func TestProgressTokensExpire(t *testing.T) {
	m, err := NewManager(ManagerConfig{ProgressLinger: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	now := time.Now()
	m.lingerMu.Lock()
	m.now = func() time.Time { return now }
	m.lingerMu.Unlock()
	if err := m.Add(Server{Name: "demo", InProcess: testserver.New("demo").MCP}); err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(Callbacks{Progress: func(_ context.Context, _ Progress) {}})
	defer s.Close()
	for range 3 {
		if _, err := s.CallTool(context.Background(), ToolCall{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	routed := func() int {
		m.routesMu.RLock()
		defer m.routesMu.RUnlock()
		return len(m.routes)
	}
	if n := routed(); n != 3 {
		t.Fatalf("%d tokens routed right after the calls, want 3 (they linger)", n)
	}
	sweep := func(at time.Time) {
		m.lingerMu.Lock()
		if m.lingerTimer != nil {
			m.lingerTimer.Stop() // the test sweeps
		}
		m.now = func() time.Time { return at }
		m.lingerMu.Unlock()
		m.sweep()
	}
	sweep(now.Add(time.Minute - time.Nanosecond))
	if n := routed(); n != 3 {
		t.Fatalf("%d tokens routed just before the linger period ends, want 3", n)
	}
	sweep(now.Add(time.Minute))
	if n := routed(); n != 0 {
		t.Fatalf("%d tokens still routed after the linger period", n)
	}
	m.lingerMu.Lock()
	left, timer := len(m.lingering), m.lingerTimer
	m.lingerMu.Unlock()
	if left != 0 || timer != nil {
		t.Fatalf("%d tokens lingering and a timer set after the sweep; want none", left)
	}
}

// TestProgressTokensExpireOnTheirOwn: with the real clock, the timer
// sweeps the tokens without help. The deadline only bounds a broken test.
func TestProgressTokensExpireOnTheirOwn(t *testing.T) {
	m, err := NewManager(ManagerConfig{ProgressLinger: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(Server{Name: "demo", InProcess: testserver.New("demo").MCP}); err != nil {
		t.Fatal(err)
	}
	s := m.NewSession(Callbacks{Progress: func(_ context.Context, _ Progress) {}})
	defer s.Close()
	if _, err := s.CallTool(context.Background(), ToolCall{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		m.routesMu.RLock()
		n := len(m.routes)
		m.routesMu.RUnlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tokens still routed a minute after a 10 ms linger period", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
