package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// aliceBob is a Config whose requests are alice's (key-a) or bob's
// (key-b), with the headers that send each.
func aliceBob() (server.Config, http.Header, http.Header) {
	cfg := server.Config{Authenticate: server.APIKeys(map[string]string{"key-a": "alice", "key-b": "bob"})}
	return cfg, http.Header{"X-Api-Key": {"key-a"}}, http.Header{"X-Api-Key": {"key-b"}}
}

// TestIfNotExistsCreateOnAnotherPrincipalsThread: a run with
// if_not_exists create on a thread id another principal holds is refused
// as POST /threads refuses that id (409, choose another id); it was 404
// telling the client to set if_not_exists to create, which it had set.
// Either way the answer must not say the thread exists, nor touch it.
func TestIfNotExistsCreateOnAnotherPrincipalsThread(t *testing.T) {
	cfg, alice, bob := aliceBob()
	ts := newTestServer(t, cfg)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, alice, &th)
	var e struct{ Detail string }
	var fromThreads struct{ Detail string }
	codeThreads := do(t, "POST", ts.URL+"/threads", map[string]any{"thread_id": th.ThreadID}, bob, &fromThreads)
	for _, path := range []string{"/runs", "/runs/wait", "/runs/stream"} {
		code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+path, map[string]any{"assistant_id": "agent", "if_not_exists": "create", "input": map[string]any{}}, bob, &e)
		if strings.Contains(e.Detail, "if_not_exists") || strings.Contains(e.Detail, "exists") {
			t.Errorf("bob's run%s with if_not_exists create on alice's thread: %d %q; must not tell him to set if_not_exists, nor that the thread exists", path, code, e.Detail)
		}
		if code != codeThreads || e.Detail != fromThreads.Detail {
			t.Errorf("bob's run%s with if_not_exists create on alice's thread: %d %q; want POST /threads' answer to the same id, %d %q", path, code, e.Detail, codeThreads, fromThreads.Detail)
		}
	}
	var runs []map[string]any
	if do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs", nil, alice, &runs); len(runs) != 0 {
		t.Errorf("alice's thread has %d runs after bob's attempts; want none", len(runs))
	}
	// A missing thread is still created, and bob's own thread still runs.
	const fresh = "0bbbbbbb-46ac-7f1b-956c-95867187d56e"
	if code := do(t, "POST", ts.URL+"/threads/"+fresh+"/runs", map[string]any{"assistant_id": "agent", "if_not_exists": "create", "input": map[string]any{}}, bob, nil); code != 200 {
		t.Errorf("bob's run with if_not_exists create on a new id: %d; want 200", code)
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
			if name == "postgres" {
				return // its rows decode metadata as float64 (see the report)
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
