package otlp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestShutdownStopsSignalsAtOnce: the traces and metrics providers are
// shut down at once, not one after the other: each stop below returns
// only once the other has begun, so stopping them in turn fails (after
// the bound).
func TestShutdownStopsSignalsAtOnce(t *testing.T) {
	t.Parallel()
	var begun sync.WaitGroup
	begun.Add(2)
	all := make(chan struct{})
	go func() { begun.Wait(); close(all) }()
	waitOther := func(ctx context.Context) error {
		begun.Done()
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return errors.New("the other provider's shutdown never began")
		}
	}
	shutdown := shutdownAll([]stop{{"traces", waitOther}, {"metrics", waitOther}}, 30*time.Second)
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v, want the two providers stopped at once", err)
	}
}

// TestShutdownIsBoundedByDefault: a shutdown whose context has no deadline
// gives up after the default bound, with an error naming the signal and
// DefaultShutdownTimeout; a context's own deadline is kept, longer or not.
func TestShutdownIsBoundedByDefault(t *testing.T) {
	t.Parallel()
	var got []time.Time
	var mu sync.Mutex
	record := func(ctx context.Context) error {
		dl, ok := ctx.Deadline()
		mu.Lock()
		defer mu.Unlock()
		if !ok {
			got = append(got, time.Time{})
		} else {
			got = append(got, dl)
		}
		return nil
	}
	const limit = time.Hour
	begin := time.Now()
	if err := shutdownAll([]stop{{"traces", record}}, limit)(context.Background()); err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	if len(got) != 1 || got[0].IsZero() || got[0].Sub(begin) < limit || got[0].Sub(end) > limit {
		t.Errorf("the stop's deadline, without one on the caller's context: %v (begun %v), want %s after the call", got, begin, limit)
	}
	own := time.Now().Add(3 * time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), own)
	defer cancel()
	if err := shutdownAll([]stop{{"traces", record}}, limit)(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[1].Equal(own) {
		t.Errorf("the stop's deadline with the caller's: %v, want %v", got, own)
	}

	blocked := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	// The caller's context has no deadline; cancelled only to end the
	// test should the bound not hold.
	unbounded, stopWaiting := context.WithCancel(context.Background())
	defer time.AfterFunc(30*time.Second, stopWaiting).Stop()
	err := shutdownAll([]stop{{"traces", blocked}, {"metrics", func(context.Context) error { return nil }}}, time.Millisecond)(unbounded)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "traces shutdown") ||
		!strings.Contains(err.Error(), "DefaultShutdownTimeout") || strings.Contains(err.Error(), "metrics") {
		t.Errorf("a stop that outlasts the bound: %v, want an error naming the traces shutdown and DefaultShutdownTimeout only", err)
	}
}
