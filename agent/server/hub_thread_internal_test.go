package server

import (
	"testing"
	"time"
)

// TestWorkerEndWakesOnlyItsThread: a worker that ends after Close wakes
// the watchers of its thread's runs (their waits on pending runs end) and
// no other run's: it woke every watched run's, each of which then read
// its run from the store again, K×M reads when K workers end with M
// watchers at shutdown (issue #21).
func TestWorkerEndWakesOnlyItsThread(t *testing.T) {
	s, err := New(Config{SweepInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	own, releaseOwn := s.hub.watch("ra", "ta")
	defer releaseOwn()
	other, releaseOther := s.hub.watch("rb", "tb")
	defer releaseOther()
	unnamed, releaseUnnamed := s.hub.watch("rc", "")
	defer releaseUnnamed()
	s.mu.Lock()
	s.work["ta"] = true
	s.mu.Unlock()
	if !s.workerEnds("ta") {
		t.Fatal("workerEnds after Close: false; want the worker to end")
	}
	select {
	case <-own:
	default:
		t.Error("the watch of a run of the ending worker's thread was not woken")
	}
	for name, ch := range map[string]<-chan struct{}{"another thread's run": other, "a run watched without its thread": unnamed} {
		select {
		case <-ch:
			t.Errorf("the watch of %s was woken by a worker of thread ta ending", name)
		default:
		}
	}
}
