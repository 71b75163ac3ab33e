package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// send sends body with the Content-Type given ("" sends none) and
// answers the status and the body.
func send(t *testing.T, method, url, contentType, body string) (int, string) {
	t.Helper()
	return raw(t, method, url, body, map[string]string{"Content-Type": contentType})
}

// TestBodyContentType: a body is read as JSON when sent as
// application/json or text/plain (with parameters or not), as the
// LangGraph JS server reads it; form-encoded, multipart and other types,
// and bodies without a type, are refused with 415 naming the types to
// send, on endpoints that read their body and on those that do not. A
// text/plain body from a page of another site, which a browser sends
// without a preflight but with its Origin, is refused with 403 and does
// not act; a request without a body is served whatever its type.
func TestBodyContentType(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/threads", `{"metadata":{}}`},
		{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","input":{}}`},
		{"POST", "/threads/" + tid + "/copy", `{}`},
		{"PATCH", "/threads/" + tid, `{"metadata":{"a":"b"}}`},
		{"PUT", "/store/items", `{"namespace":["a"],"key":"k","value":{}}`},
	} {
		for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", ""} {
			code, body := send(t, tc.method, ts.URL+tc.path, ct, tc.body)
			if code != http.StatusUnsupportedMediaType || !strings.Contains(body, "Content-Type: application/json (or text/plain)") {
				t.Errorf("%s %s as %q: %d %s; want 415 naming application/json and text/plain", tc.method, tc.path, ct, code, body)
			}
		}
	}
	var n int
	if code := do(t, "POST", ts.URL+"/threads/count", map[string]any{}, nil, &n); code != 200 || n != 1 {
		t.Fatalf("threads after the refused creations: %d %d; want the one thread", code, n)
	}
	for _, ct := range []string{"application/json; charset=utf-8", "text/plain", "text/plain;charset=UTF-8"} {
		if code, body := send(t, "POST", ts.URL+"/threads", ct, `{"metadata":{"sent_as":"`+ct+`"}}`); code != 200 || !strings.Contains(body, `"sent_as":"`+ct+`"`) {
			t.Errorf("a thread created with a body sent as %s: %d %s; want 200 with its metadata", ct, code, body)
		}
	}
	if code, body := send(t, "POST", ts.URL+"/threads", "text/plain", "{"); code != 422 || !strings.Contains(body, "not valid JSON") {
		t.Errorf("a text/plain body that is not JSON: %d %s; want 422", code, body)
	}
	if code, body := send(t, "POST", ts.URL+"/threads", "application/xml", ""); code != 200 {
		t.Errorf("an empty body of another type: %d %s; want 200 (no body to read)", code, body)
	}
	// A page of another site: its text/plain POST carries its Origin.
	req, err := http.NewRequest("POST", ts.URL+"/threads", strings.NewReader(`{"metadata":{"from":"elsewhere"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("Origin", "https://attacker.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a text/plain POST from another site's page: %d; want 403", resp.StatusCode)
	}
	if code := do(t, "POST", ts.URL+"/threads/count", map[string]any{}, nil, &n); code != 200 || n != 5 {
		t.Errorf("threads after the cross-site POST: %d %d; want 5 (the one, the three sent as JSON and text/plain, the empty one)", code, n)
	}
}

// TestAssistantSearchOrderAndSelect: sort_by and sort_order order the
// assistants (sort_order alone by created_at, as a thread search), select
// keeps the fields named; a key, an order or a field
// that does not exist is refused naming the field, as is any of them on
// a count, which has no page.
func TestAssistantSearchOrderAndSelect(t *testing.T) {
	ts := newTestServer(t, server.Config{}) // graphs agent, slow, fail
	// The metadata filter is bounded as a thread search's is.
	many := map[string]any{}
	for i := range server.MaxFilterKeys + 1 {
		many[fmt.Sprint("k", i)] = "v"
	}
	for _, path := range []string{"/assistants/search", "/assistants/count"} {
		var e map[string]any
		if code := do(t, "POST", ts.URL+path, map[string]any{"metadata": many}, nil, &e); code != 422 || !strings.Contains(fmt.Sprint(e), "MaxFilterKeys") {
			t.Errorf("%s with %d metadata keys: %d %v; want 422 naming MaxFilterKeys", path, len(many), code, e)
		}
	}
	search := func(q map[string]any) []map[string]any {
		t.Helper()
		var out []map[string]any
		if code := do(t, "POST", ts.URL+"/assistants/search", q, nil, &out); code != 200 {
			t.Fatalf("search %v: %d", q, code)
		}
		return out
	}
	graphs := func(as []map[string]any) []any {
		var ids []any
		for _, a := range as {
			ids = append(ids, a["graph_id"])
		}
		return ids
	}
	for _, tc := range []struct {
		q    map[string]any
		want []any
	}{
		{map[string]any{}, []any{"agent", "slow", "fail"}},
		{map[string]any{"sort_by": "graph_id", "sort_order": "asc"}, []any{"agent", "fail", "slow"}},
		{map[string]any{"sort_by": "name", "sort_order": "desc"}, []any{"slow", "fail", "agent"}},
		{map[string]any{"sort_by": "graph_id"}, []any{"slow", "fail", "agent"}}, // desc by default, as threads
		{map[string]any{"sort_by": "graph_id", "sort_order": "asc", "offset": 1, "limit": 1}, []any{"fail"}},
		// sort_order alone orders by created_at, the same for all: the
		// order of registration stays.
		{map[string]any{"sort_order": "desc"}, []any{"agent", "slow", "fail"}},
		{map[string]any{"sort_order": "asc", "offset": 1}, []any{"slow", "fail"}},
	} {
		if got := graphs(search(tc.q)); !slices.Equal(got, tc.want) {
			t.Errorf("search %v: %v; want %v", tc.q, got, tc.want)
		}
	}
	got := search(map[string]any{"select": []string{"assistant_id", "graph_id"}, "sort_by": "graph_id", "sort_order": "asc", "limit": 1})
	if len(got) != 1 || len(got[0]) != 2 || got[0]["graph_id"] != "agent" || got[0]["assistant_id"] != server.AssistantID("agent") {
		t.Errorf("select assistant_id, graph_id: %v; want those two fields of agent", got)
	}
	for _, tc := range []struct {
		path  string
		q     map[string]any
		field string
	}{
		{"/assistants/search", map[string]any{"sort_by": "version"}, "sort_by"},
		{"/assistants/search", map[string]any{"sort_by": "name", "sort_order": "up"}, "sort_order"},
		{"/assistants/search", map[string]any{"sort_order": "up"}, "sort_order"},
		{"/assistants/search", map[string]any{"select": []string{"graph_id", "owner"}}, "select[1]"},
		{"/assistants/count", map[string]any{"sort_by": "name"}, "sort_by"},
		{"/assistants/count", map[string]any{"limit": 1}, "limit"},
	} {
		var e struct{ Detail string }
		if code := do(t, "POST", ts.URL+tc.path, tc.q, nil, &e); code != 422 || !strings.Contains(e.Detail, tc.field) {
			t.Errorf("%s %v: %d %q; want 422 naming %s", tc.path, tc.q, code, e.Detail, tc.field)
		}
	}
}

// TestRunName: config.run_name is kept in the run's kwargs and reaches
// the graph's nodes as run_name in their run configuration's metadata.
func TestRunName(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	g.AddNode("name", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		return chatMessages.Set([]msg{{Type: "ai", Content: fmt.Sprint(graph.ConfigFrom(ctx).Metadata["run_name"])}}), nil
	})
	g.AddEdge(graph.START, "name").AddEdge("name", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "named", app); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	tid := newThread(t, url)
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "named", "input": map[string]any{}, "config": map[string]any{"run_name": "nightly digest"}}, nil, &run); code != 200 {
		t.Fatalf("create run: %d", code)
	}
	var out chat
	do(t, "GET", url+"/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, &out)
	if last(out) != "nightly digest" {
		t.Errorf("the node's run_name: %q; want nightly digest", last(out))
	}
	var rec struct {
		Kwargs struct {
			Config struct {
				RunName string `json:"run_name"`
			} `json:"config"`
		} `json:"kwargs"`
	}
	do(t, "GET", url+"/threads/"+tid+"/runs/"+run.RunID, nil, nil, &rec)
	if rec.Kwargs.Config.RunName != "nightly digest" {
		t.Errorf("kwargs.config.run_name: %q; want nightly digest", rec.Kwargs.Config.RunName)
	}
}

// TestStrictResume: with strict_resume, a resume naming interrupts the
// thread does not wait on, or sent to a thread that waits on none, is
// refused with 422 naming both (the thread stays interrupted), a run
// queued behind another is checked when it starts (it fails with
// UnknownInterruptError), and a resume of the pending interrupt goes
// through; without it, an object naming no pending interrupt is one
// value, as before.
func TestStrictResume(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	input := map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": input}, nil, nil)
	var th struct {
		Status     string                        `json:"status"`
		Interrupts map[string][]server.Interrupt `json:"interrupts"`
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	var pending string
	for _, ins := range th.Interrupts {
		pending = ins[0].ID
	}
	if th.Status != "interrupted" || pending == "" {
		t.Fatalf("thread after the first run: %+v; want interrupted", th)
	}
	resume := func(strict bool, value any) (int, map[string]any) {
		t.Helper()
		var out map[string]any
		code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": value}, "strict_resume": strict}, nil, &out)
		return code, out
	}
	code, out := resume(true, map[string]any{"stale-interrupt": "yes"})
	if detail, _ := out["detail"].(string); code != 422 || !strings.Contains(detail, "stale-interrupt") || !strings.Contains(detail, pending) {
		t.Fatalf("strict resume of an unknown interrupt: %d %v; want 422 naming it and %s", code, out, pending)
	}
	code, out = resume(true, map[string]any{})
	if detail, _ := out["detail"].(string); code != 422 || !strings.Contains(detail, "answers no interrupt") {
		t.Fatalf("strict resume with {}: %d %v; want 422", code, out)
	}
	do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
	if th.Status != "interrupted" {
		t.Fatalf("thread after the refused resumes: %s; want interrupted", th.Status)
	}
	if code, out = resume(true, map[string]any{pending: "yes"}); code != 200 || out["approved"] != "yes" {
		t.Fatalf("strict resume of the pending interrupt: %d %v; want approved yes", code, out)
	}
	code, out = resume(true, "again")
	if detail, _ := out["detail"].(string); code != 422 || !strings.Contains(detail, "waits on no interrupt") {
		t.Fatalf("strict resume of a thread that waits on nothing: %d %v; want 422", code, out)
	}

	// A run queued behind a running one is checked when it starts.
	slow := newThread(t, ts.URL)
	var first, second struct {
		RunID string `json:"run_id"`
	}
	do(t, "POST", ts.URL+"/threads/"+slow+"/runs", map[string]any{"assistant_id": "slow", "input": input}, nil, &first)
	if code := do(t, "POST", ts.URL+"/threads/"+slow+"/runs", map[string]any{"assistant_id": "slow", "command": map[string]any{"resume": "x"}, "strict_resume": true}, nil, &second); code != 200 {
		t.Fatalf("strict resume queued on a busy thread: %d; want 200 (checked when it starts)", code)
	}
	ts.gates.release(slow)
	var joined map[string]any
	do(t, "GET", ts.URL+"/threads/"+slow+"/runs/"+second.RunID+"/join", nil, nil, &joined)
	if e, _ := joined["__error__"].(map[string]any); e["error"] != "UnknownInterruptError" {
		t.Fatalf("queued strict resume: %v; want an UnknownInterruptError", joined)
	}
}

// TestPatchState: PATCH /threads/{thread_id}/state sets labels in the
// metadata of the thread's latest checkpoint (its state and history show
// them, history filters on them) without making a checkpoint; step and
// source, non-string values, another principal's thread and a thread
// without a state are refused.
func TestPatchState(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			cfg := config(t)
			cfg.Authenticate = apiKeys(t, map[string]string{"ka-0123456789abcd": "alice", "kb-0123456789abcd": "bob"})
			ts := newTestServer(t, cfg)
			alice, bob := http.Header{"X-Api-Key": {"ka-0123456789abcd"}}, http.Header{"X-Api-Key": {"kb-0123456789abcd"}}
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts.URL+"/threads", map[string]any{}, alice, &th)
			path := ts.URL + "/threads/" + th.ThreadID + "/state"
			if code := do(t, "PATCH", path, map[string]any{"metadata": map[string]any{"label": "x"}}, alice, nil); code != http.StatusConflict {
				t.Fatalf("patch of a thread without a state: %d; want 409", code)
			}
			do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, alice, nil)
			var before []map[string]any
			do(t, "POST", path[:len(path)-len("/state")]+"/history", map[string]any{"limit": 100}, alice, &before)
			if code := do(t, "PATCH", path, map[string]any{"metadata": map[string]any{"label": "x", "reviewer": "ada"}}, alice, nil); code != http.StatusNoContent {
				t.Fatalf("patch: %d; want 204", code)
			}
			var st labelledState
			do(t, "GET", path, nil, alice, &st)
			if st.Metadata["label"] != "x" || st.Metadata["reviewer"] != "ada" || st.Metadata["source"] == nil {
				t.Errorf("state metadata after the patch: %v; want label, reviewer and source", st.Metadata)
			}
			var after, labelled []map[string]any
			do(t, "POST", path[:len(path)-len("/state")]+"/history", map[string]any{"limit": 100}, alice, &after)
			if len(after) != len(before) {
				t.Errorf("history: %d checkpoints after the patch, %d before; want the same", len(after), len(before))
			}
			do(t, "POST", path[:len(path)-len("/state")]+"/history", map[string]any{"metadata": map[string]any{"label": "x"}}, alice, &labelled)
			if len(labelled) != 1 || labelled[0]["checkpoint"].(map[string]any)["checkpoint_id"] != st.Checkpoint.CheckpointID {
				t.Errorf("history filtered by the label: %v; want the latest checkpoint alone", labelled)
			}
			for _, tc := range []struct {
				body  any
				field string
			}{
				{map[string]any{"metadata": map[string]any{"step": "3"}}, "metadata.step"},
				{map[string]any{"metadata": map[string]any{"source": "input"}}, "metadata.source"},
				{map[string]any{"metadata": map[string]any{"n": 1}}, "metadata.n"},
				{map[string]any{}, "metadata"},
			} {
				var e struct{ Detail string }
				if code := do(t, "PATCH", path, tc.body, alice, &e); code != 422 || !strings.HasPrefix(e.Detail, tc.field) {
					t.Errorf("patch %v: %d %q; want 422 naming %s", tc.body, code, e.Detail, tc.field)
				}
			}
			if code := do(t, "PATCH", path, map[string]any{"metadata": map[string]any{"label": "bob's"}}, bob, nil); code != http.StatusNotFound {
				t.Errorf("another principal's patch: %d; want 404", code)
			}
			do(t, "GET", path, nil, alice, &st)
			if st.Metadata["label"] != "x" {
				t.Errorf("label after another principal's patch: %v; want x", st.Metadata["label"])
			}
			b, _ := json.Marshal(st.Metadata)
			if strings.Contains(string(b), "bob") {
				t.Errorf("metadata %s shows another principal's patch", b)
			}
		})
	}
}
