package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
	"github.com/agentgraph/agentgraph/memory"
)

func TestAssistantIDMatchesTheLangGraphServers(t *testing.T) {
	// The note's example: graph "agent" has this id on the JS server.
	if got := server.AssistantID("agent"); got != "fe096781-5601-53d2-b2f6-0d3403f7e9ca" {
		t.Fatalf("AssistantID(agent) = %s", got)
	}
}

func TestStreamInterruptStateResume(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testStreamInterruptStateResume(t, server.Config{}) })
	t.Run("sqlite", func(t *testing.T) { testStreamInterruptStateResume(t, sqliteConfig(t)) })
}

// sqliteConfig keeps threads, runs, events and checkpoints in SQLite files.
func sqliteConfig(t *testing.T) server.Config {
	t.Helper()
	return sqliteConfigIn(t, t.TempDir())
}

// sqliteConfigIn keeps threads, runs, events and checkpoints in SQLite
// files in dir (server.db and checkpoints.db), closed when the test ends:
// a configuration opened again on dir finds what the last one kept.
func sqliteConfigIn(t *testing.T, dir string) server.Config {
	t.Helper()
	st, err := server.OpenSQLite(t.Context(), filepath.Join(dir, "server.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	saver, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(dir, "checkpoints.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { saver.Close() })
	return server.Config{Store: st, Checkpointer: saver}
}

func testStreamInterruptStateResume(t *testing.T, cfg server.Config) {
	ts := newTestServer(t, cfg)
	var th map[string]any
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": map[string]any{}}, nil, &th); code != 200 || th["status"] != "idle" {
		t.Fatalf("create thread: %d %v", code, th)
	}
	tid := th["thread_id"].(string)
	body := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}]},"stream_mode":["values","updates","messages-tuple","custom"]}`
	resp, err := http.Post(ts.URL+"/threads/"+tid+"/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	loc, cl := resp.Header.Get("Location"), resp.Header.Get("Content-Location")
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if len(evs) == 0 || evs[0].Name != "metadata" {
		t.Fatalf("events %v; want metadata first", evs)
	}
	var meta struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(evs[0].Data, &meta)
	if cl != "/threads/"+tid+"/runs/"+meta.RunID || loc != cl+"/stream" {
		t.Fatalf("Content-Location %q, Location %q for run %s", cl, loc, meta.RunID)
	}
	names := map[string]int{}
	var lastValues json.RawMessage
	for _, e := range evs {
		names[e.Name]++
		if e.Name == "values" {
			lastValues = e.Data
		}
	}
	if names["updates"] == 0 || names["messages"] == 0 || names["custom"] != 1 || names["end"] != 1 {
		t.Fatalf("event counts %v", names)
	}
	if !strings.Contains(string(lastValues), `"__interrupt__"`) || !strings.Contains(string(lastValues), "approve?") {
		t.Fatalf("last values %s; want the interrupt", lastValues)
	}
	var st struct {
		Next  []string `json:"next"`
		Tasks []struct {
			Name       string `json:"name"`
			Interrupts []struct {
				ID    string          `json:"id"`
				Value json.RawMessage `json:"value"`
			} `json:"interrupts"`
		} `json:"tasks"`
		Checkpoint       map[string]any `json:"checkpoint"`
		ParentCheckpoint map[string]any `json:"parent_checkpoint"`
		CreatedAt        string         `json:"created_at"`
	}
	do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &st)
	if len(st.Next) != 1 || st.Next[0] != "review" || len(st.Tasks) != 1 || len(st.Tasks[0].Interrupts) != 1 || st.Checkpoint["checkpoint_id"] == nil || st.ParentCheckpoint == nil || st.CreatedAt == "" {
		t.Fatalf("state %+v", st)
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th["status"] != "interrupted" {
		t.Fatalf("thread status %v; want interrupted", th["status"])
	}
	var final map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "yes"}}, nil, &final); code != 200 || final["approved"] != "yes" {
		t.Fatalf("wait with resume: %d %v", code, final)
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th["status"] != "idle" {
		t.Fatalf("thread status %v; want idle", th["status"])
	}
	var hist []map[string]any
	do(t, "POST", ts.URL+"/threads/"+tid+"/history", map[string]any{"limit": 3}, nil, &hist)
	if len(hist) != 3 {
		t.Fatalf("history has %d entries; want 3", len(hist))
	}
}

func TestFailingRunReportsTheErrorAndTheThreadStatus(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th map[string]any
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	var out map[string]any
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "fail", "input": map[string]any{}}, nil, &out)
	e, _ := out["__error__"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "node exploded") {
		t.Fatalf("wait on a failing run: %v; want __error__ naming the failure", out)
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th["status"] != "error" {
		t.Fatalf("thread status %v; want error", th["status"])
	}
}

func TestAuthenticationAndOwnership(t *testing.T) {
	ts := newTestServer(t, server.Config{Authenticate: apiKeys(t, map[string]string{"key-a-0123456789": "alice", "key-b-0123456789": "bob"})})
	alice := http.Header{"X-Api-Key": {"key-a-0123456789"}}
	bob := http.Header{"X-Api-Key": {"key-b-0123456789"}}
	var e map[string]string
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &e); code != 401 || !strings.Contains(e["detail"], "x-api-key") {
		t.Fatalf("no key: %d %v; want 401 naming x-api-key", code, e)
	}
	if code := do(t, "GET", ts.URL+"/info", nil, http.Header{"X-Api-Key": {"wrong"}}, &e); code != 401 {
		t.Fatalf("wrong key: %d", code)
	}
	// The health check answers without a key (a load balancer has none),
	// and with a wrong one; /info still asks for one.
	for _, h := range []http.Header{nil, {"X-Api-Key": {"wrong"}}} {
		var ok map[string]bool
		if code := do(t, "GET", ts.URL+"/ok", nil, h, &ok); code != 200 || !ok["ok"] {
			t.Fatalf("GET /ok with %v: %d %v; want 200 {ok: true}", h, code, ok)
		}
	}
	if code := do(t, "GET", ts.URL+"/info", nil, nil, &e); code != 401 {
		t.Fatalf("GET /info without a key: %d; want 401", code)
	}
	var th map[string]any
	do(t, "POST", ts.URL+"/threads", map[string]any{}, alice, &th)
	tid := th["thread_id"].(string)
	for _, c := range []struct{ method, path string }{
		{"GET", "/threads/" + tid}, {"GET", "/threads/" + tid + "/state"}, {"DELETE", "/threads/" + tid},
		{"POST", "/threads/" + tid + "/runs/wait"}, {"POST", "/threads/" + tid + "/history"},
	} {
		if code := do(t, c.method, ts.URL+c.path, map[string]any{"assistant_id": "agent", "input": map[string]any{}}, bob, nil); code != 404 {
			t.Errorf("bob %s %s: %d; want 404", c.method, c.path, code)
		}
	}
	var found []map[string]any
	do(t, "POST", ts.URL+"/threads/search", map[string]any{}, bob, &found)
	if len(found) != 0 {
		t.Fatalf("bob's search finds %d threads; want none", len(found))
	}
	do(t, "POST", ts.URL+"/threads/search", map[string]any{}, alice, &found)
	if len(found) != 1 {
		t.Fatalf("alice's search finds %d threads; want 1", len(found))
	}
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, alice, nil); code != 200 {
		t.Fatalf("alice GET her thread: %d", code)
	}
}

func TestValidationErrorsNameTheField(t *testing.T) {
	ts := newTestServer(t, server.Config{MaxBodyBytes: 4096})
	var th map[string]any
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	for _, c := range []struct {
		path  string
		body  any
		code  int
		field string
	}{
		{"/threads/" + tid + "/runs", map[string]any{"assistant_id": "agent", "stream_mode": "bogus"}, 422, "stream_mode"},
		{"/threads/" + tid + "/runs", map[string]any{"assistant_id": "agent", "multitask_strategy": "later"}, 422, "multitask_strategy"},
		{"/threads/" + tid + "/runs", map[string]any{"assistant_id": "agent", "on_disconnect": "maybe"}, 422, "on_disconnect"},
		{"/threads/" + tid + "/runs", map[string]any{"input": map[string]any{}}, 422, "assistant_id"},
		{"/threads/" + tid + "/runs", map[string]any{"assistant_id": "nope"}, 404, "nope"},
		{"/threads/" + tid + "/runs", map[string]any{"assistant_id": "agent", "after_seconds": "soon"}, 422, "after_seconds"},
		{"/threads/not-a-uuid/runs", map[string]any{"assistant_id": "agent"}, 422, "thread_id"},
		{"/threads", map[string]any{"if_exists": "sometimes"}, 422, "if_exists"},
		{"/threads/search", map[string]any{"status": "sleeping"}, 422, "status"},
		{"/threads/" + tid + "/runs", map[string]any{"assistant_id": "agent", "input": strings.Repeat("x", 5000)}, 413, "MaxBodyBytes"},
	} {
		var e map[string]string
		code := do(t, "POST", ts.URL+c.path, c.body, nil, &e)
		if code != c.code || !strings.Contains(e["detail"], c.field) {
			t.Errorf("POST %s %v: %d %q; want %d naming %s", c.path, c.body, code, e["detail"], c.code, c.field)
		}
	}
	// A state update while a run is pending or running is refused.
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"messages": []any{map[string]string{"content": "a"}}}}, nil, nil)
	var e map[string]string
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": "x"}}, nil, &e); code != 409 || !strings.Contains(e["detail"], "busy") {
		t.Fatalf("update while busy: %d %v; want 409", code, e)
	}
	ts.gates.release(tid)
}

func TestRemoteClientsNeedAuthentication(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	req := httptest.NewRequest("GET", "/ok", nil)
	req.RemoteAddr = "192.0.2.7:5000"
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "Config.Authenticate") {
		t.Fatalf("remote request without Authenticate: %d %s", rec.Code, rec.Body)
	}
	req.RemoteAddr = "127.0.0.1:5000"
	req.Host = "127.0.0.1:2024" // what a local client sends
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("loopback request: %d", rec.Code)
	}
}

// TestRebindingRefused: without Authenticate, a loopback request naming a
// foreign host (a DNS-rebinding page) is refused; loopback names pass.
func TestRebindingRefused(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	for host, want := range map[string]int{"attacker.example:2024": 403, "localhost:2024": 200, "127.0.0.1:2024": 200, "[::1]:2024": 200, "app.localhost": 200} {
		req := httptest.NewRequest("GET", "/ok", nil)
		req.RemoteAddr = "127.0.0.1:1"
		req.Host = host
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d %s; want %d", host, rec.Code, rec.Body, want)
		}
		if want == 403 && !strings.Contains(rec.Body.String(), "Authenticate") {
			t.Errorf("Host %s: %s; want the fix named", host, rec.Body)
		}
	}
}

func TestCORS(t *testing.T) {
	srv, err := server.New(server.Config{AllowedOrigins: []string{"https://app.example"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(t.Context())
	pre := httptest.NewRequest("OPTIONS", "/threads", nil)
	pre.RemoteAddr = "127.0.0.1:1"
	pre.Header.Set("Origin", "https://app.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, pre)
	h := rec.Header()
	if rec.Code != 204 || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Last-Event-ID") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "X-Api-Key") ||
		!strings.Contains(h.Get("Access-Control-Expose-Headers"), "Content-Location") || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "X-Pagination-Next") {
		t.Fatalf("preflight: %d %v", rec.Code, h)
	}
	bad := httptest.NewRequest("GET", "/ok", nil)
	bad.RemoteAddr = "127.0.0.1:1"
	bad.Header.Set("Origin", "https://evil.example")
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, bad)
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "AllowedOrigins") {
		t.Fatalf("foreign origin: %d %s", rec.Code, rec.Body)
	}
	if _, err := server.New(server.Config{AllowedOrigins: []string{"app.example"}}); err == nil || !strings.Contains(err.Error(), "AllowedOrigins") {
		t.Fatalf("bad origin in config: %v", err)
	}
}

func TestStoreItemsBelongToTheirPrincipal(t *testing.T) {
	ts := newTestServer(t, server.Config{Authenticate: apiKeys(t, map[string]string{"key-a-0123456789": "alice", "key-b-0123456789": "bob"}),
		Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	alice := http.Header{"X-Api-Key": {"key-a-0123456789"}}
	bob := http.Header{"X-Api-Key": {"key-b-0123456789"}}
	if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"notes"}, "key": "k", "value": map[string]any{"v": 1}}, alice, nil); code != 204 {
		t.Fatalf("put: %d", code)
	}
	var item map[string]any
	do(t, "GET", ts.URL+"/store/items?namespace=notes&key=k", nil, alice, &item)
	if item == nil || item["key"] != "k" {
		t.Fatalf("alice reads %v", item)
	}
	item = nil
	do(t, "GET", ts.URL+"/store/items?namespace=notes&key=k", nil, bob, &item)
	if item != nil {
		t.Fatalf("bob reads alice's item: %v", item)
	}
	var ns struct{ Namespaces [][]string }
	do(t, "POST", ts.URL+"/store/namespaces", map[string]any{}, bob, &ns)
	if len(ns.Namespaces) != 0 {
		t.Fatalf("bob lists %v", ns.Namespaces)
	}
	do(t, "POST", ts.URL+"/store/namespaces", map[string]any{}, alice, &ns)
	if len(ns.Namespaces) != 1 || ns.Namespaces[0][0] != "notes" {
		t.Fatalf("alice lists %v", ns.Namespaces)
	}
	var e map[string]string
	if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a.b"}, "key": "k", "value": map[string]any{}}, alice, &e); code != 422 || !strings.Contains(e["detail"], "namespace[0]") {
		t.Fatalf("dotted label: %d %v; want 422 naming the namespace", code, e)
	}
}

// TestProxiedRefusedWithoutAuthentication: without Authenticate, a
// request that a reverse proxy on this machine forwarded (loopback peer,
// Host rewritten to 127.0.0.1) is refused whatever client address its
// headers claim, since the client can forge them; with Authenticate it is
// served.
func TestProxiedRefusedWithoutAuthentication(t *testing.T) {
	open, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close(t.Context())
	authed, err := server.New(server.Config{Authenticate: apiKeys(t, map[string]string{"k-0123456789abcdef": "alice"})})
	if err != nil {
		t.Fatal(err)
	}
	defer authed.Close(t.Context())
	for _, h := range [][2]string{
		{"X-Forwarded-For", "127.0.0.1"},
		{"X-Forwarded-Proto", "https"},
		{"X-Real-Ip", "::1"},
		{"Forwarded", "for=127.0.0.1;proto=https"},
		{"Via", "1.1 nginx"},
	} {
		req := httptest.NewRequest("GET", "/ok", nil)
		req.RemoteAddr, req.Host = "127.0.0.1:40000", "127.0.0.1:2024"
		req.Header.Set(h[0], h[1])
		rec := httptest.NewRecorder()
		open.ServeHTTP(rec, req)
		if rec.Code != 403 || !strings.Contains(rec.Body.String(), "Config.Authenticate") || !strings.Contains(rec.Body.String(), h[0]) {
			t.Errorf("%s: %s without Authenticate: %d %s; want 403 naming the header and Config.Authenticate", h[0], h[1], rec.Code, rec.Body)
		}
		req.Header.Set("x-api-key", "k-0123456789abcdef")
		rec = httptest.NewRecorder()
		authed.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Errorf("%s: %s with Authenticate: %d %s; want 200", h[0], h[1], rec.Code, rec.Body)
		}
	}
}

// TestAPIKeysRefusesShortKeys: APIKeys refuses no keys, and a key (the
// empty one too) shorter than 16 bytes with an error naming its
// principal, never the key, and the fix; it accepts keys of 16 bytes.
func TestAPIKeysRefusesShortKeys(t *testing.T) {
	for _, keys := range []map[string]string{
		{"": "alice"},
		{"short-key": "alice", "key-b-0123456789": "bob"},
		{"0123456789abcde": "alice"}, // 15 bytes
	} {
		auth, err := server.APIKeys(keys)
		if err == nil || auth != nil {
			t.Fatalf("APIKeys(%q): %v; want an error and no function", keys, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, `principal "alice"`) || !strings.Contains(msg, "at least 16 random bytes") || strings.Contains(msg, "bob") {
			t.Errorf("APIKeys(%q): %q; want alice named (and bob not) with the fix", keys, msg)
		}
		for k := range keys {
			if k != "" && strings.Contains(msg, k) {
				t.Errorf("APIKeys(%q): %q names the key %q", keys, msg, k)
			}
		}
	}
	if _, err := server.APIKeys(nil); err == nil || !strings.Contains(err.Error(), "no keys") {
		t.Errorf("APIKeys(nil): %v; want an error saying there are no keys", err)
	}
	auth, err := server.APIKeys(map[string]string{"0123456789abcdef": "alice"})
	if err != nil {
		t.Fatalf("APIKeys of a 16-byte key: %v", err)
	}
	req := httptest.NewRequest("GET", "/threads", nil)
	req.Header.Set("X-Api-Key", "0123456789abcdef")
	if who, err := auth(req); err != nil || who != "alice" {
		t.Errorf("a request with the key: %q, %v; want alice", who, err)
	}
}
