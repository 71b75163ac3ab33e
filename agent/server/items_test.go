package server_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/memory"
	mpg "github.com/agentgraph/agentgraph/memory/postgres"
	msqlite "github.com/agentgraph/agentgraph/memory/sqlite"
)

// itemBackends make the item stores the store API's tests run on.
var itemBackends = map[string]func(t *testing.T) memory.Items{
	"memory": func(t *testing.T) memory.Items { return memory.NewInMemoryItems(memory.InMemoryItemsConfig{}) },
	"sqlite": func(t *testing.T) memory.Items {
		it, err := msqlite.NewItems(t.Context(), msqlite.Config{Path: filepath.Join(t.TempDir(), "items.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { it.Close() })
		return it
	},
	"postgres": func(t *testing.T) memory.Items {
		pool, schema := postgrestest.Schema(t, "agentserver_items_")
		it, err := mpg.NewItems(t.Context(), mpg.Config{Pool: pool, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		return it
	},
}

// TestStoreTTLBeyondDurationRange: a ttl (minutes) too long for a
// time.Duration is refused naming ttl and its limit, not converted to a
// negative duration reported as "is negative"; the longest one is kept.
func TestStoreTTLBeyondDurationRange(t *testing.T) {
	ts := newTestServer(t, server.Config{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	for _, ttl := range []float64{1e12, 1e300} {
		var e struct{ Detail string }
		code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": map[string]int{"x": 1}, "ttl": ttl}, nil, &e)
		if code != 422 || !strings.HasPrefix(e.Detail, "ttl: ") || !strings.Contains(e.Detail, "more than the most allowed") {
			t.Fatalf("ttl %v: %d %q; want 422 naming ttl and its limit", ttl, code, e.Detail)
		}
	}
	if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": map[string]int{"x": 1}, "ttl": 153722866}, nil, nil); code != http.StatusNoContent {
		t.Fatalf("longest ttl: %d; want 204", code)
	}
	var got map[string]any
	if code := do(t, "GET", ts.URL+"/store/items?namespace=a&key=k", nil, nil, &got); code != 200 || got == nil {
		t.Fatalf("get: %d %v; want the item", code, got)
	}
}

// TestStoreSearchNULAndDepth: a store search whose filter or query holds
// a NUL character is refused with 422 naming the field, on every store
// (PostgreSQL answered 500); a namespace listing with the largest
// max_depth lists every namespace (the server's scope label overflowed
// it to a negative depth, refused as negative).
func TestStoreSearchNULAndDepth(t *testing.T) {
	for name, items := range itemBackends {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, server.Config{Items: items(t), Authenticate: apiKeys(t, map[string]string{"ka-0123456789abcd": "alice"})})
			h := map[string]string{"X-Api-Key": "ka-0123456789abcd"}
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

// TestStoreItemsBounds: a full item store answers 507 with what to do
// (it answered 500); a principal that holds Config.MaxItems items is
// refused a new one (429 naming the bound) but may replace its own, and
// another principal still puts its items.
func TestStoreItemsBounds(t *testing.T) {
	put := func(ts *testServer, h http.Header, ns, key string) (int, string) {
		var e struct{ Detail string }
		code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{ns}, "key": key, "value": map[string]int{"x": 1}}, h, &e)
		return code, e.Detail
	}
	t.Run("full", func(t *testing.T) {
		ts := newTestServer(t, server.Config{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: 1})})
		if code, d := put(ts, nil, "a", "k1"); code != http.StatusNoContent {
			t.Fatalf("first item: %d %q", code, d)
		}
		if code, d := put(ts, nil, "a", "k2"); code != http.StatusInsufficientStorage || !strings.Contains(d, "full") || !strings.Contains(d, "delete items") {
			t.Fatalf("item past a full store: %d %q; want 507 saying the store is full and what to do", code, d)
		}
	})
	t.Run("per principal", func(t *testing.T) {
		ts := newTestServer(t, server.Config{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{}), MaxItems: 2,
			Authenticate: apiKeys(t, map[string]string{"key-a-0123456789": "alice", "key-b-0123456789": "bob"})})
		alice := http.Header{"X-Api-Key": {"key-a-0123456789"}}
		bob := http.Header{"X-Api-Key": {"key-b-0123456789"}}
		for _, k := range []string{"k1", "k2"} {
			if code, d := put(ts, alice, "a", k); code != http.StatusNoContent {
				t.Fatalf("alice's %s: %d %q", k, code, d)
			}
		}
		if code, d := put(ts, alice, "b", "k3"); code != http.StatusTooManyRequests || !strings.Contains(d, "Config.MaxItems") {
			t.Errorf("alice's third item: %d %q; want 429 naming Config.MaxItems", code, d)
		}
		if code, d := put(ts, alice, "a", "k2"); code != http.StatusNoContent {
			t.Errorf("alice replacing her item at her bound: %d %q; want 204", code, d)
		}
		for _, k := range []string{"k1", "k2"} {
			if code, d := put(ts, bob, "a", k); code != http.StatusNoContent {
				t.Errorf("bob's %s while alice is at her bound: %d %q; want 204", k, code, d)
			}
		}
		if code := do(t, "DELETE", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k1"}, alice, nil); code != http.StatusNoContent {
			t.Fatalf("alice's delete: %d", code)
		}
		if code, d := put(ts, alice, "b", "k3"); code != http.StatusNoContent {
			t.Errorf("alice's item once she deleted one: %d %q; want 204", code, d)
		}
	})
}

// TestStoreItemNumbersOutOfRangeRefused: an item value holding a number
// not every store holds alike is refused with 422 naming its path in
// value, on every store. Memory kept 1e999999999 (JavaScript reads it as
// Infinity) where PostgreSQL answered 500.
func TestStoreItemNumbersOutOfRangeRefused(t *testing.T) {
	for name, items := range itemBackends {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, server.Config{Items: items(t)})
			for value, want := range map[string]string{
				`{"n":1e999999999}`:                        `value.n: the number 1e999999999 is beyond a float64's range`,
				`{"a":[1,{"b":1e-400}]}`:                   `value.a[1].b: the number 1e-400 is too small`,
				`{"n":0e-20000}`:                           `value.n: the number 0e-20000 is zero with an exponent`,
				`{"n":1` + strings.Repeat("0", 1000) + `}`: `value.n: the number 1000000`,
			} {
				code, body := raw(t, "PUT", ts.URL+"/store/items", `{"namespace":["a"],"key":"k","value":`+value+`}`, nil)
				if code != 422 || !strings.Contains(body, want) {
					t.Errorf("put value %.60s: %d %.300s; want 422 with %s", value, code, body, want)
				}
			}
			if code, body := raw(t, "GET", ts.URL+"/store/items?namespace=a&key=k", ``, nil); code != 200 || body != "null" {
				t.Errorf("get after the refusals: %d %s; want 200 null (no item)", code, body)
			}
		})
	}
}

// TestStoreItemsUnboundedWithoutAuthentication: without Authenticate every
// request is one principal's, so the default MaxItems would bound the
// whole store; it applies only with Authenticate (a server without it
// refused its 10,001st item after an upgrade).
func TestStoreItemsUnboundedWithoutAuthentication(t *testing.T) {
	ts := newTestServer(t, server.Config{Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	for i := range server.DefaultMaxItems + 1 {
		code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": fmt.Sprint("k", i), "value": map[string]int{"x": i}}, nil, nil)
		if code != http.StatusNoContent {
			t.Fatalf("item %d of a server without Authenticate: %d; want 204 (no default bound)", i+1, code)
		}
	}
}

// TestStoreSearchFilterNumbersRefused: a search filter's number that not
// every store holds alike (the put's rule) is refused with 422 naming its
// place in the filter, on every store, where it was compared as each
// store read it (1e-400 and 0e-20000 as 0, found the item whose x is
// 0); a filter of ordinary numbers still finds the item.
func TestStoreSearchFilterNumbersRefused(t *testing.T) {
	for name, items := range itemBackends {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, server.Config{Items: items(t)})
			if code, body := raw(t, "PUT", ts.URL+"/store/items", `{"namespace":["a"],"key":"k","value":{"x":0,"y":2.5}}`, nil); code != 204 {
				t.Fatalf("put: %d %s", code, body)
			}
			for filter, want := range map[string]string{
				`{"x":1e400}`:                               `filter[\"x\"]: the number 1e400 is beyond a float64's range`,
				`{"x":1e-400}`:                              `filter[\"x\"]: the number 1e-400 is too small`,
				`{"x":{"$gte":-1e-400}}`:                    `filter[\"x\"][\"$gte\"]: the number -1e-400 is too small`,
				`{"x":{"$lte":0e-20000}}`:                   `filter[\"x\"][\"$lte\"]: the number 0e-20000 is zero with an exponent`,
				`{"x":0.` + strings.Repeat("0", 1000) + `}`: `filter[\"x\"]: the number 0.000000`,
			} {
				code, body := raw(t, "POST", ts.URL+"/store/items/search", `{"filter":`+filter+`}`, nil)
				if code != 422 || !strings.Contains(body, `"detail":"`+want) {
					t.Errorf("search with filter %.60s: %d %.300s; want 422 with %s", filter, code, body, want)
				}
			}
			for _, filter := range []string{`{"x":0,"y":2.5}`, `{"x":0e-400}`, `{"y":{"$gt":2.4999999999999996,"$lt":26e-1}}`} {
				code, body := raw(t, "POST", ts.URL+"/store/items/search", `{"filter":`+filter+`}`, nil)
				if code != 200 || !strings.Contains(body, `"key":"k"`) {
					t.Errorf("search with filter %s: %d %.300s; want 200 with the item", filter, code, body)
				}
			}
		})
	}
}
