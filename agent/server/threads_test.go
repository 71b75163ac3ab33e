package server_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// PATCH /threads/{id} cannot make a thread's metadata name a graph other
// than the one that runs it: a search by graph_id would find it under a
// graph that refuses to run it.
func TestPatchThreadGraphID(t *testing.T) {
	url := serveChain(t, server.Config{})
	id := newThread(t, url)
	var th map[string]any
	body := map[string]any{"assistant_id": "chain", "input": humanInput("go")}
	if code := do(t, "POST", url+"/threads/"+id+"/runs/wait", body, nil, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	var out map[string]any
	for _, md := range []map[string]any{{"graph_id": "other"}, {"graph_id": nil}, {"assistant_id": "00000000-0000-0000-0000-000000000000"}} {
		if code := do(t, "PATCH", url+"/threads/"+id, map[string]any{"metadata": md}, nil, &out); code != 422 {
			t.Fatalf("PATCH metadata %v on a thread of graph chain: %d %v; want 422", md, code, out)
		}
	}
	if code := do(t, "GET", url+"/threads/"+id, nil, nil, &th); code != 200 || th["metadata"].(map[string]any)["graph_id"] != "chain" {
		t.Fatalf("after refused patches: %d %v; want metadata.graph_id chain", code, th)
	}
	md := map[string]any{"graph_id": "chain", "assistant_id": server.AssistantID("chain"), "tag": "x"}
	if code := do(t, "PATCH", url+"/threads/"+id, map[string]any{"metadata": md}, nil, &out); code != 200 {
		t.Fatalf("PATCH with the thread's own graph: %d %v; want 200", code, out)
	}
	var n int
	if code := do(t, "POST", url+"/threads/count", map[string]any{"metadata": map[string]any{"graph_id": "other"}}, nil, &n); code != 200 || n != 0 {
		t.Fatalf("count of graph other: %d %d; want 0", code, n)
	}
}

// TestDeleteThreadWaitsForItsRun: DELETE /threads/{id} cancels the
// thread's run and answers only once the run has stopped, so that the run
// writes nothing after its thread is gone.
func TestDeleteThreadWaitsForItsRun(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	started, cancelled, release, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	g := graph.New[greeting]()
	g.AddNode("hold", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		<-release // a node slow to notice it was cancelled
		close(stopped)
		return graph.Update[greeting]{}, ctx.Err()
	})
	g.AddEdge(graph.START, "hold").AddEdge("hold", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "hold", app); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	releaseNode := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseNode) // before the server closes, when the test fails
	tid := newThread(t, url)
	if code := do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "hold", "input": map[string]any{"name": "x"}}, nil, nil); code != 200 {
		t.Fatalf("create run: %d", code)
	}
	<-started
	deleted := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("DELETE", url+"/threads/"+tid, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			deleted <- -1
			return
		}
		resp.Body.Close()
		deleted <- resp.StatusCode
	}()
	<-cancelled
	// The run was cancelled and its node has not returned: the DELETE must
	// still be waiting for it. (Before the fix it answered at once.)
	select {
	case code := <-deleted:
		t.Fatalf("DELETE answered %d while the thread's run was still running", code)
	case <-time.After(300 * time.Millisecond):
	}
	releaseNode()
	select {
	case code := <-deleted:
		if code != http.StatusNoContent {
			t.Fatalf("DELETE: %d", code)
		}
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("DELETE never answered after the run stopped")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("DELETE answered before the run's node returned")
	}
	if code := do(t, "GET", url+"/threads/"+tid, nil, nil, nil); code != 404 {
		t.Fatalf("GET the deleted thread: %d", code)
	}
	if _, err := srv.Checkpointer().Get(t.Context(), tid, ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("the deleted thread's checkpoints: %v; want none", err)
	}
}
