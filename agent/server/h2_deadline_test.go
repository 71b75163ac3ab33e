package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestHTTP2WaitOutlivesWriteTimeout: over HTTP/2 a write deadline resets
// the stream when it passes, even with nothing being written; a /wait
// and a stream whose run stays silent for longer than their
// WriteTimeout and StreamWriteTimeout (shorter than Heartbeat) answer
// the run's result and its end, as the deadline bounds writes, not the
// waits between them.
func TestHTTP2WaitOutlivesWriteTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	ts := newTestServer(t, server.Config{WriteTimeout: timeout, StreamWriteTimeout: timeout, Heartbeat: time.Hour})
	hs := httptest.NewUnstartedServer(ts.Server)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	hc := hs.Client()
	for _, path := range []string{"/runs/wait", "/runs/stream"} {
		t.Run(strings.TrimPrefix(path, "/runs/"), func(t *testing.T) {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
				t.Fatalf("create a thread: %d", code)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			body := `{"assistant_id":"slow","input":{"messages":[{"type":"human","content":"x"}]},"on_disconnect":"cancel"}`
			req, err := http.NewRequestWithContext(ctx, "POST", hs.URL+"/threads/"+th.ThreadID+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			type answer struct {
				proto, body string
				err         error
			}
			got := make(chan answer, 1)
			go func() {
				resp, err := hc.Do(req)
				if err != nil {
					got <- answer{err: err}
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				got <- answer{proto: resp.Proto, body: string(b), err: err}
			}()
			waitUntil(t, "the run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
			// Silent for several deadlines: a lower bound, not a speed.
			time.Sleep(5 * timeout)
			ts.gates.release(th.ThreadID)
			a := <-got
			if a.err != nil {
				t.Fatalf("the answer failed (reset while it waited?): %v", a.err)
			}
			if a.proto != "HTTP/2.0" {
				t.Fatalf("answered over %s, want HTTP/2.0", a.proto)
			}
			if !strings.Contains(a.body, "slow done: x") {
				t.Fatalf("answer without the run's result: %.500s", a.body)
			}
		})
	}
}
