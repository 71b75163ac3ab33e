package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// storeWithRun makes a memory store with thread t1 (busy) and its run r1
// of status status and worker worker (attempt 1).
func storeWithRun(t *testing.T, status, worker string) Store {
	t.Helper()
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: status,
		Worker: worker, Attempt: 1, Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}); err != nil {
		t.Fatal(err)
	}
	return st
}

// incServer makes a server of cfg with the graph "inc" registered (its one
// node adds 1 to n), served over HTTP. The test's end drops the client
// connections, closes the server (again, where the test closed it) and
// then the HTTP server.
func incServer(t *testing.T, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	registerInc(t, s)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections() // a request still waiting fails the test, not its end
		s.Close(context.Background())
		hs.Close()
	})
	return s, hs
}

// registerInc registers on s the graph "inc", whose one node, inc, adds 1
// to n.
func registerInc(t *testing.T, s *Server) {
	t.Helper()
	n := graph.Replace(func(h *held) *int { return &h.N })
	g := graph.New[held]()
	g.AddNode("inc", func(ctx context.Context, h held) (graph.Update[held], error) { return n.Set(h.N + 1), nil })
	g.AddEdge(graph.START, "inc").AddEdge("inc", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(s.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(s, "inc", app); err != nil {
		t.Fatal(err)
	}
}

// call sends a JSON request to hs and returns the status and body; a
// request that gets no answer returns 0 and the error's text.
func call(ctx context.Context, t *testing.T, hs *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hs.Client().Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mustAPIKeys is APIKeys(keys), which must accept them.
func mustAPIKeys(t testing.TB, keys map[string]string) func(*http.Request) (string, error) {
	auth, err := APIKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}
