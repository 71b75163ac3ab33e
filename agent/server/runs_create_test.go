package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestBreakpointOnUnknownNodeIsRefused: interrupt_before or
// interrupt_after naming a node the graph lacks is a 422 naming the field
// and the graph's nodes, and creates no run; "*" and real nodes still
// pause the run.
func TestBreakpointOnUnknownNodeIsRefused(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	input := humanInput("hi")
	for _, c := range []struct{ field, want string }{
		{"interrupt_before", `interrupt_before[1]: graph "agent" has no node "nonode"; use one of draft, review, finish`},
		{"interrupt_after", `interrupt_after[1]: graph "agent" has no node "nonode"`},
	} {
		var e struct{ Detail string }
		code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": input, c.field: []string{"draft", "nonode"}}, nil, &e)
		if code != 422 || !strings.HasPrefix(e.Detail, c.want) {
			t.Fatalf("%s: %d %q; want 422 %q", c.field, code, e.Detail, c.want)
		}
	}
	var runs []map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); code != 200 || len(runs) != 0 {
		t.Fatalf("runs after refused creations: %d %v; want none", code, runs)
	}
	var st map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": input, "interrupt_before": "*"}, nil, &st); code != 200 {
		t.Fatalf(`interrupt_before "*": %d %v`, code, st)
	}
	var state struct{ Next []string }
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &state); code != 200 || len(state.Next) != 1 || state.Next[0] != "draft" {
		t.Fatalf(`state after interrupt_before "*": %d %v; want paused before draft`, code, state.Next)
	}
}

// creatingStore is a Store on which another request creates thread id
// (as POST /threads does, without the thread's lock) right after a run's
// creation found it missing.
type creatingStore struct {
	server.Store
	mu   sync.Mutex
	id   string
	done bool
}

func (c *creatingStore) Thread(ctx context.Context, id string) (*server.Thread, error) {
	c.mu.Lock()
	race := id == c.id && !c.done
	c.done = c.done || race
	c.mu.Unlock()
	if race {
		now := time.Now()
		if err := c.Store.CreateThread(ctx, &server.Thread{ID: id, CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle, Metadata: map[string]any{}}); err != nil {
			return nil, err
		}
		return nil, server.ErrNotFound
	}
	return c.Store.Thread(ctx, id)
}

// TestRunCreateIfNotExistsRace: a run with if_not_exists create whose
// thread is created by another request of the same principal between
// the run's look and its creation of the thread runs on that thread; it
// was refused with 409 (the thread exists), though the client asked for
// the thread to be created if missing.
func TestRunCreateIfNotExistsRace(t *testing.T) {
	// With MaxThreads 1, the thread created meanwhile is the one the
	// limit counts: the run's own creation fails on the limit, not on
	// the thread's existence, and must still go on that thread.
	for _, maxThreads := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxThreads=%d", maxThreads), func(t *testing.T) {
			const tid = "0aaaaaaa-46ac-7f1b-956c-95867187d56e"
			st := &creatingStore{Store: server.NewMemoryStore(), id: tid}
			ts := newTestServer(t, server.Config{Store: st, MaxThreads: maxThreads})
			var out map[string]any
			code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "if_not_exists": "create", "input": humanInput("hi")}, nil, &out)
			if code != 200 || out["__interrupt__"] == nil {
				t.Fatalf("run with if_not_exists create on a thread created meanwhile: %d %v; want the run's values", code, out)
			}
			if got := threadStatus(t, ts.URL, tid); got != "interrupted" {
				t.Fatalf("thread: %s; want interrupted by the run", got)
			}
		})
	}
}
