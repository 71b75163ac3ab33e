package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestNULInMetadataIsRefused: a NUL character in a key or a string of
// metadata, or of a filter on it, is refused with 422 naming the field on
// every store (PostgreSQL's jsonb cannot hold one: it answered 500 there),
// and the thread is left as it was.
func TestNULInMetadataIsRefused(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid, _ := interruptedThread(t, ts.URL, nil)
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

// TestCheckpointIDWithNUL: a checkpoint id with a NUL character is
// malformed (422) in every path and body that takes one, on every store;
// the PostgreSQL checkpointer answered that the thread was corrupt (500).
func TestCheckpointIDWithNUL(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid, _ := interruptedThread(t, ts.URL, nil)
			for _, tc := range []struct{ method, path, body string }{
				{"GET", "/threads/" + tid + "/state/a%00b", ""},
				{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"a\u0000b"}}`},
				{"POST", "/threads/" + tid + "/history", `{"before":"a\u0000b"}`},
				{"POST", "/threads/" + tid + "/history", `{"checkpoint":{"checkpoint_id":"a\u0000b"}}`},
				{"GET", "/threads/" + tid + "/history?before=a%00b", ""},
			} {
				if code, body := raw(t, tc.method, ts.URL+tc.path, tc.body, nil); code != http.StatusUnprocessableEntity {
					t.Errorf("%s %s %s: %d %s; want 422", tc.method, tc.path, tc.body, code, body)
				}
			}
		})
	}
}
