package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// assistantStores are the configurations of the three stores, each on a
// fresh store: memory, SQLite and PostgreSQL (skipped when no PostgreSQL
// answers).
var assistantStores = []struct {
	name string
	cfg  func(t *testing.T) server.Config
}{
	{"memory", func(t *testing.T) server.Config { return server.Config{} }},
	{"sqlite", sqliteConfig},
	{"postgres", func(t *testing.T) server.Config {
		pool, schema := postgrestest.Schema(t, "agentserver_asst_")
		st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return server.Config{Store: st, Checkpointer: saver}
	}},
}

// forEachStore runs fn on a test server of alice and bob (aliceBob) on
// each store, with fn's changes to the Config, and with the graph "echo"
// registered: one node that answers, as its message, the run's
// RunContext as JSON.
func forEachStore(t *testing.T, change func(*server.Config), fn func(t *testing.T, ts *testServer, alice, bob http.Header)) {
	for _, st := range assistantStores {
		t.Run(st.name, func(t *testing.T) {
			cfg := st.cfg(t)
			auth, alice, bob := aliceBob()
			cfg.Authenticate = auth.Authenticate
			if change != nil {
				change(&cfg)
			}
			ts := newTestServer(t, cfg)
			g := graph.New[chat]()
			g.AddNode("echo", func(ctx context.Context, s chat) (graph.Update[chat], error) {
				b, err := json.Marshal(server.RunContext(ctx))
				return chatMessages.Set([]msg{{Type: "ai", Content: string(b)}}), err
			})
			g.AddEdge(graph.START, "echo").AddEdge("echo", graph.END)
			app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
			if err != nil {
				t.Fatal(err)
			}
			if err := server.Register(ts.Server, "echo", app); err != nil {
				t.Fatal(err)
			}
			fn(t, ts, alice, bob)
		})
	}
}

type assistantJSON struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Detail      string         `json:"detail"`
}

// TestAssistantsCRUD: an assistant a client creates is a variant of a
// registered graph, found by get, search and count with the graphs' own,
// changed in new versions (metadata merged), set back to a version, and
// deleted; it belongs to its creator (another principal finds nothing);
// the graphs' own assistants cannot be changed or deleted.
func TestAssistantsCRUD(t *testing.T) {
	forEachStore(t, nil, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		var a assistantJSON
		if code := do(t, "POST", u+"/assistants", map[string]any{"name": "x"}, alice, &a); code != 422 || !strings.Contains(a.Detail, "graph_id") {
			t.Errorf("create without graph_id: %d %q; want 422 naming graph_id", code, a.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "nope"}, alice, &a); code != 404 || !strings.Contains(a.Detail, "graph_id") {
			t.Errorf("create of an unknown graph: %d %q; want 404 naming graph_id", code, a.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "config": map[string]any{"configurable": map[string]any{"thread_id": "x"}}}, alice, &a); code != 422 || !strings.Contains(a.Detail, "config.configurable.thread_id") {
			t.Errorf("create with a reserved configurable key: %d %q; want 422 naming it", code, a.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "config": map[string]any{"recursion_limit": 0}}, alice, &a); code != 422 || !strings.Contains(a.Detail, "config.recursion_limit") {
			t.Errorf("create with recursion_limit 0: %d %q; want 422 naming it", code, a.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": server.AssistantID("echo")}, alice, &a); code != 409 || !strings.Contains(a.Detail, "system assistant") {
			t.Errorf("create with a system assistant's id: %d %q; want 409 saying so", code, a.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": server.AssistantID("registered-later")}, alice, &a); code != 422 || !strings.Contains(a.Detail, "assistant_id") {
			t.Errorf("create with the system id of an unregistered graph: %d %q; want 422 naming assistant_id", code, a.Detail)
		}
		body := map[string]any{"graph_id": "echo", "name": "Brief Bot", "description": "answers briefly",
			"config":  map[string]any{"configurable": map[string]any{"prompt": "be brief"}, "tags": []string{"a"}},
			"context": map[string]any{"lang": "fr"}, "metadata": map[string]any{"team": "x", "tier": 1}}
		if code := do(t, "POST", u+"/assistants", body, alice, &a); code != 200 {
			t.Fatalf("create: %d %q", code, a.Detail)
		}
		if a.AssistantID == "" || a.GraphID != "echo" || a.Version != 1 || a.Name != "Brief Bot" || a.Description == nil || *a.Description != "answers briefly" ||
			a.Context["lang"] != "fr" || a.Metadata["team"] != "x" {
			t.Errorf("created: %+v", a)
		}
		id := a.AssistantID
		var again assistantJSON
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": id}, alice, &again); code != 409 || !strings.Contains(again.Detail, "do_nothing") {
			t.Errorf("create of an existing id: %d %q; want 409 pointing to if_exists do_nothing", code, again.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": id, "if_exists": "do_nothing"}, alice, &again); code != 200 || again.Name != "Brief Bot" {
			t.Errorf("create of an existing id with do_nothing: %d %+v; want the assistant", code, again)
		}
		// Bob: none of it exists for him, and its id is not his to take.
		var e assistantJSON
		for _, c := range []struct{ method, path string }{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"POST", "/versions"}, {"POST", "/latest"}, {"GET", "/graph"}, {"GET", "/schemas"}} {
			var b any
			switch {
			case c.path == "/latest":
				b = map[string]any{"version": 1}
			case c.method == "PATCH" || c.method == "POST":
				b = map[string]any{}
			}
			if code := do(t, c.method, u+"/assistants/"+id+c.path, b, bob, &e); code != 404 {
				t.Errorf("bob's %s /assistants/{alice's}%s: %d; want 404", c.method, c.path, code)
			}
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": id, "if_exists": "do_nothing"}, bob, &e); code != 409 || strings.Contains(e.Detail, "exists") {
			t.Errorf("bob's create of alice's id: %d %q; want 409 that does not say it exists", code, e.Detail)
		}
		var bobs []assistantJSON
		do(t, "POST", u+"/assistants/search", map[string]any{"graph_id": "echo"}, bob, &bobs)
		if len(bobs) != 1 || bobs[0].AssistantID != server.AssistantID("echo") {
			t.Errorf("bob's search of echo: %+v; want the graph's own assistant alone", bobs)
		}
		// Alice: hers with the graphs' own, filtered, sorted and counted.
		var found []assistantJSON
		do(t, "POST", u+"/assistants/search", map[string]any{"graph_id": "echo"}, alice, &found)
		if len(found) != 2 || found[0].AssistantID != server.AssistantID("echo") || found[1].AssistantID != id {
			t.Errorf("alice's search of echo: %+v; want echo's own then hers", found)
		}
		do(t, "POST", u+"/assistants/search", map[string]any{"name": "brief", "metadata": map[string]any{"team": "x"}}, alice, &found)
		if len(found) != 1 || found[0].AssistantID != id {
			t.Errorf("alice's search by name and metadata: %+v; want hers", found)
		}
		do(t, "POST", u+"/assistants/search", map[string]any{"sort_by": "name", "sort_order": "asc", "limit": 1}, alice, &found)
		if len(found) != 1 || found[0].Name != "Brief Bot" {
			t.Errorf("alice's first assistant by name: %+v; want Brief Bot (before agent, echo...)", found)
		}
		var n int
		if do(t, "POST", u+"/assistants/count", map[string]any{"graph_id": "echo"}, alice, &n); n != 2 {
			t.Errorf("alice's count of echo: %d; want 2", n)
		}
		if do(t, "POST", u+"/assistants/count", map[string]any{"graph_id": "echo"}, bob, &n); n != 1 {
			t.Errorf("bob's count of echo: %d; want 1", n)
		}
		// A new version, metadata merged; versions; back to version 1.
		var up assistantJSON
		if code := do(t, "PATCH", u+"/assistants/"+id, map[string]any{"name": "Terse Bot", "metadata": map[string]any{"tier": 2}}, alice, &up); code != 200 {
			t.Fatalf("patch: %d %q", code, up.Detail)
		}
		if up.Version != 2 || up.Name != "Terse Bot" || up.Metadata["team"] != "x" || fmt.Sprint(up.Metadata["tier"]) != "2" || up.Context["lang"] != "fr" {
			t.Errorf("patched: %+v; want version 2, the new name, metadata merged, the context kept", up)
		}
		var vs []assistantJSON
		do(t, "POST", u+"/assistants/"+id+"/versions", map[string]any{}, alice, &vs)
		if len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 || vs[1].Name != "Brief Bot" {
			t.Errorf("versions: %+v; want 2 then 1", vs)
		}
		do(t, "POST", u+"/assistants/"+id+"/versions", map[string]any{"metadata": map[string]any{"tier": 1}}, alice, &vs)
		if len(vs) != 1 || vs[0].Version != 1 {
			t.Errorf("versions of tier 1: %+v; want version 1", vs)
		}
		if code := do(t, "POST", u+"/assistants/"+id+"/latest", map[string]any{"version": 9}, alice, &e); code != 404 || !strings.Contains(e.Detail, "version") {
			t.Errorf("latest 9: %d %q; want 404 naming version", code, e.Detail)
		}
		if code := do(t, "POST", u+"/assistants/"+id+"/latest", map[string]any{"version": 1}, alice, &up); code != 200 || up.Version != 1 || up.Name != "Brief Bot" {
			t.Errorf("latest 1: %d %+v", code, up)
		}
		var got assistantJSON
		if do(t, "GET", u+"/assistants/"+id, nil, alice, &got); got.Version != 1 || got.Name != "Brief Bot" {
			t.Errorf("get after latest 1: %+v; want version 1", got)
		}
		if code := do(t, "GET", u+"/assistants/"+id+"/schemas", nil, alice, nil); code != 200 {
			t.Errorf("schemas of alice's assistant: %d; want its graph's", code)
		}
		// The graphs' own cannot change.
		for _, c := range []struct{ method, what string }{{"PATCH", "changed"}, {"DELETE", "deleted"}} {
			if code := do(t, c.method, u+"/assistants/echo", map[string]any{}, alice, &e); code != 409 || !strings.Contains(e.Detail, "system assistant") || !strings.Contains(e.Detail, c.what) {
				t.Errorf("%s of a system assistant: %d %q; want 409 saying it cannot be %s", c.method, code, e.Detail, c.what)
			}
		}
		var deleted []string
		if code := do(t, "DELETE", u+"/assistants/"+id, nil, alice, &deleted); code != 200 || len(deleted) != 1 || deleted[0] != id {
			t.Errorf("delete: %d %v", code, deleted)
		}
		if code := do(t, "GET", u+"/assistants/"+id, nil, alice, &e); code != 404 {
			t.Errorf("get after delete: %d; want 404", code)
		}
	})
}

// TestAssistantRuns: a run of a principal's assistant runs the
// assistant's graph with the assistant's configurable and context under
// the run's own (the run's keys win) and its tags before the run's; the
// run and its thread name the assistant, the thread takes more runs, and
// deleting the assistant with delete_threads deletes its threads.
func TestAssistantRuns(t *testing.T) {
	forEachStore(t, nil, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		var a assistantJSON
		do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo",
			"config":  map[string]any{"configurable": map[string]any{"prompt": "be brief", "model": "small"}, "tags": []string{"asst"}},
			"context": map[string]any{"lang": "fr", "tone": "dry"}}, alice, &a)
		var th struct {
			ThreadID string         `json:"thread_id"`
			Metadata map[string]any `json:"metadata"`
		}
		do(t, "POST", u+"/threads", map[string]any{}, alice, &th)
		var out chat
		if code := do(t, "POST", u+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{},
			"config": map[string]any{"configurable": map[string]any{"model": "large"}, "tags": []string{"run"}}, "context": map[string]any{"tone": "warm"}}, alice, &out); code != 200 {
			t.Fatalf("run of the assistant: %d %+v", code, out)
		}
		var rc map[string]any
		if err := json.Unmarshal([]byte(last(out)), &rc); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]any{"prompt": "be brief", "model": "large", "lang": "fr", "tone": "warm"} {
			if rc[k] != want {
				t.Errorf("the run's context %s: %v; want %v (the assistant's under the run's)", k, rc[k], want)
			}
		}
		var runs []struct {
			AssistantID string `json:"assistant_id"`
			Kwargs      struct {
				Config struct {
					Tags []string `json:"tags"`
				} `json:"config"`
			} `json:"kwargs"`
		}
		do(t, "GET", u+"/threads/"+th.ThreadID+"/runs", nil, alice, &runs)
		if len(runs) != 1 || runs[0].AssistantID != a.AssistantID || strings.Join(runs[0].Kwargs.Config.Tags, ",") != "asst,run" {
			t.Errorf("the run: %+v; want it to name the assistant, with tags asst,run", runs)
		}
		do(t, "GET", u+"/threads/"+th.ThreadID, nil, alice, &th)
		if th.Metadata["assistant_id"] != a.AssistantID || th.Metadata["graph_id"] != "echo" {
			t.Errorf("the thread's metadata: %v; want the assistant and its graph", th.Metadata)
		}
		// The thread takes a run of the graph's own assistant, and a
		// metadata update naming the assistant it ran.
		if code := do(t, "POST", u+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "echo", "input": map[string]any{}}, alice, &out); code != 200 || strings.Contains(last(out), "be brief") {
			t.Errorf("a run of echo's own assistant on the thread: %d %q; want one without the assistant's config", code, last(out))
		}
		if code := do(t, "POST", u+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, alice, &out); code != 200 || !strings.Contains(last(out), "be brief") {
			t.Errorf("a second run of the assistant: %d %q", code, last(out))
		}
		if code := do(t, "PATCH", u+"/threads/"+th.ThreadID, map[string]any{"metadata": map[string]any{"assistant_id": a.AssistantID}}, alice, nil); code != 200 {
			t.Errorf("a thread update naming the assistant it runs: %d; want 200", code)
		}
		// A stateless run, and bob's run of it: not his.
		if code := do(t, "POST", u+"/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, alice, &out); code != 200 || !strings.Contains(last(out), "be brief") {
			t.Errorf("a stateless run of the assistant: %d %q", code, last(out))
		}
		var e assistantJSON
		if code := do(t, "POST", u+"/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, bob, &e); code != 404 {
			t.Errorf("bob's run of alice's assistant: %d %q; want 404", code, e.Detail)
		}
		// A patch applies to the runs after it.
		do(t, "PATCH", u+"/assistants/"+a.AssistantID, map[string]any{"config": map[string]any{"configurable": map[string]any{"prompt": "be long"}}}, alice, nil)
		if do(t, "POST", u+"/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, alice, &out); !strings.Contains(last(out), "be long") {
			t.Errorf("a run after the patch: %q; want the new prompt", last(out))
		}
		var deleted []string
		if code := do(t, "DELETE", u+"/assistants/"+a.AssistantID+"?delete_threads=true", nil, alice, &deleted); code != 200 {
			t.Fatalf("delete with delete_threads: %d", code)
		}
		if code := do(t, "GET", u+"/threads/"+th.ThreadID, nil, alice, nil); code != 404 {
			t.Errorf("the assistant's thread after delete_threads: %d; want 404", code)
		}
		if code := do(t, "POST", u+"/runs/wait", map[string]any{"assistant_id": a.AssistantID, "input": map[string]any{}}, alice, &e); code != 404 {
			t.Errorf("a run of the deleted assistant: %d %q; want 404", code, e.Detail)
		}
	})
}

// TestAssistantBounds: a principal's assistants are bounded by count
// (Config.MaxAssistants) and by the bytes of their versions
// (Config.MaxAssistantBytes), each refusal 429 naming its setting;
// another principal is not affected.
func TestAssistantBounds(t *testing.T) {
	forEachStore(t, func(c *server.Config) { c.MaxAssistants, c.MaxAssistantBytes = 2, 4000 }, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		var a, e assistantJSON
		for range 2 {
			if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo"}, alice, &a); code != 200 {
				t.Fatalf("create: %d %q", code, a.Detail)
			}
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo"}, alice, &e); code != 429 || !strings.Contains(e.Detail, "Config.MaxAssistants") {
			t.Errorf("a third assistant: %d %q; want 429 naming Config.MaxAssistants", code, e.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo"}, bob, &e); code != 200 {
			t.Errorf("bob's first assistant: %d %q; want 200", code, e.Detail)
		}
		big := map[string]any{"metadata": map[string]any{"note": strings.Repeat("x", 1500)}}
		code := 200
		for i := 0; i < 5 && code == 200; i++ {
			code = do(t, "PATCH", u+"/assistants/"+a.AssistantID, big, alice, &e)
		}
		if code != 429 || !strings.Contains(e.Detail, "Config.MaxAssistantBytes") {
			t.Errorf("versions past the bytes: %d %q; want 429 naming Config.MaxAssistantBytes", code, e.Detail)
		}
		var vs []assistantJSON
		do(t, "POST", u+"/assistants/"+a.AssistantID+"/versions", map[string]any{"limit": 100}, alice, &vs)
		if len(vs) > 3 {
			t.Errorf("%d versions kept; want at most what 4000 bytes hold", len(vs))
		}
	})
}

// TestThreadAssistantIDString: a thread's metadata.assistant_id, which runs
// set to the assistant they run, is a string; another value is refused,
// when the thread is created and when it is changed, with 422 naming the
// field (it once reached a comparison that panicked on two objects).
func TestThreadAssistantIDString(t *testing.T) {
	forEachStore(t, nil, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		obj := map[string]any{"a": 1}
		var th struct {
			ThreadID string `json:"thread_id"`
			Detail   string `json:"detail"`
		}
		if code := do(t, "POST", u+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo", "assistant_id": obj}}, alice, &th); code != 422 || !strings.Contains(th.Detail, "metadata.assistant_id") {
			t.Errorf("create with an object assistant_id: %d %q; want 422 naming metadata.assistant_id", code, th.Detail)
		}
		if code := do(t, "POST", u+"/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo"}}, alice, &th); code != 200 {
			t.Fatalf("create: %d %q", code, th.Detail)
		}
		for range 2 {
			if code := do(t, "PATCH", u+"/threads/"+th.ThreadID, map[string]any{"metadata": map[string]any{"assistant_id": obj}}, alice, &th); code != 422 || !strings.Contains(th.Detail, "metadata.assistant_id") {
				t.Errorf("patch with an object assistant_id: %d %q; want 422 naming metadata.assistant_id", code, th.Detail)
			}
		}
		if code := do(t, "PATCH", u+"/threads/"+th.ThreadID, map[string]any{"metadata": map[string]any{"assistant_id": server.AssistantID("echo")}}, alice, &th); code != 200 {
			t.Errorf("patch with the graph's assistant_id: %d %q; want 200", code, th.Detail)
		}
	})
}

// TestAssistantBoundsConcurrent: concurrent creations and changes of one
// principal's assistants do not pass Config.MaxAssistants or
// Config.MaxAssistantBytes together (the check and the write are made
// under a lock of the principal's).
func TestAssistantBoundsConcurrent(t *testing.T) {
	const n = 16
	forEachStore(t, func(c *server.Config) { c.MaxAssistants, c.MaxAssistantBytes = 2, 6000 }, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		codes := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				var a assistantJSON
				codes <- do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo"}, alice, &a)
			})
		}
		wg.Wait()
		close(codes)
		ok := 0
		for c := range codes {
			if c == 200 {
				ok++
			}
		}
		var all []assistantJSON
		do(t, "POST", u+"/assistants/search", map[string]any{"graph_id": "echo", "limit": 100}, alice, &all)
		if ok != 2 || len(all) != 3 { // the graph's own, and alice's two
			t.Errorf("%d concurrent creations: %d answered 200, %d assistants found; want 2 and 3 (Config.MaxAssistants 2 and the graph's own)", n, ok, len(all))
		}
		var a assistantJSON
		for _, x := range all {
			if x.AssistantID != server.AssistantID("echo") {
				a = x
			}
		}
		big := map[string]any{"metadata": map[string]any{"note": strings.Repeat("x", 1500)}}
		wg = sync.WaitGroup{}
		for range n {
			wg.Go(func() {
				var e assistantJSON
				do(t, "PATCH", u+"/assistants/"+a.AssistantID, big, alice, &e)
			})
		}
		wg.Wait()
		var vs []assistantJSON
		do(t, "POST", u+"/assistants/"+a.AssistantID+"/versions", map[string]any{"limit": 100}, alice, &vs)
		if len(vs) > 4 {
			t.Errorf("%d versions kept after %d concurrent changes; want at most what 6000 bytes hold (4)", len(vs), n)
		}
	})
}

// TestAssistantIdempotentAtLimit: a principal at Config.MaxAssistants
// that creates one of its assistants again with if_exists do_nothing gets
// it (200), not the bound's 429; with raise, the 409 of an existing id.
func TestAssistantIdempotentAtLimit(t *testing.T) {
	forEachStore(t, func(c *server.Config) { c.MaxAssistants = 1 }, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		var a, again assistantJSON
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "name": "one"}, alice, &a); code != 200 {
			t.Fatalf("create: %d %q", code, a.Detail)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": a.AssistantID, "if_exists": "do_nothing"}, alice, &again); code != 200 || again.AssistantID != a.AssistantID || again.Name != "one" {
			t.Errorf("create again at the limit with do_nothing: %d %q %+v; want 200 and the assistant", code, again.Detail, again)
		}
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo", "assistant_id": a.AssistantID}, alice, &again); code != 409 || !strings.Contains(again.Detail, "do_nothing") {
			t.Errorf("create again at the limit: %d %q; want 409 pointing to if_exists do_nothing", code, again.Detail)
		}
	})
}

// TestAssistantVersionCap: an assistant has at most MaxAssistantVersions
// versions; the change past them is refused with 429 naming the bound.
func TestAssistantVersionCap(t *testing.T) {
	forEachStore(t, nil, func(t *testing.T, ts *testServer, alice, bob http.Header) {
		u := ts.URL
		var a, e assistantJSON
		if code := do(t, "POST", u+"/assistants", map[string]any{"graph_id": "echo"}, alice, &a); code != 200 {
			t.Fatalf("create: %d %q", code, a.Detail)
		}
		for i := 2; i <= server.MaxAssistantVersions; i++ {
			if code := do(t, "PATCH", u+"/assistants/"+a.AssistantID, map[string]any{"name": fmt.Sprint(i)}, alice, &e); code != 200 {
				t.Fatalf("version %d: %d %q", i, code, e.Detail)
			}
		}
		if code := do(t, "PATCH", u+"/assistants/"+a.AssistantID, map[string]any{"name": "over"}, alice, &e); code != 429 || !strings.Contains(e.Detail, "MaxAssistantVersions") {
			t.Errorf("version %d: %d %q; want 429 naming MaxAssistantVersions", server.MaxAssistantVersions+1, code, e.Detail)
		}
	})
}
