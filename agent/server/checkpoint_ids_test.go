package server_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestCheckpointIDNoSaverStores: a checkpoint id that no checkpointer can
// store (a NUL character, longer than checkpoint.MaxIDLen) is malformed:
// 422 naming the field and the rule, on every store, in every request that
// takes one, as for a malformed thread id, where the checkpointer's
// refusal answered 500. A stateless run naming one is refused for being
// stateless; a well-formed id the thread lacks is a 404.
func TestCheckpointIDNoSaverStores(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid, _ := interruptedThread(t, ts.URL, nil)
			long := strings.Repeat("x", checkpoint.MaxIDLen+1)
			for _, tc := range []struct{ method, path, body, field string }{
				{"GET", "/threads/" + tid + "/state/" + url.PathEscape("a\x00b"), "", "checkpoint_id"},
				{"GET", "/threads/" + tid + "/state/" + long, "", "checkpoint_id"},
				{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"a\u0000b"}}`, "checkpoint_id"},
				{"POST", "/threads/" + tid + "/history", `{"before":{"checkpoint_id":"a\u0000b"}}`, "before"},
				{"POST", "/threads/" + tid + "/history", `{"checkpoint":{"checkpoint_id":"` + long + `"}}`, "checkpoint.checkpoint_id"},
				{"POST", "/threads/" + tid + "/state", `{"values":{},"checkpoint_id":"a\u0000b"}`, "checkpoint_id"},
				{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"agent","checkpoint_id":"a\u0000b","command":{"resume":"yes"}}`, "checkpoint_id"},
			} {
				code, body := raw(t, tc.method, ts.URL+tc.path, tc.body, nil)
				if code != 422 || !strings.Contains(body, `"`+tc.field+`: `) || !strings.Contains(body, "NUL") || !strings.Contains(body, strconv.Itoa(checkpoint.MaxIDLen)) {
					t.Errorf("%s %.80s %.80s: %d %.300s; want 422 naming %s and the rule", tc.method, tc.path, tc.body, code, body, tc.field)
				}
			}
			code, body := raw(t, "POST", ts.URL+"/runs/wait", `{"assistant_id":"agent","checkpoint_id":"a\u0000b","input":{}}`, nil)
			if code != 422 || !strings.Contains(body, "stateless") {
				t.Errorf("stateless run with a malformed checkpoint_id: %d %.300s; want 422 saying a stateless run has no checkpoints", code, body)
			}
			code, body = raw(t, "GET", ts.URL+"/threads/"+tid+"/state/"+checkpoint.NewID(), "", nil)
			if code != 404 {
				t.Errorf("GET the state at a well-formed checkpoint id the thread lacks: %d %.300s; want 404", code, body)
			}
		})
	}
}
