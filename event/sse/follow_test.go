package sse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
)

// cutWriter fails every write after the first budget ones, like a
// connection that breaks.
type cutWriter struct {
	http.ResponseWriter
	budget int
	broke  bool
}

func (w *cutWriter) Write(b []byte) (int, error) {
	if w.budget <= 0 {
		w.broke = true
		return 0, errors.New("connection broke")
	}
	w.budget--
	return w.ResponseWriter.Write(b)
}

func (w *cutWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// TestFollowReconnects serves a run whose connections break after a few
// writes each: Follow reconnects with Last-Event-ID until the stream is over
// and yields every event once, in order.
func TestFollowReconnects(t *testing.T) {
	const total = 200
	st := run(t, Config{Replay: 64}, total, nil)
	var conns atomic.Int32
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if conns.Add(1) > 100 {
			http.Error(w, "too many connections", http.StatusTooManyRequests)
			return
		}
		cw := &cutWriter{ResponseWriter: w, budget: 3}
		st.ServeHTTP(cw, r)
		if cw.broke {
			panic(http.ErrAbortHandler) // drop the connection without a clean end
		}
	}))
	var seqs []uint64
	for ev, err := range Follow(context.Background(), url, FollowConfig{Retry: time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	checkSeqs(t, seqs, total+1, true)
	if conns.Load() < 3 {
		t.Errorf("only %d connections: the test did not break any", conns.Load())
	}
}

func TestFollowEnds(t *testing.T) {
	st := NewStream(Config{})
	em := event.NewEmitter(event.EmitterConfig{})
	ctx := context.Background()
	if err := em.Emit(ctx, eventtest.Done{}); err != nil {
		t.Fatal(err)
	}
	em.Close()
	if err := st.Run(ctx, em.Events(ctx)); err != nil {
		t.Fatal(err)
	}
	var n int
	for _, err := range Follow(ctx, server(t, st), FollowConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("read %d events, want 1", n)
	}
}

func TestFollowErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"client error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such request", http.StatusNotFound) }, "404 Not Found: no such request"},
		{"not SSE", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) }, "not text/event-stream"},
		{"server keeps failing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusBadGateway) }, "giving up after 3 failed connections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got error
			for _, err := range Follow(context.Background(), server(t, tt.handler), FollowConfig{Retry: time.Millisecond, MaxFailures: 3}) {
				got = err
			}
			if got == nil || !strings.Contains(got.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", got, tt.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range Follow(ctx, "http://127.0.0.1:1", FollowConfig{}) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
	}
}

// writeSteps answers with an event stream of step events of request r
// whose Seqs (and ids) are seqs.
func writeSteps(w http.ResponseWriter, seqs []uint64) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, s := range seqs {
		fmt.Fprintf(w, "id: %d\ndata: {\"type\":\"step\",\"request_id\":\"r\",\"seq\":%d}\n\n", s, s)
	}
}

// followSeqs follows url to its end and returns the Seq of each event
// yielded, and "out of order" for each error saying so; any other error
// fails the test.
func followSeqs(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	var got []string
	for ev, err := range Follow(ctx, url, FollowConfig{Retry: time.Millisecond}) {
		if err != nil {
			if !strings.Contains(err.Error(), "out of order") {
				t.Fatal(err)
			}
			got = append(got, "out of order")
			continue
		}
		got = append(got, strconv.FormatUint(ev.Seq, 10))
	}
	return got
}

// TestFollowSeqBackwards: an event whose Seq goes back within one
// connection hides none of the events after it: Follow yields an error
// saying so, then the event, and goes on.
func TestFollowSeqBackwards(t *testing.T) {
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeSteps(w, []uint64{1, 2, math.MaxUint64, 3, 4})
	}))
	got := followSeqs(t, url)
	want := []string{"1", "2", strconv.FormatUint(math.MaxUint64, 10), "out of order", "3", "4"}
	if !slices.Equal(got, want) {
		t.Fatalf("Follow yielded %v, want %v", got, want)
	}
}

// TestFollowSeqBackwardsReconnect: after an event whose Seq went back, a
// reconnect yields none of the events yielded before again, and an event
// with the Seq of the one before it (a notice about it) is no error.
func TestFollowSeqBackwardsReconnect(t *testing.T) {
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var seqs []uint64
		switch r.Header.Get("Last-Event-ID") {
		case "":
			seqs = []uint64{1, 2, 2, 5, 3}
		case "3":
			seqs = []uint64{4, 5, 6}
		default:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeSteps(w, seqs)
	}))
	got := followSeqs(t, url)
	want := []string{"1", "2", "2", "5", "out of order", "3", "6"}
	if !slices.Equal(got, want) {
		t.Fatalf("Follow yielded %v, want %v", got, want)
	}
}
