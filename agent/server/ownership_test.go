package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/memory"
)

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
