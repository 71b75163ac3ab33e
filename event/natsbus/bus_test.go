package natsbus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// natsURL returns the test server's URL, skipping the test when no server
// answers there.
func natsURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("AGENTGRAPH_TEST_NATS")
	if url == "" {
		url = "nats://127.0.0.1:4222"
	}
	nc, err := nats.Connect(url, nats.Timeout(500*time.Millisecond), nats.MaxReconnects(0))
	if err != nil {
		t.Skipf("NATS is not reachable at %s (%v); start nats-server or point AGENTGRAPH_TEST_NATS at one", url, err)
	}
	nc.Close()
	return url
}

// newBus returns a bus on a subject prefix private to the test, closed at
// cleanup.
func newBus(t *testing.T, url, prefix string) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := New(ctx, Config{URL: url, Subject: prefix, Decoder: eventtest.Decoder()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return b
}

func uniquePrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "agentgraph.test." + hex.EncodeToString(b[:])
}

type sink struct {
	mu  sync.Mutex
	evs []event.Event
	got chan struct{}
}

func newSink() *sink { return &sink{got: make(chan struct{}, 100)} }

func (s *sink) handle(_ context.Context, ev event.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, ev)
	s.mu.Unlock()
	s.got <- struct{}{}
}

func (s *sink) wait(t *testing.T, n int) []event.Event {
	t.Helper()
	for range n {
		select {
		case <-s.got:
		case <-time.After(30 * time.Second):
			t.Fatalf("received %d events, want %d", len(s.events()), n)
		}
	}
	return s.events()
}

func (s *sink) events() []event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]event.Event(nil), s.evs...)
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// TestTwoInstances publishes on one bus instance and receives on another,
// each with its own connection, as two replicas of a service would.
func TestTwoInstances(t *testing.T) {
	url, prefix := natsURL(t), uniquePrefix()
	a, b := newBus(t, url, prefix), newBus(t, url, prefix)

	tools, errs, all := newSink(), newSink(), newSink()
	for pattern, s := range map[string]*sink{"tool.*": tools, "*.error": errs, "*": all} {
		if _, err := b.Subscribe(context.Background(), pattern, s.handle); err != nil {
			t.Fatal(err)
		}
	}
	sent := []event.Event{
		{RequestID: "req-1", Seq: 1, Time: t0, Payload: eventtest.Note{Message: "thinking"}},
		{RequestID: "req-1", Seq: 2, Time: t0, Payload: eventtest.ToolStart{Tool: "web_search"}},
		{RequestID: "req-1", Seq: 3, Time: t0, Payload: eventtest.ServerError{Server: "s", Tool: "web_search", Error: "boom"}},
		{RequestID: "req-1", Seq: 4, Time: t0, Coalesced: 2, Payload: eventtest.ToolProgress{Tool: "web_search", Progress: 0.5}},
		{RequestID: "req-1", Seq: 5, Time: t0, Payload: eventtest.ToolContent{Tool: "web_search", ContentType: "application/json", Data: map[string]any{"hits": 3.0}}},
		{RequestID: "req-1", Seq: 6, Time: t0, Payload: eventtest.Done{}},
	}
	for _, ev := range sent {
		if err := a.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]event.Event, len(sent))
	for i, ev := range sent {
		ev.Type = ev.Payload.EventType()
		want[i] = ev
	}
	if diff := cmp.Diff(want, all.wait(t, 6)); diff != "" {
		t.Errorf("'*' on the other instance (-sent +received):\n%s", diff)
	}
	if diff := cmp.Diff([]event.Event{want[1], want[3], want[4]}, tools.wait(t, 3)); diff != "" {
		t.Errorf("'tool.*' (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]event.Event{want[2]}, errs.wait(t, 1)); diff != "" {
		t.Errorf("'*.error' (-want +got):\n%s", diff)
	}
	if st := a.Stats(); st.Published != 6 {
		t.Errorf("publisher stats %+v", st)
	}
	// "*.error" cannot be a NATS subject, so it receives everything and
	// filters: 6 + 3 (tool.*) + 6 (*) messages.
	deadline := time.Now().Add(30 * time.Second)
	for b.Stats().Received < 15 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := b.Stats(); st.Received != 15 || st.Dropped != 0 || st.Subscriptions != 3 {
		t.Errorf("subscriber stats %+v, want 15 received", st)
	}
}

func TestUnsubscribeAndClose(t *testing.T) {
	url, prefix := natsURL(t), uniquePrefix()
	a, b := newBus(t, url, prefix), newBus(t, url, prefix)
	s := newSink()
	id, err := b.Subscribe(context.Background(), "text.done", s.handle)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(context.Background(), event.Event{Payload: eventtest.Done{}}); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 1)
	if !b.Unsubscribe(id) || b.Unsubscribe(id) {
		t.Fatal("Unsubscribe should succeed once")
	}
	// A marker subscription proves later events were delivered, and the
	// unsubscribed handler missed them.
	marker := newSink()
	if _, err := b.Subscribe(context.Background(), "*", marker.handle); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(context.Background(), event.Event{Payload: eventtest.Done{}}); err != nil {
		t.Fatal(err)
	}
	marker.wait(t, 1)
	if n := len(s.events()); n != 1 {
		t.Errorf("unsubscribed handler got %d events, want 1", n)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Subscribe(context.Background(), "*", s.handle); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if err := b.Publish(context.Background(), event.Event{Payload: eventtest.Done{}}); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
}

func TestPanickingHandlerIsolated(t *testing.T) {
	url, prefix := natsURL(t), uniquePrefix()
	a, b := newBus(t, url, prefix), newBus(t, url, prefix)
	if _, err := b.Subscribe(context.Background(), "*", func(context.Context, event.Event) { panic("handler bug") }); err != nil {
		t.Fatal(err)
	}
	s := newSink()
	if _, err := b.Subscribe(context.Background(), "*", s.handle); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := a.Publish(context.Background(), event.Event{Payload: eventtest.Done{}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.wait(t, 3)); n != 3 {
		t.Errorf("healthy handler got %d events", n)
	}
}

func TestBadInput(t *testing.T) {
	url, prefix := natsURL(t), uniquePrefix()
	b := newBus(t, url, prefix)
	if _, err := b.Subscribe(context.Background(), "tool.[", func(context.Context, event.Event) {}); !errors.Is(err, event.ErrBadPattern) {
		t.Errorf("bad pattern: %v", err)
	}
	if err := b.Publish(context.Background(), event.Event{Type: "tool..x", Payload: event.Raw{Type: "tool..x", Fields: []byte("{}")}}); err == nil {
		t.Error("publishing a type with an empty token succeeded")
	}
	if _, err := New(context.Background(), Config{URL: url, Subject: "a b"}); err == nil {
		t.Error("a subject prefix with a space was accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := New(ctx, Config{URL: "nats://127.0.0.1:1"}); err == nil {
		t.Error("dialing a closed port succeeded")
	}
}

func TestSubjectTranslation(t *testing.T) {
	b := &Bus{prefix: "p"}
	for pattern, want := range map[string]string{
		"*":                 "p.>",
		"tool.*":            "p.tool.>",
		"workflow.step.*":   "p.workflow.step.>",
		"tool.progress":     "p.tool.progress",
		"*.error":           "p.>",
		"tool.?tart":        "p.>",
		"tool*":             "p.>",
		"direct.response.*": "p.direct.response.>",
		"[dr]*.response.*":  "p.>",
		"text.done":         "p.text.done",
	} {
		if got := b.subject(pattern); got != want {
			t.Errorf("subject(%q) = %q, want %q", pattern, got, want)
		}
	}
}
