package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// openStream opens GET path (a run's stream) with header h and returns the
// response once its headers arrived: the server then follows the run.
func openStream(t *testing.T, url string, h map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// lastEvent reads the rest of stream resp and returns its last event.
func lastEvent(t *testing.T, resp *http.Response, what string) sseEvent {
	t.Helper()
	evs := readSSE(t, resp.Body)
	if len(evs) == 0 {
		t.Errorf("%s: the stream ended without an event", what)
		return sseEvent{}
	}
	return evs[len(evs)-1]
}

// TestStreamEndsWithEvent: a run's stream always ends with an event
// saying why, on every store: a delayed run cancelled before it started
// ends with end and its status interrupted (and its join answers the
// thread's values, as of any interrupted run); one whose thread is deleted ends with an error naming
// the deletion (or its end as interrupted, by the deletion's cancel); a join of an ended run from past its log's end gets the
// run's end. Each ended with no event at all.
func TestStreamEndsWithEvent(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			delayed := func(tid string) string {
				var run struct {
					RunID string `json:"run_id"`
				}
				if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("later"), "after_seconds": 3600}, nil, &run); code != 200 {
					t.Fatalf("delayed run: %d", code)
				}
				return run.RunID
			}

			tid := newThread(t, ts.URL)
			rid := delayed(tid)
			resp := openStream(t, ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/"+rid+"/cancel?action=interrupt", nil, nil, nil); code/100 != 2 {
				t.Fatalf("cancel: %d", code)
			}
			ev := lastEvent(t, resp, "stream of a cancelled run")
			var end struct {
				RunID  string `json:"run_id"`
				Status string `json:"status"`
			}
			if ev.Name != "end" || json.Unmarshal(ev.Data, &end) != nil || end.RunID != rid || end.Status != "interrupted" {
				t.Errorf("stream of a run cancelled before it started ended with %s %s; want end with status interrupted", ev.Name, ev.Data)
			}
			code, body := raw(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/join", "", nil)
			if code != 200 || strings.Contains(body, `"__error__"`) || !strings.HasPrefix(body, "{") {
				t.Errorf("join of a run cancelled before it started: %d %s; want the thread's values, as of any interrupted run (an SDK's runs.wait throws on __error__)", code, body)
			}

			tid = newThread(t, ts.URL)
			rid = delayed(tid)
			resp = openStream(t, ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
			if code := do(t, "DELETE", ts.URL+"/threads/"+tid, nil, nil, nil); code/100 != 2 {
				t.Fatalf("delete thread: %d", code)
			}
			// The deletion cancels the run, then deletes it: the stream
			// ends with whichever it read last.
			ev = lastEvent(t, resp, "stream of a run whose thread was deleted")
			deleted := ev.Name == "error" && strings.Contains(string(ev.Data), `"RunDeleted"`) && strings.Contains(string(ev.Data), rid+" was deleted")
			if !deleted && (ev.Name != "end" || !strings.Contains(string(ev.Data), `"status":"interrupted"`)) {
				t.Errorf("stream of a run whose thread was deleted ended with %s %s; want an error naming the deletion, or its end as interrupted", ev.Name, ev.Data)
			}

			tid = newThread(t, ts.URL)
			var run struct {
				RunID string `json:"run_id"`
			}
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("hi")}, nil, &run); code != 200 {
				t.Fatalf("run: %d", code)
			}
			if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/join", nil, nil, nil); code != 200 {
				t.Fatalf("join: %d", code)
			}
			for _, h := range []map[string]string{{"Last-Event-ID": "1000"}, nil} {
				resp = openStream(t, ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/stream", h)
				ev = lastEvent(t, resp, "stream of an ended run")
				if ev.Name != "end" || !strings.Contains(string(ev.Data), `"status":"`) {
					t.Errorf("stream of an ended run with %v ended with %s %s; want its end", h, ev.Name, ev.Data)
				}
			}
		})
	}
}

// TestStreamOfRolledBackRunEndsDeleted: the stream of a pending run that
// a second run rolls back (multitask_strategy rollback) ends with an
// error RunDeleted naming the run, on every store.
func TestStreamOfRolledBackRunEndsDeleted(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			tid := newThread(t, ts.URL)
			var run struct {
				RunID string `json:"run_id"`
			}
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("later"), "after_seconds": 3600}, nil, &run); code != 200 {
				t.Fatalf("delayed run: %d", code)
			}
			resp := openStream(t, ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/stream", nil)
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("now"), "multitask_strategy": "rollback"}, nil, nil); code != 200 {
				t.Fatalf("rollback run: %d", code)
			}
			ev := lastEvent(t, resp, "stream of a rolled back run")
			if ev.Name != "error" || !strings.Contains(string(ev.Data), `"RunDeleted"`) || !strings.Contains(string(ev.Data), run.RunID+" was deleted") {
				t.Errorf("stream of a rolled back run ended with %s %s; want an error RunDeleted naming it", ev.Name, ev.Data)
			}
		})
	}
}
