package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// smallSendBuffers gives each accepted connection a small send buffer, so
// that a client that stops reading blocks the server's writes soon.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// floodServer serves, with MaxStreams 1 and a StreamWriteTimeout of
// 100 ms, on a listener whose connections have small send buffers
// (smallSendBuffers), the graphs "flood" (one node that emits 2 MiB of
// custom events, then, when hold is not nil, waits until hold is closed,
// and approves "flooded") and "quick" (approves "quick" at once).
func floodServer(t *testing.T, hold <-chan struct{}) *httptest.Server {
	t.Helper()
	srv, err := server.New(server.Config{MaxStreams: 1, StreamWriteTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[chat]()
	pad := strings.Repeat("x", 64<<10)
	g.AddNode("flood", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		for i := range 32 { // 2 MiB of events, far beyond the buffers
			if err := graph.Emit(ctx, map[string]string{"i": fmt.Sprint(i), "pad": pad}); err != nil {
				return graph.Update[chat]{}, err
			}
		}
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return graph.Update[chat]{}, ctx.Err()
			}
		}
		return chatApproved.Set("flooded"), nil
	})
	g.AddEdge(graph.START, "flood").AddEdge("flood", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "flood", app); err != nil {
		t.Fatal(err)
	}
	q := graph.New[chat]()
	q.AddNode("quick", func(ctx context.Context, s chat) (graph.Update[chat], error) { return chatApproved.Set("quick"), nil })
	q.AddEdge(graph.START, "quick").AddEdge("quick", graph.END)
	quick, err := q.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "quick", quick); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = smallSendBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return hs
}

// stalledClient POSTs body (JSON) to path on hs and reads nothing: its
// receive buffer is small, and its connection stays open until the test
// ends.
func stalledClient(t *testing.T, hs *httptest.Server, path, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		path, hs.Listener.Addr(), len(body), body); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestStalledStreamEnds: a client that creates a run with /runs/stream
// and stops reading fills the connection's buffers; the write that then
// waits past Config.StreamWriteTimeout ends its stream, which gives its
// slot back (with MaxStreams 1, a second stream is served), and the run
// goes on to its end.
func TestStalledStreamEnds(t *testing.T) {
	hs := floodServer(t, nil)
	tid := newThread(t, hs.URL)
	conn := stalledClient(t, hs, "/threads/"+tid+"/runs/stream", `{"assistant_id":"flood","input":{},"stream_mode":["custom","values"]}`)

	// Wait until its stream slot is free: a second stream is served
	// instead of answered 429. (Polling: the stream ends when its write
	// times out; the bound only fails the test when it never does.)
	var runs []struct {
		RunID string `json:"run_id"`
	}
	var resp *http.Response
	waitUntil(t, "the stalled stream to give back its slot (MaxStreams 1)", func() bool {
		if len(runs) == 0 {
			do(t, "GET", hs.URL+"/threads/"+tid+"/runs", nil, nil, &runs)
		}
		if len(runs) != 1 {
			return false
		}
		var err error
		resp, err = http.Get(hs.URL + "/threads/" + tid + "/runs/" + runs[0].RunID + "/stream?stream_mode=values")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return true
		}
		resp.Body.Close()
		return false
	})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the second stream: %d; want 200", resp.StatusCode)
	}
	// The second stream follows the run to its end, which went on.
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = d
		}
	}
	var run struct {
		Status string `json:"status"`
	}
	do(t, "GET", hs.URL+"/threads/"+tid+"/runs/"+runs[0].RunID, nil, nil, &run)
	if run.Status != "success" {
		t.Errorf("the run after its stream stalled: %s (last event %.200s); want success", run.Status, last)
	}
	var th struct {
		Values chat `json:"values"`
	}
	do(t, "GET", hs.URL+"/threads/"+tid, nil, nil, &th)
	if th.Values.Approved != "flooded" {
		t.Errorf("thread values: %+v; want approved flooded", th.Values)
	}
	_, _ = io.Copy(io.Discard, conn) // the server closed it: read what it sent
}

// TestStalledStatelessStreamGivesBackItsSlot: a stateless /runs/stream
// (on_completion delete) whose client stops reading ends when a write
// waits past Config.StreamWriteTimeout, and gives back its MaxStreams
// slot then, while its run still runs; it held the slot until the run
// ended (the handler waited there to delete the run's thread). What the
// run does next follows on_disconnect: with cancel (the default) it is
// cancelled, as no one can read it, and its thread goes; with continue
// it runs to its end, and its thread goes then.
func TestStalledStatelessStreamGivesBackItsSlot(t *testing.T) {
	for _, onDisconnect := range []string{"", "continue"} {
		t.Run("on_disconnect="+onDisconnect, func(t *testing.T) {
			release := make(chan struct{})
			hs := floodServer(t, release)
			releaseNode := sync.OnceFunc(func() { close(release) })
			t.Cleanup(releaseNode) // before the server closes
			body := `{"assistant_id":"flood","input":{},"stream_mode":["custom"]`
			if onDisconnect != "" {
				body += `,"on_disconnect":"` + onDisconnect + `"`
			}
			body += `}`
			conn := stalledClient(t, hs, "/runs/stream", body)

			// The run's thread and the run, found by search.
			var tid, rid string
			waitUntil(t, "the stateless run", func() bool {
				var found []struct {
					ThreadID string `json:"thread_id"`
				}
				do(t, "POST", hs.URL+"/threads/search", map[string]any{}, nil, &found)
				if len(found) == 1 {
					var runs []struct {
						RunID string `json:"run_id"`
					}
					do(t, "GET", hs.URL+"/threads/"+found[0].ThreadID+"/runs", nil, nil, &runs)
					if len(runs) == 1 {
						tid, rid = found[0].ThreadID, runs[0].RunID
					}
				}
				return rid != ""
			})

			// The slot comes back while the run is still held by its node
			// (release is not closed yet): another waiting request of the
			// principal is served instead of answered 429. (Polling: the
			// stream ends when a write times out; the bound only fails the
			// test when the slot never comes back.)
			waitForSlot(t, hs.URL, `{"assistant_id":"quick","input":{}}`, "the stalled stateless stream to give back its slot (MaxStreams 1) while its run runs")
			if onDisconnect == "continue" {
				var run struct {
					Status string `json:"status"`
				}
				if code := do(t, "GET", hs.URL+"/threads/"+tid+"/runs/"+rid, nil, nil, &run); code != 200 || run.Status != "running" {
					t.Fatalf("the run after its stream stalled (on_disconnect continue): %d %s; want running", code, run.Status)
				}
				releaseNode()
			}
			// Cancelled (on_disconnect cancel) or ended (continue), the run's
			// thread goes.
			waitThreadGone(t, hs.URL, tid, rid)
			_, _ = io.Copy(io.Discard, conn)
		})
	}
}
