package server_test

import (
	"testing"
)

// TestSearchContainment: thread search and count filter metadata and
// values by JSON containment, as jsonb @> does on LangGraph's servers, on
// every store alike: a nested object matches one with more keys, an array
// one with more elements in any order; a different scalar, a missing key
// or another kind does not match.
func TestSearchContainment(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			md := map[string]any{"obj": map[string]any{"x": 1, "y": 2}, "tags": []any{"a", "b"}, "case": t.Name()}
			do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": md}, nil, &th)
			do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, nil, nil)
			for _, c := range []struct {
				what   string
				filter map[string]any
				want   int
			}{
				{"nested subset", map[string]any{"metadata": map[string]any{"obj": map[string]any{"x": 1}}}, 1},
				{"nested whole", map[string]any{"metadata": map[string]any{"obj": map[string]any{"y": 2.0, "x": 1}}}, 1},
				{"nested other value", map[string]any{"metadata": map[string]any{"obj": map[string]any{"x": 2}}}, 0},
				{"nested extra key", map[string]any{"metadata": map[string]any{"obj": map[string]any{"x": 1, "z": 3}}}, 0},
				{"array element", map[string]any{"metadata": map[string]any{"tags": []any{"b"}}}, 1},
				{"array reordered", map[string]any{"metadata": map[string]any{"tags": []any{"b", "a"}}}, 1},
				{"array other element", map[string]any{"metadata": map[string]any{"tags": []any{"c"}}}, 0},
				{"scalar for array", map[string]any{"metadata": map[string]any{"tags": "a"}}, 0},
				{"values message subset", map[string]any{"values": map[string]any{"messages": []any{map[string]any{"content": "hi"}}}}, 1},
				{"values other message", map[string]any{"values": map[string]any{"messages": []any{map[string]any{"content": "bye"}}}}, 0},
			} {
				c.filter["metadata"] = withCase(c.filter["metadata"], t.Name())
				var found []map[string]any
				if code := do(t, "POST", ts.URL+"/threads/search", c.filter, nil, &found); code != 200 || len(found) != c.want {
					t.Errorf("search %s %v: %d, %d threads; want %d", c.what, c.filter, code, len(found), c.want)
				}
				var n int
				if code := do(t, "POST", ts.URL+"/threads/count", c.filter, nil, &n); code != 200 || n != c.want {
					t.Errorf("count %s %v: %d, %d; want %d", c.what, c.filter, code, n, c.want)
				}
			}
		})
	}
}

// withCase adds the case's label to a metadata filter, so that a shared
// store's other threads do not match.
func withCase(md any, name string) map[string]any {
	m, _ := md.(map[string]any)
	out := map[string]any{"case": name}
	for k, v := range m {
		out[k] = v
	}
	return out
}
