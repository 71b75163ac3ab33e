package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/memory"
)

// call sends a JSON request (body nil: none) and answers its status, its
// headers and its body.
func call(t *testing.T, method, url string, body any) (int, http.Header, []byte) {
	t.Helper()
	resp := sendJSON(t, method, url, body, nil)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, b
}

// TestListAnswersStopAtMaxResponseBytes: a history, a thread search, a
// thread's runs and a store search of large items stop at
// Config.MaxResponseBytes, before their limit, with
// X-Pagination-Truncated: true, and hold every item once paged on.
func TestListAnswersStopAtMaxResponseBytes(t *testing.T) {
	const budget = 5000
	big := strings.Repeat("x", 1000)
	ts := newTestServer(t, server.Config{MaxResponseBytes: budget, Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
	checkCut := func(t *testing.T, what string, h http.Header, body []byte, n, limit int) {
		t.Helper()
		if n == 0 || n >= limit {
			t.Fatalf("%s: %d items of a limit of %d; want fewer, and at least one", what, n, limit)
		}
		if h.Get(server.TruncatedHeader) != "true" {
			t.Fatalf("%s: %d items, without %s: true", what, n, server.TruncatedHeader)
		}
		if len(body) > budget+2000 {
			t.Fatalf("%s: %d bytes; want about Config.MaxResponseBytes (%d) at most", what, len(body), budget)
		}
	}

	t.Run("history", func(t *testing.T) {
		tid, _ := interruptedThread(t, ts.URL, nil)
		for range 8 {
			if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": big}}, nil, nil); code != 200 {
				t.Fatalf("update state: %d", code)
			}
		}
		var seen []string
		var before any
		for page := 0; ; page++ {
			req := map[string]any{"limit": 100}
			if before != nil {
				req["before"] = before
			}
			_, h, b := call(t, "POST", ts.URL+"/threads/"+tid+"/history", req)
			var hist []struct {
				Checkpoint struct {
					CheckpointID string `json:"checkpoint_id"`
				} `json:"checkpoint"`
			}
			if err := json.Unmarshal(b, &hist); err != nil {
				t.Fatal(err)
			}
			for _, st := range hist {
				seen = append(seen, st.Checkpoint.CheckpointID)
			}
			if page == 0 {
				checkCut(t, "history", h, b, len(hist), 100)
			}
			if h.Get(server.TruncatedHeader) == "" {
				break
			}
			before = hist[len(hist)-1].Checkpoint.CheckpointID
		}
		// Read one by one, the history is the same.
		var one []string
		for before = nil; ; {
			req := map[string]any{"limit": 1}
			if before != nil {
				req["before"] = before
			}
			ids := historyIDs(t, ts.URL, tid, req)
			if len(ids) == 0 {
				break
			}
			one = append(one, ids[0])
			before = ids[0]
		}
		if strings.Join(seen, ",") != strings.Join(one, ",") || len(seen) < 10 {
			t.Fatalf("paged history %v; want %v (at least 10 states)", seen, one)
		}
	})

	t.Run("thread search", func(t *testing.T) {
		for i := range 6 {
			if code := do(t, "POST", ts.URL+"/threads", map[string]any{"metadata": map[string]any{"kind": "big", "n": i, "pad": big}}, nil, nil); code != 200 {
				t.Fatalf("create thread: %d", code)
			}
		}
		got := map[string]bool{}
		for offset := 0; ; {
			_, h, b := call(t, "POST", ts.URL+"/threads/search", map[string]any{"limit": 100, "offset": offset, "metadata": map[string]any{"kind": "big"}})
			var page []struct {
				ThreadID string `json:"thread_id"`
			}
			if err := json.Unmarshal(b, &page); err != nil {
				t.Fatal(err)
			}
			if offset == 0 {
				checkCut(t, "thread search", h, b, len(page), 6)
				if next := h.Get("X-Pagination-Next"); next != strconv.Itoa(len(page)) {
					t.Fatalf("thread search: X-Pagination-Next %q; want %d", next, len(page))
				}
			}
			for _, th := range page {
				got[th.ThreadID] = true
			}
			if h.Get(server.TruncatedHeader) == "" {
				break
			}
			offset += len(page)
		}
		if len(got) != 6 {
			t.Fatalf("paged thread search: %d threads; want 6", len(got))
		}
	})

	t.Run("runs", func(t *testing.T) {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
		for range 6 {
			if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs/wait", map[string]any{"assistant_id": "fail", "input": humanInput(big)}, nil, nil); code != 200 {
				t.Fatalf("run: %d", code)
			}
		}
		got := map[string]bool{}
		for offset := 0; ; {
			_, h, b := call(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs?limit=100&offset="+strconv.Itoa(offset), nil)
			var page []struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal(b, &page); err != nil {
				t.Fatal(err)
			}
			if offset == 0 {
				checkCut(t, "runs", h, b, len(page), 6)
			}
			for _, r := range page {
				got[r.RunID] = true
			}
			if h.Get(server.TruncatedHeader) == "" {
				break
			}
			offset += len(page)
		}
		if len(got) != 6 {
			t.Fatalf("paged runs: %d runs; want 6", len(got))
		}
	})

	t.Run("store search", func(t *testing.T) {
		for i := range 6 {
			if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"big"}, "key": strconv.Itoa(i), "value": map[string]string{"pad": big}}, nil, nil); code != http.StatusNoContent {
				t.Fatalf("put: %d", code)
			}
		}
		got := map[string]bool{}
		for offset := 0; ; {
			_, h, b := call(t, "POST", ts.URL+"/store/items/search", map[string]any{"namespace_prefix": []string{"big"}, "limit": 100, "offset": offset})
			var page struct {
				Items []struct {
					Key string `json:"key"`
				} `json:"items"`
			}
			if err := json.Unmarshal(b, &page); err != nil {
				t.Fatal(err)
			}
			if offset == 0 {
				checkCut(t, "store search", h, b, len(page.Items), 6)
			}
			for _, it := range page.Items {
				got[it.Key] = true
			}
			if h.Get(server.TruncatedHeader) == "" {
				break
			}
			offset += len(page.Items)
		}
		if len(got) != 6 {
			t.Fatalf("paged store search: %d items; want 6", len(got))
		}
	})
}

// TestCopyRefusedPastMaxCopyBytes: a thread whose checkpoints store more
// than Config.MaxCopyBytes is not copied (422 naming the bound), and the
// refusal leaves no thread behind; a smaller thread copies.
func TestCopyRefusedPastMaxCopyBytes(t *testing.T) {
	ts := newTestServer(t, server.Config{MaxCopyBytes: 4000})
	tid, _ := interruptedThread(t, ts.URL, nil)
	var e struct{ Detail string }
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/copy", nil, nil, &e); code != 200 {
		t.Fatalf("copy of a small thread: %d %q", code, e.Detail)
	}
	for range 5 {
		if code := do(t, "POST", ts.URL+"/threads/"+tid+"/state", map[string]any{"values": map[string]any{"approved": strings.Repeat("y", 1000)}}, nil, nil); code != 200 {
			t.Fatalf("update state: %d", code)
		}
	}
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/copy", nil, nil, &e); code != 422 || !strings.Contains(e.Detail, "Config.MaxCopyBytes") {
		t.Fatalf("copy of a thread past MaxCopyBytes: %d %q; want 422 naming Config.MaxCopyBytes", code, e.Detail)
	}
	if n := threadCount(t, ts.URL, nil); n != 2 {
		t.Fatalf("threads after a refused copy: %d; want 2 (the thread and its first copy)", n)
	}
}

// TestStoreItemBytesPerPrincipal: a principal's puts past
// Config.MaxItemBytes are refused with 429 naming it, whatever the count
// of its items; another principal is not affected, a smaller
// replacement is taken, and a delete gives its bytes back.
func TestStoreItemBytesPerPrincipal(t *testing.T) {
	cfg, alice, bob := aliceBob()
	cfg.Items = memory.NewInMemoryItems(memory.InMemoryItemsConfig{})
	cfg.MaxItemBytes = 3000
	ts := newTestServer(t, cfg)
	put := func(h http.Header, key string, n int) (int, string) {
		var e struct{ Detail string }
		code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": key, "value": map[string]string{"pad": strings.Repeat("p", n)}}, h, &e)
		return code, e.Detail
	}
	for _, k := range []string{"k1", "k2"} {
		if code, d := put(alice, k, 1000); code != http.StatusNoContent {
			t.Fatalf("alice's %s: %d %q", k, code, d)
		}
	}
	if code, d := put(alice, "k3", 1000); code != http.StatusTooManyRequests || !strings.Contains(d, "Config.MaxItemBytes") {
		t.Fatalf("alice's item past her bytes: %d %q; want 429 naming Config.MaxItemBytes", code, d)
	}
	if code, d := put(alice, "k2", 500); code != http.StatusNoContent {
		t.Fatalf("alice's smaller replacement: %d %q; want 204", code, d)
	}
	if code, d := put(bob, "k1", 2000); code != http.StatusNoContent {
		t.Fatalf("bob's item while alice is at her bound: %d %q; want 204", code, d)
	}
	if code, d := put(alice, "k3", 1500); code != http.StatusTooManyRequests {
		t.Fatalf("alice's item still past her bytes: %d %q; want 429", code, d)
	}
	if code := do(t, "DELETE", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k1"}, alice, nil); code != http.StatusNoContent {
		t.Fatalf("alice's delete: %d", code)
	}
	if code, d := put(alice, "k3", 1500); code != http.StatusNoContent {
		t.Fatalf("alice's item once she deleted one: %d %q; want 204", code, d)
	}
}

// TestStoreItemBytesCountStoredValue: Config.MaxItemBytes counts a value
// as the store keeps it, not the request's text: a value sent with many
// spaces, which the store drops, leaves room for the principal's next
// items.
func TestStoreItemBytesCountStoredValue(t *testing.T) {
	cfg, alice, _ := aliceBob()
	cfg.Items = memory.NewInMemoryItems(memory.InMemoryItemsConfig{})
	cfg.MaxItemBytes = 3000
	ts := newTestServer(t, cfg)
	body := `{"namespace": ["a"], "key": "spaced", "value": {"pad": "p"` + strings.Repeat(" ", 2500) + `}}`
	req, err := http.NewRequest("PUT", ts.URL+"/store/items", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = alice.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("put of a spaced value: %d", resp.StatusCode)
	}
	var e struct{ Detail string }
	if code := do(t, "PUT", ts.URL+"/store/items", map[string]any{"namespace": []string{"a"}, "key": "k", "value": map[string]string{"pad": strings.Repeat("p", 2000)}}, alice, &e); code != http.StatusNoContent {
		t.Fatalf("put of 2000 bytes beside a value stored in ~13: %d %q; want 204 (the spaces counted?)", code, e.Detail)
	}
}
