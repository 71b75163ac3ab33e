package server_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentgraph/agentgraph/agent/server"

	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
)

// meetingStore holds the answer of each thread count (SearchThreads)
// until another count has been made too, or until a pause passes: two
// creations that count concurrently both see the count before either
// creates.
type meetingStore struct {
	server.Store
	mu      sync.Mutex
	inside  int
	met     bool
	arrived chan struct{}
}

func (m *meetingStore) SearchThreads(ctx context.Context, q server.ThreadQuery) ([]*server.Thread, int, error) {
	ts, n, err := m.Store.SearchThreads(ctx, q)
	m.mu.Lock()
	m.inside++
	if m.inside == 2 && !m.met {
		m.met = true
		close(m.arrived)
	}
	ch := m.arrived
	m.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(200 * time.Millisecond):
	}
	m.mu.Lock()
	m.inside--
	m.mu.Unlock()
	return ts, n, err
}

// TestMaxThreadsUnderConcurrentCreates creates threads concurrently for a
// principal with Config.MaxThreads 1, through each way of creating one
// (POST /threads, a stateless run, if_not_exists create): one is created,
// the others are refused with 429, even when their counts run at once.
func TestMaxThreadsUnderConcurrentCreates(t *testing.T) {
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	ways := map[string]func(url string) (string, any){
		"threads": func(url string) (string, any) { return url + "/threads", map[string]any{} },
		"stateless run": func(url string) (string, any) {
			return url + "/runs", map[string]any{"assistant_id": "agent", "input": input, "on_completion": "keep"}
		},
		"if_not_exists": func(url string) (string, any) {
			return url + "/threads/" + uuid.NewString() + "/runs", map[string]any{"assistant_id": "agent", "input": input, "if_not_exists": "create"}
		},
	}
	for name, way := range ways {
		t.Run(name, func(t *testing.T) {
			st := &meetingStore{Store: server.NewMemoryStore(), arrived: make(chan struct{})}
			s := newTestServer(t, server.Config{Store: st, MaxThreads: 1})
			const creates = 4
			codes := make(chan int, creates)
			var wg sync.WaitGroup
			for range creates {
				wg.Add(1)
				go func() {
					defer wg.Done()
					url, body := way(s.URL)
					codes <- do(t, "POST", url, body, nil, nil)
				}()
			}
			wg.Wait()
			close(codes)
			created, refused := 0, 0
			for c := range codes {
				switch c {
				case http.StatusOK:
					created++
				case http.StatusTooManyRequests:
					refused++
				default:
					t.Errorf("a create answered %d", c)
				}
			}
			if created != 1 || refused != creates-1 {
				t.Fatalf("%d creates at once with MaxThreads 1: %d created, %d refused; want 1 and %d", creates, created, refused, creates-1)
			}
		})
	}
}

// TestThreadFilterKeysAreBounded: a thread search or count filtering on
// more than server.MaxFilterKeys metadata or values keys, or a history
// on more metadata keys, is refused naming the field. (On PostgreSQL each key is a condition of the query,
// whose cost grew faster than their number: in one ad-hoc measurement a
// filter of 5000 keys took 2.7 s, one of 20000 keys (1 MB) tens of
// seconds.)
func TestThreadFilterKeysAreBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	filter := func(n int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprint("k", i)] = "v"
		}
		return m
	}
	tid, _ := interruptedThread(t, ts.URL, nil)
	for path, fields := range map[string][]string{"/threads/search": {"metadata", "values"}, "/threads/count": {"metadata", "values"}, "/threads/" + tid + "/history": {"metadata"}} {
		for _, field := range fields {
			var e struct{ Detail string }
			if code := do(t, "POST", ts.URL+path, map[string]any{field: filter(server.MaxFilterKeys + 1)}, nil, &e); code != 422 || !strings.HasPrefix(e.Detail, field+": ") {
				t.Errorf("%s with %d %s keys: %d %q; want 422 naming %s", path, server.MaxFilterKeys+1, field, code, e.Detail, field)
			}
			if code := do(t, "POST", ts.URL+path, map[string]any{field: filter(server.MaxFilterKeys)}, nil, nil); code != 200 {
				t.Errorf("%s with %d %s keys: %d; want 200", path, server.MaxFilterKeys, field, code)
			}
		}
	}
}

// TestSelectIsBounded: a select of more than 100 fields is refused naming
// select, in thread and assistant searches and in state and history
// reads. Each field was copied for every thread of the answer: in one
// ad-hoc measurement (on a loaded machine), a 1 MB thread search
// selecting "values" 100000 times over 1000 threads took 40 s.
func TestSelectIsBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, _ := interruptedThread(t, ts.URL, nil)
	repeat := func(n int, f func(i int) string) []string {
		sel := make([]string, n)
		for i := range sel {
			sel[i] = f(i)
		}
		return sel
	}
	values := func(int) string { return "values" }
	valueKeys := func(i int) string { return fmt.Sprint("values.k", i) }
	for _, tc := range []struct {
		path string
		body func(n int) any
	}{
		{"/threads/search", func(n int) any { return map[string]any{"select": repeat(n, values)} }},
		{"/assistants/search", func(n int) any { return map[string]any{"select": repeat(n, func(int) string { return "name" })} }},
		{"/threads/" + tid + "/history", func(n int) any { return map[string]any{"select": repeat(n, valueKeys)} }},
		{"/threads/" + tid + "/state/checkpoint", func(n int) any {
			return map[string]any{"checkpoint": map[string]any{"checkpoint_id": ""}, "select": repeat(n, valueKeys)}
		}},
	} {
		b, _ := json.Marshal(tc.body(101))
		if code, body := raw(t, "POST", ts.URL+tc.path, string(b), nil); code != 422 || !strings.Contains(body, `"select: 101 fields`) {
			t.Errorf("%s with 101 selected: %d %.200s; want 422 naming select", tc.path, code, body)
		}
		if code := do(t, "POST", ts.URL+tc.path, tc.body(100), nil, nil); code != 200 {
			t.Errorf("%s with 100 selected: %d; want 200", tc.path, code)
		}
	}
	q := strings.Join(repeat(101, valueKeys), ",")
	if code, body := raw(t, "GET", ts.URL+"/threads/"+tid+"/state?select="+q, "", nil); code != 422 || !strings.Contains(body, "select: 101 fields") {
		t.Errorf("GET state with 101 selected: %d %s; want 422 naming select", code, body)
	}
}

// TestSlowBodyIsCutOff sends a request whose body never finishes arriving
// (a slowloris client): the server answers 408 naming Config.BodyTimeout
// and closes the connection, instead of holding it, and its goroutine,
// for as long as the client trickles.
func TestSlowBodyIsCutOff(t *testing.T) {
	ts := newTestServer(t, server.Config{BodyTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST /threads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	// The test's own bound, far beyond the server's: without the server's
	// bound the read below fails here.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body that never arrives: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "BodyTimeout") {
		t.Fatalf("slow body: %d %s; want 408 naming Config.BodyTimeout", resp.StatusCode, b)
	}
	// A body sent at once is still read, after the bound has passed for
	// the connection that trickled.
	var th map[string]any
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 || th["thread_id"] == nil {
		t.Fatalf("create thread: %d %v", code, th)
	}
}

// TestStreamsPerPrincipalAreBounded holds Config.MaxStreams streams of one
// principal open on a run that waits: one more stream or wait of hers is
// refused with 429, another principal's is served, and once her streams
// end she may open another.
func TestStreamsPerPrincipalAreBounded(t *testing.T) {
	cfg, alice, bob := aliceBob()
	cfg.MaxStreams, cfg.Heartbeat = 2, 50*time.Millisecond
	ts := newTestServer(t, cfg)
	var th map[string]any
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, alice, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	tid := th["thread_id"].(string)
	var run map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"messages": []msg{{Content: "x"}}}}, alice, &run); code != 200 {
		t.Fatalf("create run: %d %v", code, run)
	}
	rid := run["run_id"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(h http.Header, path string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, "GET", ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Two joins of alice's run, held open while it waits.
	var held []*http.Response
	for _, p := range []string{"/stream", "/join"} {
		resp := open(alice, "/threads/"+tid+"/runs/"+rid+p)
		if resp.StatusCode != 200 {
			t.Fatalf("alice's join %s: %d", p, resp.StatusCode)
		}
		held = append(held, resp)
	}
	// Join, stream and wait are each one too many for alice.
	for _, c := range []struct{ method, path string }{
		{"GET", "/threads/" + tid + "/runs/" + rid + "/stream"},
		{"POST", "/runs/wait"},
		{"POST", "/threads/" + tid + "/runs/stream"},
	} {
		// Read the answer's head only: a stream served by mistake would
		// not end while the run waits.
		req, err := http.NewRequestWithContext(ctx, c.method, ts.URL+c.path, strings.NewReader(`{"assistant_id": "agent", "input": {}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", "key-a-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		if resp.StatusCode == 429 {
			b, _ = io.ReadAll(resp.Body)
		}
		resp.Body.Close()
		if resp.StatusCode != 429 || !strings.Contains(string(b), "MaxStreams") {
			t.Fatalf("alice's third stream %s %s: %d %s; want 429 naming Config.MaxStreams", c.method, c.path, resp.StatusCode, b)
		}
	}
	// Bob's streams are his own: his run waits on nothing of alice's.
	var out map[string]any
	if code := do(t, "POST", ts.URL+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Content: "hi"}}}}, bob, &out); code != 200 {
		t.Fatalf("bob's wait: %d %v", code, out)
	}
	// The run ends, alice's streams end with it, and she may stream again.
	ts.gates.release(tid)
	for _, resp := range held {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/join", nil, alice, &out); code != 200 {
		t.Fatalf("alice's join after her streams ended: %d %v", code, out)
	}
}

// TestMaxActiveRuns: a principal with Config.MaxActiveRuns runs pending
// or running is refused another (429 naming the bound), on any of its
// threads, stateless or not (a refused stateless run leaves no thread;
// /runs/wait and /runs/stream are created by the same path as /runs);
// another principal is not; once a run ends the principal may create one
// again. On the memory and SQLite stores.
func TestMaxActiveRuns(t *testing.T) {
	stores := map[string]func(t *testing.T) server.Store{
		"memory": func(*testing.T) server.Store { return server.NewMemoryStore() },
		"sqlite": func(t *testing.T) server.Store {
			st, err := server.OpenSQLite(t.Context(), ":memory:")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			ts := newTestServer(t, server.Config{Store: st, MaxActiveRuns: 2,
				Authenticate: apiKeys(t, map[string]string{"key-a-0123456789": "alice", "key-b-0123456789": "bob"})})
			alice := http.Header{"X-Api-Key": {"key-a-0123456789"}}
			bob := http.Header{"X-Api-Key": {"key-b-0123456789"}}
			newThread := func(h http.Header) string {
				var th map[string]any
				if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, h, &th); code != 200 {
					t.Fatalf("POST /threads: %d", code)
				}
				return th["thread_id"].(string)
			}
			slow := map[string]any{"assistant_id": "slow", "input": humanInput("x")}
			t1, t2 := newThread(alice), newThread(alice)
			var r1 map[string]any
			if code := do(t, "POST", ts.URL+"/threads/"+t1+"/runs", slow, alice, &r1); code != 200 {
				t.Fatalf("first run: %d", code)
			}
			t.Cleanup(func() { ts.gates.release(t1) })
			if code := do(t, "POST", ts.URL+"/threads/"+t2+"/runs", slow, alice, nil); code != 200 {
				t.Fatalf("second run: %d", code)
			}
			t.Cleanup(func() { ts.gates.release(t2) })
			for _, path := range []string{"/threads/" + t1 + "/runs", "/threads/" + t2 + "/runs", "/runs"} {
				var e struct{ Detail string }
				if code := do(t, "POST", ts.URL+path, slow, alice, &e); code != http.StatusTooManyRequests || !strings.Contains(e.Detail, "Config.MaxActiveRuns") {
					t.Errorf("POST %s past MaxActiveRuns: %d %q; want 429 naming Config.MaxActiveRuns", path, code, e.Detail)
				}
			}
			if _, n, err := st.SearchThreads(t.Context(), server.ThreadQuery{Owner: "alice"}); err != nil || n != 2 {
				t.Errorf("alice has %d threads (%v) after the refused stateless runs; want her 2", n, err)
			}
			tb := newThread(bob)
			if code := do(t, "POST", ts.URL+"/threads/"+tb+"/runs", map[string]any{"assistant_id": "agent", "input": humanInput("x")}, bob, nil); code != 200 {
				t.Errorf("bob's run while alice is at her bound: %d; want 200", code)
			}
			ts.gates.release(t1)
			var end map[string]any
			do(t, "GET", ts.URL+"/threads/"+t1+"/runs/"+r1["run_id"].(string)+"/join", nil, alice, &end)
			if code := do(t, "POST", ts.URL+"/threads/"+t1+"/runs", slow, alice, nil); code != 200 {
				t.Errorf("alice's run once one of hers ended: %d; want 200", code)
			}
		})
	}
}

// searchCountingStore is a SQLite store that counts its SearchThreads
// calls.
type searchCountingStore struct {
	*server.SQLiteStore
	mu       sync.Mutex
	searches int
}

func (s *searchCountingStore) SearchThreads(ctx context.Context, q server.ThreadQuery) ([]*server.Thread, int, error) {
	s.mu.Lock()
	s.searches++
	s.mu.Unlock()
	return s.SQLiteStore.SearchThreads(ctx, q)
}

// TestThreadCreationCountsInTheStore: creating a thread counts the
// principal's threads (Config.MaxThreads) with the store's count, not
// with a search, which on SQLite read and decoded every thread of the
// principal (0.7 s per creation at 10,000 threads).
func TestThreadCreationCountsInTheStore(t *testing.T) {
	sq, err := server.OpenSQLite(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	st := &searchCountingStore{SQLiteStore: sq}
	ts := newTestServer(t, server.Config{Store: st, MaxThreads: 2})
	for i := range 3 {
		var e struct{ Detail string }
		code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &e)
		if want := map[bool]int{true: 200, false: 429}[i < 2]; code != want {
			t.Fatalf("thread %d: %d %q; want %d", i+1, code, e.Detail, want)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.searches != 0 {
		t.Fatalf("thread creations searched the store's threads %d times; want a count (OwnerCounter)", st.searches)
	}
}
