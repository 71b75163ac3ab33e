package server_test

import (
	"encoding/json"
	"testing"
)

// TestFreshThreadValues: a thread without a run shows values {} from
// POST /threads, GET /threads/{id} and POST /threads with if_exists
// do_nothing alike, on every store.
func TestFreshThreadValues(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			var created, got, again map[string]json.RawMessage
			do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": map[string]any{}}, nil, &created)
			var id string
			if err := json.Unmarshal(created["thread_id"], &id); err != nil {
				t.Fatal(err)
			}
			do(t, "GET", ts.URL+"/threads/"+id, nil, nil, &got)
			do(t, "POST", ts.URL+"/threads", map[string]any{"thread_id": id, "if_exists": "do_nothing"}, nil, &again)
			for what, th := range map[string]map[string]json.RawMessage{"create": created, "get": got, "create with do_nothing": again} {
				if string(th["values"]) != "{}" {
					t.Errorf("values from %s: %s; want {}", what, th["values"])
				}
			}
		})
	}
}
