package postgres_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
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

func (f *takenOverFinish) FinishRunLocked(ctx context.Context, e server.RunEnd) (int, server.Event, *server.Run, error) {
	if _, err := f.Store.UpdateRun(ctx, e.RunID, func(r *server.Run) error {
		r.Worker, r.Attempt, r.LeaseUntil = "w2", r.Attempt+1, time.Now().Add(time.Hour)
		return nil
	}); err != nil {
		return 0, server.Event{}, nil, err
	}
	return 0, server.Event{}, nil, errors.New("connection reset by peer")
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
