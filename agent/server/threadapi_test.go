package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// serveChain serves "chain", a graph of three nodes one after the other
// (three super-steps), each appending its name to the messages.
func serveChain(t *testing.T, cfg server.Config) string {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	prev := graph.START
	for _, n := range []string{"a", "b", "c"} {
		g.AddNode(n, func(ctx context.Context, s chat) (graph.Update[chat], error) {
			return chatMessages.Set([]msg{{Type: "ai", Content: n}}), nil
		})
		g.AddEdge(prev, n)
		prev = n
	}
	g.AddEdge(prev, graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "chain", app); err != nil {
		t.Fatal(err)
	}
	return newHTTPServer(t, srv)
}

// config.recursion_limit bounds the run's super-steps: a run that needs
// more fails with GraphRecursionError naming the field; one within it
// succeeds; a limit out of range is refused before any run is created.
func TestRecursionLimit(t *testing.T) {
	url := serveChain(t, server.Config{})
	input := map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}
	wait := func(limit any) map[string]any {
		var out map[string]any
		body := map[string]any{"assistant_id": "chain", "input": input, "config": map[string]any{"recursion_limit": limit}}
		if code := do(t, "POST", url+"/runs/wait", body, nil, &out); code != 200 {
			t.Fatalf("recursion_limit %v: %d %v", limit, code, out)
		}
		return out
	}
	out := wait(2)
	e, _ := out["__error__"].(map[string]any)
	if e["error"] != "GraphRecursionError" || !strings.Contains(fmt.Sprint(e["message"]), "config.recursion_limit") {
		t.Fatalf("recursion_limit 2 on a 3-step graph: %v; want a GraphRecursionError naming config.recursion_limit", out)
	}
	out = wait(3)
	if out["__error__"] != nil || len(out["messages"].([]any)) != 4 {
		t.Fatalf("recursion_limit 3 on a 3-step graph: %v; want the three nodes' messages", out)
	}
	for _, bad := range []any{0, -1, server.MaxRecursionLimit + 1} {
		var e map[string]string
		body := map[string]any{"assistant_id": "chain", "input": input, "config": map[string]any{"recursion_limit": bad}}
		if code := do(t, "POST", url+"/runs/wait", body, nil, &e); code != 422 || !strings.Contains(e["detail"], "config.recursion_limit") {
			t.Fatalf("recursion_limit %v: %d %v; want 422 naming config.recursion_limit", bad, code, e)
		}
	}
}

// chainThread runs "chain" once on a new thread and returns the thread's id.
func chainThread(t *testing.T, url string) string {
	t.Helper()
	var th struct {
		ID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"topic": "chain"}}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}}
	var out map[string]any
	if code := do(t, "POST", url+"/threads/"+th.ID+"/runs/wait", body, nil, &out); code != 200 || out["__error__"] != nil {
		t.Fatalf("run: %d %v", code, out)
	}
	return th.ID
}

// historyEntry is one checkpoint of POST /threads/{id}/history.
type historyEntry struct {
	Metadata   map[string]any `json:"metadata"`
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	ParentCheckpoint *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"parent_checkpoint"`
}

// POST /threads/{id}/history applies every filter it accepts (metadata,
// checkpoint, select) and refuses, naming the field, those it cannot
// apply.
func TestHistoryFilters(t *testing.T) {
	url := serveChain(t, server.Config{})
	tid := chainThread(t, url)
	hist := func(body map[string]any) ([]historyEntry, int) {
		var out []historyEntry
		code := do(t, "POST", url+"/threads/"+tid+"/history", body, nil, &out)
		return out, code
	}
	all, code := hist(map[string]any{"limit": 100})
	if code != 200 || len(all) < 4 {
		t.Fatalf("whole history: %d, %d entries", code, len(all))
	}
	// metadata: step (a number, not a label of the checkpoint) and a label.
	got, code := hist(map[string]any{"metadata": map[string]any{"step": 1}})
	if code != 200 || len(got) != 1 || got[0].Metadata["step"] != 1.0 {
		t.Fatalf("metadata {step: 1}: %d %+v; want the one checkpoint of step 1", code, got)
	}
	got, code = hist(map[string]any{"metadata": map[string]any{"step": 1, "source": all[0].Metadata["source"]}})
	if code != 200 || len(got) != 1 || got[0].Metadata["step"] != 1.0 {
		t.Fatalf("metadata {step: 1, source}: %d %+v; want the one checkpoint of step 1", code, got)
	}
	if got, code := hist(map[string]any{"before": all[1].Checkpoint.CheckpointID, "metadata": map[string]any{"step": all[0].Metadata["step"]}}); code != 200 || len(got) != 0 {
		t.Fatalf("metadata {step: latest} before the latest's parent: %d %+v; want none", code, got)
	}
	source, _ := all[0].Metadata["source"].(string)
	if source == "" {
		t.Fatalf("the latest checkpoint has no source label: %+v", all[0].Metadata)
	}
	want := 0
	for _, e := range all {
		if e.Metadata["source"] == source {
			want++
		}
	}
	got, _ = hist(map[string]any{"limit": 100, "metadata": map[string]any{"source": source}})
	if len(got) != want || want == len(all) {
		t.Fatalf("metadata {source: %q}: %d entries; want %d of %d", source, len(got), want, len(all))
	}
	if got, _ := hist(map[string]any{"metadata": map[string]any{"source": "nothing-has-this"}}); len(got) != 0 {
		t.Fatalf("a metadata filter nothing matches gave %d entries", len(got))
	}
	// checkpoint selects one checkpoint.
	mid := all[2].Checkpoint.CheckpointID
	got, code = hist(map[string]any{"checkpoint": map[string]any{"checkpoint_id": mid, "checkpoint_ns": "", "thread_id": tid}})
	if code != 200 || len(got) != 1 || got[0].Checkpoint.CheckpointID != mid {
		t.Fatalf("checkpoint %s: %d %+v; want that checkpoint alone", mid, code, got)
	}
	// select narrows each entry to the fields named.
	var sel []map[string]any
	if code := do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"limit": 2, "select": []string{"values", "checkpoint"}}, nil, &sel); code != 200 || len(sel) != 2 || len(sel[0]) != 2 || sel[0]["values"] == nil || sel[0]["checkpoint"] == nil {
		t.Fatalf("select [values checkpoint]: %d %v", code, sel)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"checkpoint": map[string]any{"checkpoint_ns": "sub:1"}}, "checkpoint.checkpoint_ns"},
		{map[string]any{"checkpoint": map[string]any{"checkpoint_id": mid}, "before": mid}, "checkpoint.checkpoint_id"},
		{map[string]any{"checkpoint": map[string]any{"thread_id": "00000000-0000-0000-0000-000000000000"}}, "checkpoint.thread_id"},
		{map[string]any{"select": []string{"values", "bogus"}}, "select[1]"},
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 1001}, "limit"},
		{map[string]any{"metadata": map[string]any{"source": 1}}, "metadata.source"},
		{map[string]any{"metadata": map[string]any{"source": nil}}, "metadata.source"},
		{map[string]any{"metadata": map[string]any{"step": "1"}}, "metadata.step"},
	} {
		var e map[string]string
		if code := do(t, "POST", url+"/threads/"+tid+"/history", c.body, nil, &e); code != 422 || !strings.HasPrefix(e["detail"], c.field+":") {
			t.Errorf("%v: %d %v; want 422 naming %s", c.body, code, e, c.field)
		}
	}
}

// POST /threads/count, /threads/{id}/copy and /threads/prune, on the
// memory and the SQLite store and checkpointer, each scoped to the
// principal.
func TestThreadCountCopyPrune(t *testing.T) {
	for _, backend := range []string{"memory", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			cfg := server.Config{}
			if backend == "sqlite" {
				cfg = sqliteConfig(t)
			}
			cfg.Authenticate = apiKeys(t, map[string]string{"ka-0123456789abcd": "alice", "kb-0123456789abcd": "bob"})
			testThreadCountCopyPrune(t, serveChain(t, cfg))
		})
	}
}

func testThreadCountCopyPrune(t *testing.T, url string) {
	alice, bob := http.Header{"X-Api-Key": {"ka-0123456789abcd"}}, http.Header{"X-Api-Key": {"kb-0123456789abcd"}}
	newThread := func(h http.Header, topic, say string) string {
		t.Helper()
		var th struct {
			ID string `json:"thread_id"`
		}
		if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"topic": topic}}, h, &th); code != 200 {
			t.Fatalf("create thread: %d", code)
		}
		if say != "" {
			var out map[string]any
			body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: say}}}}
			if code := do(t, "POST", url+"/threads/"+th.ID+"/runs/wait", body, h, &out); code != 200 || out["__error__"] != nil {
				t.Fatalf("run: %d %v", code, out)
			}
		}
		return th.ID
	}
	goT := newThread(alice, "x", "go")
	stopT := newThread(alice, "x", "stop")
	idleT := newThread(alice, "y", "")
	newThread(bob, "x", "go")

	count := func(h http.Header, body map[string]any) int {
		t.Helper()
		var n int
		if code := do(t, "POST", url+"/threads/count", body, h, &n); code != 200 {
			t.Fatalf("count %v: %d", body, code)
		}
		return n
	}
	goMessages := []msg{{Type: "human", Content: "go"}, {Type: "ai", Content: "a"}, {Type: "ai", Content: "b"}, {Type: "ai", Content: "c"}}
	for _, c := range []struct {
		body map[string]any
		want int
	}{
		{map[string]any{}, 3},
		{map[string]any{"metadata": map[string]any{"topic": "x"}}, 2},
		{map[string]any{"values": map[string]any{"messages": goMessages}}, 1},
		{map[string]any{"values": map[string]any{"messages": goMessages}, "metadata": map[string]any{"topic": "y"}}, 0},
		{map[string]any{"status": "idle", "metadata": map[string]any{"topic": "y"}}, 1},
	} {
		if got := count(alice, c.body); got != c.want {
			t.Errorf("alice's count %v: %d; want %d", c.body, got, c.want)
		}
	}
	if got := count(bob, map[string]any{"metadata": map[string]any{"topic": "x"}}); got != 1 {
		t.Errorf("bob's count: %d; want 1 (his own thread only)", got)
	}
	var e map[string]string
	if code := do(t, "POST", url+"/threads/count", map[string]any{"status": "done"}, alice, &e); code != 422 || !strings.HasPrefix(e["detail"], "status:") {
		t.Errorf("count with a bad status: %d %v", code, e)
	}
	var found []map[string]any
	if code := do(t, "POST", url+"/threads/search", map[string]any{"values": map[string]any{"messages": goMessages}, "select": []string{"thread_id", "values"}}, alice, &found); code != 200 ||
		len(found) != 1 || found[0]["thread_id"] != goT || len(found[0]) != 2 {
		t.Errorf("search by values with select: %d %v", code, found)
	}

	// copy: a new thread of alice's with the same state and history,
	// which then goes on apart.
	var cp map[string]any
	if code := do(t, "POST", url+"/threads/"+goT+"/copy", nil, bob, &cp); code != 404 {
		t.Fatalf("bob copies alice's thread: %d; want 404", code)
	}
	if code := do(t, "POST", url+"/threads/"+goT+"/copy", nil, alice, &cp); code != 200 {
		t.Fatalf("copy: %d %v", code, cp)
	}
	copyID, _ := cp["thread_id"].(string)
	if copyID == "" || copyID == goT || cp["metadata"].(map[string]any)["topic"] != "x" {
		t.Fatalf("copy: %v", cp)
	}
	var srcHist, copyHist []historyEntry
	do(t, "POST", url+"/threads/"+goT+"/history", map[string]any{"limit": 100}, alice, &srcHist)
	do(t, "POST", url+"/threads/"+copyID+"/history", map[string]any{"limit": 100}, alice, &copyHist)
	if len(srcHist) < 4 || len(copyHist) != len(srcHist) || copyHist[0].Checkpoint.CheckpointID != srcHist[0].Checkpoint.CheckpointID {
		t.Fatalf("copy's history: %d entries; want the source's %d", len(copyHist), len(srcHist))
	}
	var st struct {
		Values chat `json:"values"`
	}
	if code := do(t, "GET", url+"/threads/"+copyID+"/state", nil, alice, &st); code != 200 || len(st.Values.Messages) != 4 {
		t.Fatalf("copy's state: %d %+v", code, st)
	}
	var out map[string]any
	body := map[string]any{"assistant_id": "chain", "input": map[string]any{"messages": []msg{{Type: "human", Content: "more"}}}}
	if code := do(t, "POST", url+"/threads/"+copyID+"/runs/wait", body, alice, &out); code != 200 || len(out["messages"].([]any)) != 8 {
		t.Fatalf("a run on the copy: %d %v; want the copied messages and the new ones", code, out)
	}
	if code := do(t, "GET", url+"/threads/"+goT+"/state", nil, alice, &st); code != 200 || len(st.Values.Messages) != 4 {
		t.Fatalf("the source after a run on its copy: %+v; want it unchanged", st)
	}

	// prune: keep_latest keeps the thread and its state with one
	// checkpoint; delete deletes; another's thread and unknown ids are
	// not counted.
	prune := func(h http.Header, ids []string, strategy string) int {
		t.Helper()
		var res map[string]int
		if code := do(t, "POST", url+"/threads/prune", map[string]any{"thread_ids": ids, "strategy": strategy}, h, &res); code != 200 {
			t.Fatalf("prune %s: %d", strategy, code)
		}
		return res["pruned_count"]
	}
	if n := prune(bob, []string{goT, stopT}, "delete"); n != 0 {
		t.Fatalf("bob prunes alice's threads: %d pruned", n)
	}
	if n := prune(alice, []string{copyID, copyID}, "keep_latest"); n != 1 {
		t.Fatalf("keep_latest of one thread named twice: %d pruned; want 1", n)
	}
	do(t, "POST", url+"/threads/"+copyID+"/history", map[string]any{"limit": 100}, alice, &copyHist)
	if len(copyHist) != 1 {
		t.Fatalf("after keep_latest: %d checkpoints; want 1", len(copyHist))
	}
	if code := do(t, "GET", url+"/threads/"+copyID+"/state", nil, alice, &st); code != 200 || len(st.Values.Messages) != 8 {
		t.Fatalf("state after keep_latest: %d %+v", code, st)
	}
	if n := prune(alice, []string{stopT, idleT, "00000000-0000-7000-8000-000000000000"}, "delete"); n != 2 {
		t.Fatalf("delete: %d pruned; want 2", n)
	}
	if code := do(t, "GET", url+"/threads/"+stopT, nil, alice, nil); code != 404 {
		t.Fatalf("a deleted thread: %d; want 404", code)
	}
	if got := count(alice, map[string]any{}); got != 2 {
		t.Fatalf("alice's threads after the prune: %d; want 2", got)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"thread_ids": []string{goT}, "strategy": "all"}, "strategy"},
		{map[string]any{"thread_ids": []string{"nope"}}, "thread_ids[0]"},
		{map[string]any{"thread_ids": make([]string, 1001)}, "thread_ids"},
	} {
		if code := do(t, "POST", url+"/threads/prune", c.body, alice, &e); code != 422 || !strings.HasPrefix(e["detail"], c.field+":") {
			t.Errorf("prune %v: %d %v; want 422 naming %s", c.body["strategy"], code, e, c.field)
		}
	}
}

// config.configurable reaches the nodes through RunContext (the request's
// context wins over it), and its checkpoint_id starts the run from that
// checkpoint, as the body's checkpoint_id does.
func TestRunConfigurable(t *testing.T) {
	_, url := newGreetServer(t, server.Config{})
	tid := newThread(t, url)
	run := func(body map[string]any) greeting {
		t.Helper()
		var out greeting
		body["assistant_id"] = "greet"
		if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, &out); code != 200 {
			t.Fatalf("run %v: %d", body, code)
		}
		return out
	}
	if out := run(map[string]any{"input": map[string]any{"name": "x"}, "config": map[string]any{"configurable": map[string]any{"user": "bo"}}}); out.Reply != "hi bo (from the context)" {
		t.Fatalf("configurable user: reply %q", out.Reply)
	}
	if out := run(map[string]any{"input": map[string]any{"name": "x"}, "context": map[string]any{"user": "ada"}, "config": map[string]any{"configurable": map[string]any{"user": "bo"}}}); out.Reply != "hi ada (from the context)" {
		t.Fatalf("context and configurable: reply %q; want the context's", out.Reply)
	}
	var hist []historyEntry
	do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"limit": 100}, nil, &hist)
	first := hist[len(hist)-1].Checkpoint.CheckpointID // the first run's input
	run(map[string]any{"input": nil, "config": map[string]any{"configurable": map[string]any{"checkpoint_id": first}}})
	var full []struct {
		ParentCheckpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"parent_checkpoint"`
	}
	do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"limit": 1}, nil, &full)
	if len(full) != 1 || full[0].ParentCheckpoint.CheckpointID != first {
		t.Fatalf("a run from configurable.checkpoint_id %s: its checkpoint's parent is %+v", first, full)
	}
	var e map[string]string
	body := map[string]any{"assistant_id": "greet", "input": nil, "config": map[string]any{"configurable": map[string]any{"checkpoint_ns": "sub:1"}}}
	if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, &e); code != 422 || !strings.HasPrefix(e["detail"], "config.configurable.checkpoint_ns:") {
		t.Fatalf("configurable.checkpoint_ns: %d %v", code, e)
	}
}

// The fields this server cannot apply are refused with 422 naming the
// field, not accepted and ignored; state's select narrows the answer.
func TestUnappliedFieldsRefused(t *testing.T) {
	url := serveChain(t, server.Config{})
	tid := chainThread(t, url)
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field        string
	}{
		{"POST", "/threads", map[string]any{"ttl": map[string]any{"strategy": "delete", "ttl": 5}}, "ttl"},
		{"POST", "/threads", map[string]any{"supersteps": []any{map[string]any{"updates": []any{}}}}, "supersteps"},
		{"PATCH", "/threads/" + tid, map[string]any{"ttl": 5}, "ttl"},
		{"GET", "/threads/" + tid + "/state?subgraphs=true", nil, "subgraphs"},
		{"GET", "/threads/" + tid + "/state?select=bogus", nil, "select[0]"},
		{"POST", "/threads/" + tid + "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": ""}, "subgraphs": true}, "subgraphs"},
		{"POST", "/threads/" + tid + "/runs/wait", map[string]any{"assistant_id": "chain", "feedback_keys": []string{"score"}}, "feedback_keys"},
		{"POST", "/threads/search", map[string]any{"extract": map[string]string{"m": "values.messages"}}, "extract"},
		{"POST", "/threads/search", map[string]any{"select": []string{"thread_id", "nope"}}, "select[1]"},
		{"POST", "/threads/count", map[string]any{"limit": 5}, "limit"},
		{"POST", "/threads/" + tid + "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": "", "checkpoint_ns": "child:1"}}, "checkpoint.checkpoint_ns"},
		{"POST", "/threads/" + tid + "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": "", "checkpoint_map": map[string]any{"": "x"}}}, "checkpoint.checkpoint_ns"},
		{"POST", "/threads/" + tid + "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"thread_id": "00000000-0000-7000-8000-000000000000"}}, "checkpoint.thread_id"},
		{"POST", "/threads/" + tid + "/runs/wait", map[string]any{"assistant_id": "chain", "config": map[string]any{"configurable": map[string]any{"checkpoint_map": map[string]any{"": "x"}}}}, "config.configurable.checkpoint_map"},
		{"POST", "/threads/" + tid + "/runs/wait", map[string]any{"assistant_id": "chain", "config": map[string]any{"configurable": map[string]any{"checkpoint_id": 7}}}, "config.configurable.checkpoint_id"},
		{"POST", "/threads/" + tid + "/runs/wait", map[string]any{"assistant_id": "chain", "config": map[string]any{"configurable": map[string]any{"checkpoint_ns": false}}}, "config.configurable.checkpoint_ns"},
	} {
		var e map[string]string
		if code := do(t, c.method, url+c.path, c.body, nil, &e); code != 422 || !strings.HasPrefix(e["detail"], c.field) {
			t.Errorf("%s %s %v: %d %v; want 422 naming %s", c.method, c.path, c.body, code, e, c.field)
		}
	}
	var st map[string]json.RawMessage
	if code := do(t, "GET", url+"/threads/"+tid+"/state?select=values.messages&select=next", nil, nil, &st); code != 200 || len(st) != 2 || st["next"] == nil {
		t.Fatalf("state with select: %d %v", code, st)
	}
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(st["values"], &vals); err != nil || len(vals) != 1 || vals["messages"] == nil {
		t.Fatalf("state values with select=values.messages: %s", st["values"])
	}
}

// config.max_concurrency bounds how many tasks of one step run at once:
// three parallel nodes, each of which waits (up to a moment) for the
// others to come in, run one at a time with max_concurrency 1, and all
// at once without it. Out of range is refused.
func TestMaxConcurrency(t *testing.T) {
	srv, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	active, peak := 0, 0
	allIn := make(chan struct{})
	g := graph.New[chat]()
	for _, name := range []string{"a", "b", "c"} {
		g.AddNode(name, func(ctx context.Context, s chat) (graph.Update[chat], error) {
			mu.Lock()
			active++
			peak = max(peak, active)
			if active == 3 {
				close(allIn)
			}
			mu.Unlock()
			select {
			case <-allIn:
			case <-time.After(100 * time.Millisecond): // one at a time: nobody else comes in
			case <-ctx.Done():
			}
			mu.Lock()
			active--
			mu.Unlock()
			return chatMessages.Set([]msg{{Type: "ai", Content: name}}), nil
		})
		g.AddEdge(graph.START, name).AddEdge(name, graph.END)
	}
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "fan", app); err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, srv)
	input := map[string]any{"messages": []msg{{Type: "human", Content: "go"}}}
	var out map[string]any
	body := map[string]any{"assistant_id": "fan", "input": input, "config": map[string]any{"max_concurrency": 1}}
	if code := do(t, "POST", url+"/runs/wait", body, nil, &out); code != 200 || out["__error__"] != nil {
		t.Fatalf("max_concurrency 1: %d %v", code, out)
	}
	mu.Lock()
	if peak != 1 {
		t.Errorf("max_concurrency 1: %d tasks ran at once; want 1", peak)
	}
	mu.Unlock()
	for _, bad := range []any{0, -2, server.MaxConcurrencyLimit + 1} {
		var e map[string]string
		body := map[string]any{"assistant_id": "fan", "input": input, "config": map[string]any{"max_concurrency": bad}}
		if code := do(t, "POST", url+"/runs/wait", body, nil, &e); code != 422 || !strings.Contains(e["detail"], "config.max_concurrency") {
			t.Errorf("max_concurrency %v: %d %v; want 422 naming config.max_concurrency", bad, code, e)
		}
	}
}
