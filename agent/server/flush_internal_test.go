package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// flushRecorder is a ResponseRecorder that records the body's length at
// each flush, and signals each.
type flushRecorder struct {
	*httptest.ResponseRecorder
	mu      sync.Mutex
	flushes []int
	flushed chan struct{} // receives once per flush, when there is room
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{ResponseRecorder: httptest.NewRecorder(), flushed: make(chan struct{}, 16)}
}

func (w *flushRecorder) Flush() {
	w.mu.Lock()
	w.flushes = append(w.flushes, w.Body.Len())
	w.mu.Unlock()
	select {
	case w.flushed <- struct{}{}:
	default:
	}
}

// streamTestRun creates thread t1 and a run r1 on it in a memory store,
// running on another worker (so that this server does not execute it),
// and a server on the store with heartbeat hb.
func streamTestRun(t *testing.T, hb time.Duration) (*Server, *MemoryStore, *Run) {
	t.Helper()
	ctx := t.Context()
	st := NewMemoryStore()
	at := time.Now()
	if err := st.CreateThread(ctx, &Thread{ID: "t1", CreatedAt: at, UpdatedAt: at, Status: ThreadBusy, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	run := &Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: RunRunning,
		Worker: "other", LeaseUntil: at.Add(time.Hour), Attempt: 1, Metadata: map[string]any{},
		Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "enqueue"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st, Lease: time.Hour, Heartbeat: hb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, st, run
}

// TestStreamHeaderGoesWithFirstEvents: a stream whose first events are at
// hand sends the response's header with them, not flushed alone first (a
// write, and a wakeup of the client, per stream for nothing).
func TestStreamHeaderGoesWithFirstEvents(t *testing.T) {
	s, st, run := streamTestRun(t, time.Hour)
	ctx := t.Context()
	ch, release := s.hub.watch(run.ID, run.ThreadID)
	for _, name := range []string{"metadata", "values"} {
		ev, err := st.AppendEvent(ctx, run.ID, name, json.RawMessage(`{}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		s.hub.publish(run.ID, ev)
	}
	w := newFlushRecorder()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := httptest.NewRequestWithContext(rctx, "GET", "/threads/t1/runs/r1/stream", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.stream(w, req, run, -1, nil, false, &hubWatch{ch: ch, release: release})
	}()
	select {
	case <-w.flushed:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not flush its first events")
	}
	cancel()
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.flushes) == 0 || w.flushes[0] == 0 {
		t.Fatalf("flushes at body lengths %v: the header was flushed alone, before the events at hand", w.flushes)
	}
}

// TestStreamHeaderFlushedBeforeWait: a stream with no event yet (its run
// has not started) flushes the response's header before it waits, so
// that its client sees the response begin.
func TestStreamHeaderFlushedBeforeWait(t *testing.T) {
	s, _, run := streamTestRun(t, time.Hour)
	w := newFlushRecorder()
	rctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := httptest.NewRequestWithContext(rctx, "GET", "/threads/t1/runs/r1/stream", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.stream(w, req, run, -1, nil, false, nil)
	}()
	select {
	case <-w.flushed:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream waits with its header not flushed")
	}
	cancel()
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flushes[0] != 0 || w.Code != 200 {
		t.Fatalf("flushes at body lengths %v, status %d: want the header alone flushed, with 200", w.flushes, w.Code)
	}
}

// TestStreamHeaderWaitsForExecutingRun: the stream of a run just created
// that this instance executes waits for the run's first event to send the
// response's header, rather than flushing it alone: here the first flush
// is a heartbeat's, as no event comes.
func TestStreamHeaderWaitsForExecutingRun(t *testing.T) {
	s, _, run := streamTestRun(t, time.Millisecond)
	// Executing here, as createRun registers a run it claimed.
	rctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	s.mu.Lock()
	s.cancel[run.ID] = &runCancel{ctx: rctx, cancel: cancel}
	s.mu.Unlock()
	ch, release := s.hub.watch(run.ID, run.ThreadID)
	w := newFlushRecorder()
	req := httptest.NewRequestWithContext(rctx, "GET", "/threads/t1/runs/r1/stream", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.stream(w, req, run, -1, nil, false, &hubWatch{ch: ch, release: release})
	}()
	select {
	case <-w.flushed:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not flush a heartbeat")
	}
	cancel(nil)
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flushes[0] == 0 || !strings.HasPrefix(w.Body.String(), ": heartbeat") {
		t.Fatalf("flushes at body lengths %v, body %q: want the header sent with the first heartbeat, not alone", w.flushes, w.Body.String())
	}
}
