package memorytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/conformance"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Clock is the clock [RunItems] gives a store: it starts at a fixed time
// and moves only when a check advances it. It is safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// items is the store under test and the clock it was made with.
type items struct {
	memory.Items
	clock *Clock
}

// RunItems runs the conformance checks of [memory.Items] as subtests of t.
// newItems is called once per subtest and must return an empty store that
// takes its time from now (timestamps, TTLs); release it with t.Cleanup.
//
//	memorytest.RunItems(t, func(t *testing.T, now func() time.Time) memory.Items {
//		return memory.NewInMemoryItems(memory.InMemoryItemsConfig{Now: now})
//	})
func RunItems(t *testing.T, newItems func(t *testing.T, now func() time.Time) memory.Items) {
	t.Helper()
	mk := func(t *testing.T) items {
		c := &Clock{}
		c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC).UnixNano())
		return items{newItems(t, c.Now), c}
	}
	conformance.Run(t, mk, []conformance.Check[items]{
		{Name: "PutGet", Fn: testPutGet},
		{Name: "PutReplaces", Fn: testPutReplaces},
		{Name: "GetMissing", Fn: testGetMissing},
		{Name: "Delete", Fn: testItemDelete},
		{Name: "Value", Fn: testValue},
		{Name: "Validation", Fn: testItemValidation},
		{Name: "SearchPrefix", Fn: testSearchPrefix},
		{Name: "SearchFilter", Fn: testSearchFilter},
		{Name: "SearchFilterFloat64", Fn: testSearchFilterFloat64},
		{Name: "SearchQuery", Fn: testSearchQuery},
		{Name: "SearchPages", Fn: testSearchPages},
		{Name: "SearchMaxBytes", Fn: testSearchMaxBytes},
		{Name: "Namespaces", Fn: testNamespaces},
		{Name: "TTL", Fn: testTTL},
		{Name: "Canceled", Fn: testItemsCanceled},
		{Name: "ConcurrentPut", Fn: testConcurrentPut},
	})
}

func put(t *testing.T, s memory.Items, ns []string, key, value string) {
	t.Helper()
	if err := s.Put(t.Context(), memory.Record{Namespace: ns, Key: key, Value: json.RawMessage(value)}); err != nil {
		t.Fatalf("Put(%q, %q, %s): %v", ns, key, value, err)
	}
}

func get(t *testing.T, s memory.Items, ns []string, key string) memory.Record {
	t.Helper()
	r, err := s.Get(t.Context(), ns, key, false)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", ns, key, err)
	}
	return r
}

func search(t *testing.T, s memory.Items, q memory.ItemQuery) []memory.Record {
	t.Helper()
	rs, err := s.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return rs
}

// searchKeys returns the keys of the records q finds, in order.
func searchKeys(t *testing.T, s memory.Items, q memory.ItemQuery) []string {
	t.Helper()
	var keys []string
	for _, r := range search(t, s, q) {
		keys = append(keys, r.Key)
	}
	return keys
}

// ids renders records as "ns/ns:key".
func ids(rs []memory.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = strings.Join(r.Namespace, "/") + ":" + r.Key
	}
	return out
}

// sameJSON reports whether a and b hold equal JSON values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("stored value %s is not JSON: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("value %s is not JSON: %v", b, err)
	}
	return cmp.Equal(x, y)
}

func testPutGet(t *testing.T, s items) {
	ns := []string{"users", "u42", "prefs"}
	before := s.clock.Now()
	put(t, s, ns, "theme", `{"color": "dark", "size": 12, "tags": ["a", "b"], "nested": {"x": null}}`)
	r := get(t, s, ns, "theme")
	if !slices.Equal(r.Namespace, ns) || r.Key != "theme" {
		t.Errorf("Get returned %q/%q, want %q/theme", r.Namespace, r.Key, ns)
	}
	if !sameJSON(t, r.Value, []byte(`{"nested":{"x":null},"tags":["a","b"],"size":12,"color":"dark"}`)) {
		t.Errorf("Value = %s, want the object put", r.Value)
	}
	if !r.Created.Equal(before) || !r.Updated.Equal(before) {
		t.Errorf("Created, Updated = %v, %v; want both %v (the store's clock)", r.Created, r.Updated, before)
	}
	if r.TTL != 0 || !r.Expires.IsZero() {
		t.Errorf("TTL, Expires = %v, %v; want 0 and zero for a record without TTL", r.TTL, r.Expires)
	}
	// The record returned is the caller's.
	r.Namespace[0] = "changed"
	if len(r.Value) > 0 {
		r.Value[0] = ' '
	}
	if again := get(t, s, ns, "theme"); again.Namespace[0] != "users" || again.Value[0] != '{' {
		t.Errorf("changing a returned record changed the store: %q %s", again.Namespace, again.Value)
	}
}

func testPutReplaces(t *testing.T, s items) {
	ns := []string{"n"}
	created := s.clock.Now()
	put(t, s, ns, "k", `{"v": 1}`)
	s.clock.Advance(time.Minute)
	put(t, s, ns, "k", `{"v": 2}`)
	r := get(t, s, ns, "k")
	if !sameJSON(t, r.Value, []byte(`{"v":2}`)) {
		t.Errorf("after a second Put, Value = %s, want {\"v\":2}", r.Value)
	}
	if !r.Created.Equal(created) || !r.Updated.Equal(created.Add(time.Minute)) {
		t.Errorf("Created, Updated = %v, %v; want %v (first put) and %v (second)", r.Created, r.Updated, created, created.Add(time.Minute))
	}
	if got := search(t, s, memory.ItemQuery{}); len(got) != 1 {
		t.Errorf("Search after replacing holds %d records (%q), want 1", len(got), ids(got))
	}
}

func testGetMissing(t *testing.T, s items) {
	put(t, s, []string{"a", "b"}, "k", `{}`)
	for _, c := range []struct {
		ns  []string
		key string
	}{
		{[]string{"a", "b"}, "other"},
		{[]string{"a"}, "k"},
		{[]string{"a", "b", "c"}, "k"},
		{[]string{"ab"}, "k"},
		{[]string{"b", "a"}, "k"},
	} {
		_, err := s.Get(t.Context(), c.ns, c.key, false)
		if !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Get(%q, %q) = %v, want an error matching ErrNotFound", c.ns, c.key, err)
		}
	}
}

func testItemDelete(t *testing.T, s items) {
	put(t, s, []string{"a"}, "k1", `{}`)
	put(t, s, []string{"a"}, "k2", `{}`)
	if err := s.Delete(t.Context(), []string{"a"}, "k1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(t.Context(), []string{"a"}, "k1", false); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
	get(t, s, []string{"a"}, "k2")
	if err := s.Delete(t.Context(), []string{"a"}, "k1"); err != nil {
		t.Errorf("deleting a missing record: %v, want nil", err)
	}
	if err := s.Delete(t.Context(), []string{"nowhere"}, "k"); err != nil {
		t.Errorf("deleting in an unknown namespace: %v, want nil", err)
	}
	if got := ids(search(t, s, memory.ItemQuery{})); !slices.Equal(got, []string{"a:k2"}) {
		t.Errorf("Search after Delete = %q, want [a:k2]", got)
	}
}

func testValue(t *testing.T, s items) {
	ns := []string{"v"}
	in := `  { "text": "caf\u00e9 <b>&amp;</b> \"q\" \\ \n", "big": 12345678901234567890, "f": 1.5e3, "neg": -0.25,
		"emoji": "\ud83d\ude00", "empty": {}, "list": [1, "two", true, null, {"x": []}] }  `
	put(t, s, ns, "k", in)
	r := get(t, s, ns, "k")
	if !sameJSON(t, r.Value, []byte(in)) {
		t.Errorf("Value = %s, want an object equal to %s", r.Value, in)
	}
	var exact struct {
		Big json.Number `json:"big"`
	}
	d := json.NewDecoder(strings.NewReader(string(r.Value)))
	d.UseNumber()
	if err := d.Decode(&exact); err != nil || exact.Big != "12345678901234567890" {
		t.Errorf("big integer came back as %q (%v), want 12345678901234567890 digit for digit", exact.Big, err)
	}
}

func testItemValidation(t *testing.T, s items) {
	ctx := t.Context()
	long := strings.Repeat("x", memory.MaxKeyBytes+1)
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"put empty namespace", func() error { return s.Put(ctx, memory.Record{Key: "k", Value: json.RawMessage(`{}`)}) }, "Namespace"},
		{"put empty label", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a", ""}, Key: "k", Value: json.RawMessage(`{}`)})
		}, "Namespace[1]"},
		{"put dotted label", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a.b"}, Key: "k", Value: json.RawMessage(`{}`)})
		}, "Namespace[0]"},
		{"put control label", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a\tb"}, Key: "k", Value: json.RawMessage(`{}`)})
		}, "Namespace[0]"},
		{"put long namespace", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{long}, Key: "k", Value: json.RawMessage(`{}`)})
		}, "Namespace"},
		{"put empty key", func() error { return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Value: json.RawMessage(`{}`)}) }, "Key"},
		{"put long key", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: long, Value: json.RawMessage(`{}`)})
		}, "Key"},
		{"put NUL key", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "a\x00", Value: json.RawMessage(`{}`)})
		}, "Key"},
		{"put array", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`[1]`)})
		}, "Value"},
		{"put null", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`null`)})
		}, "Value"},
		{"put nothing", func() error { return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k"}) }, "Value"},
		{"put bad JSON", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{"a":`)})
		}, "Value"},
		{"put two values", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{} {}`)})
		}, "Value"},
		{"put NUL in value", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{"a":"x\u0000"}`)})
		}, "Value"},
		{"put number beyond float64", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{"n":1e999999999}`)})
		}, "Value.n"},
		{"put number rounded to zero", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{"a":[1,{"b":-1e-400}]}`)})
		}, "Value.a[1].b"},
		{"put zero of huge exponent", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{"n":0e-20000}`)})
		}, "Value.n"},
		{"put long number", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{"n":1` + strings.Repeat("0", 2000) + `}`)})
		}, "Value.n"},
		{"put huge value", func() error {
			big := `{"a":"` + strings.Repeat("x", memory.MaxValueBytes) + `"}`
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(big)})
		}, "Value"},
		{"put negative TTL", func() error {
			return s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k", Value: json.RawMessage(`{}`), TTL: -time.Second})
		}, "TTL"},
		{"get empty namespace", func() error { _, err := s.Get(ctx, nil, "k", false); return err }, "Namespace"},
		{"get dotted label", func() error { _, err := s.Get(ctx, []string{"x", "a.b"}, "k", false); return err }, "Namespace[1]"},
		{"get empty key", func() error { _, err := s.Get(ctx, []string{"a"}, "", false); return err }, "Key"},
		{"delete empty namespace", func() error { return s.Delete(ctx, []string{}, "k") }, "Namespace"},
		{"delete empty key", func() error { return s.Delete(ctx, []string{"a"}, "") }, "Key"},
		{"search dotted prefix", func() error { _, err := s.Search(ctx, memory.ItemQuery{Prefix: []string{"a.b"}}); return err }, "Prefix[0]"},
		{"search negative limit", func() error { _, err := s.Search(ctx, memory.ItemQuery{Limit: -1}); return err }, "Limit"},
		{"search huge limit", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Limit: memory.MaxSearchLimit + 1})
			return err
		}, "Limit"},
		{"search negative offset", func() error { _, err := s.Search(ctx, memory.ItemQuery{Offset: -1}); return err }, "Offset"},
		{"search nul query", func() error { _, err := s.Search(ctx, memory.ItemQuery{Query: "a\x00b"}); return err }, "Query"},
		{"search invalid utf-8 query", func() error { _, err := s.Search(ctx, memory.ItemQuery{Query: "a\xffb"}); return err }, "Query"},
		{"search object filter", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": []any{1}}})
			return err
		}, `Filter["a"]`},
		{"search unknown operator", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": map[string]any{"$in": 1}}})
			return err
		}, `Filter["a"]`},
		{"search operator on object", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": map[string]any{"$gt": map[string]any{}}}})
			return err
		}, `Filter["a"]["$gt"]`},
		{"search filter number beyond float64", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": json.Number("1e400")}})
			return err
		}, `Filter["a"]`},
		{"search filter number rounded to zero", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": map[string]any{"$gt": json.Number("-1e-400")}}})
			return err
		}, `Filter["a"]["$gt"]`},
		{"search filter zero of huge exponent", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": map[string]any{"$lte": json.Number("0e-20000")}}})
			return err
		}, `Filter["a"]["$lte"]`},
		{"search filter long number", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": json.Number("1." + strings.Repeat("0", 2000))}})
			return err
		}, `Filter["a"]`},
		{"search filter text not a number", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": json.Number("NaN")}})
			return err
		}, `Filter["a"]`},
		{"search filter NaN", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": math.NaN()}})
			return err
		}, `Filter["a"]`},
		{"search filter infinity", func() error {
			_, err := s.Search(ctx, memory.ItemQuery{Filter: map[string]any{"a": map[string]any{"$lt": float32(math.Inf(-1))}}})
			return err
		}, `Filter["a"]["$lt"]`},
		{"namespaces empty suffix label", func() error {
			_, err := s.Namespaces(ctx, memory.NamespaceQuery{Suffix: []string{""}})
			return err
		}, "Suffix[0]"},
		{"namespaces negative depth", func() error { _, err := s.Namespaces(ctx, memory.NamespaceQuery{MaxDepth: -1}); return err }, "MaxDepth"},
		{"namespaces huge limit", func() error {
			_, err := s.Namespaces(ctx, memory.NamespaceQuery{Limit: memory.MaxNamespaceLimit + 1})
			return err
		}, "Limit"},
	}
	for _, c := range cases {
		err := c.call()
		var ve *memory.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: error %v, want a *memory.ValidationError matching ErrInvalid", c.name, err)
			continue
		}
		if ve.Field != c.field {
			t.Errorf("%s: error names field %q, want %q (%v)", c.name, ve.Field, c.field, err)
		}
	}
	if got := search(t, s, memory.ItemQuery{}); len(got) != 0 {
		t.Errorf("invalid calls stored %q", ids(got))
	}
}

func testSearchPrefix(t *testing.T, s items) {
	for _, ns := range [][]string{
		{"users", "u2", "prefs"}, {"users"}, {"users", "u1", "prefs"}, {"usersx"},
		{"users", "u1", "notes"}, {"other"}, {"users", "u1"}, {"users-x"},
	} {
		put(t, s, ns, "k2", `{}`)
		put(t, s, ns, "k1", `{}`)
	}
	all := ids(search(t, s, memory.ItemQuery{Limit: 100}))
	want := []string{
		"other:k1", "other:k2",
		"users:k1", "users:k2",
		"users/u1:k1", "users/u1:k2",
		"users/u1/notes:k1", "users/u1/notes:k2",
		"users/u1/prefs:k1", "users/u1/prefs:k2",
		"users/u2/prefs:k1", "users/u2/prefs:k2",
		"users-x:k1", "users-x:k2",
		"usersx:k1", "usersx:k2",
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("Search with no prefix (-want +got), ordered label by label then by key:\n%s", diff)
	}
	for _, c := range []struct {
		prefix []string
		want   []string
	}{
		{[]string{"users"}, want[2:12]},
		{[]string{"users", "u1"}, want[4:10]},
		{[]string{"users", "u1", "prefs"}, want[8:10]},
		{[]string{"users", "u"}, nil},
		{[]string{"nothing"}, nil},
	} {
		got := ids(search(t, s, memory.ItemQuery{Prefix: c.prefix, Limit: 100}))
		if !slices.Equal(got, c.want) {
			t.Errorf("Search(Prefix %q) = %q, want %q", c.prefix, got, c.want)
		}
	}
}

func testSearchFilter(t *testing.T, s items) {
	ns := []string{"f"}
	put(t, s, ns, "a", `{"kind": "note", "score": 1, "ok": true, "tag": null, "name": "alpha"}`)
	put(t, s, ns, "b", `{"kind": "note", "score": 2.5, "ok": false, "name": "beta"}`)
	put(t, s, ns, "c", `{"kind": "pref", "score": "3", "ok": true, "name": "Gamma"}`)
	put(t, s, ns, "d", `{"kind": "pref", "score": 10, "tag": "x", "nested": {"kind": "note"}}`)
	put(t, s, []string{"g"}, "e", `{"kind": "note", "score": 1}`)
	for _, c := range []struct {
		filter map[string]any
		want   []string
	}{
		{map[string]any{"kind": "note"}, []string{"a", "b"}},
		{map[string]any{"kind": "note", "ok": false}, []string{"b"}},
		{map[string]any{"score": 1}, []string{"a"}},
		{map[string]any{"score": 1.0}, []string{"a"}},
		{map[string]any{"score": json.Number("2.5")}, []string{"b"}},
		{map[string]any{"score": "3"}, []string{"c"}},
		{map[string]any{"score": map[string]any{"$gt": 1}}, []string{"b", "d"}},
		{map[string]any{"score": map[string]any{"$gte": 1, "$lt": 10}}, []string{"a", "b"}},
		{map[string]any{"score": map[string]any{"$lte": 2.5}}, []string{"a", "b"}},
		{map[string]any{"score": map[string]any{"$eq": 10}}, []string{"d"}},
		{map[string]any{"score": map[string]any{"$ne": 1}}, []string{"b", "c", "d"}},
		{map[string]any{"name": map[string]any{"$gt": "alpha"}}, []string{"b"}},
		{map[string]any{"name": map[string]any{"$lt": "alpha"}}, []string{"c"}}, // "G" < "a" bytewise
		{map[string]any{"name": map[string]any{"$gte": "alpha", "$lte": "beta"}}, []string{"a", "b"}},
		{map[string]any{"ok": true}, []string{"a", "c"}},
		{map[string]any{"ok": map[string]any{"$ne": true}}, []string{"b", "d"}},
		{map[string]any{"ok": map[string]any{"$gt": false}}, nil},
		{map[string]any{"tag": nil}, []string{"a"}},
		{map[string]any{"tag": map[string]any{"$ne": nil}}, []string{"b", "c", "d"}},
		{map[string]any{"missing": map[string]any{"$ne": "x"}}, []string{"a", "b", "c", "d"}},
		{map[string]any{"missing": nil}, nil},
		{map[string]any{"nested": "note"}, nil},
		{map[string]any{"score": map[string]any{"$gt": "1"}}, []string{"c"}},
		{map[string]any{}, []string{"a", "b", "c", "d"}},
	} {
		keys := searchKeys(t, s, memory.ItemQuery{Prefix: ns, Filter: c.filter})
		if !slices.Equal(keys, c.want) {
			t.Errorf("Search(Filter %v) = %q, want %q", c.filter, keys, c.want)
		}
	}
}

// testSearchFilterFloat64: a filter compares numbers as float64s, on the
// stored side too, in every store: a number with more significant digits
// than a float64 keeps (an integer beyond 2^53, a fraction of 17 digits),
// stored or in the filter, compares as the float64 nearest to it, and a
// float64 given by other digits than its shortest ones (1234567890123456768
// is the float64 written 1.2345678901234568e18) equals it. (PostgreSQL
// compared the stored number exactly with the filter's shortest digits,
// SQLite a stored integer exactly with the filter's float64, and the
// memory store both as float64s: each found other items.)
func testSearchFilterFloat64(t *testing.T, s items) {
	ns := []string{"f64"}
	put(t, s, ns, "p", `{"n": 9007199254740993}`)        // 2^53+1: the float64 2^53
	put(t, s, ns, "q", `{"n": 1234567890123456768}`)     // a float64, not its shortest digits
	put(t, s, ns, "r", `{"n": 0.10000000000000001}`)     // the float64 0.1
	put(t, s, ns, "u", `{"n": 18446744073709551617}`)    // 2^64+1, beyond int64: the float64 2^64
	put(t, s, ns, "v", `{"n": 9007199254740994}`)        // 2^53+2: a float64, exactly
	put(t, s, ns, "w", `{"n": 3e-324}`)                  // the smallest float64, 5e-324
	put(t, s, ns, "x", `{"n": -1.7976931348623158e308}`) // the lowest float64
	for _, c := range []struct {
		filter map[string]any
		want   []string
	}{
		{map[string]any{"n": json.Number("9007199254740992")}, []string{"p"}},
		{map[string]any{"n": json.Number("9007199254740993")}, []string{"p"}},
		{map[string]any{"n": map[string]any{"$gt": json.Number("9007199254740992"), "$lt": json.Number("1e18")}}, []string{"v"}},
		{map[string]any{"n": map[string]any{"$lte": json.Number("9007199254740992"), "$gt": json.Number("9e15")}}, []string{"p"}},
		{map[string]any{"n": map[string]any{"$ne": json.Number("9007199254740992"), "$gt": json.Number("9e15"), "$lt": json.Number("1e16")}}, []string{"v"}},
		{map[string]any{"n": json.Number("1234567890123456800")}, []string{"q"}},
		{map[string]any{"n": json.Number("1.2345678901234568e18")}, []string{"q"}},
		{map[string]any{"n": map[string]any{"$gte": json.Number("1234567890123456800"), "$lt": json.Number("1e19")}}, []string{"q"}},
		{map[string]any{"n": 0.1}, []string{"r"}},
		{map[string]any{"n": json.Number("0.1")}, []string{"r"}},
		{map[string]any{"n": map[string]any{"$lte": 0.1, "$gt": json.Number("0.09")}}, []string{"r"}},
		{map[string]any{"n": json.Number("18446744073709551616")}, []string{"u"}},
		{map[string]any{"n": map[string]any{"$gt": json.Number("18446744073709551616")}}, nil},
		{map[string]any{"n": json.Number("5e-324")}, []string{"w"}},
		{map[string]any{"n": map[string]any{"$gt": 0, "$lt": json.Number("1e-323")}}, []string{"w"}},
		{map[string]any{"n": -math.MaxFloat64}, []string{"x"}},
		{map[string]any{"n": map[string]any{"$lt": json.Number("-1.7976931348623157e308")}}, nil},
	} {
		got := search(t, s, memory.ItemQuery{Prefix: ns, Filter: c.filter})
		keys := make([]string, len(got))
		for i, r := range got {
			keys[i] = r.Key
		}
		if !slices.Equal(keys, c.want) {
			t.Errorf("Search(Filter %v) = %q, want %q", c.filter, keys, c.want)
		}
	}
}

func testSearchQuery(t *testing.T, s items) {
	ns := []string{"q"}
	put(t, s, ns, "a", `{"text": "The user prefers Dark mode"}`)
	put(t, s, ns, "b", `{"text": "light mode", "lang": "fr"}`)
	put(t, s, ns, "c", `{"note": "café au lait"}`)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"dark", []string{"a"}},
		{"MODE", []string{"a", "b"}},
		{"  user   DARK ", []string{"a"}},
		{"dark light", nil},
		{"café", []string{"c"}},
		{"lang", []string{"b"}},
		{"", []string{"a", "b", "c"}},
		// A repeated term counts once: 70,000 of them are one test.
		{strings.Repeat("mode Dark ", 70_000), []string{"a"}},
		{strings.Repeat("x ", memory.MaxQueryTerms+1) + "dark", []string{"a"}},
	} {
		keys := searchKeys(t, s, memory.ItemQuery{Prefix: ns, Query: c.query})
		if !slices.Equal(keys, c.want) {
			t.Errorf("Search(Query %.40q) = %q, want %q", c.query, keys, c.want)
		}
	}
	// Up to MaxQueryTerms distinct terms are searched for, all of them;
	// more are refused.
	many := []string{"many"}
	put(t, s, many, "d", `{"text": "`+queryOf(memory.MaxQueryTerms+10)+`"}`)
	if keys := searchKeys(t, s, memory.ItemQuery{Prefix: many, Query: queryOf(memory.MaxQueryTerms)}); !slices.Equal(keys, []string{"d"}) {
		t.Errorf("Search(Query of MaxQueryTerms terms) = %q, want [d]", keys)
	}
	_, err := s.Search(t.Context(), memory.ItemQuery{Prefix: many, Query: queryOf(memory.MaxQueryTerms + 1)})
	var ve *memory.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Query" || !strings.Contains(ve.Problem, "MaxQueryTerms") {
		t.Errorf("Search(Query of MaxQueryTerms+1 terms): error %v, want a ValidationError of Query naming MaxQueryTerms", err)
	}
}

// queryOf returns a query of n distinct terms, w0x w1x ...
func queryOf(n int) string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = "w" + strconv.Itoa(i) + "x"
	}
	return strings.Join(terms, " ")
}

func testSearchPages(t *testing.T, s items) {
	var want []string
	for i := range 25 {
		k := fmt.Sprintf("k%02d", i)
		put(t, s, []string{"p"}, k, fmt.Sprintf(`{"i": %d, "even": %t}`, i, i%2 == 0))
		want = append(want, "p:"+k)
	}
	if got := ids(search(t, s, memory.ItemQuery{})); !slices.Equal(got, want[:memory.DefaultSearchLimit]) {
		t.Errorf("Search with Limit 0 = %q, want the first %d", got, memory.DefaultSearchLimit)
	}
	var pages []string
	for off := 0; ; off += 7 {
		page := ids(search(t, s, memory.ItemQuery{Limit: 7, Offset: off}))
		if len(page) > 7 {
			t.Fatalf("page at offset %d has %d records, more than Limit 7", off, len(page))
		}
		if len(page) == 0 {
			break
		}
		pages = append(pages, page...)
	}
	if !slices.Equal(pages, want) {
		t.Errorf("pages of 7 = %q, want %q", pages, want)
	}
	got := search(t, s, memory.ItemQuery{Filter: map[string]any{"even": true}, Limit: 3, Offset: 2})
	if k := ids(got); !slices.Equal(k, []string{"p:k04", "p:k06", "p:k08"}) {
		t.Errorf("filtered page = %q, want the 3rd to 5th even records [p:k04 p:k06 p:k08]", k)
	}
	if got := search(t, s, memory.ItemQuery{Offset: 1000}); len(got) != 0 {
		t.Errorf("Offset past the end returned %q", ids(got))
	}
}

func testNamespaces(t *testing.T, s items) {
	for _, ns := range [][]string{
		{"users", "u1", "prefs"}, {"users", "u1", "notes"}, {"users", "u2", "prefs"},
		{"users"}, {"users-x", "prefs"}, {"docs", "a"}, {"docs", "b", "c", "d"},
	} {
		put(t, s, ns, "k1", `{}`)
		put(t, s, ns, "k2", `{}`)
	}
	all := [][]string{
		{"docs", "a"}, {"docs", "b", "c", "d"}, {"users"}, {"users", "u1", "notes"},
		{"users", "u1", "prefs"}, {"users", "u2", "prefs"}, {"users-x", "prefs"},
	}
	for _, c := range []struct {
		q    memory.NamespaceQuery
		want [][]string
	}{
		{memory.NamespaceQuery{}, all},
		{memory.NamespaceQuery{Prefix: []string{"users"}}, all[2:6]},
		{memory.NamespaceQuery{Prefix: []string{"users", "u1"}}, all[3:5]},
		{memory.NamespaceQuery{Suffix: []string{"prefs"}}, [][]string{all[4], all[5], all[6]}},
		{memory.NamespaceQuery{Suffix: []string{"u1", "prefs"}}, [][]string{all[4]}},
		{memory.NamespaceQuery{Suffix: []string{"refs"}}, nil},
		{memory.NamespaceQuery{Prefix: []string{"users"}, Suffix: []string{"prefs"}}, [][]string{all[4], all[5]}},
		{memory.NamespaceQuery{MaxDepth: 1}, [][]string{{"docs"}, {"users"}, {"users-x"}}},
		{memory.NamespaceQuery{MaxDepth: 2}, [][]string{{"docs", "a"}, {"docs", "b"}, {"users"}, {"users", "u1"}, {"users", "u2"}, {"users-x", "prefs"}}},
		{memory.NamespaceQuery{MaxDepth: 2, Prefix: []string{"users"}, Limit: 2, Offset: 1}, [][]string{{"users", "u1"}, {"users", "u2"}}},
		{memory.NamespaceQuery{Limit: 2}, all[:2]},
		{memory.NamespaceQuery{Limit: 3, Offset: 5}, all[5:]},
		{memory.NamespaceQuery{Offset: 7}, nil},
	} {
		got, err := s.Namespaces(t.Context(), c.q)
		if err != nil {
			t.Errorf("Namespaces(%+v): %v", c.q, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Namespaces(%+v) (-want +got):\n%s", c.q, diff)
		}
	}
	if err := s.Delete(t.Context(), []string{"docs", "a"}, "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), []string{"docs", "a"}, "k2"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Namespaces(t.Context(), memory.NamespaceQuery{Prefix: []string{"docs"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"docs", "b", "c", "d"}}, got); diff != "" {
		t.Errorf("Namespaces after emptying docs/a (-want +got):\n%s", diff)
	}
}

func testTTL(t *testing.T, s items) {
	ctx := t.Context()
	ns := []string{"ttl"}
	start := s.clock.Now()
	if err := s.Put(ctx, memory.Record{Namespace: ns, Key: "short", Value: json.RawMessage(`{"a":1}`), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	put(t, s, ns, "forever", `{"a":1}`)
	r := get(t, s, ns, "short")
	if r.TTL != time.Minute || !r.Expires.Equal(start.Add(time.Minute)) {
		t.Errorf("TTL, Expires = %v, %v; want 1m0s, %v", r.TTL, r.Expires, start.Add(time.Minute))
	}
	s.clock.Advance(40 * time.Second)
	if _, err := s.Get(ctx, ns, "short", false); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	s.clock.Advance(30 * time.Second) // 70s: expired
	if _, err := s.Get(ctx, ns, "short", true); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get of an expired record = %v, want ErrNotFound", err)
	}
	if got := ids(search(t, s, memory.ItemQuery{Prefix: ns})); !slices.Equal(got, []string{"ttl:forever"}) {
		t.Errorf("Search after expiry = %q, want [ttl:forever]", got)
	}

	// Refreshing reads push the expiry back; plain reads do not.
	start = s.clock.Now()
	if err := s.Put(ctx, memory.Record{Namespace: ns, Key: "short", Value: json.RawMessage(`{"a":2}`), TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if r := get(t, s, ns, "short"); !r.Created.Equal(start) {
		t.Errorf("Created of a record put over an expired one = %v, want %v (now)", r.Created, start)
	}
	s.clock.Advance(50 * time.Second)
	r, err := s.Get(ctx, ns, "short", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(110 * time.Second); !r.Expires.Equal(want) {
		t.Errorf("Expires after a refreshing Get = %v, want %v", r.Expires, want)
	}
	s.clock.Advance(50 * time.Second) // 100s after the put, 50s after the refresh
	if rs := search(t, s, memory.ItemQuery{Prefix: ns, Filter: map[string]any{"a": 2}, RefreshTTL: true}); len(rs) != 1 {
		t.Fatalf("Search 50s after a refresh = %q, want the record", ids(rs))
	} else if want := start.Add(160 * time.Second); !rs[0].Expires.Equal(want) {
		t.Errorf("Expires after a refreshing Search = %v, want %v", rs[0].Expires, want)
	}
	s.clock.Advance(59 * time.Second)
	get(t, s, ns, "short") // 59s after the refreshing search: still there
	s.clock.Advance(2 * time.Second)
	if _, err := s.Get(ctx, ns, "short", false); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get 61s after the last refresh = %v, want ErrNotFound", err)
	}

	// An expired record's namespace is gone from Namespaces.
	if err := s.Put(ctx, memory.Record{Namespace: []string{"gone"}, Key: "k", Value: json.RawMessage(`{}`), TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	s.clock.Advance(time.Second)
	got, err := s.Namespaces(ctx, memory.NamespaceQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"ttl"}}, got); diff != "" {
		t.Errorf("Namespaces with expired records (-want +got):\n%s", diff)
	}
}

func testItemsCanceled(t *testing.T, s items) {
	put(t, s, []string{"a"}, "k", `{}`)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Put(ctx, memory.Record{Namespace: []string{"a"}, Key: "k2", Value: json.RawMessage(`{}`)}); err == nil {
		t.Error("Put with a canceled context succeeded")
	}
	if _, err := s.Get(ctx, []string{"a"}, "k", false); err == nil {
		t.Error("Get with a canceled context succeeded")
	}
	if _, err := s.Search(ctx, memory.ItemQuery{}); err == nil {
		t.Error("Search with a canceled context succeeded")
	}
	if _, err := s.Namespaces(ctx, memory.NamespaceQuery{}); err == nil {
		t.Error("Namespaces with a canceled context succeeded")
	}
	if err := s.Delete(ctx, []string{"a"}, "k"); err == nil {
		t.Error("Delete with a canceled context succeeded")
	}
	if _, err := s.Get(t.Context(), []string{"a"}, "k2", false); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("the canceled Put stored its record (Get: %v)", err)
	}
}

func testConcurrentPut(t *testing.T, s items) {
	const writers, each = 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := memory.Record{Namespace: []string{"c", fmt.Sprint(w)}, Key: fmt.Sprint(i), Value: json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))}
				if err := s.Put(t.Context(), r); err != nil {
					errs <- err
				}
				shared := memory.Record{Namespace: []string{"shared"}, Key: "k", Value: json.RawMessage(fmt.Sprintf(`{"w":%d}`, w))}
				if err := s.Put(t.Context(), shared); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Put: %v", err)
	}
	var n int
	for off := 0; ; off += memory.MaxSearchLimit {
		page := search(t, s, memory.ItemQuery{Prefix: []string{"c"}, Limit: memory.MaxSearchLimit, Offset: off})
		n += len(page)
		if len(page) < memory.MaxSearchLimit {
			break
		}
	}
	if n != writers*each {
		t.Errorf("after %d concurrent puts of distinct records, Search finds %d", writers*each, n)
	}
	if got := search(t, s, memory.ItemQuery{Prefix: []string{"shared"}}); len(got) != 1 {
		t.Errorf("concurrent puts of one record left %d records", len(got))
	}
}

// testSearchMaxBytes checks ItemQuery.MaxBytes: the page stops at the
// record whose value takes the page past it, that record included.
func testSearchMaxBytes(t *testing.T, s items) {
	var want []string
	for i := range 10 {
		k := fmt.Sprintf("k%02d", i)
		put(t, s, []string{"b"}, k, fmt.Sprintf(`{"i": %d, "pad": "%s"}`, i, strings.Repeat("x", 1000)))
		want = append(want, "b:"+k)
	}
	size := len(get(t, s, []string{"b"}, "k00").Value) // as the store gives it back
	for _, c := range []struct {
		q    memory.ItemQuery
		want []string
	}{
		{memory.ItemQuery{Limit: 10, MaxBytes: 1}, want[:1]},
		{memory.ItemQuery{Limit: 10, MaxBytes: 2*size + size/2}, want[:3]},
		{memory.ItemQuery{Limit: 10, MaxBytes: 3 * size}, want[:4]},
		{memory.ItemQuery{Limit: 10, Offset: 8, MaxBytes: size / 2}, want[8:9]},
		{memory.ItemQuery{Limit: 5, MaxBytes: 100 * size}, want[:5]},
		{memory.ItemQuery{Limit: 10, Filter: map[string]any{"i": map[string]any{"$gte": 5}}, MaxBytes: size + 1}, want[5:7]},
	} {
		if got := ids(search(t, s, c.q)); !slices.Equal(got, c.want) {
			t.Errorf("Search(Limit %d, Offset %d, MaxBytes %d) = %q, want %q", c.q.Limit, c.q.Offset, c.q.MaxBytes, got, c.want)
		}
	}
}
