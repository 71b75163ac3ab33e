package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph"
)

// deleted is a call of a WithThreadDeleted function: the thread and the
// principal its context carried.
type deleted struct{ thread, principal string }

// registerWhoami registers the graph "whoami", whose node answers the
// principal its run's context carries (guard.Principal), and whose
// WithThreadDeleted function sends what it is called with on the channel
// it returns.
func registerWhoami(t *testing.T, srv *server.Server) <-chan deleted {
	t.Helper()
	g := graph.New[chat]()
	g.AddNode("who", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		return chatMessages.Set([]msg{{Type: "ai", Content: "principal=" + guard.Principal(ctx)}}), nil
	})
	g.AddEdge(graph.START, "who").AddEdge("who", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan deleted, 16)
	hook := func(ctx context.Context, threadID string) error {
		calls <- deleted{threadID, guard.Principal(ctx)}
		return nil
	}
	if err := server.Register(srv, "whoami", app, server.WithThreadDeleted[chat](hook)); err != nil {
		t.Fatal(err)
	}
	return calls
}

// nextDeleted waits (a minute at most) for the next call on calls.
func nextDeleted(t *testing.T, calls <-chan deleted) deleted {
	t.Helper()
	select {
	case d := <-calls:
		return d
	case <-time.After(time.Minute):
		t.Fatal("the WithThreadDeleted function was not called")
		return deleted{}
	}
}

// TestRunContextCarriesPrincipal: a graph's nodes find the run's
// principal with guard.Principal, for a run waited on, a background run
// joined later and a stateless run, each its own principal's.
func TestRunContextCarriesPrincipal(t *testing.T) {
	cfg, alice, bob := aliceBob()
	ts := newTestServer(t, cfg)
	registerWhoami(t, ts.Server)
	input := map[string]any{"assistant_id": "whoami", "input": humanInput("hi")}
	for _, c := range []struct {
		name string
		h    http.Header
		want string
	}{{"alice", alice, "principal=alice"}, {"bob", bob, "principal=bob"}} {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, c.h, &th); code != 200 {
			t.Fatalf("%s: POST /threads: %d", c.name, code)
		}
		var out chat
		if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", input, c.h, &out); code != 200 || last(out) != c.want {
			t.Errorf("%s: runs/wait: %d %q, want %q", c.name, code, last(out), c.want)
		}
		var run struct {
			RunID string `json:"run_id"`
		}
		if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs", input, c.h, &run); code != 200 {
			t.Fatalf("%s: background run: %d", c.name, code)
		}
		out = chat{}
		if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs/"+run.RunID+"/join", nil, c.h, &out); code != 200 || last(out) != c.want {
			t.Errorf("%s: background run joined: %d %q, want %q", c.name, code, last(out), c.want)
		}
		out = chat{}
		if code := do(t, "POST", ts.URL+"/runs/wait", input, c.h, &out); code != 200 || last(out) != c.want {
			t.Errorf("%s: stateless run: %d %q, want %q", c.name, code, last(out), c.want)
		}
	}
}

// TestThreadDeletedHook: deleting a thread, pruning one and the end of
// a stateless run's temporary thread each call the graph's
// WithThreadDeleted function once with the thread's id, its context
// naming the thread's owner.
func TestThreadDeletedHook(t *testing.T) {
	cfg, alice, bob := aliceBob()
	ts := newTestServer(t, cfg)
	calls := registerWhoami(t, ts.Server)
	newThread := func(h http.Header) string {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, h, &th); code != 200 {
			t.Fatalf("POST /threads: %d", code)
		}
		return th.ThreadID
	}

	tid := newThread(alice)
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "whoami", "input": humanInput("hi")}, alice, nil); code != 200 {
		t.Fatalf("runs/wait: %d", code)
	}
	if code := do(t, "DELETE", ts.URL+"/threads/"+tid, nil, alice, nil); code != 204 {
		t.Fatalf("DELETE: %d", code)
	}
	if got, want := nextDeleted(t, calls), (deleted{tid, "alice"}); got != want {
		t.Errorf("after DELETE: %+v, want %+v", got, want)
	}

	tid = newThread(bob)
	var pruned struct {
		Count int `json:"pruned_count"`
	}
	if code := do(t, "POST", ts.URL+"/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "delete"}, bob, &pruned); code != 200 || pruned.Count != 1 {
		t.Fatalf("prune: %d %+v", code, pruned)
	}
	if got, want := nextDeleted(t, calls), (deleted{tid, "bob"}); got != want {
		t.Errorf("after prune: %+v, want %+v", got, want)
	}

	resp := sendJSON(t, "POST", ts.URL+"/runs/wait", map[string]any{"assistant_id": "whoami", "input": humanInput("hi")}, bob)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stateless run: %d", resp.StatusCode)
	}
	got := nextDeleted(t, calls)
	if got.principal != "bob" || got.thread == "" {
		t.Errorf("after a stateless run: %+v, want bob's temporary thread", got)
	}
	select {
	case d := <-calls:
		t.Errorf("an extra call: %+v", d)
	default:
	}
}
