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
			code, body := raw(t, "POST", ts.URL+"/threads", `{}`, nil)
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
				t.Fatalf("POST /threads: %d %s", code, body)
			}
			code, body = raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait",
				`{"assistant_id":"agent","input":{"messages":[{"type":"human","content":"hi"}]},"metadata":{"n":`+big+`}}`, nil)
			if code != 200 {
				t.Fatalf("runs/wait: %d %s", code, body)
			}
			code, body = raw(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs", "", nil)
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
			code, body = raw(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs/"+run.RunID, "", nil)
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
	code, body := raw(t, "POST", ts.URL+"/threads", `{}`, nil)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
		t.Fatalf("POST /threads: %d %s", code, body)
	}
	if code, body := raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"type":"human","content":"hi"}]}}`, nil); code != 200 {
		t.Fatalf("runs/wait: %d %s", code, body)
	}
	count := func(step string) int {
		t.Helper()
		code, body := raw(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/history", `{"limit":10,"metadata":{"step":`+step+`}}`, nil)
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
