package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestCancelMany: POST /runs/cancel (the JS SDK's runs.cancelMany)
// cancels runs by thread_id and run_ids, or by status, only among the
// caller's runs: another principal's run ids are 404 and their status
// cancel leaves the caller's runs running; a body with neither is 422.
func TestCancelMany(t *testing.T) {
	cfg, alice, bob := aliceBob()
	ts := newTestServer(t, cfg)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	do(t, "POST", ts.URL+"/threads", map[string]any{}, alice, &th)
	tid := th.ThreadID
	start := func() string {
		var run struct {
			RunID string `json:"run_id"`
		}
		if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": humanInput("x"), "multitask_strategy": "enqueue"}, alice, &run); code != 200 {
			t.Fatalf("run: %d", code)
		}
		return run.RunID
	}
	first := start()
	waitUntil(t, "the first run to wait in its node", func() bool { return ts.gates.waiting(tid) })
	second := start()
	status := func(rid string) string {
		var run struct {
			Status string `json:"status"`
		}
		do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid, nil, alice, &run)
		return run.Status
	}
	if code := do(t, "POST", ts.URL+"/runs/cancel", map[string]any{"thread_id": tid, "run_ids": []string{second}}, bob, nil); code != 404 {
		t.Fatalf("bob's cancel of alice's run: %d; want 404", code)
	}
	if code := do(t, "POST", ts.URL+"/runs/cancel", map[string]any{"status": "all"}, bob, nil); code != 204 {
		t.Fatalf("bob's cancel of his runs: %d; want 204", code)
	}
	if s1, s2 := status(first), status(second); s1 != "running" || s2 != "pending" {
		t.Fatalf("alice's runs after bob's cancels: %s, %s; want running, pending", s1, s2)
	}
	if code := do(t, "POST", ts.URL+"/runs/cancel", map[string]any{"thread_id": tid}, alice, nil); code != 422 {
		t.Fatalf("cancel without run_ids or status: %d; want 422", code)
	}
	if code := do(t, "POST", ts.URL+"/runs/cancel", map[string]any{"thread_id": tid, "run_ids": []string{second}}, alice, nil); code != 204 {
		t.Fatalf("cancel by id: %d; want 204", code)
	}
	if s1, s2 := status(first), status(second); s1 != "running" || s2 != "interrupted" {
		t.Fatalf("runs after the cancel of the second: %s, %s; want running, interrupted", s1, s2)
	}
	if code := do(t, "POST", ts.URL+"/runs/cancel?action=interrupt", map[string]any{"status": "running"}, alice, nil); code != 204 {
		t.Fatalf("cancel by status: %d; want 204", code)
	}
	waitUntil(t, "the first run to end interrupted", func() bool { return status(first) == "interrupted" })
}

// TestStatelessJoinStream: GET /runs/{run_id}/stream (the JS SDK's
// joinStream without a thread) streams a stateless run to its principal
// and is 404 to another.
func TestStatelessJoinStream(t *testing.T) {
	cfg, alice, bob := aliceBob()
	ts := newTestServer(t, cfg)
	var run struct {
		RunID    string `json:"run_id"`
		ThreadID string `json:"thread_id"`
	}
	body := map[string]any{"assistant_id": "agent", "input": humanInput("hi"), "on_completion": "keep", "stream_resumable": true}
	if code := do(t, "POST", ts.URL+"/runs", body, alice, &run); code != 200 {
		t.Fatalf("stateless run: %d", code)
	}
	do(t, "GET", ts.URL+"/threads/"+run.ThreadID+"/runs/"+run.RunID+"/join", nil, alice, nil)
	get := func(h http.Header) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/runs/"+run.RunID+"/stream", nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("Last-Event-ID", "-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := get(bob); resp.StatusCode != 404 {
		t.Fatalf("bob's join of alice's run: %d; want 404", resp.StatusCode)
	}
	resp := get(alice)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("alice's join: %d %s; want an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readSSE(t, resp.Body)
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Name)
	}
	if len(evs) == 0 || evs[0].Name != "metadata" || !strings.Contains(strings.Join(names, " "), "values") {
		t.Fatalf("events of the joined run: %v; want its metadata and values", names)
	}
}
