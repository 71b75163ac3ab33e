package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// payload is the state of the graphs of the Config.MaxThreadBytes tests:
// Data, replaced by each run's input, is what takes the bytes.
type payload struct {
	Data string `json:"data"`
	Seen int    `json:"seen"`
}

var (
	payloadData = graph.Replace(func(s *payload) *string { return &s.Data })
	payloadSeen = graph.Replace(func(s *payload) *int { return &s.Seen })
)

// quotaBytes is the Config.MaxThreadBytes of the tests; each run's input
// is quotaChunk bytes, so that two runs of one thread pass the bound.
const (
	quotaBytes = 1000
	quotaChunk = 600
)

// chunk is the input of a run: quotaChunk bytes of data, different for
// each n.
func chunk(n int) map[string]any {
	s := fmt.Sprintf("%d:", n)
	return map[string]any{"data": s + strings.Repeat("x", quotaChunk-len(s))}
}

// usage is the bytes checkpoint.Usage reports for a thread: those
// Config.MaxThreadBytes counts.
func usage(t *testing.T, saver checkpoint.Saver, tid string) int64 {
	t.Helper()
	u, err := checkpoint.ThreadUsage(t.Context(), saver, tid)
	if err != nil {
		t.Fatal(err)
	}
	return u.BlobBytes + u.WriteBytes
}

// pollUntil calls cond every 20 ms until it holds, or fails the test
// after 20 s.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// quotaServer serves, with cfg bounded by Config.MaxThreadBytes
// quotaBytes and the principals alice (key-a) and bob (key-b), the graph
// "big" (one node that counts its runs over Data, the run's input) and
// the graph "nested" (whose one node is a durable subgraph that makes
// quotaChunk bytes of Data and keeps them in its own checkpoints, and
// hands its parent back only the count).
func quotaServer(t *testing.T, cfg server.Config) (*server.Server, string) {
	t.Helper()
	cfg.MaxThreadBytes = quotaBytes
	cfg.Authenticate = apiKeys(t, map[string]string{"key-a-0123456789": "alice", "key-b-0123456789": "bob"})
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	count := func(_ context.Context, s payload) (graph.Update[payload], error) {
		return payloadSeen.Set(s.Seen + 1), nil
	}
	g := graph.New[payload]()
	g.AddNode("count", count)
	g.AddEdge(graph.START, "count").AddEdge("count", graph.END)
	big, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "big", big); err != nil {
		t.Fatal(err)
	}
	// The subgraph makes quotaChunk bytes of Data, which it keeps in
	// its own checkpoints; the parent is handed back only the count.
	cg := graph.New[payload]()
	cg.AddNode("fill", func(_ context.Context, s payload) (graph.Update[payload], error) {
		return graph.Updates(payloadData.Set(chunk(s.Seen)["data"].(string)), payloadSeen.Set(s.Seen+1)), nil
	})
	cg.AddEdge(graph.START, "fill").AddEdge("fill", graph.END)
	registerNested(t, srv, cg)
	return srv, newHTTPServer(t, srv)
}

// registerNested registers on srv the graph "nested", whose one node is
// cg compiled as a durable subgraph (on srv's checkpointer), handed the
// parent's Seen and handing back its own.
func registerNested(t *testing.T, srv *server.Server, cg *graph.Graph[payload]) {
	t.Helper()
	child, err := cg.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	pg := graph.New[payload]()
	graph.AddSubgraph(pg, "child", child, func(s payload) payload { return payload{Seen: s.Seen} }, func(c payload) graph.Update[payload] {
		return payloadSeen.Set(c.Seen)
	})
	pg.AddEdge(graph.START, "child").AddEdge("child", graph.END)
	parent, err := pg.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "nested", parent); err != nil {
		t.Fatal(err)
	}
}

var (
	aliceKey = http.Header{"X-Api-Key": {"key-a-0123456789"}}
	bobKey   = http.Header{"X-Api-Key": {"key-b-0123456789"}}
)

// newQuotaThread creates a thread for h.
func newQuotaThread(t *testing.T, url string, h http.Header) string {
	t.Helper()
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{}, h, &th); code != 200 {
		t.Fatalf("POST /threads: %d %v", code, th)
	}
	return th["thread_id"].(string)
}

// refusedForBytes reports whether code and e are the answer of a request
// refused for Config.MaxThreadBytes.
func refusedForBytes(code int, e map[string]any) bool {
	d := fmt.Sprint(e["detail"])
	return code == http.StatusTooManyRequests && strings.Contains(d, "Config.MaxThreadBytes") && strings.Contains(d, "prune")
}

// TestMaxThreadBytes: a run's end records its thread's checkpoint bytes
// in the store (as the checkpointer reports them); once a principal's
// threads keep more than Config.MaxThreadBytes, its runs (background,
// streamed, waited for, stateless), state updates and copies are refused
// with 429 naming the setting and the fix, and another principal is not;
// pruning the thread (keep_latest) below the bound, or deleting it, lets
// the principal run again. On every backend (the memory, SQLite and
// PostgreSQL stores and savers).
func TestMaxThreadBytes(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			srv, url := quotaServer(t, open(t))
			bc, ok := srv.Store().(server.ByteCounter)
			if !ok {
				t.Fatalf("the %s store is no server.ByteCounter", name)
			}
			sumOf := func(who string) int64 {
				n, err := bc.CountBytes(t.Context(), who)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			ta := newQuotaThread(t, url, aliceKey)
			n := 0
			runA := func() (int, map[string]any) {
				n++
				var out map[string]any
				code := do(t, "POST", url+"/threads/"+ta+"/runs/wait", map[string]any{"assistant_id": "big", "input": chunk(n)}, aliceKey, &out)
				return code, out
			}
			if code, out := runA(); code != 200 {
				t.Fatalf("alice's first run: %d %v", code, out)
			}
			// The run's end recorded the thread's bytes.
			want := usage(t, srv.Checkpointer(), ta)
			if want < quotaChunk {
				t.Fatalf("the thread keeps %d bytes after a run of %d; the test's graph is not what it expects", want, quotaChunk)
			}
			pollUntil(t, "the thread's bytes recorded by its run's end", func() bool { return sumOf("alice") == want })
			// More runs until alice is over the bound: the check reads a
			// principal's sum at most once a second.
			var code int
			var e map[string]any
			pollUntil(t, "alice refused past Config.MaxThreadBytes", func() bool {
				code, e = runA()
				return code != 200
			})
			if !refusedForBytes(code, e) {
				t.Fatalf("alice's run past the bound: %d %v; want 429 naming Config.MaxThreadBytes and prune", code, e)
			}
			if got := sumOf("alice"); got <= quotaBytes {
				t.Fatalf("alice refused with %d bytes recorded, not over %d", got, quotaBytes)
			}
			for _, req := range []struct{ method, path string }{
				{"POST", "/threads/" + ta + "/runs"},
				{"POST", "/threads/" + ta + "/runs/stream"},
				{"POST", "/runs/wait"},
				{"POST", "/threads/" + ta + "/state"},
				{"POST", "/threads/" + ta + "/copy"},
			} {
				body := map[string]any{"assistant_id": "big", "input": chunk(0)}
				if strings.HasSuffix(req.path, "/state") {
					body = map[string]any{"values": chunk(0)}
				}
				var e map[string]any
				if code := do(t, req.method, url+req.path, body, aliceKey, &e); !refusedForBytes(code, e) {
					t.Errorf("%s %s past the bound: %d %v; want 429 naming Config.MaxThreadBytes", req.method, req.path, code, e)
				}
			}
			// Bob is not bounded by alice's bytes.
			tb := newQuotaThread(t, url, bobKey)
			if code := do(t, "POST", url+"/threads/"+tb+"/runs/wait", map[string]any{"assistant_id": "big", "input": chunk(1)}, bobKey, &e); code != 200 {
				t.Fatalf("bob's run while alice is over her bound: %d %v", code, e)
			}
			// keep_latest leaves the thread its latest Data alone: under
			// the bound, and alice runs again at once.
			var res map[string]any
			if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": []string{ta}, "strategy": "keep_latest"}, aliceKey, &res); code != 200 {
				t.Fatalf("prune: %d %v", code, res)
			}
			if got, want := sumOf("alice"), usage(t, srv.Checkpointer(), ta); got != want || got > quotaBytes {
				t.Fatalf("alice's bytes after keep_latest: %d recorded, %d kept; want them equal and under %d", got, want, quotaBytes)
			}
			if code, out := runA(); code != 200 {
				t.Fatalf("alice's run after her thread was pruned: %d %v", code, out)
			}
			pollUntil(t, "alice refused again past Config.MaxThreadBytes", func() bool {
				code, e = runA()
				return code != 200
			})
			if !refusedForBytes(code, e) {
				t.Fatalf("alice's run past the bound again: %d %v", code, e)
			}
			// Deleting the thread takes its bytes away.
			if code := do(t, "DELETE", url+"/threads/"+ta, nil, aliceKey, nil); code != 204 {
				t.Fatalf("DELETE: %d", code)
			}
			if got := sumOf("alice"); got != 0 {
				t.Errorf("alice's bytes after her thread was deleted: %d; want 0", got)
			}
			if code := do(t, "POST", url+"/runs/wait", map[string]any{"assistant_id": "big", "input": chunk(2)}, aliceKey, &e); code != 200 {
				t.Fatalf("alice's run after her thread was deleted: %d %v", code, e)
			}
		})
	}
}

// TestMaxThreadBytesSubgraphs: the bytes of a thread's durable subgraph
// threads count toward its principal's bound: the run's end records the
// subgraph's with the thread's, and the principal is refused once they
// pass the bound, though the thread's own checkpoints keep less.
func TestMaxThreadBytesSubgraphs(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			srv, url := quotaServer(t, open(t))
			bc := srv.Store().(server.ByteCounter)
			saver := srv.Checkpointer()
			ta := newQuotaThread(t, url, aliceKey)
			var out map[string]any
			if code := do(t, "POST", url+"/threads/"+ta+"/runs/wait", map[string]any{"assistant_id": "nested", "input": map[string]any{"seen": 1}}, aliceKey, &out); code != 200 {
				t.Fatalf("first run: %d %v", code, out)
			}
			var subs []string
			cps, err := saver.List(t.Context(), ta, checkpoint.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cps {
				for _, task := range c.Next {
					if u := usage(t, saver, ta+"|"+task.ID); u > 0 {
						subs = append(subs, ta+"|"+task.ID)
					}
				}
			}
			if len(subs) == 0 {
				t.Fatal("no durable subgraph thread found")
			}
			want := usage(t, saver, ta)
			for _, sub := range subs {
				want += usage(t, saver, sub)
			}
			pollUntil(t, "the subgraphs' bytes recorded by the run's end", func() bool {
				n, err := bc.CountBytes(t.Context(), "alice")
				return err == nil && n == want
			})
			if own := usage(t, saver, ta); own >= want {
				t.Fatalf("the thread keeps %d bytes itself, its subgraphs none (%d in all): the test's graph is not what it expects", own, want)
			}
			var code int
			var e map[string]any
			n := 1
			pollUntil(t, "alice refused past Config.MaxThreadBytes", func() bool {
				n++
				code = do(t, "POST", url+"/threads/"+ta+"/runs/wait", map[string]any{"assistant_id": "nested", "input": map[string]any{"seen": n}}, aliceKey, &e)
				return code != 200
			})
			if !refusedForBytes(code, e) {
				t.Fatalf("alice's run past the bound: %d %v", code, e)
			}
			if own := usage(t, saver, ta); own > quotaBytes {
				t.Errorf("the thread keeps %d bytes itself: refused for its own, not its subgraphs'", own)
			}
		})
	}
}

// subgraphThreads returns the durable subgraph threads of thread tid that
// keep checkpoints, found through tid's checkpoints' next tasks.
func subgraphThreads(t *testing.T, saver checkpoint.Saver, tid string) []string {
	t.Helper()
	cps, err := saver.List(t.Context(), tid, checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var subs []string
	for _, c := range cps {
		for _, task := range c.Next {
			if sub := tid + "|" + task.ID; !slices.Contains(subs, sub) && usage(t, saver, sub) > 0 {
				subs = append(subs, sub)
			}
		}
	}
	return subs
}

// TestMaxThreadBytesPruneSubgraphs: keep_latest on a thread of nested
// runs deletes the durable subgraph threads its kept checkpoint no
// longer reaches (they would stay on disk uncounted, and a deletion of
// the thread would not find them); after a further run the stored count
// is the checkpointer's real total, and deleting the thread leaves no
// subgraph thread behind.
func TestMaxThreadBytesPruneSubgraphs(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			srv, url := quotaServer(t, open(t))
			bc := srv.Store().(server.ByteCounter)
			saver := srv.Checkpointer()
			ta := newQuotaThread(t, url, aliceKey)
			run := func(n int) {
				t.Helper()
				var out map[string]any
				if code := do(t, "POST", url+"/threads/"+ta+"/runs/wait", map[string]any{"assistant_id": "nested", "input": map[string]any{"seen": n}}, aliceKey, &out); code != 200 {
					t.Fatalf("run %d: %d %v", n, code, out)
				}
			}
			run(1)
			first := subgraphThreads(t, saver, ta)
			if len(first) == 0 {
				t.Fatal("no durable subgraph thread found")
			}
			var res map[string]any
			if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": []string{ta}, "strategy": "keep_latest"}, aliceKey, &res); code != 200 {
				t.Fatalf("prune: %d %v", code, res)
			}
			for _, sub := range first {
				if u := usage(t, saver, sub); u != 0 {
					t.Errorf("subgraph thread %s keeps %d bytes after keep_latest; want it deleted", sub, u)
				}
			}
			run(2)
			all := append(first, subgraphThreads(t, saver, ta)...)
			real := usage(t, saver, ta)
			for _, sub := range all {
				real += usage(t, saver, sub)
			}
			pollUntil(t, "the stored count to be the checkpointer's total", func() bool {
				n, err := bc.CountBytes(t.Context(), "alice")
				return err == nil && n == real
			})
			if code := do(t, "DELETE", url+"/threads/"+ta, nil, aliceKey, nil); code != 204 {
				t.Fatalf("DELETE: %d", code)
			}
			for _, sub := range all {
				if u := usage(t, saver, sub); u != 0 {
					t.Errorf("subgraph thread %s keeps %d bytes after its thread was deleted", sub, u)
				}
			}
		})
	}
}

// TestRollbackDeletesSubgraphThreads: the rollback of a nested run on a
// thread that had no checkpoint before it deletes the run's durable
// subgraph threads with the thread's own checkpoints (they would stay on
// disk, counted nowhere).
func TestRollbackDeletesSubgraphThreads(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			cfg := open(t)
			cfg.MaxThreadBytes = quotaBytes
			cfg.Authenticate = apiKeys(t, map[string]string{"key-a-0123456789": "alice"})
			srv, err := server.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			entered, release := make(chan struct{}, 1), make(chan struct{})
			defer close(release)
			cg := graph.New[payload]()
			cg.AddNode("fill", func(_ context.Context, s payload) (graph.Update[payload], error) {
				return payloadData.Set(chunk(s.Seen)["data"].(string)), nil
			})
			cg.AddNode("hold", func(ctx context.Context, s payload) (graph.Update[payload], error) {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return payloadSeen.Set(s.Seen + 1), ctx.Err()
			})
			cg.AddEdge(graph.START, "fill").AddEdge("fill", "hold").AddEdge("hold", graph.END)
			registerNested(t, srv, cg)
			url := newHTTPServer(t, srv)
			saver := srv.Checkpointer()
			ta := newQuotaThread(t, url, aliceKey)
			var run map[string]any
			if code := do(t, "POST", url+"/threads/"+ta+"/runs", map[string]any{"assistant_id": "nested", "input": map[string]any{"seen": 1}}, aliceKey, &run); code != 200 {
				t.Fatalf("run: %d %v", code, run)
			}
			<-entered
			subs := subgraphThreads(t, saver, ta)
			if len(subs) == 0 {
				t.Fatal("no durable subgraph thread found while the run holds")
			}
			if code := do(t, "POST", url+"/threads/"+ta+"/runs/"+run["run_id"].(string)+"/cancel?action=rollback&wait=1", nil, aliceKey, nil); code != http.StatusNoContent {
				t.Fatalf("rollback: %d", code)
			}
			for _, sub := range append(subs, ta) {
				if u := usage(t, saver, sub); u != 0 {
					t.Errorf("thread %s keeps %d bytes after the rollback; want its checkpoints deleted", sub, u)
				}
			}
		})
	}
}
