package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
)

// wholeLogStore is a memory store that counts the reads of whole event
// logs (Events from the start, without a limit).
type wholeLogStore struct {
	*server.MemoryStore
	whole atomic.Int32
}

func (s *wholeLogStore) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	if after < 0 && limit <= 0 {
		s.whole.Add(1)
	}
	return s.MemoryStore.Events(ctx, runID, after, limit)
}

// TestJoinStreamWithoutLastEventIDReadsNoLog: a join of a run's stream
// without Last-Event-ID (live events only) finds where the log ends with
// the store's LastEventIDReader, without reading the log, and still ends
// with the run's end event.
func TestJoinStreamWithoutLastEventIDReadsNoLog(t *testing.T) {
	st := &wholeLogStore{MemoryStore: server.NewMemoryStore()}
	ts := newTestServer(t, server.Config{Store: st})
	tid, rid := interruptedThread(t, ts.URL, nil)
	st.whole.Store(0)
	resp, err := http.Get(ts.URL + "/threads/" + tid + "/runs/" + rid + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	if len(evs) == 0 || evs[len(evs)-1].Name != "end" {
		t.Fatalf("join of an ended run: %+v; want its end event", evs)
	}
	if n := st.whole.Load(); n != 0 {
		t.Fatalf("the join read the whole event log %d times; want none (LastEventIDReader)", n)
	}
}

// TestLastEventIDClippedInError: a Last-Event-ID the server refuses is
// quoted clipped in the 422, not echoed whole.
func TestLastEventIDClippedInError(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, rid := interruptedThread(t, ts.URL, nil)
	req, _ := http.NewRequest("GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
	req.Header.Set("Last-Event-ID", strings.Repeat("z", 60000))
	var e struct{ Detail string }
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := decodeJSON(resp, &e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 422 || !strings.HasPrefix(e.Detail, "Last-Event-ID: ") || len(e.Detail) > 400 {
		t.Fatalf("a 60 KB Last-Event-ID: %d, a detail of %d bytes; want 422 naming Last-Event-ID, the value clipped", resp.StatusCode, len(e.Detail))
	}
}

// heldSearchStore is a memory store whose first thread search waits, once
// it has said so on entered, until release is closed.
type heldSearchStore struct {
	*server.MemoryStore
	held             atomic.Bool
	entered, release chan struct{}
}

func (s *heldSearchStore) SearchThreads(ctx context.Context, q server.ThreadQuery) ([]*server.Thread, int, error) {
	if s.held.CompareAndSwap(false, true) {
		close(s.entered)
		<-s.release
	}
	return s.MemoryStore.SearchThreads(ctx, q)
}

// TestMaxReadsPerPrincipal: a principal's list reads past Config.MaxReads
// at once are answered 429 naming it; another principal's are served,
// and so is the principal's next read once the first ended.
func TestMaxReadsPerPrincipal(t *testing.T) {
	st := &heldSearchStore{MemoryStore: server.NewMemoryStore(), entered: make(chan struct{}), release: make(chan struct{})}
	cfg, alice, bob := aliceBob()
	cfg.Store, cfg.MaxReads = st, 1
	ts := newTestServer(t, cfg)
	released := false
	release := func() {
		if !released {
			released = true
			close(st.release)
		}
	}
	defer release() // before the server's cleanup, even when the test fails
	// A thread of alice's with a run and a checkpoint, and one of bob's.
	tid, cid, rid := statefulThread(t, ts.URL, alice)
	bobTID, _, _ := statefulThread(t, ts.URL, bob)
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.URL+"/threads/search", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header["X-Api-Key"] = alice["X-Api-Key"]
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-st.entered
	if code, body := raw(t, "POST", ts.URL+"/threads/search", `{}`, map[string]string{"X-Api-Key": "key-a-0123456789"}); code != http.StatusTooManyRequests || !strings.Contains(body, "Config.MaxReads") {
		t.Errorf("alice's second search at once: %d %s; want 429 naming Config.MaxReads", code, body)
	}
	if code := do(t, "GET", ts.URL+"/threads/"+"00000000-0000-0000-0000-000000000000"+"/history", nil, alice, nil); code != http.StatusTooManyRequests {
		t.Errorf("alice's history at once: %d; want 429", code)
	}
	// The reads of one state, thread or run, however large, count too.
	for _, rd := range [][3]string{
		{"GET", "/threads/" + tid + "/state", ""},
		{"GET", "/threads/" + tid + "/state/" + cid, ""},
		{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"` + cid + `"}}`},
		{"GET", "/threads/" + tid, ""},
		{"GET", "/threads/" + tid + "/runs/" + rid, ""},
		// HEAD is served (and computed) as GET.
		{"HEAD", "/threads/" + tid + "/state", ""},
		{"HEAD", "/threads/" + tid, ""},
		{"HEAD", "/threads/" + tid + "/history", ""},
		{"HEAD", "/threads/" + tid + "/runs/" + rid, ""},
		// Writes that answer the thread's values.
		{"PATCH", "/threads/" + tid, `{"metadata":{"k":"v"}}`},
		{"POST", "/threads/" + tid + "/copy", `{}`},
		{"POST", "/threads", `{"thread_id":"` + tid + `","if_exists":"do_nothing"}`},
	} {
		if code, body := raw(t, rd[0], ts.URL+rd[1], rd[2], map[string]string{"X-Api-Key": "key-a-0123456789"}); code != http.StatusTooManyRequests || rd[0] != "HEAD" && !strings.Contains(body, "Config.MaxReads") {
			t.Errorf("alice's %s %s at once: %d %s; want 429 naming Config.MaxReads", rd[0], rd[1], code, body)
		}
		var body any
		if rd[2] != "" {
			body = json.RawMessage(rd[2])
		}
		if code := do(t, rd[0], ts.URL+strings.Replace(rd[1], tid, bobTID, 1), body, bob, nil); code == http.StatusTooManyRequests {
			t.Errorf("bob's %s %s meanwhile: 429; want it served", rd[0], rd[1])
		}
	}
	// Requests that read no large state are not counted.
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, alice, nil); code != 200 {
		t.Errorf("alice's thread creation meanwhile: %d; want 200", code)
	}
	if code := do(t, "POST", ts.URL+"/threads/search", map[string]any{}, bob, nil); code != 200 {
		t.Errorf("bob's search meanwhile: %d; want 200", code)
	}
	release()
	if code := <-first; code != 200 {
		t.Fatalf("alice's first search: %d; want 200", code)
	}
	if code := do(t, "POST", ts.URL+"/threads/search", map[string]any{}, alice, nil); code != 200 {
		t.Errorf("alice's search once the first ended: %d; want 200", code)
	}
}

// statefulThread creates a thread of the principal h names with one run
// of the agent assistant, and returns the thread's, its last
// checkpoint's and the run's ids.
func statefulThread(t *testing.T, url string, h http.Header) (tid, cid, rid string) {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", url+"/threads", map[string]any{}, h, &th); code != 200 {
		t.Fatalf("creating a thread: %d", code)
	}
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", url+"/threads/"+th.ThreadID+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("hi")}, h, &run); code != 200 {
		t.Fatalf("creating a run: %d", code)
	}
	if code := do(t, "GET", url+"/threads/"+th.ThreadID+"/runs/"+run.RunID+"/join", nil, h, nil); code != 200 {
		t.Fatalf("joining the run: %d", code)
	}
	var st struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if code := do(t, "GET", url+"/threads/"+th.ThreadID+"/state", nil, h, &st); code != 200 || st.Checkpoint.CheckpointID == "" {
		t.Fatalf("reading the state: %d %+v", code, st)
	}
	return th.ThreadID, st.Checkpoint.CheckpointID, run.RunID
}
