package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// msg is a LangChain-shaped message: what the JS client sends and reads.
type msg struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type,omitempty"`
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

// chat is the state of the conformance graph of the API note's Appendix A.
type chat struct {
	Messages []msg  `json:"messages"`
	Approved string `json:"approved"`
}

var (
	chatMessages = graph.Append(func(s *chat) *[]msg { return &s.Messages })
	chatApproved = graph.Replace(func(s *chat) *string { return &s.Approved })
)

func last(s chat) string {
	if len(s.Messages) == 0 {
		return ""
	}
	return s.Messages[len(s.Messages)-1].Content
}

// gates lets a test hold the "slow" graph's node until it releases it. A
// release before the node waits opens the gate in advance, so a test never
// depends on how fast the run reaches its node; a node that passes a gate
// consumes it, and the next run's node waits again.
type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

type gate struct {
	ch      chan struct{}
	closed  bool
	waiting int // nodes waiting on it
}

func (g *gates) entry(thread string) *gate {
	if g.m == nil {
		g.m = map[string]*gate{}
	}
	e := g.m[thread]
	if e == nil {
		e = &gate{ch: make(chan struct{})}
		g.m[thread] = e
	}
	return e
}

// wait blocks until the thread's gate is released or ctx ends.
func (g *gates) wait(ctx context.Context, thread string) error {
	g.mu.Lock()
	e := g.entry(thread)
	e.waiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		e.waiting--
		g.mu.Unlock()
	}()
	select {
	case <-e.ch:
		g.mu.Lock()
		if g.m[thread] == e {
			delete(g.m, thread)
		}
		g.mu.Unlock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waiting reports whether a node waits on the thread's gate.
func (g *gates) waiting(thread string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	e := g.m[thread]
	return e != nil && e.waiting > 0
}

// release opens the thread's gate.
func (g *gates) release(thread string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.entry(thread); !e.closed {
		e.closed = true
		close(e.ch)
	}
}

// testServer serves the graphs "agent" (draft -> review (interrupt) ->
// finish), "slow" (one node that waits for its gate, then echoes) and
// "fail" (a node that fails) on a loopback httptest server.
type testServer struct {
	*server.Server
	URL   string
	gates *gates
}

func newTestServer(t *testing.T, cfg server.Config) *testServer {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	saver := srv.Checkpointer()
	g := graph.New[chat]()
	g.AddNode("draft", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		text := "draft for: " + last(s)
		if err := graph.Emit(ctx, map[string]string{"step": "draft"}); err != nil {
			return graph.Update[chat]{}, err
		}
		for _, w := range strings.SplitAfter(text, " ") {
			if err := graph.EmitMessage(ctx, model.Chunk{Kind: model.ChunkText, Text: w}); err != nil {
				return graph.Update[chat]{}, err
			}
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: text}}), nil
	})
	g.AddNode("review", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		answer, err := graph.Interrupt[string](ctx, map[string]string{"question": "approve?", "draft": last(s)})
		if err != nil {
			return graph.Update[chat]{}, err
		}
		return chatApproved.Set(answer), nil
	})
	g.AddNode("finish", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		return chatMessages.Set([]msg{{Type: "ai", Content: "final: " + s.Approved}}), nil
	})
	g.AddEdge(graph.START, "draft").AddEdge("draft", "review").AddEdge("review", "finish").AddEdge("finish", graph.END)
	agent, err := g.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "agent", agent); err != nil {
		t.Fatal(err)
	}
	gs := &gates{}
	sg := graph.New[chat]()
	sg.AddNode("slow", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		if err := gs.wait(ctx, graph.ConfigFrom(ctx).ThreadID); err != nil {
			return graph.Update[chat]{}, err
		}
		return chatMessages.Set([]msg{{Type: "ai", Content: "slow done: " + last(s)}}), nil
	})
	sg.AddEdge(graph.START, "slow").AddEdge("slow", graph.END)
	slow, err := sg.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "slow", slow); err != nil {
		t.Fatal(err)
	}
	fg := graph.New[chat]()
	fg.AddNode("explode", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		return graph.Update[chat]{}, fmt.Errorf("node exploded")
	})
	fg.AddEdge(graph.START, "explode").AddEdge("explode", graph.END)
	fail, err := fg.Compile(graph.WithCheckpointer(saver))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "fail", fail); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	// A test-only route the JS scripts call to let a slow node finish.
	mux.HandleFunc("POST /test/release/{tid}", func(w http.ResponseWriter, r *http.Request) {
		gs.release(r.PathValue("tid"))
		w.WriteHeader(http.StatusNoContent)
	})
	// And one that says whether the slow node has started and waits.
	mux.HandleFunc("GET /test/waiting/{tid}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, gs.waiting(r.PathValue("tid")))
	})
	mux.Handle("/", srv)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return &testServer{Server: srv, URL: hs.URL, gates: gs}
}

// registerAsk registers graph id on srv: ask (an interrupt asking
// "approve?", whose answer becomes approved), then the node next, which
// runs then.
func registerAsk(t *testing.T, srv *server.Server, id, next string, then func(context.Context, chat) (graph.Update[chat], error)) {
	t.Helper()
	g := graph.New[chat]()
	g.AddNode("ask", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		answer, err := graph.Interrupt[string](ctx, "approve?")
		if err != nil {
			return graph.Update[chat]{}, err
		}
		return chatApproved.Set(answer), nil
	})
	g.AddNode(next, then)
	g.AddEdge(graph.START, "ask").AddEdge("ask", next).AddEdge(next, graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, id, app); err != nil {
		t.Fatal(err)
	}
}

// reply is the answer to a request: its status and body, or, for a
// request that got none, status 0 and the error's text.
type reply struct {
	code int
	body string
}

// postLater posts body as JSON to url under ctx in a goroutine of its own
// and sends the answer on the channel it returns.
func postLater(ctx context.Context, url string, body map[string]any) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- reply{0, err.Error()}
			return
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		out <- reply{resp.StatusCode, string(rb)}
	}()
	return out
}

// do sends a JSON request and decodes a JSON answer into out (when not nil).
func do(t *testing.T, method, url string, body any, header http.Header, out any) int {
	t.Helper()
	resp := sendJSON(t, method, url, body, header)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(strings.TrimSpace(string(b))) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, url, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// sendJSON sends a JSON request (body nil: none) with the fields of header
// and answers the response, whose body the caller closes.
func sendJSON(t *testing.T, method, url string, body any, header http.Header) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type sseEvent struct {
	Name string
	ID   string
	Data json.RawMessage
}

// readSSE reads a whole SSE response.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		}
	}
	return out
}

// newHTTPServer serves srv on loopback and closes both after the test.
func newHTTPServer(t *testing.T, srv *server.Server) string {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return hs.URL
}

func decodeJSON(resp *http.Response, out any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// labelledState is what the tests of PATCH /threads/{id}/state read of a
// thread's state: its checkpoint's metadata and id.
type labelledState struct {
	Metadata   map[string]any `json:"metadata"`
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
}

// raw sends body as is, as application/json unless header sets another
// Content-Type ("" sends none), and answers the status and the body.
func raw(t *testing.T, method, url, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Del("Content-Type")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// aliceBob is a Config whose requests are alice's (key-a) or bob's
// (key-b), with the headers that send each.
func aliceBob() (server.Config, http.Header, http.Header) {
	cfg := server.Config{Authenticate: apiKeys(nil, map[string]string{"key-a-0123456789": "alice", "key-b-0123456789": "bob"})}
	return cfg, http.Header{"X-Api-Key": {"key-a-0123456789"}}, http.Header{"X-Api-Key": {"key-b-0123456789"}}
}

// interruptedThread creates a thread of h's principal, with metadata
// {"owner": "first"}, and runs the agent graph on it, with the input "hi",
// to its interrupt; it answers the thread and run ids. A refusal, or a
// thread left with other than that one run, fails the test.
func interruptedThread(t *testing.T, url string, h http.Header) (tid, rid string) {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"owner": "first"}}, h, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	if code := do(t, "POST", url+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, h, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	var runs []struct {
		RunID string `json:"run_id"`
	}
	do(t, "GET", url+"/threads/"+th.ThreadID+"/runs", nil, h, &runs)
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	return th.ThreadID, runs[0].RunID
}

// waitForSlot sends body to /runs/wait until it is served, as it is once
// the principal has a free stream slot (MaxStreams); an answer other than
// 200 or 429 fails the test.
func waitForSlot(t *testing.T, url, body, what string) {
	t.Helper()
	waitUntil(t, what, func() bool {
		code, out := raw(t, "POST", url+"/runs/wait", body, nil)
		if code != 200 && code != http.StatusTooManyRequests {
			t.Fatalf("a second waiting request: %d %s", code, out)
		}
		return code == 200
	})
}

// waitThreadGone waits until thread tid is gone (404); when it is not, it
// fails the test naming the status of the thread's run rid.
func waitThreadGone(t *testing.T, url, tid, rid string) {
	t.Helper()
	for end := time.Now().Add(time.Minute); do(t, "GET", url+"/threads/"+tid, nil, nil, nil) != http.StatusNotFound; {
		if time.Now().After(end) {
			var run struct {
				Status string `json:"status"`
			}
			do(t, "GET", url+"/threads/"+tid+"/runs/"+rid, nil, nil, &run)
			t.Fatalf("the stateless run's thread is still there after a minute (run %s)", run.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// humanInput is a run's input of one human message.
func humanInput(text string) map[string]any {
	return map[string]any{"messages": []msg{{Type: "human", Content: text}}}
}

// threadStatus answers the status of thread tid.
func threadStatus(t *testing.T, url, tid string) string {
	t.Helper()
	var th struct {
		Status string `json:"status"`
	}
	do(t, "GET", url+"/threads/"+tid, nil, nil, &th)
	return th.Status
}

// historyIDs answers the checkpoint ids of the history of thread tid that
// POST /threads/{id}/history answers to body, newest first; an answer
// other than 200 fails the test.
func historyIDs(t *testing.T, url, tid string, body map[string]any) []string {
	t.Helper()
	var hist []struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if code := do(t, "POST", url+"/threads/"+tid+"/history", body, nil, &hist); code != 200 {
		t.Fatalf("history %v: %d", body, code)
	}
	ids := make([]string, len(hist))
	for i, h := range hist {
		ids[i] = h.Checkpoint.CheckpointID
	}
	return ids
}

// startRun creates a background run of body on thread tid and answers its
// id; an answer other than 200 fails the test, naming the run by what.
func startRun(t *testing.T, url, tid string, body map[string]any, what string) string {
	t.Helper()
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", url+"/threads/"+tid+"/runs", body, nil, &run); code != 200 {
		t.Fatalf("%s: %d", what, code)
	}
	return run.RunID
}

// heldRun starts a run of the "slow" graph, with input "x", on thread tid
// and waits until its node waits at the thread's gate; it answers the
// run's id. what names the run in a failure.
func (s *testServer) heldRun(t *testing.T, tid, what string) string {
	t.Helper()
	rid := startRun(t, s.URL, tid, map[string]any{"assistant_id": "slow", "input": humanInput("x")}, what)
	waitUntil(t, "the "+what+" to wait in its node", func() bool { return s.gates.waiting(tid) })
	return rid
}

// apiKeys is server.APIKeys(keys), which must accept them: a test's
// failure, or a panic when t is nil (a helper without one).
func apiKeys(t testing.TB, keys map[string]string) func(*http.Request) (string, error) {
	auth, err := server.APIKeys(keys)
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	return auth
}
