package server_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestCheckpointIDNoSaverStores: a checkpoint id that no checkpointer can
// store (a NUL character, longer than checkpoint.MaxIDLen) names no
// checkpoint: 404 naming the field and the rule, on every store, in every
// request that takes one, where the checkpointer's refusal answered 500.
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
				if code != 404 || !strings.Contains(body, `"`+tc.field+`: `) || !strings.Contains(body, "NUL") || !strings.Contains(body, strconv.Itoa(checkpoint.MaxIDLen)) {
					t.Errorf("%s %.80s %.80s: %d %.300s; want 404 naming %s and the rule", tc.method, tc.path, tc.body, code, body, tc.field)
				}
			}
		})
	}
}
