package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestLongValuesAreNotEchoedWhole: an assistant id, a checkpoint's thread
// id or a checkpoint id of 100 KB, sent where the server names it in its
// error, is quoted clipped: the answer was as long as the value.
func TestLongValuesAreNotEchoedWhole(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	if code, body := raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"agent","input":{}}`, nil); code != 200 {
		t.Fatalf("run: %d %s", code, body)
	}
	long := strings.Repeat("é", 50<<10)
	for _, c := range []struct {
		method, path, body string
		code               int
	}{
		{"POST", "/threads/" + th.ThreadID + "/runs/wait", `{"assistant_id":"` + long + `","input":{}}`, 404},
		{"POST", "/threads/" + th.ThreadID + "/state/checkpoint", `{"checkpoint":{"thread_id":"` + long + `","checkpoint_id":"x"}}`, 422},
		{"POST", "/threads/" + th.ThreadID + "/state/checkpoint", `{"checkpoint_id":"` + long + `"}`, 422},
		{"GET", "/threads/" + th.ThreadID + "/state/" + long, "", 404},
	} {
		code, body := raw(t, c.method, ts.URL+c.path, c.body, nil)
		if code != c.code || len(body) > 4096 || !utf8.ValidString(body) {
			t.Errorf("%s %.60s... %.60s...: %d, %d bytes %.200s; want %d under 4096 bytes", c.method, c.path, c.body, code, len(body), body, c.code)
		}
	}
}

// TestCheckpointHintIsJSON: the hint that tells a client to put its
// checkpoint_id inside checkpoint quotes the id as JSON, so that the
// body it shows can be sent as it is (Go's %q wrote \x00 and \x7f).
func TestCheckpointHintIsJSON(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	code, body := raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/state/checkpoint", `{"checkpoint_id":"a\u007fb\"c"}`, nil)
	var e struct {
		Detail string `json:"detail"`
	}
	if code != 422 || json.Unmarshal([]byte(body), &e) != nil {
		t.Fatalf("checkpoint_id outside checkpoint: %d %s; want 422", code, body)
	}
	_, sample, ok := strings.Cut(e.Detail, "put checkpoint_id inside checkpoint: ")
	var v struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if !ok || json.Unmarshal([]byte(sample), &v) != nil || v.Checkpoint.CheckpointID != "a\x7fb\"c" {
		t.Errorf("hint %q: want a JSON body holding the id", e.Detail)
	}
}
