package mcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
)

// A server that never answers initialize fails the call with a
// TimeoutError naming ConnectTimeout, long before the caller's deadline,
// and counts as a failure of the server. Calls that waited for that
// connect fail with it rather than each connecting in turn.
func TestConnectTimeout(t *testing.T) {
	m := newManager(t, mcp.ManagerConfig{ConnectTimeout: 2 * time.Second, CallTimeout: time.Second},
		badModeServer("mute", "noinit", ""))
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, 3)
	call := func() {
		_, err := s.CallTool(ctx, mcp.ToolCall{Server: "mute", Name: "ok"})
		errs <- err
	}
	go call()
	// The others come while the first one connects (its server is
	// running), with the connect's 2 s to spare.
	for children(t) == 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	go call()
	go call()
	for range 3 {
		err := <-errs
		var te *mcp.TimeoutError
		if !errors.As(err, &te) || te.Request != "initialize" || !strings.Contains(err.Error(), "ManagerConfig.ConnectTimeout") {
			t.Errorf("err = %v, want a TimeoutError for initialize naming ManagerConfig.ConnectTimeout", err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the calls waited for the caller's deadline")
	}
	h := health(t, m, "mute")
	if h.Available() || !strings.Contains(h.LastError, "ConnectTimeout") {
		t.Errorf("health after a connect timeout: %+v, want the failure counted", h)
	}
	if h.Failures != 1 {
		t.Errorf("%d failures, want 1: one connect, not retried, shared by the calls waiting for it", h.Failures)
	}
}

// A registry over a server that never answers initialize, or never
// answers tools/list in a form that parses, lists its tools within the
// server's limits rather than the caller's deadline.
func TestRegistryToolsBounded(t *testing.T) {
	for _, c := range []struct {
		mode, want string
		// connect is the ConnectTimeout: short where the connect is what
		// never ends, generous where it must succeed (starting the test
		// binary as a server takes well over 300ms on a loaded machine).
		connect time.Duration
	}{
		{"noinit", "ManagerConfig.ConnectTimeout", 300 * time.Millisecond},
		{"garbage", "tools/list did not finish", 20 * time.Second},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := fastRetry()
			r.Retry.MaxAttempts = 1
			m := newManager(t, mcp.ManagerConfig{ConnectTimeout: c.connect, CallTimeout: 300 * time.Millisecond, Resilience: r},
				badModeServer("bad", c.mode, ""))
			reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
			if err != nil {
				t.Fatal(err)
			}
			// Longer than the limits: a listing bounded only by the
			// caller's deadline would reach it.
			ctx, cancel := context.WithTimeout(context.Background(), c.connect+30*time.Second)
			defer cancel()
			tools, err := reg.Tools(ctx)
			if err != nil || ctx.Err() != nil {
				t.Fatalf("Tools = %v, %v; want it to return before the caller's deadline", tools, err)
			}
			h := health(t, m, "bad")
			if h.Failures == 0 || !strings.Contains(h.LastError, c.want) {
				t.Errorf("health: %+v, want a failure saying %q", h, c.want)
			}
		})
	}
}

// A server that pages its tools forever is listed up to MaxTools, and one
// whose pages add up to more than MaxMessageBytes up to that: the listing
// fails with a LimitError naming the field.
func TestEndlessToolPages(t *testing.T) {
	for _, c := range []struct {
		arg, want string
		cfg       mcp.ManagerConfig
	}{
		{"", "ManagerConfig.MaxTools", mcp.ManagerConfig{MaxTools: 50}},
		{"desc", "ManagerConfig.MaxMessageBytes", mcp.ManagerConfig{MaxMessageBytes: 256 << 10}},
	} {
		t.Run(c.want, func(t *testing.T) {
			m := newManager(t, c.cfg, badModeServer("pager", "pages", c.arg))
			reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			if _, err := reg.Tools(ctx); err != nil || ctx.Err() != nil {
				t.Fatalf("Tools: %v (ctx %v)", err, ctx.Err())
			}
			_, err = reg.Tool(ctx, "t0")
			if err == nil {
				t.Fatal("a tool of an endless listing resolved")
			}
			h := health(t, m, "pager")
			if !strings.Contains(h.LastError, c.want) || h.Failures == 0 {
				t.Errorf("health: %+v, want a failure naming %s", h, c.want)
			}
		})
	}
}
