package event_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// collect reads every event of em until the stream ends.
func collect(t *testing.T, ctx context.Context, em *event.Emitter) ([]event.Event, error) {
	t.Helper()
	var evs []event.Event
	for ev, err := range em.Events(ctx) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestEmitterOrderAndEnvelope(t *testing.T) {
	clock := t0
	em := event.NewEmitter(event.EmitterConfig{RequestID: "req-1", Buffer: 4, Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }})
	ctx := context.Background()
	go func() {
		for i := range 100 {
			if err := em.Emit(ctx, eventtest.Chunk{Content: fmt.Sprint(i)}); err != nil {
				t.Error(err)
			}
		}
		em.Close()
	}()
	evs, err := collect(t, ctx, em)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 100 {
		t.Fatalf("got %d events, want 100", len(evs))
	}
	for i, ev := range evs {
		want := event.Event{Type: eventtest.TypeChunk, RequestID: "req-1", Seq: uint64(i + 1), Time: t0.Add(time.Duration(i+1) * time.Millisecond), Payload: eventtest.Chunk{Content: fmt.Sprint(i)}}
		if diff := cmp.Diff(want, ev); diff != "" {
			t.Fatalf("event %d (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(event.EmitterStats{Emitted: 100, Delivered: 100, Waits: em.Stats().Waits}, em.Stats()); diff != "" {
		t.Error(diff)
	}
}

func TestEmitterConcurrentProducersKeepTheirOrder(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{Buffer: 8})
	ctx := context.Background()
	const producers, each = 4, 500
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if err := em.Emit(ctx, eventtest.ToolStart{Tool: fmt.Sprint(p), Message: fmt.Sprint(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	go func() { wg.Wait(); em.Close() }()
	evs, err := collect(t, ctx, em)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		p := ev.Payload.(eventtest.ToolStart)
		if p.Message != fmt.Sprint(next[p.Tool]) {
			t.Fatalf("producer %s: got message %s, want %d", p.Tool, p.Message, next[p.Tool])
		}
		next[p.Tool]++
	}
	if len(evs) != producers*each {
		t.Errorf("got %d events, want %d", len(evs), producers*each)
	}
}

// TestEmitterCoalescesProgressUnderPressure fills a 3-event buffer while the
// consumer is not reading: progress events for the same tool replace each
// other, everything else waits, and the delivered stream says what was
// coalesced.
func TestEmitterCoalescesProgressUnderPressure(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{RequestID: "r", Buffer: 3, Now: func() time.Time { return t0 }})
	ctx := context.Background()
	for _, p := range []event.Payload{
		eventtest.ToolStart{Tool: "a"},                   // 1
		eventtest.ToolProgress{Tool: "a", Progress: 0.1}, // 2
		eventtest.ToolProgress{Tool: "b", Progress: 0.1}, // 3: the buffer is full
		eventtest.ToolProgress{Tool: "a", Progress: 0.2}, // 4 replaces 2
		eventtest.ToolProgress{Tool: "a", Progress: 0.3}, // 5 replaces 4
	} {
		if err := em.Emit(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(event.EmitterStats{Emitted: 5, Coalesced: 2, Buffered: 3}, em.Stats()); diff != "" {
		t.Errorf("stats after coalescing (-want +got):\n%s", diff)
	}
	// A response chunk is never coalesced or dropped: its producer waits.
	emitted := make(chan error, 1)
	go func() {
		err := em.Emit(ctx, eventtest.Chunk{Content: "x"})
		em.Close()
		emitted <- err
	}()
	waitFor(t, func() bool { return em.Stats().Waits == 1 })
	select {
	case err := <-emitted:
		t.Fatalf("Emit into a full buffer returned %v without waiting", err)
	default:
	}
	evs, err := collect(t, ctx, em)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-emitted; err != nil {
		t.Fatal(err)
	}
	want := []event.Event{
		{Type: eventtest.TypeToolStart, RequestID: "r", Seq: 1, Time: t0, Payload: eventtest.ToolStart{Tool: "a"}},
		{Type: eventtest.TypeToolProgress, RequestID: "r", Seq: 3, Time: t0, Payload: eventtest.ToolProgress{Tool: "b", Progress: 0.1}},
		{Type: eventtest.TypeToolProgress, RequestID: "r", Seq: 5, Time: t0, Coalesced: 2, Payload: eventtest.ToolProgress{Tool: "a", Progress: 0.3}},
		{Type: eventtest.TypeChunk, RequestID: "r", Seq: 6, Time: t0, Payload: eventtest.Chunk{Content: "x"}},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(event.EmitterStats{Emitted: 6, Delivered: 4, Coalesced: 2, Waits: 1}, em.Stats()); diff != "" {
		t.Errorf("final stats (-want +got):\n%s", diff)
	}
}

func TestEmitterProgressWithoutQueuedPeerWaits(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{Buffer: 1})
	ctx := context.Background()
	if err := em.Emit(ctx, eventtest.ServerProgress{Server: "s1", Tool: "t", Progress: 0.1}); err != nil {
		t.Fatal(err)
	}
	// Same tool on another server: a different source, so no coalescing.
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if err := em.Emit(short, eventtest.ServerProgress{Server: "s2", Tool: "t", Progress: 0.1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Emit = %v, want context.DeadlineExceeded", err)
	}
	if err := em.Emit(ctx, eventtest.ServerProgress{Server: "s1", Tool: "t", Progress: 0.2}); err != nil {
		t.Fatal(err)
	}
	if got := em.Stats(); got.Coalesced != 1 || got.Buffered != 1 {
		t.Errorf("stats = %+v, want 1 coalesced, 1 buffered", got)
	}
}

func TestEmitterMaxWaitFailsTheRun(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{Buffer: 1, MaxWait: 2 * time.Millisecond})
	ctx := context.Background()
	if err := em.Emit(ctx, eventtest.Chunk{Content: "1"}); err != nil {
		t.Fatal(err)
	}
	err := em.Emit(ctx, eventtest.Chunk{Content: "2"})
	if !errors.Is(err, event.ErrSlowConsumer) || !strings.Contains(err.Error(), "1-event buffer") {
		t.Fatalf("Emit = %v, want ErrSlowConsumer naming the buffer", err)
	}
	if err2 := em.Emit(ctx, eventtest.Done{}); !errors.Is(err2, event.ErrSlowConsumer) {
		t.Errorf("Emit after failure = %v, want ErrSlowConsumer", err2)
	}
	evs, cerr := collect(t, ctx, em)
	if len(evs) != 1 || !errors.Is(cerr, event.ErrSlowConsumer) {
		t.Errorf("consumer got %d events and %v, want 1 and ErrSlowConsumer", len(evs), cerr)
	}
}

func TestEmitterConsumerStops(t *testing.T) {
	t.Run("break", func(t *testing.T) {
		em := event.NewEmitter(event.EmitterConfig{Buffer: 1})
		ctx := context.Background()
		blocked := make(chan error, 1)
		if err := em.Emit(ctx, eventtest.Chunk{Content: "1"}); err != nil {
			t.Fatal(err)
		}
		go func() { blocked <- em.Emit(ctx, eventtest.Chunk{Content: "2"}) }()
		waitFor(t, func() bool { return em.Stats().Waits == 1 })
		for range em.Events(ctx) {
			break
		}
		if err := <-blocked; !errors.Is(err, event.ErrConsumerGone) && err != nil {
			t.Errorf("waiting Emit = %v, want nil or ErrConsumerGone", err)
		}
		if err := em.Emit(ctx, eventtest.Done{}); !errors.Is(err, event.ErrConsumerGone) {
			t.Errorf("Emit after the consumer left = %v, want ErrConsumerGone", err)
		}
	})
	t.Run("context", func(t *testing.T) {
		em := event.NewEmitter(event.EmitterConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := collect(t, ctx, em)
			done <- err
		}()
		if err := em.Emit(context.Background(), eventtest.Chunk{Content: "1"}); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("consumer = %v, want context.Canceled", err)
		}
		if err := em.Emit(context.Background(), eventtest.Done{}); !errors.Is(err, event.ErrConsumerGone) {
			t.Errorf("Emit = %v, want ErrConsumerGone", err)
		}
	})
	t.Run("second consumer", func(t *testing.T) {
		em := event.NewEmitter(event.EmitterConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started, exited := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(exited)
			for _, err := range em.Events(ctx) {
				if err == nil {
					close(started)
				}
			}
		}()
		defer func() { cancel(); <-exited }()
		if err := em.Emit(ctx, eventtest.Chunk{Content: "1"}); err != nil {
			t.Fatal(err)
		}
		<-started
		_, err := collect(t, ctx, em)
		if !errors.Is(err, event.ErrConsumerActive) {
			t.Errorf("second consumer = %v, want ErrConsumerActive", err)
		}
	})
}

func TestEmitterClose(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{})
	ctx := context.Background()
	if err := em.Emit(ctx, eventtest.Chunk{Content: "a"}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("run failed")
	em.CloseWithError(boom)
	em.Close() // no effect: the first close counts
	if err := em.Emit(ctx, eventtest.Done{}); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Emit after Close = %v, want ErrClosed", err)
	}
	evs, err := collect(t, ctx, em)
	if len(evs) != 1 || !errors.Is(err, boom) {
		t.Errorf("consumer got %d events and %v, want 1 and the close error", len(evs), err)
	}
}

func TestEmitterRejectsBadPayloads(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{})
	defer em.Close()
	tests := []struct {
		p     event.Payload
		field string
	}{
		{eventtest.ToolProgress{Tool: "t", Progress: 1.5}, "progress"},
		{eventtest.ToolProgress{Progress: 0.5}, "tool"},
		{eventtest.ServerProgress{Tool: "t"}, "server"},
		{eventtest.StepStart{Step: 0, Name: "x"}, "step"},
		{event.Error{}, "message"},
		{eventtest.Question{}, "id"},
		{eventtest.ToolContent{Data: "x"}, "content_type"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.p.EventType(), tt.field), func(t *testing.T) {
			err := em.Emit(context.Background(), tt.p)
			var ve *event.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || ve.Type != tt.p.EventType() {
				t.Errorf("Emit = %v, want a ValidationError on %s", err, tt.field)
			}
		})
	}
	if err := em.Emit(context.Background(), nil); err == nil {
		t.Error("Emit(nil) succeeded")
	}
	if got := em.Stats().Emitted; got != 0 {
		t.Errorf("%d bad events were emitted", got)
	}
}

func TestEmitterPublishes(t *testing.T) {
	bus := event.NewMemoryBus(event.BusConfig{})
	defer bus.Close(context.Background())
	got := make(chan event.Event, 1)
	if _, err := bus.Subscribe(context.Background(), "usage", func(_ context.Context, ev event.Event) { got <- ev }); err != nil {
		t.Fatal(err)
	}
	em := event.NewEmitter(event.EmitterConfig{Bus: bus})
	defer em.Close()
	if err := em.Emit(context.Background(), eventtest.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}); err != nil {
		t.Fatal(err)
	}
	ev := <-got
	if u := ev.Payload.(eventtest.Usage); u.InputTokens != 1 || ev.RequestID != em.RequestID() || ev.Seq != 1 {
		t.Errorf("bus got %+v", ev)
	}
	if len(em.RequestID()) != 32 {
		t.Errorf("generated request id %q is not 128-bit hex", em.RequestID())
	}
}

// waitFor polls cond for up to 30 s: a generous deadline that only bounds
// a broken test on a loaded machine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkEmitter measures events per second from one producer to one
// consumer through the default 256-event buffer.
func BenchmarkEmitter(b *testing.B) {
	b.ReportAllocs()
	em := event.NewEmitter(event.EmitterConfig{RequestID: "bench"})
	ctx := context.Background()
	done := make(chan int)
	go func() {
		n := 0
		for _, err := range em.Events(ctx) {
			if err != nil {
				b.Error(err)
			}
			n++
		}
		done <- n
	}()
	p := eventtest.Chunk{Content: "token "}
	start := time.Now()
	for b.Loop() {
		if err := em.Emit(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	em.Close()
	n := <-done
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
}
