package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStreamFreshRunSeesNotifyBeforeStream: a change the hub hears between
// newRun's watch and the stream (another instance appended the run's
// events and notified, without handing them over) wakes the stream, which
// reads them from the store at once rather than at the next heartbeat.
func TestStreamFreshRunSeesNotifyBeforeStream(t *testing.T) {
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
	s, err := New(Config{Store: st, Lease: time.Hour, Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	// newRun's watch, then the other instance's events and notification.
	ch, release := s.hub.watch(run.ID, run.ThreadID)
	for _, name := range []string{"metadata", "values", "end"} {
		if _, err := st.AppendEvent(ctx, run.ID, name, json.RawMessage(`{}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	s.hub.notify(run.ID)

	w := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(ctx, "GET", "/threads/t1/runs/r1/stream", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.stream(w, req, run, -1, nil, false, &hubWatch{ch: ch, release: release})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream still waits (for the next heartbeat, an hour away): it missed the notification between newRun and the stream")
	}
	body := w.Body.String()
	for _, want := range []string{"event: metadata\n", "event: values\n", "event: end\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("stream body lacks %q:\n%s", want, body)
		}
	}
}
