package swarm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/examples/internal/stalltest"
	"github.com/agentgraph/agentgraph/examples/swarm"
)

func apiServer(t *testing.T, s *swarm.Swarm, cfg swarm.HTTPConfig) *httptest.Server {
	t.Helper()
	h, err := s.Handler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TestTokenlessAPIRefusesProxiedRequests: a request to the API without
// tokens that came through a proxy gets 403 naming the header and
// HTTPConfig.Tokens, not the 415 of a body that is not JSON.
func TestTokenlessAPIRefusesProxiedRequests(t *testing.T) {
	srv := apiServer(t, newSwarm(t, swarm.Config{}), swarm.HTTPConfig{})
	resp := post(t, srv.URL+"/tasks", `{"task": "x"}`, map[string]string{"X-Forwarded-For": "203.0.113.9"})
	e := decode[apiErr](t, resp)
	if resp.StatusCode != http.StatusForbidden || e.Field != "X-Forwarded-For" || !strings.Contains(e.Error, "HTTPConfig.Tokens") {
		t.Errorf("POST /tasks through a proxy: %d %+v, want 403 naming X-Forwarded-For and HTTPConfig.Tokens", resp.StatusCode, e)
	}
}

func post(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode[T any](t *testing.T, resp *http.Response) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("decoding the %d response: %v", resp.StatusCode, err)
	}
	return v
}

type apiErr struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

// TestHTTPTask: POST /tasks runs a task and returns its outcome; GET
// /tasks/{id} shows it again.
func TestHTTPTask(t *testing.T) {
	t.Parallel()
	srv := apiServer(t, newSwarm(t, swarm.Config{}), swarm.HTTPConfig{})
	resp := post(t, srv.URL+"/tasks", `{"task": "What is 2 + 3?"}`, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %+v", resp.StatusCode, decode[apiErr](t, resp))
	}
	out := decode[swarm.Outcome](t, resp)
	if out.Status != swarm.StatusComplete || !strings.Contains(out.Answer, "2 + 3 = 5") || !strings.HasPrefix(out.Thread, "local.") {
		t.Fatalf("outcome = %+v", out)
	}
	got, err := http.Get(srv.URL + "/tasks/" + out.Thread)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if again := decode[swarm.Outcome](t, got); got.StatusCode != http.StatusOK || again.Answer != out.Answer {
		t.Errorf("GET: %d %+v", got.StatusCode, again)
	}
}

// TestHTTPSSE: with Accept: text/event-stream the task's progress streams
// as server-sent events, the last one "done" with the outcome.
func TestHTTPSSE(t *testing.T) {
	t.Parallel()
	srv := apiServer(t, newSwarm(t, swarm.Config{}), swarm.HTTPConfig{})
	resp := post(t, srv.URL+"/tasks", `{"task": "`+teamTask+`"}`, map[string]string{"Accept": "text/event-stream"})
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	var names []string
	var last swarm.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			last = swarm.Event{}
			if err := json.Unmarshal([]byte(data), &last); err != nil {
				t.Fatalf("event data %q: %v", data, err)
			}
		}
	}
	for _, want := range []string{"plan", "execute", "review", "result", "answer", "done"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("events %v lack %q", names, want)
		}
	}
	if names[len(names)-1] != "done" || last.Outcome == nil || last.Outcome.Status != swarm.StatusComplete {
		t.Errorf("last event %v %+v, want done with a complete outcome", names[len(names)-1], last.Outcome)
	}
}

// TestHTTPValidation: bad requests are refused with the field named.
func TestHTTPValidation(t *testing.T) {
	t.Parallel()
	srv := apiServer(t, newSwarm(t, swarm.Config{}), swarm.HTTPConfig{MaxBody: 1 << 10})
	for _, c := range []struct {
		name, body string
		header     map[string]string
		code       int
		field      string
	}{
		{"empty task", `{"task": "   "}`, nil, 400, "task"},
		{"missing task", `{}`, nil, 400, "task"},
		{"unknown field", `{"tsk": "hi"}`, nil, 400, "tsk"},
		{"wrong type", `{"task": 5}`, nil, 400, "task"},
		{"not JSON", `task=hi`, nil, 400, ""},
		{"too big", `{"task": "` + strings.Repeat("a", 2<<10) + `"}`, nil, 413, ""},
		{"content type", `{"task": "hi"}`, map[string]string{"Content-Type": "text/plain"}, 415, ""},
		{"foreign origin", `{"task": "hi"}`, map[string]string{"Origin": "https://evil.example"}, 403, ""},
		{"foreign host", `{"task": "hi"}`, map[string]string{"Host": "evil.example"}, 403, ""},
	} {
		resp := post(t, srv.URL+"/tasks", c.body, c.header)
		e := decode[apiErr](t, resp)
		if resp.StatusCode != c.code || e.Field != c.field || e.Error == "" {
			t.Errorf("%s: %d %+v, want %d naming %q", c.name, resp.StatusCode, e, c.code, c.field)
		}
	}
	big := apiServer(t, newSwarm(t, swarm.Config{}), swarm.HTTPConfig{})
	resp := post(t, big.URL+"/tasks", `{"task": "`+strings.Repeat("a ", swarm.MaxTaskLen)+`"}`, nil)
	if e := decode[apiErr](t, resp); resp.StatusCode != 400 || e.Field != "task" {
		t.Errorf("task over MaxTaskLen: %d %+v", resp.StatusCode, e)
	}
	resp = post(t, srv.URL+"/tasks", `{"task": "What is 1 + 1?"}`, map[string]string{"Origin": srv.URL})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("same-origin page: %d", resp.StatusCode)
	}
}

// TestHTTPAuth: with tokens, requests need one, and a principal cannot see
// or resume another's task.
func TestHTTPAuth(t *testing.T) {
	t.Parallel()
	alice, bob := "alice-token-0123456789", "bob-token-0123456789ab"
	srv := apiServer(t, newSwarm(t, swarm.Config{}), swarm.HTTPConfig{Tokens: map[string]string{alice: "alice", bob: "bob"}})
	if resp := post(t, srv.URL+"/tasks", `{"task": "What is 1 + 1?"}`, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	if resp := post(t, srv.URL+"/tasks", `{"task": "What is 1 + 1?"}`, map[string]string{"Authorization": "Bearer wrong-token-0123456789"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", resp.StatusCode)
	}
	resp := post(t, srv.URL+"/tasks", `{"task": "What is 1 + 1?"}`, map[string]string{"Authorization": "Bearer " + alice, "Host": "swarm.example"})
	out := decode[swarm.Outcome](t, resp)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(out.Thread, "alice.") {
		t.Fatalf("alice's task: %d %+v", resp.StatusCode, out)
	}
	get := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/tasks/"+out.Thread, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(alice); code != http.StatusOK {
		t.Errorf("alice reading her task: %d", code)
	}
	if code := get(bob); code != http.StatusNotFound {
		t.Errorf("bob reading alice's task: %d, want 404", code)
	}
	if resp := post(t, srv.URL+"/tasks/"+out.Thread+"/resume", ``, map[string]string{"Authorization": "Bearer " + bob}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob resuming alice's task: %d, want 404", resp.StatusCode)
	}
	if _, err := newSwarm(t, swarm.Config{}).Handler(swarm.HTTPConfig{Tokens: map[string]string{"short": "x"}}); err == nil {
		t.Error("a short token was accepted")
	}
}

// TestModelDown: an unreachable model ends the run with a ModelError that
// says what to check, and the API answers 502 with the task's id.
func TestModelDown(t *testing.T) {
	t.Parallel()
	client, err := agent.New(agent.Config{Model: llmtest.New().Default(
		llmtest.Fail(errors.New("dial tcp 127.0.0.1:1: connect: connection refused")))})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{Client: client})
	_, err = s.Do(context.Background(), "What is 2 + 3?")
	var me *swarm.ModelError
	if !errors.As(err, &me) || me.Node != swarm.Supervisor || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Do = %v, want a ModelError of the supervisor", err)
	}
	srv := apiServer(t, s, swarm.HTTPConfig{})
	resp := post(t, srv.URL+"/tasks", `{"task": "What is 2 + 3?"}`, nil)
	if e := decode[apiErr](t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(e.Error, "the model failed") {
		t.Errorf("API: %d %+v, want 502 naming the model", resp.StatusCode, e)
	}
}

// TestHTTPSSEWriteStall: a client that stops reading its stream holds the
// handler for HTTPConfig.WriteStall per write, not forever.
func TestHTTPSSEWriteStall(t *testing.T) {
	t.Parallel()
	h, err := newSwarm(t, swarm.Config{}).Handler(swarm.HTTPConfig{WriteStall: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stalltest.CheckWriteStall(t, h, "/tasks", `{"task": "`+teamTask+`"}`)
}

// quietStall is the WriteStall of the quiet-stream test and quietFor the
// model's delay before each reply: the stream is quiet for three times the
// stall between events, while a write that a loaded machine is slow to
// make (its HTTP/2 frames go through the connection's own goroutine)
// still has half a second.
const quietStall, quietFor = 500 * time.Millisecond, 1500 * time.Millisecond

// TestHTTP2QuietRun: over HTTP/2 a run quiet for longer than WriteStall
// between events (or before its JSON answer) is not reset: the write
// deadline is set only around writes.
func TestHTTP2QuietRun(t *testing.T) {
	t.Parallel()
	client, err := agent.New(agent.Config{Model: llmtest.New().Default(
		llmtest.Reply{Delay: quietFor, Model: swarm.NewOfflineModel()})})
	if err != nil {
		t.Fatal(err)
	}
	h, err := newSwarm(t, swarm.Config{Client: client}).Handler(swarm.HTTPConfig{WriteStall: quietStall})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, accept := range []string{"text/event-stream", "application/json"} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/tasks", strings.NewReader(`{"task": "What is 2 + 3?"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("Accept %s: %v", accept, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("served over %s, want HTTP/2", resp.Proto)
		}
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status"`) {
			t.Errorf("Accept %s: status %d, %v, body %q; want the outcome", accept, resp.StatusCode, err, body)
		}
	}
}
