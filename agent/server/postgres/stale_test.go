package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// takenOverFinish is a Store whose FinishRunLocked first lets another
// worker (w2, attempt 2) take the run over, as a sweeper does once the
// run's lease expired, then fails as a dropped connection would, having
// written nothing of the end.
type takenOverFinish struct {
	*postgres.Store
}

func (f *takenOverFinish) FinishRunLocked(ctx context.Context, e server.RunEnd) (int, server.Event, error) {
	if _, err := f.Store.UpdateRun(ctx, e.RunID, func(r *server.Run) error {
		r.Worker, r.Attempt, r.LeaseUntil = "w2", r.Attempt+1, time.Now().Add(time.Hour)
		return nil
	}); err != nil {
		return 0, server.Event{}, err
	}
	return 0, server.Event{}, errors.New("connection reset by peer")
}

// TestStaleFinishStepByStepLeaseLost: when a run's one-transaction end
// fails and the run's record shows it running under another worker
// (taken over while the end was under way), the server's step-by-step
// end writes nothing: the run stays the new owner's (running under w2,
// attempt 2), the thread gets no refresh and the run's log no end
// event. Before, the stale worker refreshed the thread, appended its
// end event and ended the run over the new owner's execution.
func TestStaleFinishStepByStepLeaseLost(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.WarnLevel)
	hs, th := serveTrivial(t, server.Config{Store: &takenOverFinish{Store: st}, Checkpointer: saver, Logger: zap.New(core),
		SweepInterval: time.Hour, Heartbeat: time.Hour})
	resp, err := http.Post(hs.URL+"/threads/"+th.ID+"/runs", "application/json", strings.NewReader(`{"assistant_id":"trivial","input":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		ID string `json:"run_id"`
	}
	if err := jsonDecode(resp, &created); err != nil || created.ID == "" {
		t.Fatalf("run creation: %+v, %v", created, err)
	}
	waitFor(t, "the run's end refused or recorded", func() bool {
		if logs.FilterMessageSnippet("another worker took the run over").Len() > 0 {
			return true
		}
		r, err := st.Run(t.Context(), created.ID)
		return err == nil && r.Status != server.RunRunning
	})
	r, err := st.Run(t.Context(), created.ID)
	if err != nil || r.Status != server.RunRunning || r.Worker != "w2" || r.Attempt != 2 {
		t.Fatalf("run after the stale end: %+v, %v; want running under w2, attempt 2", r, err)
	}
	evs, _, err := st.Events(t.Context(), created.ID, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Name == "end" {
			t.Errorf("the stale worker appended its end event: %+v", ev)
		}
	}
	got, err := st.Thread(t.Context(), th.ID)
	if err != nil || got.Status != server.ThreadBusy {
		t.Errorf("thread after the stale end: %+v, %v; want busy (the new owner's run)", got, err)
	}
}

// TestEndRunOwned: EndRunOwned ends a run running under the worker and
// attempt given; a run taken over (another worker, or the same worker's
// later attempt) or already ended by its new owner is left as it is,
// with ErrLeaseLost; a missing run is ErrNotFound.
func TestEndRunOwned(t *testing.T) {
	stores, _, _ := twoStores(t)
	r := leaseFixture(t, stores[0], "t1")
	at := time.Now().UTC()
	if _, err := stores[0].EndRunOwned(t.Context(), "missing", server.RunSuccess, "", at, "w1", 1); !errors.Is(err, server.ErrNotFound) {
		t.Fatalf("EndRunOwned of a missing run: %v; want ErrNotFound", err)
	}
	if _, err := stores[1].ClaimDue(t.Context(), "w2", time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, stale := range []struct {
		worker  string
		attempt int
	}{{"w1", 1}, {"w2", 1}} {
		if got, err := stores[0].EndRunOwned(t.Context(), r.ID, server.RunError, "stale", at, stale.worker, stale.attempt); !errors.Is(err, server.ErrLeaseLost) || got != nil {
			t.Errorf("EndRunOwned by %s attempt %d after the takeover: %+v, %v; want ErrLeaseLost", stale.worker, stale.attempt, got, err)
		}
	}
	if cur, err := stores[0].Run(t.Context(), r.ID); err != nil || cur.Status != server.RunRunning || cur.Worker != "w2" || cur.Attempt != 2 {
		t.Fatalf("run after the stale ends: %+v, %v; want running under w2, attempt 2", cur, err)
	}
	got, err := stores[1].EndRunOwned(t.Context(), r.ID, server.RunSuccess, "", at, "w2", 2)
	if err != nil || got.Status != server.RunSuccess || got.Worker != "" {
		t.Fatalf("EndRunOwned by the owner: %+v, %v; want success, no worker", got, err)
	}
	if _, err := stores[0].EndRunOwned(t.Context(), r.ID, server.RunError, "stale", at, "w1", 1); !errors.Is(err, server.ErrLeaseLost) {
		t.Fatalf("EndRunOwned by w1 after the owner's end: %v; want ErrLeaseLost", err)
	}
	if cur, err := stores[0].Run(t.Context(), r.ID); err != nil || cur.Status != server.RunSuccess || cur.Error != "" {
		t.Fatalf("run after the stale end: %+v, %v; want the owner's success", cur, err)
	}
}

// takenOverClaim is a Store whose first FinishClaimNextLocked finds the
// run taken over (w2, the next attempt) and ended by its new owner, as
// when the run's lease expired while it ran: the end is refused as lease
// lost, and its claim takes the thread's next run.
type takenOverClaim struct {
	*postgres.Store
	done atomic.Bool
}

func (f *takenOverClaim) FinishClaimNextLocked(ctx context.Context, e server.RunEnd, worker string, lease time.Duration) (int, server.Event, *server.Run, *server.Thread, error) {
	if !f.done.Swap(true) {
		r, err := f.Store.UpdateRun(ctx, e.RunID, func(r *server.Run) error {
			r.Worker, r.Attempt = "w2", r.Attempt+1
			return nil
		})
		if err != nil {
			return 0, server.Event{}, nil, nil, err
		}
		b := e
		b.Worker, b.Attempt, b.EventData = "w2", r.Attempt, json.RawMessage(`{"by":"w2"}`)
		b.Refresh.Exclude = append([]string{}, e.RunID)
		if _, _, err := f.Store.FinishRunLocked(ctx, b); err != nil {
			return 0, server.Event{}, nil, nil, err
		}
	}
	return f.Store.FinishClaimNextLocked(ctx, e, worker, lease)
}

// TestStaleFoldedEndRunsNextNow: a worker whose run was taken over and
// ended by another worker, and whose folded end (end and claim of the
// thread's next run, queued behind it on this instance) is refused as
// lease lost, executes the next run its claim took now: before, the
// claim committed but the run was not returned, and it stayed running
// under this worker, executed by nobody, until its lease expired.
func TestStaleFoldedEndRunsNextNow(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	b := &blocking{entered: make(chan struct{}, 4), release: make(chan struct{})}
	store := &takenOverClaim{Store: st}
	url := serveGraph(t, store, pool, schema, b)
	tid := newThreadAt(t, url)
	post := func(name string) string {
		t.Helper()
		resp, err := http.Post(url+"/threads/"+tid+"/runs", "application/json",
			strings.NewReader(`{"assistant_id":"block","input":{"name":"`+name+`"},"multitask_strategy":"enqueue"}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID string `json:"run_id"`
		}
		if err := jsonDecode(resp, &r); err != nil || r.ID == "" {
			t.Fatalf("run creation: %+v, %v", r, err)
		}
		return r.ID
	}
	first := post("block")
	<-b.entered
	queued := post("x")
	close(b.release)
	waitFor(t, "the queued run's end (not a lease later)", func() bool {
		r, err := st.Run(t.Context(), queued)
		return err == nil && r.Status == server.RunSuccess
	})
	if !store.done.Load() {
		t.Fatal("the first run's end was not folded with the next run's claim (FinishClaimNextLocked not called)")
	}
	r, err := st.Run(t.Context(), first)
	if err != nil || r.Status != server.RunSuccess || r.Attempt != 2 {
		t.Fatalf("the first run: %+v, %v; want ended by its new owner (attempt 2)", r, err)
	}
}
