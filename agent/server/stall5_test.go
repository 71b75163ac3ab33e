package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

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
			srv, err := server.New(server.Config{MaxStreams: 1, StreamWriteTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			release := make(chan struct{})
			g := graph.New[chat]()
			pad := strings.Repeat("x", 64<<10)
			g.AddNode("flood", func(ctx context.Context, s chat) (graph.Update[chat], error) {
				for i := range 32 { // 2 MiB of events, far beyond the buffers
					if err := graph.Emit(ctx, map[string]string{"i": fmt.Sprint(i), "pad": pad}); err != nil {
						return graph.Update[chat]{}, err
					}
				}
				select {
				case <-release:
				case <-ctx.Done():
					return graph.Update[chat]{}, ctx.Err()
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
			released := false
			t.Cleanup(func() {
				if !released {
					close(release)
				}
				hs.CloseClientConnections()
				hs.Close()
				if err := srv.Close(context.Background()); err != nil {
					t.Error(err)
				}
			})

			conn, err := net.Dial("tcp", hs.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
			body := `{"assistant_id":"flood","input":{},"stream_mode":["custom"]`
			if onDisconnect != "" {
				body += `,"on_disconnect":"` + onDisconnect + `"`
			}
			body += `}`
			if _, err := fmt.Fprintf(conn, "POST /runs/stream HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				hs.Listener.Addr(), len(body), body); err != nil {
				t.Fatal(err)
			}

			// The run's thread and the run, found by search.
			var tid, rid string
			for end := time.Now().Add(20 * time.Second); rid == ""; {
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
				if time.Now().After(end) {
					t.Fatal("no stateless run after 20 s")
				}
				time.Sleep(5 * time.Millisecond)
			}

			// The slot comes back while the run is still held by its node
			// (release is not closed yet): another waiting request of the
			// principal is served instead of answered 429. (Polling: the
			// stream ends when a write times out; the bound only fails the
			// test when the slot never comes back.)
			for end := time.Now().Add(20 * time.Second); ; {
				code, out := raw(t, "POST", hs.URL+"/runs/wait", `{"assistant_id":"quick","input":{}}`, nil)
				if code == 200 {
					break
				}
				if code != http.StatusTooManyRequests {
					t.Fatalf("a second waiting request: %d %s", code, out)
				}
				if time.Now().After(end) {
					t.Fatal("the stalled stateless stream still holds its slot (MaxStreams 1) after 20 s, while its run runs")
				}
				time.Sleep(10 * time.Millisecond)
			}
			var run struct {
				Status string `json:"status"`
			}
			if onDisconnect == "continue" {
				if code := do(t, "GET", hs.URL+"/threads/"+tid+"/runs/"+rid, nil, nil, &run); code != 200 || run.Status != "running" {
					t.Fatalf("the run after its stream stalled (on_disconnect continue): %d %s; want running", code, run.Status)
				}
				close(release)
				released = true
			}
			// Cancelled (on_disconnect cancel) or ended (continue), the run's
			// thread goes.
			for end := time.Now().Add(20 * time.Second); ; {
				if code := do(t, "GET", hs.URL+"/threads/"+tid, nil, nil, nil); code == 404 {
					break
				}
				if time.Now().After(end) {
					do(t, "GET", hs.URL+"/threads/"+tid+"/runs/"+rid, nil, nil, &run)
					t.Fatalf("the stateless run's thread is still there after 20 s (run %s)", run.Status)
				}
				time.Sleep(10 * time.Millisecond)
			}
			_, _ = io.Copy(io.Discard, conn)
		})
	}
}

// TestLeftStatelessWaitGivesBackItsSlot: a client of a stateless
// /runs/wait with on_disconnect continue that goes away gives back its
// MaxStreams slot at once, while its run goes on; the handler waited for
// the run to end to delete its thread, holding the slot. The thread goes
// when the run ends.
func TestLeftStatelessWaitGivesBackItsSlot(t *testing.T) {
	ts := newTestServer(t, server.Config{MaxStreams: 1})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/runs/wait", strings.NewReader(`{"assistant_id":"slow","input":{"messages":[{"type":"human","content":"x"}]},"on_disconnect":"continue"}`))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			var resp *http.Response
			if resp, err = http.DefaultClient.Do(req); err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		done <- err
	}()
	var tid string
	for end := time.Now().Add(20 * time.Second); tid == "" || !ts.gates.waiting(tid); {
		var found []struct {
			ThreadID string `json:"thread_id"`
		}
		do(t, "POST", ts.URL+"/threads/search", map[string]any{}, nil, &found)
		if len(found) == 1 {
			tid = found[0].ThreadID
		}
		if time.Now().After(end) {
			t.Fatal("the stateless run's node does not wait after 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Let the run go at the end whatever happens, before the server
	// closes (cleanups run last first): a handler that waits for the run
	// would hold the HTTP server's Close.
	t.Cleanup(func() { ts.gates.release(tid) })
	cancel()
	<-done
	for end := time.Now().Add(20 * time.Second); ; {
		code, out := raw(t, "POST", ts.URL+"/runs/wait", `{"assistant_id":"agent","input":{}}`, nil)
		if code == 200 {
			break
		}
		if code != http.StatusTooManyRequests {
			t.Fatalf("a second waiting request: %d %s", code, out)
		}
		if time.Now().After(end) {
			t.Fatal("the left stateless wait still holds its slot (MaxStreams 1) after 20 s, while its run runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var runs []struct {
		Status string `json:"status"`
	}
	if do(t, "GET", ts.URL+"/threads/"+tid+"/runs", nil, nil, &runs); len(runs) != 1 || runs[0].Status != "running" {
		t.Fatalf("the left run (on_disconnect continue): %+v; want running", runs)
	}
	ts.gates.release(tid)
	for end := time.Now().Add(20 * time.Second); ; {
		if code := do(t, "GET", ts.URL+"/threads/"+tid, nil, nil, nil); code == 404 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the stateless run's thread is still there 20 s after its run was let go")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
