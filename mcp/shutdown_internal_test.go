package mcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestShutdownReturnsWhenContextEnds: Shutdown returns ctx's error as soon
// as ctx ends, however long the cleanup takes; the cleanup finishes in the
// background, a later Shutdown waits for it, and nothing is left running.
func TestShutdownReturnsWhenContextEnds(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	m.goBackground(func() { <-release }) // a cleanup step that takes as long as the test says

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	first := make(chan error, 1)
	go func() { first <- m.Shutdown(ctx) }()
	select {
	case err := <-first:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown(ended ctx) = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // bounds a hang only
		close(release)
		t.Fatal("Shutdown did not return when its ctx ended")
	}

	// A later call waits for the cleanup, until its own ctx ends.
	if err := m.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("second Shutdown(ended ctx) while cleaning up = %v, want context.Canceled", err)
	}
	close(release)
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after the cleanup finished = %v", err)
	}
	goleak.VerifyNone(t, ignore)
}
