package server_test

import (
	"fmt"
	"reflect"
	"testing"
)

// TestListNamespacesWildcard: "*" in POST /store/namespaces' prefix or
// suffix matches any one label, as in LangGraph, on every item store,
// with max_depth, limit and offset applied to the matches; a principal
// sees only its own namespaces.
func TestListNamespacesWildcard(t *testing.T) {
	for name, items := range itemBackends {
		t.Run(name, func(t *testing.T) {
			cfg, alice, bob := aliceBob()
			cfg.Items = items(t)
			ts := newTestServer(t, cfg)
			for _, ns := range [][]string{{"u1", "a", "x"}, {"u2", "a"}, {"u2", "b"}, {"u3", "a", "y"}, {"a"}} {
				if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": ns, "key": "k", "value": map[string]any{}}, alice, nil); code != 204 {
					t.Fatalf("put %v: %d", ns, code)
				}
			}
			do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"u9", "a"}, "key": "k", "value": map[string]any{}}, bob, nil)
			for _, c := range []struct {
				body map[string]any
				want [][]string
			}{
				{map[string]any{"prefix": []string{"*", "a"}}, [][]string{{"u1", "a", "x"}, {"u2", "a"}, {"u3", "a", "y"}}},
				{map[string]any{"suffix": []string{"*", "a"}}, [][]string{{"u2", "a"}}},
				{map[string]any{"prefix": []string{"*", "a"}, "max_depth": 2}, [][]string{{"u1", "a"}, {"u2", "a"}, {"u3", "a"}}},
				{map[string]any{"prefix": []string{"*", "a"}, "limit": 1, "offset": 1}, [][]string{{"u2", "a"}}},
				{map[string]any{"prefix": []string{"u1", "*", "x"}}, [][]string{{"u1", "a", "x"}}},
			} {
				var out struct {
					Namespaces [][]string `json:"namespaces"`
				}
				if code := do(t, "POST", ts.URL+"/store/namespaces", c.body, alice, &out); code != 200 || !reflect.DeepEqual(sorted(out.Namespaces), c.want) {
					t.Errorf("namespaces %v: %d %v; want %v", c.body, code, out.Namespaces, c.want)
				}
			}
		})
	}
}

// sorted returns namespaces in the order of their labels joined.
func sorted(nss [][]string) [][]string {
	out := append([][]string(nil), nss...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if fmt.Sprint(out[j]) < fmt.Sprint(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
