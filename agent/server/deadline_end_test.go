package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// slowEvents is a Store whose reads of a run's events take delay once
// slow is set.
type slowEvents struct {
	server.Store
	slow  atomic.Bool
	delay time.Duration
}

func (s *slowEvents) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	if s.slow.Load() {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	return s.Store.Events(ctx, runID, after, limit)
}

// TestHTTP2StreamOutlivesSlowStoreRead: over HTTP/2 a write deadline
// resets the stream when it passes, even with nothing being written; a
// stream of an ended run whose events the store takes several
// StreamWriteTimeouts to read, after the stream's headers were sent,
// still answers the run's end, as the deadline bounds writes, not the
// reads between them.
func TestHTTP2StreamOutlivesSlowStoreRead(t *testing.T) {
	const timeout = 100 * time.Millisecond
	st := &slowEvents{Store: server.NewMemoryStore(), delay: 5 * timeout}
	ts := newTestServer(t, server.Config{Store: st, WriteTimeout: timeout, StreamWriteTimeout: timeout, Heartbeat: time.Hour})
	hs := httptest.NewUnstartedServer(ts.Server)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create a thread: %d", code)
	}
	var run struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	in := map[string]any{"messages": []msg{{Type: "human", Content: "x"}}}
	if code := do(t, "POST", ts.URL+"/threads/"+th.ThreadID+"/runs", map[string]any{"assistant_id": "agent", "input": in}, nil, &run); code != 200 {
		t.Fatalf("create a run: %d", code)
	}
	waitUntil(t, "the run to end", func() bool {
		var r struct {
			Status string `json:"status"`
		}
		do(t, "GET", ts.URL+"/threads/"+th.ThreadID+"/runs/"+run.RunID, nil, nil, &r)
		return r.Status != "pending" && r.Status != "running"
	})
	st.slow.Store(true)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", hs.URL+"/threads/"+th.ThreadID+"/runs/"+run.RunID+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the stream failed (reset while the store was read?): %v; read %.500s", err, b)
	}
	if resp.Proto != "HTTP/2.0" {
		t.Fatalf("answered over %s, want HTTP/2.0", resp.Proto)
	}
	if !strings.Contains(string(b), "event: end") {
		t.Fatalf("stream without its end: %.500s", b)
	}
}

// deadlineRecorder is a ResponseWriter that records the write deadlines
// set on it, as http.ResponseController sets them.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	mu        sync.Mutex
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deadlines = append(d.deadlines, t)
	return nil
}

func (d *deadlineRecorder) last() (time.Time, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.deadlines) == 0 {
		return time.Time{}, 0
	}
	return d.deadlines[len(d.deadlines)-1], len(d.deadlines)
}

// TestStreamLeftByClientEndsUnderDeadline: a stream or a /wait whose
// client leaves while it waits (with no write deadline) returns with its
// write deadline set again, so that net/http's write of the response's
// end is bounded, not held forever by a client that does not read.
func TestStreamLeftByClientEndsUnderDeadline(t *testing.T) {
	ts := newTestServer(t, server.Config{WriteTimeout: time.Minute, StreamWriteTimeout: time.Minute, Heartbeat: time.Hour})
	for _, path := range []string{"/runs/stream", "/runs/wait"} {
		t.Run(strings.TrimPrefix(path, "/runs/"), func(t *testing.T) {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if code := do(t, "POST", ts.URL+"/threads", map[string]any{}, nil, &th); code != 200 {
				t.Fatalf("create a thread: %d", code)
			}
			t.Cleanup(func() { ts.gates.release(th.ThreadID) })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			body := `{"assistant_id":"slow","input":{"messages":[{"type":"human","content":"x"}]}}`
			req := httptest.NewRequestWithContext(ctx, "POST", ts.URL+"/threads/"+th.ThreadID+path, strings.NewReader(body))
			req.RemoteAddr = "127.0.0.1:40000"
			req.Header.Set("Content-Type", "application/json")
			rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
			done := make(chan struct{})
			go func() {
				defer close(done)
				ts.Server.ServeHTTP(rec, req)
			}()
			waitUntil(t, "the run to wait in its node", func() bool { return ts.gates.waiting(th.ThreadID) })
			waitUntil(t, "the answer to wait without a deadline", func() bool {
				d, n := rec.last()
				return n > 0 && d.IsZero()
			})
			cancel()
			<-done
			if d, n := rec.last(); d.IsZero() {
				t.Fatalf("returned with no write deadline (%d set, last %v); want one bounding the response's end", n, d)
			}
		})
	}
}
