package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/memory"
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

// interruptedThread creates a thread of h's principal and runs the agent
// graph on it to its interrupt; it answers the thread and run ids.
func interruptedThread(t *testing.T, url string, h http.Header) (tid, rid string) {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{"metadata": map[string]any{"owner": "first"}}, h, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	if code := do(t, "POST", url+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Type: "human", Content: "hi"}}}}, h, nil); code != 200 {
		t.Fatalf("run: %d", code)
	}
	var runs []struct {
		RunID string `json:"run_id"`
	}
	do(t, "GET", url+"/threads/"+th.ThreadID+"/runs", nil, h, &runs)
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	return th.ThreadID, runs[0].RunID
}

// TestOwnershipOnEveryEndpoint: another principal's thread, its runs and
// its checkpoints are missing (404) on every endpoint that names them,
// reads and writes alike, and none of the writes changes them; a prune
// or a count naming the thread sees nothing.
func TestOwnershipOnEveryEndpoint(t *testing.T) {
	cfg, alice, bob := aliceBob()
	ts := newTestServer(t, cfg)
	tid, rid := interruptedThread(t, ts.URL, alice)
	var st struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
		Values json.RawMessage `json:"values"`
	}
	do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, alice, &st)
	cid := st.Checkpoint.CheckpointID
	before := st.Values
	th := "/threads/" + tid
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", th + "/state/" + cid, nil},
		{"POST", th + "/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": cid}}},
		{"POST", th + "/state", map[string]any{"values": map[string]any{"approved": "bob"}}},
		{"PATCH", th + "/state", map[string]any{"metadata": map[string]any{"label": "bob"}}},
		{"GET", th + "/history", nil},
		{"POST", th + "/history", map[string]any{"limit": 5}},
		{"POST", th + "/copy", nil},
		{"PATCH", th, map[string]any{"metadata": map[string]any{"owner": "bob"}}},
		{"GET", th + "/runs", nil},
		{"GET", th + "/runs/" + rid, nil},
		{"GET", th + "/runs/" + rid + "/join", nil},
		{"GET", th + "/runs/" + rid + "/stream", nil},
		{"POST", th + "/runs/" + rid + "/cancel", nil},
		{"DELETE", th + "/runs/" + rid, nil},
		{"POST", th + "/runs", map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "bob"}}},
		{"POST", th + "/runs/stream", map[string]any{"assistant_id": "agent", "command": map[string]any{"resume": "bob"}}},
		{"DELETE", th, nil},
	} {
		var e struct{ Detail string }
		if code := do(t, c.method, ts.URL+c.path, c.body, bob, &e); code != 404 || strings.Contains(e.Detail, "alice") {
			t.Errorf("bob %s %s: %d %q; want 404", c.method, c.path, code, e.Detail)
		}
	}
	var res map[string]any
	if code := do(t, "POST", ts.URL+"/threads/prune", map[string]any{"thread_ids": []string{tid}, "strategy": "delete"}, bob, &res); code != 200 || res["pruned_count"] != 0.0 {
		t.Errorf("bob prunes alice's thread: %d %v; want 200, none pruned", code, res)
	}
	var n int
	if do(t, "POST", ts.URL+"/threads/count", map[string]any{"ids": []string{tid}}, bob, &n); n != 0 {
		t.Errorf("bob counts alice's thread: %d; want 0", n)
	}
	// Alice's thread is as it was: its state, its metadata, its run.
	var after struct {
		Values   json.RawMessage `json:"values"`
		Next     []string        `json:"next"`
		Metadata map[string]any  `json:"metadata"`
	}
	if code := do(t, "GET", ts.URL+th+"/state", nil, alice, &after); code != 200 || string(after.Values) != string(before) || len(after.Next) != 1 {
		t.Errorf("alice's state after bob's attempts: %d %s next %v; want %s, next [review]", code, after.Values, after.Next, before)
	}
	var thread struct {
		Metadata map[string]any `json:"metadata"`
		Status   string         `json:"status"`
	}
	if do(t, "GET", ts.URL+th, nil, alice, &thread); thread.Metadata["owner"] != "first" || thread.Status != "interrupted" {
		t.Errorf("alice's thread after bob's attempts: %+v", thread)
	}
	if code := do(t, "GET", ts.URL+th+"/runs/"+rid, nil, alice, nil); code != 200 {
		t.Errorf("alice's run after bob's attempts: %d; want 200", code)
	}
}

// TestStoreItemsOwnershipOnWrites: another principal cannot delete,
// overwrite or find a principal's item, nor reach it by naming the hidden
// scope label in a namespace.
func TestStoreItemsOwnershipOnWrites(t *testing.T) {
	cfg, alice, bob := aliceBob()
	cfg.Items = memory.NewInMemoryItems(memory.InMemoryItemsConfig{})
	ts := newTestServer(t, cfg)
	put := func(h http.Header, v string) int {
		return do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"notes"}, "key": "k", "value": map[string]any{"v": v}}, h, nil)
	}
	if code := put(alice, "alice"); code != 204 {
		t.Fatalf("put: %d", code)
	}
	if code := put(bob, "bob"); code != 204 {
		t.Fatalf("bob's put: %d", code)
	}
	do(t, "DELETE", ts.URL+"/store/items", map[string]any{"namespace": []string{"notes"}, "key": "k"}, bob, nil)
	var item struct {
		Value map[string]any `json:"value"`
	}
	if code := do(t, "GET", ts.URL+"/store/items?namespace=notes&key=k", nil, alice, &item); code != 200 || item.Value["v"] != "alice" {
		t.Fatalf("alice's item after bob's put and delete: %d %v; want hers", code, item.Value)
	}
	var found struct {
		Items []struct {
			Namespace []string       `json:"namespace"`
			Value     map[string]any `json:"value"`
		} `json:"items"`
	}
	do(t, "POST", ts.URL+"/store/items/search", map[string]any{"namespace_prefix": []string{}}, bob, &found)
	if len(found.Items) != 0 {
		t.Errorf("bob's search after his delete: %+v; want nothing", found.Items)
	}
	// The scope label of alice, named by bob, is under bob's own scope.
	var ns struct{ Namespaces [][]string }
	do(t, "POST", ts.URL+"/store/namespaces", map[string]any{}, alice, &ns)
	for _, label := range []string{"principal-", ".."} {
		do(t, "POST", ts.URL+"/store/items/search", map[string]any{"namespace_prefix": []string{label}}, bob, &found)
		if len(found.Items) != 0 {
			t.Errorf("bob's search under %q: %+v; want nothing", label, found.Items)
		}
	}
	do(t, "POST", ts.URL+"/store/items/search", map[string]any{"namespace_prefix": []string{"notes"}}, alice, &found)
	if len(found.Items) != 1 || found.Items[0].Value["v"] != "alice" || len(found.Items[0].Namespace) != 1 {
		t.Errorf("alice's search: %+v; want her one item, namespace [notes]", found.Items)
	}
}

// TestRunFromAnotherThreadsCheckpoint: a run that names a checkpoint its
// thread does not have (another thread's, given as checkpoint_id or in
// checkpoint, or none at all) is refused with 404 naming checkpoint_id,
// and the thread stays as it was. The run was created and failed when it
// started, leaving the thread in status error. The state, history and
// update endpoints refuse such a checkpoint too.
func TestRunFromAnotherThreadsCheckpoint(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	other, _ := interruptedThread(t, ts.URL, nil)
	var st struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	do(t, "GET", ts.URL+"/threads/"+other+"/state", nil, nil, &st)
	foreign := st.Checkpoint.CheckpointID
	do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &st)
	own := st.Checkpoint.CheckpointID
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/runs/wait", map[string]any{"assistant_id": "agent", "checkpoint_id": foreign, "command": map[string]any{"resume": "ok"}}},
		{"/runs", map[string]any{"assistant_id": "agent", "checkpoint": map[string]any{"checkpoint_id": foreign, "thread_id": other}, "command": map[string]any{"resume": "ok"}}},
		{"/runs/stream", map[string]any{"assistant_id": "agent", "checkpoint_id": "0ddddddd-46ac-7f1b-956c-95867187d56e", "input": map[string]any{}}},
		{"/runs", map[string]any{"assistant_id": "agent", "config": map[string]any{"configurable": map[string]any{"checkpoint_id": foreign}}, "input": map[string]any{}}},
	} {
		b, err := json.Marshal(c.body)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Detail string }
		code, body := raw(t, "POST", ts.URL+"/threads/"+tid+c.path, string(b), nil)
		if code != 404 || json.Unmarshal([]byte(body), &e) != nil || !strings.HasPrefix(e.Detail, "checkpoint_id: ") {
			t.Errorf("run%s from a checkpoint the thread does not have: %d %.300s; want 404 naming checkpoint_id", c.path, code, body)
		}
	}
	var thread struct{ Status string }
	if do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &thread); thread.Status != "interrupted" {
		t.Errorf("thread after the refused runs: %s; want interrupted, as it was", thread.Status)
	}
	var runs []map[string]any
	if do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); len(runs) != 1 {
		t.Errorf("thread has %d runs after the refused ones; want its first only", len(runs))
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/state/" + foreign, ""},
		{"POST", "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"` + foreign + `"}}`},
		{"POST", "/state", `{"values":{"approved":"x"},"checkpoint_id":"` + foreign + `"}`},
		{"POST", "/history", `{"before":{"configurable":{"checkpoint_id":"` + foreign + `"}}}`},
	} {
		if code, body := raw(t, c.method, ts.URL+"/threads/"+tid+c.path, c.body, nil); code != 404 {
			t.Errorf("%s %s with another thread's checkpoint: %d %s; want 404", c.method, c.path, code, body)
		}
	}
	// The thread's own checkpoint still starts a run.
	var out map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "checkpoint_id": own, "command": map[string]any{"resume": "yes"}}, nil, &out); code != 200 || out["approved"] != "yes" {
		t.Errorf("run from the thread's own checkpoint: %d %v; want approved yes", code, out)
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

// TestRunRequestsAfterClose: once Server.Close was called, a request that
// creates a run or waits on one is answered 503 at once with Retry-After;
// it was accepted, and then waited for ever (a /wait or /stream, holding
// its stream slot) or left a pending run and a busy thread that no
// worker of this server would take (a background run). Reads are still
// served.
func TestRunRequestsAfterClose(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	if err := ts.Server.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	resume := `{"assistant_id":"agent","command":{"resume":"ok"}}`
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/threads/" + tid + "/runs/wait", resume},
		{"POST", "/threads/" + tid + "/runs/stream", resume},
		{"POST", "/threads/" + tid + "/runs", resume},
		{"POST", "/runs/wait", `{"assistant_id":"agent","input":{}}`},
		{"POST", "/runs", `{"assistant_id":"agent","input":{}}`},
		// The joins of run rid, which has ended, are served (see
		// TestJoinEndedRunAfterClose); those of a run that has not are
		// refused.
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		req, err := http.NewRequestWithContext(ctx, c.method, ts.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s %s after Close: %v; want 503 at once", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "Close") {
			t.Errorf("%s %s after Close: %d %s; want 503 with Retry-After", c.method, c.path, resp.StatusCode, b)
		}
	}
	var thread struct{ Status string }
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &thread); code != 200 || thread.Status != "interrupted" {
		t.Errorf("the thread after Close: %d %s; want it served, interrupted as it was", code, thread.Status)
	}
	var runs []map[string]any
	if do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); len(runs) != 1 {
		t.Errorf("the thread has %d runs after Close; want its first only", len(runs))
	}
}

// TestConcurrentStrategiesCancelsAndEdits: on one thread, runs created
// with each multitask strategy, cancellations (interrupt and rollback) of
// whatever runs are active, a PATCH of the state and a copy, all at once
// and over several rounds, answer only success or a documented refusal
// (404 for a run rolled back meanwhile, 409 for a busy thread or a run
// that ended), leave no run pending or running, the thread idle with the
// values of its state, and the thread usable.
func TestConcurrentStrategiesCancelsAndEdits(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
			tid := th.ThreadID
			in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
			var mu sync.Mutex
			bad := []string{}
			check := func(what string, code int, ok ...int) {
				if !slices.Contains(ok, code) {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: %d", what, code))
					mu.Unlock()
				}
			}
			for round := range 4 {
				do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in}, nil, nil)
				var wg sync.WaitGroup
				for _, strategy := range []string{"interrupt", "rollback", "enqueue", "reject"} {
					wg.Go(func() {
						check("run "+strategy, do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": in, "multitask_strategy": strategy}, nil, nil), 200, 409)
					})
				}
				for _, action := range []string{"interrupt", "rollback"} {
					wg.Go(func() {
						var runs []struct {
							RunID  string `json:"run_id"`
							Status string `json:"status"`
						}
						do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=100", nil, nil, &runs)
						for _, r := range runs {
							if r.Status == "pending" || r.Status == "running" {
								check("cancel "+action, do(t, "POST", ts.URL+"/threads/"+tid+"/runs/"+r.RunID+"/cancel?action="+action, nil, nil, nil), 202, 404, 409)
							}
						}
					})
				}
				wg.Go(func() {
					check("patch state", do(t, "PATCH", ts.URL+"/threads/"+tid+"/state", map[string]any{"metadata": map[string]any{"round": fmt.Sprint(round)}}, nil, nil), 204, 409)
					check("copy", do(t, "POST", ts.URL+"/threads/"+tid+"/copy", nil, nil, nil), 200, 409)
				})
				for range 20 {
					ts.gates.release(tid)
					runtime.Gosched()
				}
				wg.Wait()
			}
			for end := time.Now().Add(30 * time.Second); ; {
				var runs []struct {
					Status string `json:"status"`
				}
				do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=1000", nil, nil, &runs)
				active := 0
				for _, r := range runs {
					if r.Status == "pending" || r.Status == "running" {
						active++
					}
				}
				if active == 0 {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("%d runs still active after 30 s", active)
				}
				ts.gates.release(tid)
				time.Sleep(5 * time.Millisecond)
			}
			if len(bad) > 0 {
				t.Errorf("answers out of the documented ones: %v", bad)
			}
			var thread struct {
				Status string          `json:"status"`
				Values json.RawMessage `json:"values"`
			}
			var state struct {
				Values json.RawMessage `json:"values"`
			}
			do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, &thread)
			do(t, "GET", ts.URL+"/threads/"+tid+"/state", nil, nil, &state)
			if thread.Status != "idle" {
				t.Errorf("thread status after the rounds: %s; want idle", thread.Status)
			}
			if !jsonSame(thread.Values, state.Values) {
				t.Errorf("thread values %s; its state's %s", thread.Values, state.Values)
			}
			ts.gates.release(tid)
			var out chat
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "slow", "input": in}, nil, &out); code != 200 || last(out) != "slow done: x" {
				t.Errorf("a run after the rounds: %d %+v", code, out)
			}
		})
	}
}

// TestRollbackToPausedStateThenInput is the interleaving of issue #21,
// one step at a time: a run cancelled with interrupt inside its node
// leaves its step pending (the thread's state has next [slow]); the next
// run starts from that state and is cancelled with rollback, which
// returns the thread to it; a run with new input then starts a new run
// from START, as on any thread whose latest state is paused, instead of
// failing with "thread is paused", and leaves the thread idle with the
// values of its state.
func TestRollbackToPausedStateThenInput(t *testing.T) {
	for name, open := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, open(t))
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
			runs := ts.URL + "/threads/" + th.ThreadID + "/runs"
			in := map[string]any{"assistant_id": "slow", "input": map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}}
			next := func() []string {
				var st struct {
					Next []string `json:"next"`
				}
				if code := do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/state", nil, nil, &st); code != 200 {
					t.Fatalf("state: %d", code)
				}
				return st.Next
			}
			var run struct {
				RunID string `json:"run_id"`
			}
			if code := do(t, "POST", runs, in, nil, &run); code != 200 {
				t.Fatalf("first run: %d", code)
			}
			waitUntil(t, "the first run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
			if code := do(t, "POST", runs+"/"+run.RunID+"/cancel?action=interrupt&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("cancel the first run (interrupt): %d", code)
			}
			if n := next(); !slices.Equal(n, []string{"slow"}) {
				t.Fatalf("next after the interrupted run: %v; want [slow]", n)
			}
			if code := do(t, "POST", runs, in, nil, &run); code != 200 {
				t.Fatalf("second run: %d", code)
			}
			waitUntil(t, "the second run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
			if code := do(t, "POST", runs+"/"+run.RunID+"/cancel?action=rollback&wait=1", nil, nil, nil); code != http.StatusNoContent {
				t.Fatalf("cancel the second run (rollback): %d", code)
			}
			if n := next(); !slices.Equal(n, []string{"slow"}) {
				t.Fatalf("next after the rollback: %v; want [slow], the state the rolled-back run started from", n)
			}
			ts.gates.release(th.ThreadID)
			var out map[string]any
			if code := do(t, "POST", runs+"/wait", in, nil, &out); code != 200 || out["__error__"] != nil {
				t.Fatalf("a run with input after the rollback: %d %v; want it to run from START", code, out)
			}
			msgs, _ := out["messages"].([]any)
			if len(msgs) != 3 || !strings.Contains(fmt.Sprint(msgs[2]), "slow done: x") {
				t.Errorf("messages after the run: %v; want the two inputs and slow done: x", msgs)
			}
			var thread struct {
				Status string          `json:"status"`
				Values json.RawMessage `json:"values"`
			}
			var state struct {
				Values json.RawMessage `json:"values"`
				Next   []string        `json:"next"`
			}
			do(t, "GET", ts.URL+"/threads/"+th.ThreadID, nil, nil, &thread)
			do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/state", nil, nil, &state)
			if thread.Status != "idle" || len(state.Next) != 0 {
				t.Errorf("thread status %s, next %v; want idle, none", thread.Status, state.Next)
			}
			if !jsonSame(thread.Values, state.Values) {
				t.Errorf("thread values %s; its state's %s", thread.Values, state.Values)
			}
		})
	}
}

// jsonSame reports whether a and b hold the same JSON value.
func jsonSame(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestAttackRound5Refusals: edge inputs of the fifth attack round that
// the server already refuses (or serves) as it should; each row is one
// attack and the answer it must get.
func TestAttackRound5Refusals(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, rid := interruptedThread(t, ts.URL, nil)
	th := "/threads/" + tid
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
		code                     int
		detail                   string // a prefix of the detail, when set
	}{
		{"metadata nested 20000 deep", "POST", "/threads", `{"metadata":` + deep + `}`, nil, 422, "the body is not valid JSON"},
		{"filter nested 20000 deep", "POST", "/threads/search", `{"metadata":{"x":` + deep + `}}`, nil, 422, "the body is not valid JSON"},
		{"body of 200000 ['s", "POST", "/threads", strings.Repeat("[", 200000), nil, 422, "the body is not valid JSON"},
		{"unicode thread id", "GET", "/threads/%E2%9C%93", "", nil, 422, "thread_id: "},
		{"NUL thread id", "GET", "/threads/%00", "", nil, 422, "thread_id: "},
		{"search limit -1", "POST", "/threads/search", `{"limit":-1}`, nil, 422, "limit: "},
		{"search limit 1e3", "POST", "/threads/search", `{"limit":1e3}`, nil, 422, "limit: "},
		{"search limit 10.5", "POST", "/threads/search", `{"limit":10.5}`, nil, 422, "limit: "},
		{"search offset beyond int64", "POST", "/threads/search", `{"offset":99999999999999999999}`, nil, 422, "offset: "},
		{"search offset max int64", "POST", "/threads/search", `{"offset":9223372036854775807}`, nil, 200, ""},
		{"history limit -1", "POST", th + "/history", `{"limit":-1}`, nil, 422, "limit: "},
		{"history limit 1e9", "GET", th + "/history?limit=1000000000", "", nil, 422, "limit: "},
		{"runs offset max int64", "GET", th + "/runs?offset=9223372036854775807", "", nil, 200, ""},
		{"runs limit 0", "GET", th + "/runs?limit=0", "", nil, 422, "limit: "},
		{"assistants limit -1", "POST", "/assistants/search", `{"limit":-1}`, nil, 422, "limit and offset: "},
		{"Last-Event-ID abc", "GET", th + "/runs/" + rid + "/stream", "", map[string]string{"Last-Event-ID": "abc"}, 422, "Last-Event-ID: "},
		{"Last-Event-ID beyond int64", "GET", th + "/runs/" + rid + "/stream", "", map[string]string{"Last-Event-ID": "99999999999999999999"}, 422, "Last-Event-ID: "},
		{"Last-Event-ID -2", "GET", th + "/runs/" + rid + "/stream", "", map[string]string{"Last-Event-ID": "-2"}, 422, "Last-Event-ID: "},
		{"command resume and goto", "POST", th + "/runs/wait", `{"assistant_id":"agent","command":{"resume":"ok","goto":"finish"}}`, nil, 422, "command: "},
		{"as_node unknown", "POST", th + "/state", `{"values":{"approved":"x"},"as_node":"nope"}`, nil, 422, "as_node: "},
		{"as_node __end__", "POST", th + "/state", `{"values":{"approved":"x"},"as_node":"__end__"}`, nil, 422, "as_node: "},
		{"assistant unknown", "GET", "/assistants/nope", "", nil, 404, `assistant "nope" not found`},
		{"run of an unknown assistant", "POST", "/runs/wait", `{"assistant_id":"nope"}`, nil, 404, `assistant "nope" not found`},
		{"stream mode unknown", "POST", "/runs/wait", `{"assistant_id":"agent","stream_mode":["bogus"]}`, nil, 422, "stream_mode: "},
		{"multitask_strategy unknown", "POST", th + "/runs", `{"assistant_id":"agent","multitask_strategy":"bogus"}`, nil, 422, "multitask_strategy: "},
		{"cancel action unknown", "POST", th + "/runs/" + rid + "/cancel?action=bogus", "", nil, 422, "action: "},
		{"recursion_limit -1", "POST", th + "/runs", `{"assistant_id":"agent","config":{"recursion_limit":-1}}`, nil, 422, "config.recursion_limit: "},
		{"after_seconds 1e308", "POST", th + "/runs", `{"assistant_id":"agent","after_seconds":1e308}`, nil, 422, "after_seconds: "},
		{"sort_by with SQL", "POST", "/threads/search", `{"sort_by":"created_at; DROP TABLE x"}`, nil, 422, "sort_by: "},
		{"CORS preflight from origin null", "OPTIONS", "/threads", "", map[string]string{"Origin": "null", "Access-Control-Request-Method": "POST"}, 403, "origin null is not allowed"},
		{"CORS preflight from localhost.evil", "OPTIONS", "/threads", "", map[string]string{"Origin": "http://localhost.evil.example", "Access-Control-Request-Method": "POST"}, 403, "origin "},
		{"CORS preflight from 127.0.0.1.nip.io", "OPTIONS", "/threads", "", map[string]string{"Origin": "http://127.0.0.1.nip.io", "Access-Control-Request-Method": "POST"}, 403, "origin "},
		{"method override header", "GET", th, "", map[string]string{"X-HTTP-Method-Override": "DELETE"}, 200, ""},
	} {
		req, err := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Detail string }
		if resp.StatusCode != c.code || c.detail != "" && (json.Unmarshal(b, &e) != nil || !strings.HasPrefix(e.Detail, c.detail)) {
			t.Errorf("%s: %d %.300s; want %d %q...", c.name, resp.StatusCode, b, c.code, c.detail)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s: CORS headers %v; want none", c.name, resp.Header)
		}
	}
	// The thread survived the method override, and duplicate keys take
	// the last value, as encoding/json decodes them (one reading, not a
	// first-key check and a last-key use).
	if code := do(t, "GET", ts.URL+th, nil, nil, nil); code != 200 {
		t.Errorf("thread after X-HTTP-Method-Override DELETE: %d; want 200", code)
	}
	const second = "0eeeeeee-46ac-7f1b-956c-95867187d56e"
	code, body := raw(t, "POST", ts.URL+"/threads", `{"thread_id":"`+tid+`","thread_id":"`+second+`"}`, nil)
	if code != 200 || !strings.Contains(body, second) {
		t.Errorf("duplicate thread_id keys: %d %s; want the thread of the last, %s", code, body, second)
	}
}

// TestForgedLastEventIDAndDuplicateModes: a Last-Event-ID past a run's
// log (one of a longer run) ends the stream at once with nothing, and a
// stream mode given twice sends each event once.
func TestForgedLastEventIDAndDuplicateModes(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, rid := interruptedThread(t, ts.URL, nil)
	get := func(query, lastID string) []sseEvent {
		req, err := http.NewRequest("GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("stream %s from %s: %d", query, lastID, resp.StatusCode)
		}
		return readSSE(t, resp.Body)
	}
	if evs := get("", "1000000"); len(evs) != 0 {
		t.Errorf("stream from event 1000000 of a shorter run: %v; want nothing", evs)
	}
	once := get("?stream_mode=values", "-1")
	twice := get("?stream_mode=values&stream_mode=values", "-1")
	if len(once) == 0 || len(twice) != len(once) {
		t.Errorf("stream_mode values twice: %d events; once: %d; want the same", len(twice), len(once))
	}
	seen := map[string]bool{}
	for _, ev := range twice {
		if seen[ev.ID] {
			t.Errorf("event %s sent twice", ev.ID)
		}
		seen[ev.ID] = true
	}
}
