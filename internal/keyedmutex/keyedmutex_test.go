package keyedmutex_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/keyedmutex"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSameKeyWaits checks that a second Lock of a held key returns only
// after the holder unlocks.
func TestSameKeyWaits(t *testing.T) {
	var k keyedmutex.Mutex
	unlock, err := k.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		released bool
	)
	got := make(chan bool)
	go func() {
		u, err := k.Lock(context.Background(), "a")
		if err != nil {
			t.Error(err)
			got <- false
			return
		}
		mu.Lock()
		r := released
		mu.Unlock()
		u()
		got <- r
	}()
	// Give the waiter a chance to run; whatever the scheduling, it must not
	// get the lock before released is set.
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	released = true
	mu.Unlock()
	unlock()
	if !<-got {
		t.Error("second Lock of a held key returned before the holder unlocked")
	}
	if n := k.Len(); n != 0 {
		t.Errorf("Len = %d after all unlocks, want 0", n)
	}
}

// TestMutualExclusion runs many goroutines on a few keys and checks with a
// plain (unsynchronised) counter per key that no two ever overlap; the race
// detector and the final counts catch a lapse.
func TestMutualExclusion(t *testing.T) {
	var k keyedmutex.Mutex
	keys := []string{"a", "b", "c"}
	counts := make([]int, len(keys))
	inside := make([]int, len(keys))
	var wg sync.WaitGroup
	for g := range 12 {
		wg.Go(func() {
			i := g % len(keys)
			for range 200 {
				unlock, err := k.Lock(context.Background(), keys[i])
				if err != nil {
					t.Error(err)
					return
				}
				inside[i]++
				if inside[i] != 1 {
					t.Errorf("key %s held by %d goroutines at once", keys[i], inside[i])
				}
				counts[i]++
				inside[i]--
				unlock()
			}
		})
	}
	wg.Wait()
	for i, c := range counts {
		if c != 4*200 {
			t.Errorf("key %s: %d critical sections, want %d", keys[i], c, 4*200)
		}
	}
	if n := k.Len(); n != 0 {
		t.Errorf("Len = %d after all unlocks, want 0", n)
	}
}

// TestOtherKeysDoNotWait checks that holding one key does not block another.
func TestOtherKeysDoNotWait(t *testing.T) {
	var k keyedmutex.Mutex
	unlockA, err := k.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer unlockA()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	unlockB, err := k.Lock(ctx, "b")
	if err != nil {
		t.Fatalf("Lock(b) while a is held: %v", err)
	}
	if n := k.Len(); n != 2 {
		t.Errorf("Len = %d with a and b held, want 2", n)
	}
	unlockB()
}

// TestCancel checks that a waiter whose context ends gets its error, holds
// nothing, and leaves no trace once the holder unlocks.
func TestCancel(t *testing.T) {
	var k keyedmutex.Mutex
	unlock, err := k.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}

	done, cancel := context.WithCancel(t.Context())
	cancel()
	if u, err := k.Lock(done, "a"); !errors.Is(err, context.Canceled) || u != nil {
		t.Errorf("Lock with a canceled context on a held key = %v, %v; want nil, context.Canceled", u != nil, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error)
	go func() {
		_, err := k.Lock(ctx, "a")
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("waiting Lock after cancel = %v, want context.Canceled", err)
	}
	if n := k.Len(); n != 1 {
		t.Errorf("Len = %d with only the holder left, want 1", n)
	}
	unlock()
	if n := k.Len(); n != 0 {
		t.Errorf("Len = %d after unlock, want 0", n)
	}
	// The key is free again.
	u, err := k.Lock(done, "a")
	if err == nil {
		u()
	}
	// A free key with a canceled context may go either way (select picks
	// at random), but must not leave the key behind.
	if n := k.Len(); n != 0 {
		t.Errorf("Len = %d after lock/unlock of a free key, want 0", n)
	}
}

// TestRefs counts a key's holder and waiters, and none once all left.
func TestRefs(t *testing.T) {
	var k keyedmutex.Mutex
	unlock, err := k.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if n := k.Refs("a"); n != 1 {
		t.Fatalf("Refs with one holder = %d, want 1", n)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		u, err := k.Lock(context.Background(), "a")
		if err != nil {
			t.Error(err)
			return
		}
		u()
	}()
	for k.Refs("a") != 2 {
		time.Sleep(time.Millisecond)
	}
	if n := k.Refs("b"); n != 0 {
		t.Errorf("Refs of an unused key = %d, want 0", n)
	}
	unlock()
	<-done
	if n := k.Refs("a"); n != 0 {
		t.Errorf("Refs once all unlocked = %d, want 0", n)
	}
}
