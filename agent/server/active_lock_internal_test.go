package server

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestActiveGateNotHeldWhileWaitingForALock: with Config.MaxActiveRuns,
// more than maxCreating creations of one principal queued on a thread
// whose lock is held keep no place in the principal's gate, so that the
// principal's creation on another thread, and a stateless one, go on
// meanwhile; the queued ones are created once the lock is free. (Every
// request is principal "" here, as without Authenticate: a full gate
// stalled every creation of the instance.)
func TestActiveGateNotHeldWhileWaitingForALock(t *testing.T) {
	s, hs := incServer(t, Config{MaxActiveRuns: 1000})
	const busy, other = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	for _, tid := range []string{busy, other} {
		if code, body := call(t.Context(), t, hs, "POST", "/threads", `{"thread_id":"`+tid+`"}`); code != http.StatusOK {
			t.Fatalf("POST /threads: %d %s", code, body)
		}
	}
	unlock, err := s.locks.local.Lock(t.Context(), busy)
	if err != nil {
		t.Fatal(err)
	}
	const queued = maxCreating + 2
	var wg sync.WaitGroup
	for range queued {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body := call(t.Context(), t, hs, "POST", "/threads/"+busy+"/runs", `{"assistant_id":"inc","input":{"n":1}}`); code != http.StatusOK {
				t.Errorf("a creation queued on the busy thread: %d %s; want 200 once the lock is free", code, body)
			}
		}()
	}
	// All wait for the lock (the fix), or those the gate let in wait for
	// it, the others for the gate (before the fix). The minute is a
	// failure guard, not a timing assumption.
	deadline := time.Now().Add(time.Minute)
	for {
		live, waiting := gateState(s, "")
		if s.locks.local.Refs(busy) == queued+1 || live == maxCreating && waiting == queued-maxCreating {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the creations on the busy thread: %d hold or wait for its lock; gate %d in, %d waiting", s.locks.local.Refs(busy), live, waiting)
		}
		time.Sleep(time.Millisecond)
	}
	// The deadline ends a creation kept waiting by the gate, so that the
	// test fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if code, body := call(ctx, t, hs, "POST", "/threads/"+other+"/runs/wait", `{"assistant_id":"inc","input":{"n":1}}`); code != http.StatusOK {
		t.Errorf("a creation on another thread while %d wait on a busy one: %d %s; want 200", queued, code, body)
	}
	if code, body := call(ctx, t, hs, "POST", "/runs/wait", `{"assistant_id":"inc","input":{"n":1}}`); code != http.StatusOK {
		t.Errorf("a stateless creation while %d wait on a busy thread: %d %s; want 200", queued, code, body)
	}
	if live, waiting := gateState(s, ""); live != 0 || waiting != 0 {
		t.Errorf("while the creations wait for the thread's lock: gate %d in, %d waiting; want none", live, waiting)
	}
	unlock()
	wg.Wait()
}
