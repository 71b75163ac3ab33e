package server_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// movedStore is a Store that, once armed, moves a thread's head (as a
// rollback landing then would) right after its next read of the thread.
type movedStore struct {
	server.Store
	armed atomic.Bool
	head  string
}

func (m *movedStore) Thread(ctx context.Context, id string) (*server.Thread, error) {
	t, err := m.Store.Thread(ctx, id)
	if err == nil && m.armed.CompareAndSwap(true, false) {
		if _, err := m.Store.UpdateThread(ctx, id, func(t *server.Thread) error { t.Head, t.Rolled = m.head, true; return nil }); err != nil {
			return nil, err
		}
	}
	return t, err
}

// TestUpdateStateReadsThreadUnderLock: POST /threads/{id}/state applies
// its update to the thread as it is under the thread's lock, on every
// store: a rollback that moved the head after an earlier read is seen
// (the update edits the head's state and becomes the thread's state).
// The update was made on the latest checkpoint past the head, which
// stayed set: the update was lost from the thread's state (issue #21).
func TestUpdateStateReadsThreadUnderLock(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			st, saver := backendOf(open(t))
			ms := &movedStore{Store: st}
			ts := newTestServer(t, server.Config{Store: ms, Checkpointer: saver})
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "slow"}}, nil, &th)
			tid := th.ThreadID
			var a struct {
				CheckpointID string `json:"checkpoint_id"`
			}
			for i, c := range []string{"a", "b"} {
				var out struct {
					CheckpointID string `json:"checkpoint_id"`
				}
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"messages": []msg{{Type: "human", Content: c}}}}, nil, &out); code != 200 {
					t.Fatalf("update %s: %d", c, code)
				}
				if i == 0 {
					a = out
				}
			}
			ms.head = a.CheckpointID
			ms.armed.Store(true)
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"messages": []msg{{Type: "human", Content: "c"}}}}, nil, nil); code != 200 {
				t.Fatalf("update c: %d", code)
			}
			if ms.armed.Load() {
				t.Fatal("the head was not moved: the test did not test")
			}
			var state struct {
				Values chat `json:"values"`
			}
			do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &state)
			var got []string
			for _, m := range state.Values.Messages {
				got = append(got, m.Content)
			}
			if !equalStrings(got, []string{"a", "c"}) {
				t.Errorf("state after an update racing a rollback to the first checkpoint: %q; want [a c]", got)
			}
		})
	}
}
