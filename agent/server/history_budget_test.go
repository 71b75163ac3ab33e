package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// loadCountingSaver is a memory checkpointer that counts the states it
// loads: each one Get returns, and each of a ListSnapshots page.
type loadCountingSaver struct {
	*checkpoint.Memory
	loaded atomic.Int32
}

func (s *loadCountingSaver) Get(ctx context.Context, threadID, checkpointID string) (*checkpoint.Snapshot, error) {
	snap, err := s.Memory.Get(ctx, threadID, checkpointID)
	if err == nil {
		s.loaded.Add(1)
	}
	return snap, err
}

func (s *loadCountingSaver) ListSnapshots(ctx context.Context, threadID string, opts checkpoint.ListOptions) ([]*checkpoint.Snapshot, error) {
	page, err := s.Memory.ListSnapshots(ctx, threadID, opts)
	s.loaded.Add(int32(len(page)))
	return page, err
}

// TestHistoryReadsNoStatePastItsBudget: a history whose first state
// takes its whole byte budget (Config.MaxResponseBytes) answers it
// alone, truncated, without loading the thread's other states; one whose
// thread has no other checkpoint answers it without the truncated
// header.
func TestHistoryReadsNoStatePastItsBudget(t *testing.T) {
	saver := &loadCountingSaver{Memory: checkpoint.NewMemory()}
	ts := newTestServer(t, server.Config{MaxResponseBytes: 3000, Checkpointer: saver})
	big := strings.Repeat("x", 4000)
	history := func(tid string) (n int, truncated string) {
		t.Helper()
		_, h, b := call(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"limit": 10})
		var hist []json.RawMessage
		if err := json.Unmarshal(b, &hist); err != nil {
			t.Fatal(err)
		}
		return len(hist), h.Get(server.TruncatedHeader)
	}

	tid, _ := interruptedThread(t, ts.URL, nil)
	for range 5 {
		if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": big}}, nil, nil); code != 200 {
			t.Fatalf("update state: %d", code)
		}
	}
	saver.loaded.Store(0)
	if n, cut := history(tid); n != 1 || cut != "true" {
		t.Fatalf("history of large states: %d states, %s %q; want 1, truncated", n, server.TruncatedHeader, cut)
	}
	if n := saver.loaded.Load(); n != 1 {
		t.Errorf("history of one state over the budget loaded %d states; want 1, the one it answers", n)
	}

	// A thread with one checkpoint, over the budget: nothing follows.
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "agent"}}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/state", map[string]any{"values": map[string]any{"approved": big}, "as_node": "review"}, nil, nil); code != 200 {
		t.Fatalf("update state: %d", code)
	}
	saver.loaded.Store(0)
	if n, cut := history(th.ThreadID); n != 1 || cut != "" {
		t.Errorf("history of one large state: %d states, %s %q; want 1, not truncated", n, server.TruncatedHeader, cut)
	}
	if n := saver.loaded.Load(); n != 1 {
		t.Errorf("history of one state loaded %d states; want 1", n)
	}
}
