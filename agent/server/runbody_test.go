package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph"
)

// newGreetServer serves the graph "greet" (one node, whose reply names
// the run's context user, or the input's name) and "steps" (three nodes
// in a row), on a loopback httptest server.
func newGreetServer(t *testing.T, cfg server.Config) (*server.Server, string) {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[greeting]()
	g.AddNode("greet", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		if user, ok := server.RunContext(ctx)["user"].(string); ok {
			return greetingReply.Set("hi " + user + " (from the context)"), nil
		}
		return greetingReply.Set("hi " + s.Name), nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "greet", app); err != nil {
		t.Fatal(err)
	}
	sg := graph.New[greeting]()
	for i, n := range []string{"a", "b", "c"} {
		sg.AddNode(n, func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
			return greetingReply.Set(s.Reply + n), nil
		})
		if i == 0 {
			sg.AddEdge(graph.START, n)
		} else {
			sg.AddEdge([]string{"a", "b"}[i-1], n)
		}
	}
	sg.AddEdge("c", graph.END)
	steps, err := sg.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "steps", steps); err != nil {
		t.Fatal(err)
	}
	return srv, newHTTPServer(t, srv)
}

func newThread(t *testing.T, url string) string {
	t.Helper()
	var th struct {
		ID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	return th.ID
}

// TestRunContext: the run body's context reaches the graph's nodes
// through server.RunContext.
func TestRunContext(t *testing.T) {
	_, url := newGreetServer(t, server.Config{})
	tid := newThread(t, url)
	var out greeting
	do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "x"}, "context": map[string]any{"user": "ada"}}, nil, &out)
	if out.Reply != "hi ada (from the context)" {
		t.Fatalf("with context: reply %q", out.Reply)
	}
	do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "x"}}, nil, &out)
	if out.Reply != "hi x" {
		t.Fatalf("without context: reply %q", out.Reply)
	}
	if server.RunContext(t.Context()) != nil {
		t.Fatal("RunContext outside a run is not nil")
	}
}

// TestRunDurability: durability exit saves fewer checkpoints than sync
// (one per step), as does the deprecated checkpoint_during false; an
// unknown mode is 422.
func TestRunDurability(t *testing.T) {
	_, url := newGreetServer(t, server.Config{})
	saved := func(body map[string]any) int {
		tid := newThread(t, url)
		body["assistant_id"], body["input"] = "steps", map[string]any{"reply": ">"}
		var out greeting
		if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, &out); code != 200 || out.Reply != ">abc" {
			t.Fatalf("run %v: %d %+v", body, code, out)
		}
		var hist []json.RawMessage
		do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"limit": 100}, nil, &hist)
		return len(hist)
	}
	step, async, exit := saved(map[string]any{"durability": "sync"}), saved(map[string]any{"durability": "async"}), saved(map[string]any{"durability": "exit"})
	legacy := saved(map[string]any{"checkpoint_during": false})
	if step < 4 || async != step || exit >= step || exit < 1 || legacy != exit {
		t.Fatalf("checkpoints saved: sync %d, async %d, exit %d, checkpoint_during=false %d; want sync = async >= 4 > exit = legacy >= 1", step, async, exit, legacy)
	}
	var e map[string]string
	if code := do(t, "POST", url+"/runs/wait", map[string]any{"assistant_id": "steps", "durability": "sometimes"}, nil, &e); code != 422 || !strings.Contains(e["detail"], "durability") {
		t.Fatalf("durability sometimes: %d %v", code, e)
	}
}

// webhook starts a server that takes webhooks, closed when the test ends,
// and returns its URL and the bodies it receives.
func webhook(t *testing.T) (string, <-chan map[string]any) {
	t.Helper()
	got := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body
	}))
	t.Cleanup(hook.Close)
	return hook.URL, got
}

// TestRunWebhook: when a run ends, its webhook receives the run with its
// status, times and values.
func TestRunWebhook(t *testing.T) {
	hook, got := webhook(t)
	_, url := newGreetServer(t, server.Config{WebhookAllowPrivate: true})
	tid := newThread(t, url)
	var run map[string]any
	do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "ada"}, "webhook": hook + "/done"}, nil, &run)
	select {
	case body := <-got:
		vals, _ := body["values"].(map[string]any)
		for _, k := range []string{"run_started_at", "run_ended_at", "webhook_sent_at"} {
			if s, _ := body[k].(string); s == "" {
				t.Errorf("webhook body lacks %s: %v", k, body)
			}
		}
		if body["run_id"] != run["run_id"] || body["thread_id"] != tid || body["status"] != "success" || vals["reply"] != "hi ada" || body["error"] != nil {
			t.Fatalf("webhook body %v", body)
		}
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("the webhook was never called")
	}
}

// TestRunWebhookPath: a webhook given as a path is served in-process by
// Config.WebhookHandler (the mux of the server's custom routes), from
// loopback, with the run; through it the server's own routes serve it as
// the run's principal, past authentication; a path that answers 404 is
// logged. The handler's request carries the run's principal
// (guard.Principal), and only the paths Config.WebhookPaths allows are
// accepted.
func TestRunWebhookPath(t *testing.T) {
	type call struct {
		body              map[string]any
		remote, ct, owner string
	}
	got := make(chan call, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/done", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- call{body, r.RemoteAddr, r.Header.Get("Content-Type"), guard.Principal(r.Context())}
	})
	core, logs := observer.New(zap.ErrorLevel)
	srv, url := newGreetServer(t, server.Config{Authenticate: apiKeys(t, map[string]string{"alice-key-0123456789": "alice"}),
		WebhookHandler: mux, WebhookPaths: []string{"/hooks/", "/assistants/search", "/nope"}, Logger: zap.New(core)})
	mux.Handle("/", srv)
	alice := http.Header{"X-Api-Key": {"alice-key-0123456789"}}
	var th map[string]any
	if code := do(t, "POST", url+"/threads", map[string]any{}, alice, &th); code != 200 {
		t.Fatalf("create thread: %d %v", code, th)
	}
	tid, _ := th["thread_id"].(string)
	var run map[string]any
	if code := do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "ada"}, "webhook": "/hooks/done"}, alice, &run); code != 200 {
		t.Fatalf("run with webhook /hooks/done: %d %v", code, run)
	}
	select {
	case c := <-got:
		vals, _ := c.body["values"].(map[string]any)
		if c.body["run_id"] != run["run_id"] || c.body["status"] != "success" || vals["reply"] != "hi ada" || c.remote != "127.0.0.1:0" || c.ct != "application/json" || c.owner != "alice" {
			t.Fatalf("webhook %+v", c)
		}
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("the webhook was never called")
	}
	// Paths outside Config.WebhookPaths are refused when the run is created.
	for _, hook := range []string{"/admin/shutdown", "/hooks", "/hooks/../admin", "/nope/x", "/assistants/search/x"} {
		var e map[string]string
		if code := do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "greet", "webhook": hook}, alice, &e); code != 422 || !strings.Contains(e["detail"], "WebhookPaths") {
			t.Errorf("webhook %s: %d %v; want 422 naming Config.WebhookPaths", hook, code, e)
		}
	}
	// The server's own route, as alice, and a route that does not exist.
	for _, hook := range []string{"/assistants/search", "/nope"} {
		var out map[string]any
		if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "x"}, "webhook": hook}, alice, &out); code != 200 {
			t.Fatalf("run with webhook %s: %d %v", hook, code, out)
		}
	}
	if err := srv.Close(t.Context()); err != nil { // waits for the webhooks
		t.Fatal(err)
	}
	entries := logs.FilterMessage("sending a run's webhook").All()
	if len(entries) != 1 || !strings.Contains(fmt.Sprint(entries[0].ContextMap()["error"]), "/nope answered 404") {
		t.Fatalf("logged %v; want one failed webhook, /nope's", entries)
	}
}

// TestRunWebhookPathRefusedByDefault: without Config.WebhookPaths a
// webhook given as a path is refused, and a bad WebhookPaths entry is
// refused by New.
func TestRunWebhookPathRefusedByDefault(t *testing.T) {
	_, url := newGreetServer(t, server.Config{})
	var e map[string]string
	if code := do(t, "POST", url+"/runs", map[string]any{"assistant_id": "greet", "webhook": "/hooks/done"}, nil, &e); code != 422 || !strings.Contains(e["detail"], "WebhookPaths") {
		t.Errorf("webhook /hooks/done without WebhookPaths: %d %v; want 422", code, e)
	}
	for _, p := range []string{"hooks/", "//evil/", "/a/../b"} {
		if _, err := server.New(server.Config{WebhookPaths: []string{p}}); err == nil || !strings.Contains(err.Error(), "WebhookPaths[0]") {
			t.Errorf("WebhookPaths %q: %v; want an error naming it", p, err)
		}
	}
}

// TestRunWebhookRefused: a webhook must be an absolute http(s) URL or a path; by
// default it may not name a loopback or private address, nor reach one
// through a name, and a refused webhook is logged.
func TestRunWebhookRefused(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	srv, url := newGreetServer(t, server.Config{Logger: zap.New(core)})
	for _, hook := range []string{"ftp://example.com/x", "//example.com/x", "/hooks/%zz", "http://127.0.0.1:9/x", "http://[::1]:9/x", "http://10.1.2.3/x", "http://169.254.169.254/latest", "http://localhost:9/x"} {
		var e map[string]string
		if code := do(t, "POST", url+"/runs", map[string]any{"assistant_id": "greet", "webhook": hook}, nil, &e); code != 422 || !strings.Contains(e["detail"], "webhook") {
			t.Errorf("webhook %s: %d %v; want 422", hook, code, e)
		}
	}
	// A name that resolves to a non-public address is refused when the
	// webhook connects: this machine's host name, on a receiver listening
	// on every interface.
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	addrs, err := net.LookupIP(host)
	if err != nil || len(addrs) == 0 {
		t.Skipf("host name %s does not resolve (%v); the connect-time check is not tested", host, err)
	}
	for _, a := range addrs {
		if a.IsGlobalUnicast() && !a.IsPrivate() {
			t.Skipf("host name %s resolves to public %s; the connect-time check is not tested", host, a)
		}
	}
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	called := make(chan struct{}, 1)
	hook := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called <- struct{}{} }))
	hook.Listener.Close()
	hook.Listener = ln
	hook.Start()
	defer hook.Close()
	target := fmt.Sprintf("http://%s:%d/done", host, ln.Addr().(*net.TCPAddr).Port)
	var out map[string]any
	if code := do(t, "POST", url+"/runs/wait", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "x"}, "webhook": target}, nil, &out); code != 200 {
		t.Fatalf("run with webhook %s: %d %v", target, code, out)
	}
	if err := srv.Close(t.Context()); err != nil { // waits for the webhook
		t.Fatal(err)
	}
	select {
	case <-called:
		t.Fatalf("the webhook reached %s", target)
	default:
	}
	entries := logs.FilterMessage("sending a run's webhook").All()
	if len(entries) != 1 || !strings.Contains(fmt.Sprint(entries[0].ContextMap()["error"]), "WebhookAllowPrivate") {
		t.Fatalf("logged %v; want one refused webhook", entries)
	}
}

// TestWebhookRetriesStopOnClose: a webhook answering 500 is retried, but
// Close stops the retries instead of waiting for them.
func TestWebhookRetriesStopOnClose(t *testing.T) {
	var attempts atomic.Int32
	first := make(chan struct{}, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		select {
		case first <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer hook.Close()
	srv, url := newGreetServer(t, server.Config{WebhookAllowPrivate: true})
	tid := newThread(t, url)
	do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "ada"}, "webhook": hook.URL + "/done"}, nil, nil)
	select {
	case <-first:
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("the webhook was never called")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := attempts.Load(); n >= 3 {
		t.Fatalf("%d webhook attempts by the time Close returned; want the retries stopped", n)
	}
}

// TestWebhookOfCancelledPendingRun: a run cancelled while pending (here a
// delayed one) still sends its webhook, with status interrupted.
func TestWebhookOfCancelledPendingRun(t *testing.T) {
	hook, got := webhook(t)
	_, url := newGreetServer(t, server.Config{WebhookAllowPrivate: true})
	tid := newThread(t, url)
	var run map[string]any
	do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "ada"}, "after_seconds": 3600, "webhook": hook + "/done"}, nil, &run)
	rid, _ := run["run_id"].(string)
	if code := do(t, "POST", url+"/threads/"+tid+"/runs/"+rid+"/cancel", nil, nil, nil); code/100 != 2 {
		t.Fatalf("cancel: %d", code)
	}
	select {
	case body := <-got:
		if body["run_id"] != rid || body["status"] != server.RunInterrupted {
			t.Fatalf("webhook body %v; want run %s interrupted", body, rid)
		}
	case <-time.After(time.Minute): // a guard against a hang only
		t.Fatal("the webhook of the cancelled pending run was never called")
	}
}

// TestThreadValuesMatchState: a finished run's thread record takes its
// values from the run's last values event, not from the checkpoint; they
// are the values GET /threads/{id}/state reads from the checkpoint.
func TestThreadValuesMatchState(t *testing.T) {
	_, url := newGreetServer(t, server.Config{})
	for _, durability := range []string{"sync", "exit"} {
		tid := newThread(t, url)
		body := map[string]any{"assistant_id": "steps", "input": map[string]any{"reply": ">", "name": "ö \u2028 <x>"}, "durability": durability}
		if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, nil); code != 200 {
			t.Fatalf("run: %d", code)
		}
		var th struct {
			Status string         `json:"status"`
			Values map[string]any `json:"values"`
		}
		var st struct {
			Values map[string]any `json:"values"`
			Next   []string       `json:"next"`
		}
		do(t, "GET", url+"/threads/"+tid, nil, nil, &th)
		do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &st)
		if th.Status != "idle" || len(st.Next) != 0 || th.Values["reply"] != ">abc" {
			t.Fatalf("%s: thread %+v, state %+v; want idle, no next, reply >abc", durability, th, st)
		}
		if diff := cmp.Diff(st.Values, th.Values); diff != "" {
			t.Errorf("%s: thread values differ from the state's (-state +thread):\n%s", durability, diff)
		}
	}
}
