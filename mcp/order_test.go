package mcp_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/google/go-cmp/cmp"
)

// TestProgressBeforeResult checks the ordering promise of Callbacks.Progress:
// when CallTool returns, every progress notification the server sent before
// its result has reached the callback, in order, and none is dropped as
// late. Over many calls, so that a race between the notifications and the
// response would show.
func TestProgressBeforeResult(t *testing.T) {
	const steps = 5
	calls := 200
	if testing.Short() {
		calls = 20
	}
	want := make([]string, steps)
	for i := range want {
		want[i] = fmt.Sprintf("step %d of %d", i+1, steps)
	}
	for _, tr := range transports(t, "demo") {
		if tr.name == "http" {
			// One stream carries the call's progress and its result. With
			// the standalone GET stream open, mcp-go's server sends some
			// progress over it instead (TestLateProgressOverHTTP).
			tr.name, tr.server.NoListen = "http-post-stream", true
		}
		t.Run(tr.name, func(t *testing.T) {
			m := newManager(t, mcp.ManagerConfig{}, tr.server)
			var got []string // written by the callback goroutine, read after CallTool returns
			s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, p mcp.Progress) { got = append(got, p.Message) }})
			defer s.Close()
			for i := range calls {
				got = nil
				res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "progress", Arguments: map[string]any{"steps": steps}})
				if err != nil || res.IsError {
					t.Fatalf("call %d: %v, %+v", i, err, res)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("call %d: progress seen when CallTool returned (-want +got):\n%s", i, diff)
				}
			}
			if h := healthOf(t, m, "demo"); h.LateProgress != 0 {
				t.Errorf("Health.LateProgress = %d, want 0", h.LateProgress)
			}
		})
	}
}

func healthOf(t *testing.T, m *mcp.Manager, server string) mcp.Health {
	t.Helper()
	for _, h := range m.Health() {
		if h.Server == server {
			return h
		}
	}
	t.Fatalf("no health for %q", server)
	return mcp.Health{}
}

// TestLateProgressDropped checks what happens to progress that arrives after
// its call returned: it is not delivered (it would follow the call's end),
// and it is counted in Health.LateProgress.
func TestLateProgressDropped(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{ProgressLinger: time.Minute}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	var delivered atomic.Int64
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) { delivered.Add(1) }})
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "late"})
	if err != nil || res.IsError {
		t.Fatalf("call: %v, %+v", err, res)
	}
	ts.WaitLate()
	deadline := time.Now().Add(60 * time.Second)
	for healthOf(t, m, "demo").LateProgress == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Health.LateProgress stayed 0 after the server sent progress for a finished call")
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := delivered.Load(); n != 0 {
		t.Errorf("Progress callback called %d times for progress after the result; want 0", n)
	}
	if n := healthOf(t, m, "demo").LateProgress; n != 1 {
		t.Errorf("Health.LateProgress = %d, want 1", n)
	}
}

// TestLateProgressOverHTTP: with the standalone GET stream open, mcp-go's
// streamable HTTP server sends part of a call's progress over that stream,
// which can arrive after the call's result (and, between two streams, out
// of order). What reaches the callback comes before CallTool returns; the
// rest is counted as late.
func TestLateProgressOverHTTP(t *testing.T) {
	const steps, calls = 5, 50
	ts := testserver.New("demo")
	hs := ts.HTTP()
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", URL: hs.URL})
	var mu sync.Mutex
	var got []float64
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, p mcp.Progress) {
		mu.Lock()
		got = append(got, p.Progress)
		mu.Unlock()
	}})
	defer s.Close()
	delivered := 0
	for i := range calls {
		res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "progress", Arguments: map[string]any{"steps": steps}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v, %+v", i, err, res)
		}
		mu.Lock()
		seen := slices.Clone(got)
		mu.Unlock()
		if len(seen) > steps {
			t.Fatalf("call %d: %d progress notifications for %d steps: %v", i, len(seen), steps, seen)
		}
		// Give late progress of this call time to arrive: it must not be
		// delivered.
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		after := len(got)
		got = nil
		mu.Unlock()
		if after != len(seen) {
			t.Fatalf("call %d: %d progress callbacks after CallTool returned", i, after-len(seen))
		}
		delivered += len(seen)
	}
	late := healthOf(t, m, "demo").LateProgress
	t.Logf("%d calls of %d steps: %d delivered before the result, %d late", calls, steps, delivered, late)
	if total := int64(delivered) + late; total > calls*steps {
		t.Errorf("delivered %d + late %d > sent %d", delivered, late, calls*steps)
	}
}
