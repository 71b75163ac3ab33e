package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

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
	var th struct {
		ID string `json:"thread_id"`
	}
	do(t, "POST", url+"/threads", map[string]any{}, nil, &th)
	if code := do(t, "POST", url+"/threads/"+th.ID+"/runs", map[string]any{"assistant_id": "hold", "input": map[string]any{"name": "x"}}, nil, nil); code != 200 {
		t.Fatalf("create run: %d", code)
	}
	<-started
	deleted := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("DELETE", url+"/threads/"+th.ID, nil)
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
	if code := do(t, "GET", url+"/threads/"+th.ID, nil, nil, nil); code != 404 {
		t.Fatalf("GET the deleted thread: %d", code)
	}
	if _, err := srv.Checkpointer().Get(t.Context(), th.ID, ""); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("the deleted thread's checkpoints: %v; want none", err)
	}
}

// TestUpdateStateAtCheckpoint: POST /threads/{id}/state with checkpoint_id
// (or checkpoint.checkpoint_id) edits that checkpoint's state on a new
// branch, not the latest state; an unknown checkpoint is 404.
func TestUpdateStateAtCheckpoint(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	var paused map[string]any
	do(t, "POST", ts.URL+"/threads/"+th.ID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Role: "user", Content: "hi"}}}}, nil, &paused)
	type state struct {
		Values     chat     `json:"values"`
		Next       []string `json:"next"`
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
		ParentCheckpoint *struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"parent_checkpoint"`
	}
	var hist []state
	do(t, "POST", ts.URL+"/threads/"+th.ID+"/history", map[string]any{"limit": 10}, nil, &hist)
	var before string // the checkpoint with draft next: the input, before the draft
	for _, h := range hist {
		if len(h.Next) == 1 && h.Next[0] == "draft" {
			before = h.Checkpoint.CheckpointID
		}
	}
	if before == "" {
		t.Fatalf("no checkpoint with draft next in %+v", hist)
	}
	for _, body := range []map[string]any{
		{"values": map[string]any{"approved": "edited"}, "checkpoint_id": before},
		{"values": map[string]any{"approved": "edited"}, "checkpoint": map[string]any{"checkpoint_id": before}},
	} {
		var upd struct {
			Checkpoint struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
		}
		if code := do(t, "POST", ts.URL+"/threads/"+th.ID+"/state", body, nil, &upd); code != 200 {
			t.Fatalf("update at %s: %d", before, code)
		}
		var st state
		do(t, "GET", ts.URL+"/threads/"+th.ID+"/state", nil, nil, &st)
		if st.Checkpoint.CheckpointID != upd.Checkpoint.CheckpointID || st.ParentCheckpoint == nil || st.ParentCheckpoint.CheckpointID != before {
			t.Fatalf("state after the update: %+v; want the update %s, child of %s", st, upd.Checkpoint.CheckpointID, before)
		}
		if len(st.Values.Messages) != 1 || st.Values.Approved != "edited" || len(st.Next) != 1 || st.Next[0] != "draft" {
			t.Fatalf("state after the update: %+v; want the input alone, approved edited, draft next", st)
		}
	}
	var e map[string]string
	if code := do(t, "POST", ts.URL+"/threads/"+th.ID+"/state", map[string]any{"values": map[string]any{"approved": "x"}, "checkpoint_id": "1f0-nope"}, nil, &e); code != 404 || !strings.Contains(e["detail"], "1f0-nope") {
		t.Fatalf("update at an unknown checkpoint: %d %v; want 404 naming it", code, e)
	}
}

// TestIndentedCodecStreamsValidSSE: JSON a Codec gives indented is sent
// compact, one data line per event, so every event's data parses.
func TestIndentedCodecStreamsValidSSE(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[greeting]()
	g.AddNode("greet", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		return greetingReply.Set("hi " + s.Name), nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	indented := server.Codec[greeting]{Values: func(s greeting) (json.RawMessage, error) { return json.MarshalIndent(s, "", "  ") }}
	if err := server.Register(srv, "greet", app, server.WithCodec(indented)); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	resp, err := http.Post(url+"/runs/stream", "application/json", strings.NewReader(`{"assistant_id":"greet","input":{"name":"ada"},"stream_mode":["values","updates"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	var last greeting
	for _, ev := range evs {
		if !json.Valid(ev.Data) {
			t.Fatalf("event %s has data %q, not JSON", ev.Name, ev.Data)
		}
		if ev.Name == "values" {
			if err := json.Unmarshal(ev.Data, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if last.Reply != "hi ada" || evs[len(evs)-1].Name != "end" {
		t.Fatalf("last values %+v, events %v", last, evs)
	}
}
