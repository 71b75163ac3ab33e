package event_test

import (
	"context"
	"errors"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		typ     event.Type
		want    bool
	}{
		{"*", eventtest.TypeToolProgress, true},
		{"*", event.TypeError, true},
		{"tool.*", eventtest.TypeToolProgress, true},
		{"tool.*", eventtest.TypeToolStart, true},
		{"tool.*", eventtest.TypeServerProgress, false},
		{"tool.*", "tool", false},
		{"step.*", eventtest.TypeStepStart, true},
		{"step.start.*", eventtest.TypeStepStart, false},
		{"*.error", eventtest.TypeToolError, true},
		{"*.error", eventtest.TypeServerError, true},
		{"*.error", event.TypeError, false},
		{"error", event.TypeError, true},
		{"error", eventtest.TypeToolError, false},
		{"text.chunk", eventtest.TypeChunk, true},
		{"text.chunk", "direct.text.chunk", false},
		{"*text.*", "direct.text.chunk", true},
		{"tool.[cs]*", eventtest.TypeToolStart, true},
		{"tool.[cs]*", eventtest.TypeToolProgress, false},
		{"tool.?tart", eventtest.TypeToolStart, true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+string(tt.typ), func(t *testing.T) {
			got, err := event.Match(tt.pattern, tt.typ)
			if err != nil || got != tt.want {
				t.Errorf("Match(%q, %q) = %v, %v; want %v", tt.pattern, tt.typ, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "tool.[", "a/b", `tool\`} {
		if _, err := event.Match(bad, eventtest.TypeToolStart); !errors.Is(err, event.ErrBadPattern) {
			t.Errorf("Match(%q) error = %v, want ErrBadPattern", bad, err)
		}
	}
}

// recorder is a handler that records what it receives.
type recorder struct {
	mu   sync.Mutex
	got  []event.Type
	seen chan struct{}
}

func newRecorder() *recorder { return &recorder{seen: make(chan struct{}, 1000)} }

func (r *recorder) handle(_ context.Context, ev event.Event) {
	r.mu.Lock()
	r.got = append(r.got, ev.Type)
	r.mu.Unlock()
	r.seen <- struct{}{}
}

func (r *recorder) wait(t *testing.T, n int) []event.Type {
	t.Helper()
	for range n {
		select {
		case <-r.seen:
		case <-time.After(30 * time.Second):
			t.Fatalf("handler got %v, waited for %d events", r.types(), n)
		}
	}
	return r.types()
}

func (r *recorder) types() []event.Type {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Type(nil), r.got...)
}

func publishAll(t *testing.T, b event.Bus, types ...event.Type) {
	t.Helper()
	for i, typ := range types {
		if err := b.Publish(context.Background(), event.Event{Type: typ, Seq: uint64(i + 1), Payload: event.Raw{Type: typ, Fields: []byte("{}")}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBusPatternsAndUnsubscribe(t *testing.T) {
	b := event.NewMemoryBus(event.BusConfig{})
	defer b.Close(context.Background())
	all, tools := newRecorder(), newRecorder()
	if _, err := b.Subscribe(context.Background(), "*", all.handle); err != nil {
		t.Fatal(err)
	}
	id, err := b.Subscribe(context.Background(), "tool.*", tools.handle)
	if err != nil {
		t.Fatal(err)
	}
	publishAll(t, b, eventtest.TypeNote, eventtest.TypeToolStart, eventtest.TypeServerProgress, eventtest.TypeToolComplete, eventtest.TypeDone)
	if diff := cmp.Diff([]event.Type{eventtest.TypeNote, eventtest.TypeToolStart, eventtest.TypeServerProgress, eventtest.TypeToolComplete, eventtest.TypeDone}, all.wait(t, 5)); diff != "" {
		t.Errorf("'*' subscriber (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]event.Type{eventtest.TypeToolStart, eventtest.TypeToolComplete}, tools.wait(t, 2)); diff != "" {
		t.Errorf("'tool.*' subscriber (-want +got):\n%s", diff)
	}
	if !b.Unsubscribe(id) || b.Unsubscribe(id) {
		t.Error("Unsubscribe should succeed once")
	}
	publishAll(t, b, eventtest.TypeToolError)
	all.wait(t, 1)
	if got := tools.types(); len(got) != 2 {
		t.Errorf("unsubscribed handler got %v", got)
	}
	if got := b.Stats().Subscriptions; got != 1 {
		t.Errorf("Subscriptions = %d, want 1", got)
	}
	if _, err := b.Subscribe(context.Background(), "tool.[", all.handle); !errors.Is(err, event.ErrBadPattern) {
		t.Errorf("bad pattern: %v", err)
	}
}

// TestBusSlowHandlerIsolated blocks one handler completely: the other
// subscriber still gets every event, and Publish returns within the
// documented bound, reporting the drop once the slow queue is full.
func TestBusSlowHandlerIsolated(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	b := event.NewMemoryBus(event.BusConfig{QueueSize: 2, PublishWait: 5 * time.Millisecond, Logger: zap.New(core)})
	release, entered := make(chan struct{}), make(chan struct{}, 10)
	if _, err := b.Subscribe(context.Background(), "*", func(ctx context.Context, ev event.Event) { entered <- struct{}{}; <-release }); err != nil {
		t.Fatal(err)
	}
	fast := newRecorder()
	if _, err := b.Subscribe(context.Background(), "*", fast.handle); err != nil {
		t.Fatal(err)
	}
	var dropped int
	for i := range 10 {
		start := time.Now()
		err := b.Publish(context.Background(), event.Event{Type: eventtest.TypeChunk, Seq: uint64(i), Payload: eventtest.Chunk{}})
		// Without PublishWait, a stuck handler would block Publish for
		// good; the bound is generous for a loaded machine.
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Publish %d took %v with a stuck handler", i, d)
		}
		if i == 0 {
			<-entered // the slow handler now holds event 0
		}
		if errors.Is(err, event.ErrDropped) {
			dropped++
		} else if err != nil {
			t.Fatal(err)
		}
		// The fast handler takes each event before the next is published,
		// so its queue never fills however slowly it is scheduled.
		fast.wait(t, 1)
	}
	if got := len(fast.types()); got != 10 {
		t.Errorf("fast handler got %d events, want 10", got)
	}
	// The slow handler holds 1 event, its queue 2 more: 7 are dropped.
	if dropped != 7 || b.Stats().Dropped != 7 {
		t.Errorf("dropped %d (stats %d), want 7", dropped, b.Stats().Dropped)
	}
	// Drops are logged at most once a second: one line, or a few on a
	// slow machine.
	if n := logs.FilterMessageSnippet("dropped").Len(); n < 1 || n > 7 {
		t.Errorf("%d drop warnings logged, want 1 to 7", n)
	}
	close(release)
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestBusPanickingHandlerRecovered(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	b := event.NewMemoryBus(event.BusConfig{Logger: zap.New(core)})
	var calls atomic.Int32
	if _, err := b.Subscribe(context.Background(), "tool.*", func(ctx context.Context, ev event.Event) {
		calls.Add(1)
		if ev.Type == eventtest.TypeToolError {
			panic("handler bug")
		}
	}); err != nil {
		t.Fatal(err)
	}
	other := newRecorder()
	if _, err := b.Subscribe(context.Background(), "*", other.handle); err != nil {
		t.Fatal(err)
	}
	publishAll(t, b, eventtest.TypeToolError, eventtest.TypeToolStart, eventtest.TypeToolError, eventtest.TypeToolComplete)
	other.wait(t, 4)
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 4 {
		t.Errorf("panicking handler called %d times, want 4 (it keeps its subscription)", calls.Load())
	}
	st := b.Stats()
	if st.Panics != 2 || st.Delivered != 8 {
		t.Errorf("stats = %+v, want 2 panics and 8 deliveries", st)
	}
	if n := logs.FilterMessageSnippet("panicked").Len(); n != 2 {
		t.Errorf("%d panic errors logged, want 2", n)
	}
}

func TestBusClose(t *testing.T) {
	b := event.NewMemoryBus(event.BusConfig{})
	r := newRecorder()
	if _, err := b.Subscribe(context.Background(), "*", r.handle); err != nil {
		t.Fatal(err)
	}
	publishAll(t, b, eventtest.TypeToolStart, eventtest.TypeToolComplete)
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.types(); len(got) != 2 {
		t.Errorf("Close did not drain: handler got %v", got)
	}
	if err := b.Publish(context.Background(), event.Event{Payload: eventtest.Done{}}); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	if _, err := b.Subscribe(context.Background(), "*", r.handle); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestBusCloseGivesUpOnStuckHandler(t *testing.T) {
	b := event.NewMemoryBus(event.BusConfig{})
	release := make(chan struct{})
	if _, err := b.Subscribe(context.Background(), "*", func(ctx context.Context, ev event.Event) {
		select {
		case <-ctx.Done():
		case <-release:
		}
	}); err != nil {
		t.Fatal(err)
	}
	publishAll(t, b, eventtest.TypeToolStart)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	// The handler sees its context cancelled and returns, so nothing leaks.
	if err := b.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want DeadlineExceeded", err)
	}
	close(release)
	event.WaitHandlers(b)
}

// TestBusDropsLoggedAtBoundedRate: a flood of events for a handler that
// does not return is counted whole and logged at most once a second.
func TestBusDropsLoggedAtBoundedRate(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	b := event.NewMemoryBus(event.BusConfig{QueueSize: 1, PublishWait: -1, Logger: zap.New(core)})
	release := make(chan struct{})
	if _, err := b.Subscribe(context.Background(), "*", func(context.Context, event.Event) { <-release }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const n = 1000
	dropped := 0
	for i := range n {
		if err := b.Publish(context.Background(), event.Event{Type: eventtest.TypeChunk, Seq: uint64(i), Payload: eventtest.Chunk{}}); errors.Is(err, event.ErrDropped) {
			dropped++
		}
	}
	took := time.Since(start)
	if got := b.Stats().Dropped; got != uint64(dropped) || dropped < n-2 {
		t.Errorf("Stats().Dropped = %d, Publish reported %d drops; want the same, at least %d", got, dropped, n-2)
	}
	if got, most := logs.FilterMessageSnippet("dropped").Len(), int(took/time.Second)+2; got < 1 || got > most {
		t.Errorf("%d drop warnings logged in %v, want 1 to %d", got, took, most)
	}
	close(release)
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
