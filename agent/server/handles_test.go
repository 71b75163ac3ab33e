package server_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// ranked is a state whose field Best has two Reduce handles: the default
// (declared first) keeps the highest value, rankedWorst the lowest.
type ranked struct {
	Best int
}

var (
	rankedBest  = graph.Reduce(func(s *ranked) *int { return &s.Best }, func(old, new int) int { return max(old, new) })
	rankedWorst = graph.Reduce(func(s *ranked) *int { return &s.Best }, func(old, new int) int {
		if old == 0 {
			return new
		}
		return min(old, new)
	})
)

// TestStateEditsMergeThroughTheGraphsHandles: a graph that lists its own
// handle on a field (Handles(rankedWorst), not the field's default
// rankedBest) merges both a run's input and an edit through POST
// /threads/{id}/state with it: on Best 5, either writing 3 saves 3.
func TestStateEditsMergeThroughTheGraphsHandles(t *testing.T) {
	_ = rankedBest // declared first: the field's default handle
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := graph.New[ranked]().Handles(rankedWorst).
		AddNode("noop", func(context.Context, ranked) (graph.Update[ranked], error) { return graph.Update[ranked]{}, nil }).
		AddEdge(graph.START, "noop").AddEdge("noop", graph.END).
		Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "worst", c); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	type state struct {
		Values struct {
			Best int `json:"Best"`
		} `json:"values"`
	}
	newThread := func(t *testing.T) string {
		t.Helper()
		var th struct {
			ID string `json:"thread_id"`
		}
		do(t, "POST", hs.URL+"/threads", map[string]any{}, nil, &th)
		var out map[string]any
		if code := do(t, "POST", hs.URL+"/threads/"+th.ID+"/runs/wait", map[string]any{"assistant_id": "worst", "input": map[string]any{"Best": 5}}, nil, &out); code != 200 {
			t.Fatalf("first run: %d %v", code, out)
		}
		return th.ID
	}
	best := func(t *testing.T, id string) int {
		t.Helper()
		var st state
		if code := do(t, "GET", hs.URL+"/threads/"+id+"/state", nil, nil, &st); code != 200 {
			t.Fatalf("GET state: %d", code)
		}
		return st.Values.Best
	}

	t.Run("state edit", func(t *testing.T) {
		id := newThread(t)
		if got := best(t, id); got != 5 {
			t.Fatalf("Best after the first run = %d, want 5", got)
		}
		var out map[string]any
		if code := do(t, "POST", hs.URL+"/threads/"+id+"/state", map[string]any{"values": map[string]any{"Best": 3}}, nil, &out); code != 200 {
			t.Fatalf("POST state: %d %v", code, out)
		}
		if got := best(t, id); got != 3 {
			t.Fatalf("Best after editing 3 onto 5 = %d, want 3 (merged by the graph's handle, min)", got)
		}
	})
	t.Run("run input", func(t *testing.T) {
		id := newThread(t)
		var out map[string]any
		if code := do(t, "POST", hs.URL+"/threads/"+id+"/runs/wait", map[string]any{"assistant_id": "worst", "input": map[string]any{"Best": 3}}, nil, &out); code != 200 {
			t.Fatalf("second run: %d %v", code, out)
		}
		if got := best(t, id); got != 3 {
			t.Fatalf("Best after the input 3 onto 5 = %d, want 3", got)
		}
	})
}
