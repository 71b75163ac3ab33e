package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/server"

	"unicode"
)

// TestLongValuesAreNotEchoedWhole: an assistant id, a checkpoint's thread
// id or a checkpoint id of 100 KB, sent where the server names it in its
// error, is quoted clipped: the answer was as long as the value.
func TestLongValuesAreNotEchoedWhole(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	if code, body := raw(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", `{"assistant_id":"agent","input":{}}`, nil); code != 200 {
		t.Fatalf("run: %d %s", code, body)
	}
	long := strings.Repeat("é", 50<<10)
	for _, c := range []struct {
		method, path, body string
		code               int
	}{
		{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"` + long + `","input":{}}`, 404},
		{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint":{"thread_id":"` + long + `","checkpoint_id":"x"}}`, 422},
		{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint_id":"` + long + `"}`, 422},
		{"GET", "/threads/" + tid + "/state/" + long, "", 422},
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
	tid := newThread(t, ts.URL)
	code, body := raw(t, "POST", ts.URL+"/threads/"+tid+"/state/checkpoint", `{"checkpoint_id":"a\u007fb\"c"}`, nil)
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

// A run that fails on an error of an unexported type (the "fail"
// graph's node returns an *errors.errorString) reports a kind of error a
// client can match, not the name of an implementation type. (A run from
// a missing checkpoint failed so; it is now refused when created.)
func TestErrorNameNotInternal(t *testing.T) {
	url := newTestServer(t, server.Config{}).URL
	tid := newThread(t, url)
	var out map[string]any
	body := map[string]any{"assistant_id": "fail", "input": humanInput("go")}
	if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", body, nil, &out); code != 200 {
		t.Fatalf("run: %d %v", code, out)
	}
	e, _ := out["__error__"].(map[string]any)
	name, _ := e["error"].(string)
	if name == "" || !unicode.IsUpper([]rune(name)[0]) {
		t.Fatalf("run from a missing checkpoint: %v; want an error whose name is exported (such as Error), not %q", out, name)
	}
}

// TestLongIDIsNotEchoedWhole: an id of 100 KB in a path or a body is
// refused with a message that quotes its start, not all of it (the
// answer was as long as the id).
func TestLongIDIsNotEchoedWhole(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	long := strings.Repeat("a", 100<<10)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/threads/" + long, ""},
		{"POST", "/threads", `{"thread_id":"` + long + `"}`},
		{"POST", "/threads/search", `{"ids":["` + long + `"]}`},
		{"GET", "/threads/0aaaaaaa-46ac-7f1b-956c-95867187d56e/runs/" + long, ""},
		{"GET", "/threads/" + strings.Repeat("✓", 30<<10), ""},
	} {
		code, body := raw(t, c.method, ts.URL+c.path, c.body, nil)
		if code != 422 || len(body) > 1000 || !strings.Contains(body, "is not a UUID") || !utf8.ValidString(body) {
			t.Errorf("%s %.40s... with a 100 KB id: %d, %d bytes %.200s; want 422 under 1000 bytes", c.method, c.path, code, len(body), body)
		}
	}
}
