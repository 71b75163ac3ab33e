package natsbus

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/event"
)

// flood publishes n messages of data on subject from a connection of its
// own, and waits until b has received them; it returns how long that
// took. The wait is bounded only to end a hung test.
func flood(t *testing.T, url string, b *Bus, subject string, data []byte, n int) time.Duration {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	start := time.Now()
	for range n {
		if err := nc.Publish(subject, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for b.Stats().Received < uint64(n) {
		if time.Since(start) > time.Minute {
			t.Fatalf("the bus received %d of %d messages in a minute", b.Stats().Received, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// maxLines is the most lines a condition logged at most once a second
// may leave over d, with one to spare.
func maxLines(d time.Duration) int { return int(d/time.Second) + 2 }

// TestFloodToBlockedHandler: with a negative PublishWait, events for a
// handler that does not return are dropped at once when its queue is
// full, without holding up the subscription's later messages, counted,
// and logged at a bounded rate.
func TestFloodToBlockedHandler(t *testing.T) {
	url := natsURL(t)
	core, logs := observer.New(zap.WarnLevel)
	prefix := uniquePrefix()
	b, err := New(t.Context(), Config{URL: url, Subject: prefix, Local: event.BusConfig{QueueSize: 4, PublishWait: -1, Logger: zap.New(core)}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer func() {
		close(release)
		if err := b.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if _, err := b.Subscribe(t.Context(), "*", func(context.Context, event.Event) { <-release }); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	// With a 50ms wait per drop, this took minutes.
	took := flood(t, url, b, prefix+".step", []byte(`{"type":"step","request_id":"x","seq":1}`), n)
	// The handler holds one event and its queue four (one more if the
	// handler took the first only after the queue filled).
	if st := b.Stats(); st.Dropped < n-6 || st.Dropped > n-5 {
		t.Errorf("Stats = %+v, want %d or %d dropped", st, n-6, n-5)
	}
	if got := logs.FilterMessageSnippet("dropped").Len(); got < 1 || got > maxLines(took) {
		t.Errorf("%d drop warnings logged in %v, want 1 to %d", got, took, maxLines(took))
	}
}

// TestFloodOfGarbage: messages that are not events are counted and logged
// at a bounded rate, not one line each.
func TestFloodOfGarbage(t *testing.T) {
	url := natsURL(t)
	core, logs := observer.New(zap.WarnLevel)
	prefix := uniquePrefix()
	b, err := New(t.Context(), Config{URL: url, Subject: prefix, Local: event.BusConfig{Logger: zap.New(core)}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background()) //nolint:errcheck
	if _, err := b.Subscribe(t.Context(), "*", func(context.Context, event.Event) {}); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	took := flood(t, url, b, prefix+".x", []byte("garbage"), n)
	if st := b.Stats(); st.Undecodable != n {
		t.Errorf("Stats = %+v, want %d undecodable", st, n)
	}
	if got := logs.FilterMessageSnippet("not an event").Len(); got < 1 || got > maxLines(took) {
		t.Errorf("%d warnings logged in %v, want 1 to %d", got, took, maxLines(took))
	}
}

// TestDefaultPublishWait: a zero PublishWait is event.BusConfig's default
// wait, so that a burst larger than QueueSize to a handler that keeps up
// waits in NATS's pending buffer instead of being dropped.
func TestDefaultPublishWait(t *testing.T) {
	b, err := New(t.Context(), Config{URL: natsURL(t), Subject: uniquePrefix()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background()) //nolint:errcheck
	if b.cfg.Local.PublishWait < 0 {
		t.Errorf("Local.PublishWait = %v after New with zero, want event.BusConfig's default (0)", b.cfg.Local.PublishWait)
	}
}
