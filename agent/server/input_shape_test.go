package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunInputOfWrongShapeRefused: a run whose input does not decode into
// the graph's state is refused with 422 naming the field before the run
// is made, on every store and by every endpoint that makes a run: no run
// is listed, the thread keeps its status and values, and a stateless run
// leaves no thread. (The run was made, answered 200, and failed, setting
// the thread to error.)
func TestRunInputOfWrongShapeRefused(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid, _ := interruptedThread(t, ts.URL, nil)
			var before json.RawMessage
			do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &before)
			bad := `{"assistant_id":"agent","input":{"messages":"notalist"}}`
			for _, path := range []string{"/threads/" + tid + "/runs", "/threads/" + tid + "/runs/wait", "/threads/" + tid + "/runs/stream", "/runs", "/runs/wait", "/runs/stream"} {
				code, body := raw(t, "POST", ts.URL+path, bad, nil)
				if code != 422 || !strings.Contains(body, `"input.messages: must be an array, not a JSON string`) {
					t.Errorf("POST %s: %d %s; want 422 naming input.messages", path, code, body)
				}
			}
			var runs []json.RawMessage
			if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); code != 200 || len(runs) != 1 {
				t.Errorf("runs of the thread: %d, %d runs; want the first run alone", code, len(runs))
			}
			if st := threadStatus(t, ts.URL, tid); st != "interrupted" {
				t.Errorf("thread status %s; want interrupted, as before", st)
			}
			var after json.RawMessage
			do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &after)
			if string(after) != string(before) {
				t.Errorf("state changed:\n%s\nwas\n%s", after, before)
			}
			if n := threadCount(t, ts.URL, nil); n != 1 {
				t.Errorf("%d threads; want 1 (a refused stateless run makes none)", n)
			}
		})
	}
}
