package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
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
// naming the thread's owner ("" without Config.Authenticate). Once the
// server is closed (no deletion goes on), no other call came.
func TestThreadDeletedHook(t *testing.T) {
	cfg, alice, bob := aliceBob()
	for _, c := range []struct {
		name       string
		cfg        server.Config
		h1, h2     http.Header
		who1, who2 string
	}{
		{"principals", cfg, alice, bob, "alice", "bob"},
		{"open", server.Config{}, nil, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestServer(t, c.cfg)
			calls := registerWhoami(t, ts.Server)
			tid := newWhoamiThread(t, ts.URL, c.h1)
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "whoami", "input": humanInput("hi")}, c.h1, nil); code != 200 {
				t.Fatalf("runs/wait: %d", code)
			}
			if code := do(t, "DELETE", ts.URL+"/threads/"+tid, nil, c.h1, nil); code != 204 {
				t.Fatalf("DELETE: %d", code)
			}
			if got, want := nextDeleted(t, calls), (deleted{tid, c.who1}); got != want {
				t.Errorf("after DELETE: %+v, want %+v", got, want)
			}

			tid = newWhoamiThread(t, ts.URL, c.h2)
			var pruned struct {
				Count int `json:"pruned_count"`
			}
			if code := do(t, "POST", ts.URL+"/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "delete"}, c.h2, &pruned); code != 200 || pruned.Count != 1 {
				t.Fatalf("prune: %d %+v", code, pruned)
			}
			if got, want := nextDeleted(t, calls), (deleted{tid, c.who2}); got != want {
				t.Errorf("after prune: %+v, want %+v", got, want)
			}

			resp := sendJSON(t, "POST", ts.URL+"/runs/wait", map[string]any{"assistant_id": "whoami", "input": humanInput("hi")}, c.h2)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("stateless run: %d", resp.StatusCode)
			}
			got := nextDeleted(t, calls)
			if got.principal != c.who2 || got.thread == "" {
				t.Errorf("after a stateless run: %+v, want %q's temporary thread", got, c.who2)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := ts.Server.Close(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case d := <-calls:
				t.Errorf("an extra call: %+v", d)
			default:
			}
		})
	}
}

// newWhoamiThread creates a thread of h's principal and answers its id.
func newWhoamiThread(t *testing.T, url string, h http.Header) string {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{}, h, &th); code != 200 {
		t.Fatalf("POST /threads: %d", code)
	}
	return th.ThreadID
}

// failDelete is a saver whose DeleteThread fails: a thread's record is
// deleted, its checkpoints are not.
type failDelete struct{ checkpoint.Saver }

func (failDelete) DeleteThread(context.Context, string) error {
	return errors.New("failDelete: checkpoints not deleted")
}

// TestThreadDeletedHookAfterFailedCheckpoints: a deletion that deleted
// the thread's record but failed to delete its checkpoints still calls
// the WithThreadDeleted function (nothing could call it later: the
// record that would find the thread is gone).
func TestThreadDeletedHookAfterFailedCheckpoints(t *testing.T) {
	cfg, alice, _ := aliceBob()
	cfg.Checkpointer = failDelete{checkpoint.NewMemory()}
	ts := newTestServer(t, cfg)
	calls := registerWhoami(t, ts.Server)
	tid := newWhoamiThread(t, ts.URL, alice)
	if code := do(t, "DELETE", ts.URL+"/threads/"+tid, nil, alice, nil); code == 204 {
		t.Fatalf("DELETE: %d, want the saver's failure", code)
	}
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, alice, nil); code != 404 {
		t.Fatalf("GET after DELETE: %d, want 404 (the record deleted)", code)
	}
	if got, want := nextDeleted(t, calls), (deleted{tid, "alice"}); got != want {
		t.Errorf("after DELETE: %+v, want %+v", got, want)
	}
}

// TestThreadDeletedHookBounded: the WithThreadDeleted function's context
// is not cancelled with the deletion's request (the client went away
// while it ran) and ends after Config.Lease, so that a function that
// hangs does not hold the thread, and the deletion, forever.
func TestThreadDeletedHookBounded(t *testing.T) {
	cfg, alice, _ := aliceBob()
	cfg.Lease = time.Second
	ts := newTestServer(t, cfg)
	g := graph.New[chat]()
	g.AddNode("noop", func(ctx context.Context, s chat) (graph.Update[chat], error) { return graph.Update[chat]{}, nil })
	g.AddEdge(graph.START, "noop").AddEdge("noop", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	entered, ended := make(chan struct{}, 1), make(chan error, 1)
	hook := func(ctx context.Context, threadID string) error {
		entered <- struct{}{}
		<-ctx.Done() // hangs until its bound
		ended <- ctx.Err()
		return ctx.Err()
	}
	if err := server.Register(ts.Server, "hang", app, server.WithThreadDeleted[chat](hook)); err != nil {
		t.Fatal(err)
	}
	tid := newWhoamiThread(t, ts.URL, alice)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "DELETE", ts.URL+"/threads/"+tid, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = alice.Clone()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("the WithThreadDeleted function was not called")
	}
	cancel() // the client goes away while the function runs
	<-done
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the function's context ended with %v, want its bound (context.DeadlineExceeded), not the request's end", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the function's context did not end")
	}
	// The deletion went on without the function.
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, alice, nil); code != 404 {
		t.Errorf("GET after the deletion: %d, want 404", code)
	}
}
