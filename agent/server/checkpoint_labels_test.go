package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// runWait runs the agent graph on thread tid with the run body's extra
// fields (a JSON object's members, "" for none) and returns the answer.
func runWait(t *testing.T, url, tid, extra string) (int, string) {
	t.Helper()
	body := `{"assistant_id":"agent","input":{"messages":[{"type":"human","content":"hi"}]}`
	if extra != "" {
		body += "," + extra
	}
	return raw(t, "POST", url+"/threads/"+tid+"/runs/wait", body+"}", nil)
}

// TestCheckpointMetadataNumbersKeepDigits: a run metadata integer beyond
// 2^53, kept in each checkpoint's labels as JSON text, reads back from the
// thread's state and history with its digits. It was decoded as float64,
// answering 12345678901234568 for 12345678901234567.
func TestCheckpointMetadataNumbersKeepDigits(t *testing.T) {
	const big = "12345678901234567"
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	if code, body := runWait(t, ts.URL, tid, `"metadata":{"n":`+big+`}`); code != 200 {
		t.Fatalf("runs/wait: %d %s", code, body)
	}
	code, body := raw(t, "GET", ts.URL+"/threads/"+tid+"/state", "", nil)
	if got := numberText(t, body, "metadata", "n"); code != 200 || got != big {
		t.Errorf("state: %d, metadata.n = %q; want %s (%s)", code, got, big, body)
	}
	code, body = raw(t, "POST", ts.URL+"/threads/"+tid+"/history", `{"limit":1}`, nil)
	var states []json.RawMessage
	if code != 200 || json.Unmarshal([]byte(body), &states) != nil || len(states) != 1 {
		t.Fatalf("history: %d %s; want one state", code, body)
	}
	if got := numberText(t, string(states[0]), "metadata", "n"); got != big {
		t.Errorf("history: metadata.n = %q; want %s (%s)", got, big, states[0])
	}
}

// TestRunNameWithNULRefused: config.run_name, kept in each checkpoint's
// labels, is refused at the run's creation when it holds a NUL character,
// as metadata is; it was taken, and every checkpoint of the run was then
// refused mid-run.
func TestRunNameWithNULRefused(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			tid := newThread(t, ts.URL)
			code, body := runWait(t, ts.URL, tid, `"config":{"run_name":"a\u0000b"}`)
			if code != 422 || !strings.Contains(body, "run_name") {
				t.Fatalf("runs/wait with a NUL in config.run_name: %d %s; want 422 naming run_name", code, body)
			}
			if code, body := runWait(t, ts.URL, tid, `"config":{"run_name":"fine"}`); code != 200 {
				t.Fatalf("runs/wait after: %d %s", code, body)
			}
		})
	}
}

// TestCheckpointMetadataBounded: run metadata beyond
// server.MaxCheckpointMetadataBytes is not copied into each checkpoint,
// which keeps only the run's ids and name; the run's and thread's own
// metadata keep every key. Each checkpoint held a copy of the whole, up
// to a request body's size for the thread's metadata and the run's each,
// counted in no bound.
func TestCheckpointMetadataBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	big := strings.Repeat("x", server.MaxCheckpointMetadataBytes)
	code, body := raw(t, "POST", ts.URL+"/threads", `{"metadata":{"big":"`+big+`","small":"s"}}`, nil)
	var th struct {
		ID string `json:"thread_id"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
		t.Fatalf("create thread: %d %s", code, body)
	}
	if code, body := runWait(t, ts.URL, th.ID, `"metadata":{"n":1},"config":{"run_name":"named"}`); code != 200 {
		t.Fatalf("runs/wait: %d %s", code, body)
	}
	code, body = raw(t, "GET", ts.URL+"/threads/"+th.ID+"/state", "", nil)
	var st struct {
		Metadata map[string]any `json:"metadata"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("state: %d %s", code, body)
	}
	for _, k := range []string{"big", "small", "n"} {
		if _, ok := st.Metadata[k]; ok {
			t.Errorf("checkpoint metadata holds %q of run metadata beyond the bound", k)
		}
	}
	if st.Metadata["thread_id"] != th.ID || st.Metadata["run_name"] != "named" || st.Metadata["graph_id"] != "agent" {
		t.Errorf("checkpoint metadata lacks the run's ids: %v", st.Metadata)
	}
	for _, k := range []string{"run_id", "assistant_id"} {
		if s, _ := st.Metadata[k].(string); s == "" {
			t.Errorf("checkpoint metadata lacks %s: %v", k, st.Metadata)
		}
	}
	// Metadata within the bound is copied whole.
	tid := newThread(t, ts.URL)
	if code, body := runWait(t, ts.URL, tid, `"metadata":{"n":1,"s":"v"}`); code != 200 {
		t.Fatalf("runs/wait: %d %s", code, body)
	}
	code, body = raw(t, "GET", ts.URL+"/threads/"+tid+"/state", "", nil)
	st.Metadata = nil
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Metadata["s"] != "v" || st.Metadata["n"] != 1.0 {
		t.Errorf("state of a run with small metadata: %d %s; want its metadata n and s", code, body)
	}
}

// TestPatchStateLabels: PATCH .../state refuses the labels the server
// keeps (parents, __json_labels__) with 422, and a label it sets over
// run metadata that was a JSON value reads back as the string it is now.
// "5" set over the number 1 read back as the number 5.
func TestPatchStateLabels(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			tid := newThread(t, ts.URL)
			if code, body := runWait(t, ts.URL, tid, `"metadata":{"n":1,"m":[2]}`); code != 200 {
				t.Fatalf("runs/wait: %d %s", code, body)
			}
			for _, k := range []string{"parents", "__json_labels__"} {
				code, body := raw(t, "PATCH", ts.URL+"/threads/"+tid+"/state", `{"metadata":{"`+k+`":"[]"}}`, nil)
				if code != 422 || !strings.Contains(body, "metadata."+k) {
					t.Errorf("PATCH %s: %d %s; want 422 naming metadata.%s", k, code, body, k)
				}
			}
			if code, body := raw(t, "PATCH", ts.URL+"/threads/"+tid+"/state", `{"metadata":{"n":"5"}}`, nil); code != 204 {
				t.Fatalf("PATCH n: %d %s", code, body)
			}
			code, body := raw(t, "GET", ts.URL+"/threads/"+tid+"/state", "", nil)
			var st struct {
				Metadata map[string]any `json:"metadata"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
				t.Fatalf("state: %d %s", code, body)
			}
			if st.Metadata["n"] != "5" {
				t.Errorf("metadata.n = %#v after PATCH {\"n\":\"5\"}; want the string \"5\"", st.Metadata["n"])
			}
			if m, _ := st.Metadata["m"].([]any); len(m) != 1 || m[0] != 2.0 {
				t.Errorf("metadata.m = %#v; want [2], still a JSON value", st.Metadata["m"])
			}
			if _, ok := st.Metadata["__json_labels__"]; ok {
				t.Errorf("state shows __json_labels__: %v", st.Metadata)
			}
		})
	}
}
