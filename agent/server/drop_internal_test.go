package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// claimedElsewhereStore stores each run as another instance would find
// it just after claiming it (running, its lease live for an hour), then
// fails the creation, as when the commit's answer was lost.
type claimedElsewhereStore struct {
	Store
	created chan string // the ids of the runs stored
}

var errAnswerLost = errors.New("claimedElsewhereStore: the commit's answer was lost")

func (c claimedElsewhereStore) CreateRun(ctx context.Context, r *Run) error {
	cp := *r
	cp.Status, cp.Worker, cp.Attempt, cp.LeaseUntil = RunRunning, "other-instance", 1, time.Now().Add(time.Hour)
	if err := c.Store.CreateRun(ctx, &cp); err != nil {
		return err
	}
	c.created <- r.ID
	return errAnswerLost
}

// TestDropTemporaryDoesNotHoldTheRequest: a stateless run whose creation
// failed after the store kept the run, which another instance claimed,
// is answered at once (500); its thread's deletion waits in the
// background for that instance to stop the run (it waited in the
// request, up to Config.Lease: 90 s here), and deletes the thread
// once the run ended. Another such deletion, still waiting when the
// server closes, stops waiting then and deletes its thread (Close
// cancelled it, and the thread stayed for good, known to no one); Close
// returns (and no goroutine stays: goleak).
func TestDropTemporaryDoesNotHoldTheRequest(t *testing.T) {
	mem := NewMemoryStore()
	st := claimedElsewhereStore{Store: mem, created: make(chan string, 2)}
	// The lease bounds how long the request waited before the fix (the
	// test then fails after it); the run's own lease, an hour, keeps the
	// sweeper from taking it over.
	s, hs := incServer(t, Config{Store: st, Lease: 90 * time.Second, SweepInterval: time.Hour})
	post := func() (int, string) {
		t.Helper()
		// The deadline only ends a request that would wait for its
		// deletion (90 s), so that the test fails instead of hanging.
		ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "POST", hs.URL+"/runs", strings.NewReader(`{"assistant_id":"inc","input":{"n":1}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatalf("POST /runs whose creation failed: %v; want an answer without waiting for the thread's deletion", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	threads := func() int {
		t.Helper()
		_, n, err := mem.SearchThreads(t.Context(), ThreadQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if code, body := post(); code != http.StatusInternalServerError {
		t.Fatalf("POST /runs whose creation failed: %d %s; want 500", code, body)
	}
	runID := <-st.created
	if threads() != 1 {
		t.Fatalf("threads after the answer: %d; want the temporary thread, still waiting for the run claimed elsewhere", threads())
	}
	// The deletion asks the other instance to cancel the run; that
	// instance stops it, and its change reaches this one. (The minute is
	// a failure guard, not a timing assumption.)
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := mem.Run(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cancel != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s claimed elsewhere: not asked to cancel", runID)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := mem.UpdateRun(t.Context(), runID, func(r *Run) error {
		r.Status, r.Worker = RunInterrupted, ""
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.remoteChange(runID)
	for threads() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the temporary thread stayed after the run claimed elsewhere ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A second one, whose deletion still waits when the server closes.
	if code, body := post(); code != http.StatusInternalServerError {
		t.Fatalf("second POST /runs whose creation failed: %d %s; want 500", code, body)
	}
	<-st.created
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	drops := s.drops
	s.mu.Unlock()
	if drops != 0 {
		t.Errorf("%d deletions go on after Close; want none", drops)
	}
	if n := threads(); n != 0 {
		t.Errorf("threads after Close: %d; want 0 (the deletion waiting when the server closed deletes its thread)", n)
	}
}

// ctxStore is a store whose thread deletion fails once its context
// ended, as a database's does.
type ctxStore struct{ Store }

func (c ctxStore) DeleteThread(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Store.DeleteThread(ctx, id)
}

// TestDropTemporaryAfterClose: the thread of a stateless run whose
// creation failed after Close is deleted (with the server's context,
// cancelled by Close, it stayed for good, counted toward
// Config.MaxThreads, its id known to no one).
func TestDropTemporaryAfterClose(t *testing.T) {
	mem := NewMemoryStore()
	s, err := New(Config{Store: ctxStore{mem}, SweepInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const tid = "00000000-0000-4000-8000-000000000003"
	th := &Thread{ID: tid, CreatedAt: now(), Status: ThreadIdle, Metadata: map[string]any{}}
	th.UpdatedAt = th.CreatedAt
	if err := s.saveThread(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.dropTemporary(tid)
	if _, err := mem.Thread(t.Context(), tid); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the temporary thread after its deletion, the server closed: %v; want ErrNotFound", err)
	}
}
