package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

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
	ts := newTestServer(t, server.Config{MaxStreams: 2, Heartbeat: 50 * time.Millisecond, Authenticate: server.APIKeys(map[string]string{"key-a": "alice", "key-b": "bob"})})
	alice := http.Header{"X-Api-Key": {"key-a"}}
	bob := http.Header{"X-Api-Key": {"key-b"}}
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
		req.Header.Set("X-Api-Key", "key-a")
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

// TestLastEventIDAtTheEndOfTheRange joins an ended run's stream with the
// largest Last-Event-ID there is: it is refused with 422, where it used to
// wrap around (after+1) and replay the whole log with a false report that
// the log had restarted. The id below it names no event yet, so the stream
// ends empty.
func TestLastEventIDAtTheEndOfTheRange(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th map[string]any
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	var run map[string]any
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "slow", "input": map[string]any{"messages": []msg{{Content: "x"}}}}, nil, &run); code != 200 {
		t.Fatalf("create run: %d %v", code, run)
	}
	rid := run["run_id"].(string)
	ts.gates.release(tid)
	var out map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/join", nil, nil, &out); code != 200 {
		t.Fatalf("join: %d", code)
	}
	get := func(id string) (int, string) {
		req, _ := http.NewRequest("GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
		req.Header.Set("Last-Event-ID", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := get("9223372036854775807"); code != 422 || !strings.Contains(b, "Last-Event-ID") {
		t.Fatalf("Last-Event-ID 2^63-1: %d %s; want 422 naming Last-Event-ID", code, b)
	}
	if code, b := get("9223372036854775806"); code != 200 || strings.Contains(b, "event:") {
		t.Fatalf("Last-Event-ID 2^63-2: %d %s; want an empty stream", code, b)
	}
}

// TestCrossSiteRequestWithoutOrigin: browsers send no Origin with a
// cross-site GET of an <img>, a <script> or a no-cors fetch, but say
// Sec-Fetch-Site: cross-site. Such a request is refused, so that a page of
// another site cannot act on a loopback server without authentication
// (a join with cancel_on_disconnect cancels the run when the page drops
// it); the same request from the same site, or from a client that is not
// a browser, is served.
func TestCrossSiteRequestWithoutOrigin(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th map[string]any
	do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th)
	tid := th["thread_id"].(string)
	for _, c := range []struct {
		site string
		want int
	}{{"cross-site", 403}, {"same-origin", 200}, {"none", 200}, {"", 200}} {
		var h http.Header
		if c.site != "" {
			h = http.Header{"Sec-Fetch-Site": {c.site}}
		}
		var e map[string]any
		if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, h, &e); code != c.want {
			t.Errorf("GET with Sec-Fetch-Site %q and no Origin: %d %v; want %d", c.site, code, e, c.want)
		} else if code == 403 && !strings.Contains(fmt.Sprint(e["detail"]), "Sec-Fetch-Site") {
			t.Errorf("refusal does not name Sec-Fetch-Site: %v", e)
		}
	}
	// With an Origin the origin rule decides: a loopback page is served.
	if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://localhost:3000"}}, nil); code != 200 {
		t.Errorf("cross-site GET from a loopback page: %d; want 200", code)
	}
}

// TestRunListPagesAreBounded: a thread's run list comes in pages of at
// most 1000 runs; limit=0, which used to return every run of the thread,
// and a limit past the bound are refused naming limit.
func TestRunListPagesAreBounded(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	var th map[string]any
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	tid := th["thread_id"].(string)
	for range 3 {
		var run map[string]any
		if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "agent", "input": map[string]any{"messages": []msg{{Content: "x"}}}}, nil, &run); code != 200 {
			t.Fatalf("run: %d %v", code, run)
		}
	}
	var runs []map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=2", nil, nil, &runs); code != 200 || len(runs) != 2 {
		t.Fatalf("limit=2: %d, %d runs; want 200 and 2", code, len(runs))
	}
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit=2&offset=2", nil, nil, &runs); code != 200 || len(runs) != 1 {
		t.Fatalf("limit=2&offset=2: %d, %d runs; want 200 and 1", code, len(runs))
	}
	for _, limit := range []string{"0", "1001", "-1", "x"} {
		var e map[string]any
		if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs?limit="+limit, nil, nil, &e); code != 422 || !strings.Contains(fmt.Sprint(e), "limit") {
			t.Errorf("limit=%s: %d %v; want 422 naming limit", limit, code, e)
		}
	}
}
