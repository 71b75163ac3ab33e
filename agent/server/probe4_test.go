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
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory"
	mpg "github.com/agentgraph/agentgraph/memory/postgres"
)

// TestNULInMetadataIsRefused: a NUL character in a key or a string of
// metadata, or of a filter on it, is refused with 422 naming the field on
// every store (PostgreSQL's jsonb cannot hold one: it answered 500 there),
// and the thread is left as it was.
func TestNULInMetadataIsRefused(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid := newThread(t, ts.URL)
			do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
			for _, tc := range []struct {
				method, path, body, field string
			}{
				{"POST", "/threads", `{"metadata":{"tag":"a\u0000b"}}`, "metadata.tag"},
				{"POST", "/threads", `{"metadata":{"a\u0000b":"x"}}`, "metadata"},
				{"POST", "/threads", `{"metadata":{"nested":{"list":["ok","\u0000"]}}}`, "metadata.nested.list[1]"},
				{"PATCH", "/threads/" + tid, `{"metadata":{"tag":"\u0000"}}`, "metadata.tag"},
				{"POST", "/threads/search", `{"metadata":{"tag":"\u0000"}}`, "metadata.tag"},
				{"POST", "/threads/count", `{"metadata":{"\u0000":"x"}}`, "metadata"},
				{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","command":{"resume":"yes"},"metadata":{"k":"\u0000"}}`, "metadata.k"},
				{"POST", "/threads/" + tid + "/history", `{"metadata":{"source":"\u0000"}}`, "metadata.source"},
				{"PATCH", "/threads/" + tid + "/state", `{"metadata":{"label":"\u0000"}}`, "metadata.label"},
			} {
				code, body := raw(t, tc.method, ts.URL+tc.path, tc.body, nil)
				if code != 422 || !strings.Contains(body, `"`+tc.field+`: `) || !strings.Contains(body, "NUL") {
					t.Errorf("%s %s %s: %d %s; want 422 naming %s and the NUL", tc.method, tc.path, tc.body, code, body, tc.field)
				}
			}
			var th struct {
				Status   string         `json:"status"`
				Metadata map[string]any `json:"metadata"`
			}
			do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
			if th.Status != "interrupted" || th.Metadata["tag"] != nil {
				t.Errorf("thread after the refusals: %+v; want interrupted, without tag", th)
			}
		})
	}
}

// TestNULInInterruptValue: a graph whose interrupt carries a string with
// a NUL character pauses as any other, on every store: the wait answers
// its values and the thread is interrupted with the interrupt. (The
// PostgreSQL store could not write the interrupt to its jsonb column: the
// run ended success, the wait answered {} and the thread stayed busy.)
func TestNULInInterruptValue(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid := newThread(t, ts.URL)
			var out struct {
				Messages  []msg `json:"messages"`
				Interrupt []struct {
					Value map[string]string `json:"value"`
				} `json:"__interrupt__"`
			}
			code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "a\x00b"}}}}, nil, &out)
			if code != 200 || len(out.Interrupt) != 1 || out.Interrupt[0].Value["draft"] != "draft for: a\x00b" {
				t.Fatalf("wait: %d %+v; want the interrupt with the draft", code, out)
			}
			var th struct {
				Status     string                        `json:"status"`
				Interrupts map[string][]server.Interrupt `json:"interrupts"`
			}
			do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th)
			var got string
			for _, ins := range th.Interrupts {
				got = string(ins[0].Value)
			}
			if th.Status != "interrupted" || !strings.Contains(got, `a\u0000b`) {
				t.Fatalf("thread: %s, interrupts %v; want interrupted with the draft's NUL", th.Status, th.Interrupts)
			}
			var done map[string]any
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "ok"}}, nil, &done); code != 200 || done["approved"] != "ok" {
				t.Fatalf("resume: %d %v; want approved ok", code, done)
			}
		})
	}
}

// TestCheckpointIDWithNUL: a checkpoint id with a NUL character names no
// checkpoint (404) in every path and body that takes one, on every
// store; the PostgreSQL checkpointer answered that the thread was
// corrupt (500).
func TestCheckpointIDWithNUL(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid := newThread(t, ts.URL)
			do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
			for _, tc := range []struct{ method, path, body string }{
				{"GET", "/threads/" + tid + "/state/a%00b", ""},
				{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"a\u0000b"}}`},
				{"POST", "/threads/" + tid + "/history", `{"before":"a\u0000b"}`},
				{"POST", "/threads/" + tid + "/history", `{"checkpoint":{"checkpoint_id":"a\u0000b"}}`},
				{"GET", "/threads/" + tid + "/history?before=a%00b", ""},
			} {
				if code, body := raw(t, tc.method, ts.URL+tc.path, tc.body, nil); code != http.StatusNotFound {
					t.Errorf("%s %s %s: %d %s; want 404", tc.method, tc.path, tc.body, code, body)
				}
			}
		})
	}
}

// TestThreadFilterKeysAreBounded: a thread search or count filtering on
// more than server.MaxFilterKeys metadata or values keys, or a history
// on more metadata keys, is refused naming the field. (On PostgreSQL each key is a condition of the query,
// whose cost grew faster than their number: in one ad-hoc measurement a
// filter of 5000 keys took 2.7 s, one of 20000 keys (1 MB) tens of
// seconds.)
func TestThreadFilterKeysAreBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	filter := func(n int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprint("k", i)] = "v"
		}
		return m
	}
	tid := newThread(t, ts.URL)
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
	for path, fields := range map[string][]string{"/threads/search": {"metadata", "values"}, "/threads/count": {"metadata", "values"}, "/threads/" + tid + "/history": {"metadata"}} {
		for _, field := range fields {
			var e struct{ Detail string }
			if code := do(t, "POST", ts.URL+path, map[string]any{field: filter(server.MaxFilterKeys + 1)}, nil, &e); code != 422 || !strings.HasPrefix(e.Detail, field+": ") {
				t.Errorf("%s with %d %s keys: %d %q; want 422 naming %s", path, server.MaxFilterKeys+1, field, code, e.Detail, field)
			}
			if code := do(t, "POST", ts.URL+path, map[string]any{field: filter(server.MaxFilterKeys)}, nil, nil); code != 200 {
				t.Errorf("%s with %d %s keys: %d; want 200", path, server.MaxFilterKeys, field, code)
			}
		}
	}
}

// TestStoreSearchNULAndDepth: a store search whose filter or query holds
// a NUL character is refused with 422 naming the field, in memory and on
// PostgreSQL (which answered 500); a namespace listing with the largest
// max_depth lists every namespace (the server's scope label overflowed
// it to a negative depth, refused as negative).
func TestStoreSearchNULAndDepth(t *testing.T) {
	for name, items := range map[string]func(t *testing.T) memory.Items{
		"memory": func(t *testing.T) memory.Items { return memory.NewInMemoryItems(memory.InMemoryItemsConfig{}) },
		"postgres": func(t *testing.T) memory.Items {
			pool, schema := postgrestest.Schema(t, "agentserver_items_")
			it, err := mpg.NewItems(t.Context(), mpg.Config{Pool: pool, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			return it
		},
	} {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, server.Config{Items: items(t), Authenticate: server.APIKeys(map[string]string{"ka": "alice"})})
			h := map[string]string{"X-Api-Key": "ka"}
			if code, body := raw(t, "PUT", ts.URL+"/store/items", `{"namespace":["notes","a"],"key":"k","value":{"x":"1"}}`, h); code != 204 {
				t.Fatalf("put: %d %s", code, body)
			}
			for _, tc := range []struct{ body, field string }{
				{`{"namespace_prefix":["notes"],"filter":{"x\u0000":"1"}}`, `filter[\"x\\x00\"]`},
				{`{"namespace_prefix":["notes"],"filter":{"x":"\u0000"}}`, `filter[\"x\"]`},
				{`{"namespace_prefix":["notes"],"filter":{"x":{"$gt":"\u0000"}}}`, `filter[\"x\"][\"$gt\"]`},
				{`{"namespace_prefix":["notes"],"query":"a\u0000"}`, "query"},
			} {
				if code, body := raw(t, "POST", ts.URL+"/store/items/search", tc.body, h); code != 422 || !strings.Contains(body, `"detail":"`+tc.field+`: `) || !strings.Contains(body, "NUL") {
					t.Errorf("search %s: %d %s; want 422 naming %s", tc.body, code, body, tc.field)
				}
			}
			code, body := raw(t, "POST", ts.URL+"/store/namespaces", `{"max_depth":9223372036854775807}`, h)
			if code != 200 || !strings.Contains(body, `["notes","a"]`) {
				t.Errorf("namespaces with the largest max_depth: %d %s; want 200 with [notes a]", code, body)
			}
		})
	}
}

// TestSelectIsBounded: a select of more than 100 fields is refused naming
// select, in thread and assistant searches and in state and history
// reads. Each field was copied for every thread of the answer: in one
// ad-hoc measurement (on a loaded machine), a 1 MB thread search
// selecting "values" 100000 times over 1000 threads took 40 s.
func TestSelectIsBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
	repeat := func(n int, f func(i int) string) []string {
		sel := make([]string, n)
		for i := range sel {
			sel[i] = f(i)
		}
		return sel
	}
	values := func(int) string { return "values" }
	valueKeys := func(i int) string { return fmt.Sprint("values.k", i) }
	for _, tc := range []struct {
		path string
		body func(n int) any
	}{
		{"/threads/search", func(n int) any { return map[string]any{"select": repeat(n, values)} }},
		{"/assistants/search", func(n int) any { return map[string]any{"select": repeat(n, func(int) string { return "name" })} }},
		{"/threads/" + tid + "/history", func(n int) any { return map[string]any{"select": repeat(n, valueKeys)} }},
		{"/threads/" + tid + "/state/checkpoint", func(n int) any {
			return map[string]any{"checkpoint": map[string]any{"checkpoint_id": ""}, "select": repeat(n, valueKeys)}
		}},
	} {
		b, _ := json.Marshal(tc.body(101))
		if code, body := raw(t, "POST", ts.URL+tc.path, string(b), nil); code != 422 || !strings.Contains(body, `"select: 101 fields`) {
			t.Errorf("%s with 101 selected: %d %.200s; want 422 naming select", tc.path, code, body)
		}
		if code := do(t, "POST", ts.URL+tc.path, tc.body(100), nil, nil); code != 200 {
			t.Errorf("%s with 100 selected: %d; want 200", tc.path, code)
		}
	}
	q := strings.Join(repeat(101, valueKeys), ",")
	if code, body := raw(t, "GET", ts.URL+"/threads/"+tid+"/state?select="+q, "", nil); code != 422 || !strings.Contains(body, "select: 101 fields") {
		t.Errorf("GET state with 101 selected: %d %s; want 422 naming select", code, body)
	}
}

// creatingStore is a Store on which another request creates thread id
// (as POST /threads does, without the thread's lock) right after a run's
// creation found it missing.
type creatingStore struct {
	server.Store
	mu   sync.Mutex
	id   string
	done bool
}

func (c *creatingStore) Thread(ctx context.Context, id string) (*server.Thread, error) {
	c.mu.Lock()
	race := id == c.id && !c.done
	c.done = c.done || race
	c.mu.Unlock()
	if race {
		now := time.Now()
		if err := c.Store.CreateThread(ctx, &server.Thread{ID: id, CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle, Metadata: map[string]any{}}); err != nil {
			return nil, err
		}
		return nil, server.ErrNotFound
	}
	return c.Store.Thread(ctx, id)
}

// TestRunCreateIfNotExistsRace: a run with if_not_exists create whose
// thread is created by another request of the same principal between
// the run's look and its creation of the thread runs on that thread; it
// was refused with 409 (the thread exists), though the client asked for
// the thread to be created if missing.
func TestRunCreateIfNotExistsRace(t *testing.T) {
	// With MaxThreads 1, the thread created meanwhile is the one the
	// limit counts: the run's own creation fails on the limit, not on
	// the thread's existence, and must still go on that thread.
	for _, maxThreads := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxThreads=%d", maxThreads), func(t *testing.T) {
			const tid = "0aaaaaaa-46ac-7f1b-956c-95867187d56e"
			st := &creatingStore{Store: server.NewMemoryStore(), id: tid}
			ts := newTestServer(t, server.Config{Store: st, MaxThreads: maxThreads})
			var out map[string]any
			code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "if_not_exists": "create", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, &out)
			if code != 200 || out["__interrupt__"] == nil {
				t.Fatalf("run with if_not_exists create on a thread created meanwhile: %d %v; want the run's values", code, out)
			}
			var th struct{ Status string }
			if do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &th); th.Status != "interrupted" {
				t.Fatalf("thread: %s; want interrupted by the run", th.Status)
			}
		})
	}
}
