package server_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// numberText decodes JSON b with its numbers as json.Number and returns
// the text of the number at path (object keys), "" when absent or not a
// number.
func numberText(t *testing.T, b string, path ...string) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	n, _ := v.(json.Number)
	return string(n)
}

// TestRunMetadataNumbersKeepDigits: a run's metadata integer beyond 2^53
// reads back with its digits from the run endpoints, on every store. The request decoded
// run metadata as float64 and the SQLite and PostgreSQL stores read it
// back so, answering 9007199254740992 for 9007199254740993.
func TestRunMetadataNumbersKeepDigits(t *testing.T) {
	const big = "9007199254740993"
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			tid := newThread(t, ts.URL)
			code, body := raw(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait",
				`{"assistant_id":"agent","input":{"messages":[{"type":"human","content":"hi"}]},"metadata":{"n":`+big+`}}`, nil)
			if code != 200 {
				t.Fatalf("runs/wait: %d %s", code, body)
			}
			code, body = raw(t, "GET", ts.URL+"/threads/"+tid+"/runs", "", nil)
			var runs []json.RawMessage
			if code != 200 || json.Unmarshal([]byte(body), &runs) != nil || len(runs) != 1 {
				t.Fatalf("GET runs: %d %s; want one run", code, body)
			}
			if got := numberText(t, string(runs[0]), "metadata", "n"); got != big {
				t.Errorf("run list: metadata.n = %q in %s; want %s", got, runs[0], big)
			}
			var run struct {
				RunID string `json:"run_id"`
			}
			json.Unmarshal(runs[0], &run)
			code, body = raw(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+run.RunID, "", nil)
			if got := numberText(t, body, "metadata", "n"); code != 200 || got != big {
				t.Errorf("GET run: %d, metadata.n = %q in %s; want %s", code, got, body, big)
			}
		})
	}
}

// TestHistoryStepFilterComparesExactly: a history's metadata filter
// compares numbers by their exact value, as thread search does: step
// 1.0 and 1e0 select the step-1 checkpoint, 1.0000000000000001 selects
// none. The filter was decoded as float64, which rounds
// 1.0000000000000001 to 1.
func TestHistoryStepFilterComparesExactly(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	count := func(step string) int {
		t.Helper()
		code, body := raw(t, "POST", ts.URL+"/threads/"+tid+"/history", `{"limit":10,"metadata":{"step":`+step+`}}`, nil)
		var states []json.RawMessage
		if code != 200 || json.Unmarshal([]byte(body), &states) != nil {
			t.Fatalf("history step %s: %d %s", step, code, body)
		}
		return len(states)
	}
	n := count("1")
	if n == 0 {
		t.Fatal("history step 1: no checkpoint; want the run's step-1 checkpoints")
	}
	for _, c := range []struct {
		step string
		want int
	}{
		{"1.0", n},
		{"1e0", n},
		{"1.0000000000000001", 0},
		{"0.99999999999999999", 0},
	} {
		if got := count(c.step); got != c.want {
			t.Errorf("history step %s: %d checkpoints; want %d (as step 1 gives %d)", c.step, got, c.want, n)
		}
	}
}

// TestMetadataNumbersBeyondFloat64: a metadata filter on an integer beyond
// 2^53 selects the thread of that exact integer and not its float64
// neighbour, on every store, and 1.0 still equals 1; the metadata reads
// back with its digits. A filter was decoded as a float64, so
// 9007199254740993 found the thread of 9007199254740992 (and the
// thread's own metadata was stored rounded).
func TestMetadataNumbersBeyondFloat64(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			ids := map[string]string{}
			for _, n := range []string{"9007199254740992", "9007199254740993", "1"} {
				var th struct {
					ThreadID string `json:"thread_id"`
				}
				code, body := raw(t, "POST", ts.URL+"/threads", `{"metadata":{"probe5":"num","id":`+n+`}}`, nil)
				if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
					t.Fatalf("create with id %s: %d %s", n, code, body)
				}
				ids[n] = th.ThreadID
			}
			for _, c := range []struct{ filter, want string }{
				{"9007199254740993", "9007199254740993"},
				{"9007199254740992", "9007199254740992"},
				{"9007199254740993.0", "9007199254740993"},
				{"90071992547409930e-1", "9007199254740993"},
				{"1.0", "1"},
				{"1e0", "1"},
			} {
				code, body := raw(t, "POST", ts.URL+"/threads/search", `{"metadata":{"probe5":"num","id":`+c.filter+`}}`, nil)
				var found []struct {
					ThreadID string `json:"thread_id"`
				}
				if code != 200 || json.Unmarshal([]byte(body), &found) != nil {
					t.Fatalf("search id %s: %d %s", c.filter, code, body)
				}
				if len(found) != 1 || found[0].ThreadID != ids[c.want] {
					t.Errorf("search id %s: %s; want only the thread of %s (%s)", c.filter, body, c.want, ids[c.want])
				}
				var n int
				if code, body := raw(t, "POST", ts.URL+"/threads/count", `{"metadata":{"probe5":"num","id":`+c.filter+`}}`, nil); code != 200 || json.Unmarshal([]byte(body), &n) != nil || n != 1 {
					t.Errorf("count id %s: %d %s; want 1", c.filter, code, body)
				}
			}
			_, body := raw(t, "GET", ts.URL+"/threads/"+ids["9007199254740993"], "", nil)
			var th struct {
				Metadata map[string]any `json:"metadata"`
			}
			d := json.NewDecoder(bytes.NewReader([]byte(body)))
			d.UseNumber()
			if err := d.Decode(&th); err != nil || th.Metadata["id"] != json.Number("9007199254740993") {
				t.Errorf("GET the thread of 9007199254740993: %s; want its metadata with the id's digits", body)
			}
		})
	}
}

// TestValuesMatchNumbersExactly: a values filter compares numbers by
// their exact value, as the metadata filter does.
func TestValuesMatchNumbersExactly(t *testing.T) {
	vals := json.RawMessage(`{"n":9007199254740992,"f":0.5,"z":0,"l":[1,2.0,{"x":1e2}]}`)
	for _, c := range []struct {
		want  map[string]any
		match bool
	}{
		{map[string]any{"n": json.Number("9007199254740992")}, true},
		{map[string]any{"n": json.Number("9007199254740993")}, false},
		{map[string]any{"n": float64(9007199254740992)}, true},
		{map[string]any{"n": int64(9007199254740992)}, true},
		{map[string]any{"n": int64(9007199254740993)}, false},
		{map[string]any{"f": json.Number("5e-1")}, true},
		{map[string]any{"f": json.Number("0.50")}, true},
		{map[string]any{"f": json.Number("0.51")}, false},
		{map[string]any{"z": json.Number("-0.0")}, true},
		{map[string]any{"l": []any{1, json.Number("2"), map[string]any{"x": 100}}}, true},
		{map[string]any{"l": []any{1, json.Number("2"), map[string]any{"x": 101}}}, false},
		{map[string]any{"n": "9007199254740992"}, false},
		{map[string]any{"n": json.Number("1e99999999999999999999999")}, false},
	} {
		if got := (server.ThreadQuery{Values: c.want}).ValuesMatch(vals); got != c.match {
			t.Errorf("ValuesMatch(%v): %v; want %v", c.want, got, c.match)
		}
	}
}
