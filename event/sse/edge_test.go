package sse

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// TestAppendEventRefusesBreakingType: a type holding CR, LF or NUL (one
// decoded from elsewhere and relayed) would end the event: line and forge
// lines of its own; AppendEvent refuses it and leaves dst as it was.
func TestAppendEventRefusesBreakingType(t *testing.T) {
	for _, ty := range []event.Type{"a\nid: 999999\ndata: {\"type\":\"forged\",\"seq\":999999}\n\nevent: x", "a\rb", "a\x00b"} {
		dst := []byte("before")
		got, err := AppendEvent(dst, event.Event{Seq: 3, Payload: event.Raw{Type: ty, Fields: []byte(`{}`)}}, true)
		if err == nil || !strings.Contains(err.Error(), "CR, LF or NUL") {
			t.Errorf("type %q: error = %v, want one naming CR, LF or NUL", ty, err)
		}
		if string(got) != "before" {
			t.Errorf("type %q: dst = %q, want it unchanged", ty, got)
		}
	}
	// The stream sends an error event in place of such an event.
	st := NewStream(Config{})
	if err := st.add(context.Background(), event.Event{Seq: 1, Payload: event.Raw{Type: "a\nid: 9", Fields: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if f := st.frames[st.head].data; strings.Contains(string(f), "\nid: 9") || !strings.Contains(string(f), "unencodable_event") {
		t.Errorf("stream frame = %q, want an unencodable_event error and no forged id", f)
	}
}

// TestFollowRedirectToOtherOrigin: FollowConfig.Header goes to no origin
// but url's on a redirect, and stays on a redirect within it.
func TestFollowRedirectToOtherOrigin(t *testing.T) {
	var seen atomic.Value
	target := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Accept"))
		w.WriteHeader(http.StatusNoContent)
	}))
	other := strings.Replace(target, "127.0.0.1", "localhost", 1) // another host, same listener
	var origin string
	origin = server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/other":
			http.Redirect(w, r, other+"/steal", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/end", http.StatusFound)
		default:
			seen.Store(r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Accept"))
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	h := http.Header{}
	h.Set("X-Api-Key", "secret")
	h["x-lower"] = []string{"kept off too"}
	for _, tt := range []struct{ path, want string }{{"/other", "|text/event-stream"}, {"/same", "secret|text/event-stream"}} {
		seen.Store("")
		for _, err := range Follow(t.Context(), origin+tt.path, FollowConfig{Header: h}) {
			t.Fatalf("%s: %v", tt.path, err)
		}
		if got := seen.Load(); got != tt.want {
			t.Errorf("%s: redirect target saw X-Api-Key|Accept %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestFollowWaitsRetryAfterCleanEnd: a server that sends retry: 60000 and
// one new event and closes gets a second request at once (a finished
// stream would answer it 204) and no third until the minute has passed (it
// used to get thousands a second); cancelling ctx ends the wait.
func TestFollowWaitsRetryAfterCleanEnd(t *testing.T) {
	var conns atomic.Int32
	second := make(chan struct{}, 1)
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if conns.Add(1) > 2 {
			select {
			case second <- struct{}{}:
			default:
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "retry: 60000\nid: %d\ndata: {\"type\":\"step\",\"request_id\":\"r\",\"seq\":%[1]d}\n\n", conns.Load())
	}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var last error
		for _, err := range Follow(ctx, url, FollowConfig{Retry: time.Millisecond}) {
			last = err
		}
		done <- last
	}()
	select {
	case <-second:
		t.Error("a third connection came within 200ms of the first; the server asked for 60s")
	case <-time.After(200 * time.Millisecond): // a reconnect without a wait comes in far less
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow ended with %v, want context.Canceled", err)
	}
	if c := conns.Load(); c > 2 {
		t.Errorf("%d connections, want at most 2", c)
	}
}

// TestFollowIgnoresUnsendableID: an id with a control character or over
// MaxLastEventIDBytes is reported and not sent back; the reconnect carries
// the id before it.
func TestFollowIgnoresUnsendableID(t *testing.T) {
	for name, bad := range map[string]string{"control": "2\x7f", "long": strings.Repeat("9", MaxLastEventIDBytes+1)} {
		t.Run(name, func(t *testing.T) {
			var resumed atomic.Value
			url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if id := r.Header.Get("Last-Event-ID"); id != "" {
					resumed.Store(id)
					w.WriteHeader(http.StatusNoContent)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "retry: 1\nid: 1\ndata: {\"type\":\"step\",\"request_id\":\"r\",\"seq\":1}\n\n")
				fmt.Fprintf(w, "id: %s\ndata: {\"type\":\"step\",\"request_id\":\"r\",\"seq\":2}\n\n", bad)
				fmt.Fprintf(w, "data: {\"type\":\"step\",\"request_id\":\"r\",\"seq\":3}\n\n")
			}))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
			defer cancel()
			var got []string
			for ev, err := range Follow(ctx, url, FollowConfig{Retry: time.Millisecond, MaxFailures: 2}) {
				if err != nil {
					if !strings.Contains(err.Error(), "ignoring event id") {
						t.Fatal(err)
					}
					got = append(got, "ignored")
					continue
				}
				got = append(got, strconv.FormatUint(ev.Seq, 10))
			}
			if want := []string{"1", "ignored", "2", "3"}; !slices.Equal(got, want) {
				t.Errorf("Follow yielded %v, want %v", got, want)
			}
			if id := resumed.Load(); id != "1" {
				t.Errorf("reconnect sent Last-Event-ID %q, want 1", id)
			}
		})
	}
}

// TestFollowIdleTimeout: a server that stays silent, before or after the
// response header, is dropped after IdleTimeout and asked again.
func TestFollowIdleTimeout(t *testing.T) {
	for _, headerFirst := range []bool{false, true} {
		t.Run("header "+strconv.FormatBool(headerFirst), func(t *testing.T) {
			var conns atomic.Int32
			url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if conns.Add(1) > 1 {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				if headerFirst {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done() // silent until the client goes
			}))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
			defer cancel()
			for _, err := range Follow(ctx, url, FollowConfig{Retry: time.Millisecond, IdleTimeout: 20 * time.Millisecond}) {
				t.Fatal(err)
			}
			if c := conns.Load(); c != 2 {
				t.Errorf("%d connections, want 2", c)
			}
		})
	}
}

// TestAppendEventUnnamedKeepsBreakingType: unnamed, no event: line is
// written and the JSON data escapes CR, LF and NUL, so such a type is
// encoded and forges no line.
func TestAppendEventUnnamedKeepsBreakingType(t *testing.T) {
	for _, ty := range []event.Type{"a\nid: 999999\n\nevent: x", "a\rb", "a\x00b"} {
		got, err := AppendEvent(nil, event.Event{Seq: 3, Payload: event.Raw{Type: ty, Fields: []byte(`{}`)}}, false)
		if err != nil {
			t.Errorf("type %q: %v, want it encoded", ty, err)
			continue
		}
		if lines := strings.Split(strings.TrimSuffix(string(got), "\n\n"), "\n"); len(lines) != 2 || lines[0] != "id: 3" || !strings.HasPrefix(lines[1], "data: {") {
			t.Errorf("type %q: encoded %q, want an id: and one data: line", ty, got)
		}
	}
}

// TestFollowProgressIsNoFailure: a connection that delivered a new event
// and then broke does not count as a failure, so MaxFailures 1 does not
// end Follow while every connection makes progress.
func TestFollowProgressIsNoFailure(t *testing.T) {
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.Header.Get("Last-Event-ID"))
		if n == 3 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: %d\ndata: {\"type\":\"step\",\"request_id\":\"r\",\"seq\":%[1]d}\n\n", n+1)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // break the connection
	}))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	var seqs []uint64
	for ev, err := range Follow(ctx, url, FollowConfig{Retry: time.Millisecond, MaxFailures: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	if want := []uint64{1, 2, 3}; !slices.Equal(seqs, want) {
		t.Errorf("Follow yielded %v, want %v", seqs, want)
	}
}

// TestFollowReturnsAfterEnd: a finished stream whose server asks for an
// hour between reconnects ends Follow at once: it reconnects without the
// wait after the events and gets 204.
func TestFollowReturnsAfterEnd(t *testing.T) {
	st := run(t, Config{Retry: time.Hour}, 3, nil)
	<-st.Done()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // failure guard only
	defer cancel()
	var n int
	for _, err := range Follow(ctx, server(t, st), FollowConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Errorf("read %d events, want 4", n)
	}
}
