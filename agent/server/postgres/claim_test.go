package postgres_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestCreateRunClaimedLocked: a run plan returns running is inserted
// claimed, as Claim claims a run: running, with plan's worker and
// attempt, and a lease from the database's clock (not the run's
// LeaseUntil, set here in the past); its thread is busy, and no claim
// takes the run while the lease lives. A run plan returns pending is
// inserted pending, with no lease.
func TestCreateRunClaimedLocked(t *testing.T) {
	stores, _, _ := twoStores(t)
	st := stores[0]
	now := time.Now().UTC()
	for _, id := range []string{"t1", "t2"} {
		if err := st.CreateThread(t.Context(), &server.Thread{ID: id, Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	const lease = time.Hour
	plan := func(id, status string) func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
		return func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
			if th == nil || len(active) != 0 {
				t.Errorf("plan got thread %v with %d active runs; want the idle thread", th, len(active))
			}
			r := &server.Run{ID: id, ThreadID: th.ID, AssistantID: "a", CreatedAt: now, UpdatedAt: now, Status: status, Owner: "o",
				Kwargs: []byte(`{}`), Metadata: map[string]any{}}
			if status == server.RunRunning {
				r.Worker, r.Attempt, r.LeaseUntil = "w1", 1, now.Add(-24*time.Hour)
			}
			return r, "g", map[string]any{"graph_id": "g"}, nil
		}
	}
	before := time.Now()
	if created, err := st.CreateRunClaimedLocked(t.Context(), "t1", lease, plan("r1", server.RunRunning)); !created || err != nil {
		t.Fatalf("CreateRunClaimedLocked: %v, %v; want created", created, err)
	}
	r, err := st.Run(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != server.RunRunning || r.Worker != "w1" || r.Attempt != 1 {
		t.Errorf("run created claimed: status %q, worker %q, attempt %d; want running, w1, 1", r.Status, r.Worker, r.Attempt)
	}
	// The host's clock is the database's here: the lease is an hour
	// from the insert, give or take the test's own time.
	if r.LeaseUntil.Before(before.Add(lease-time.Minute)) || r.LeaseUntil.After(time.Now().Add(lease+time.Minute)) {
		t.Errorf("lease until %v; want about an hour after %v (the database's clock plus the lease)", r.LeaseUntil, before)
	}
	th, err := st.Thread(t.Context(), "t1")
	if err != nil || th.Status != server.ThreadBusy || th.GraphID != "g" {
		t.Fatalf("thread after the claimed creation: %+v, %v; want busy running g", th, err)
	}
	if got, _, err := stores[1].ClaimThreadLocked(t.Context(), "t1", "w2", lease); got != nil || err != nil {
		t.Errorf("ClaimThreadLocked of the claimed run's thread: %v, %v; want nothing (its lease lives)", got, err)
	}
	if got, err := stores[1].ClaimDue(t.Context(), "w2", lease); got != nil || err != nil {
		t.Errorf("ClaimDue: %v, %v; want nothing (the run's lease lives)", got, err)
	}

	if created, err := st.CreateRunClaimedLocked(t.Context(), "t2", lease, plan("r2", server.RunPending)); !created || err != nil {
		t.Fatalf("CreateRunClaimedLocked of a pending run: %v, %v; want created", created, err)
	}
	if r, err := st.Run(t.Context(), "r2"); err != nil || r.Status != server.RunPending || r.Worker != "" || !r.LeaseUntil.IsZero() || r.Attempt != 0 {
		t.Errorf("run created pending: %+v, %v; want pending, unclaimed", r, err)
	}
	if _, err := st.CreateRunClaimedLocked(t.Context(), "t2", 0, plan("r3", server.RunRunning)); err == nil || !strings.Contains(err.Error(), "lease") {
		t.Errorf("CreateRunClaimedLocked with no lease: %v; want an error naming the lease", err)
	}
}

// claimCounter is a Store that counts the runs its ClaimThreadLocked
// claims, and those its FinishClaimNextLocked claims with a run's end.
type claimCounter struct {
	*postgres.Store
	claims, nexts atomic.Int32
}

func (c *claimCounter) FinishClaimNextLocked(ctx context.Context, e server.RunEnd, worker string, lease time.Duration) (int, server.Event, *server.Run, *server.Thread, error) {
	active, ev, next, t, err := c.Store.FinishClaimNextLocked(ctx, e, worker, lease)
	if next != nil {
		c.nexts.Add(1)
	}
	return active, ev, next, t, err
}

func (c *claimCounter) ClaimThreadLocked(ctx context.Context, threadID, worker string, lease time.Duration) (*server.Run, *server.Thread, error) {
	r, t, err := c.Store.ClaimThreadLocked(ctx, threadID, worker, lease)
	if r != nil {
		c.claims.Add(1)
	}
	return r, t, err
}

// TestRunCreatedClaimed: a run created on a thread with no active run is
// claimed by its creation (no ClaimThreadLocked), runs once with attempt
// 1 and leaves its thread idle; a run enqueued behind a running one is
// created pending and claimed by the end of the run before it
// (FinishClaimNextLocked, no ClaimThreadLocked), and a delayed run
// (after_seconds) is created pending and claimed apart.
func TestRunCreatedClaimed(t *testing.T) {
	stores, pool, schema := twoStores(t)
	st := stores[0]
	store := &claimCounter{Store: st}
	var calls atomic.Int32
	b := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{}), ran: func(string) { calls.Add(1) }}
	url := serveGraph(t, store, pool, schema, b)
	tid := newThreadAt(t, url)
	post := func(path, body string) string {
		t.Helper()
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID string `json:"run_id"`
		}
		if err := jsonDecode(resp, &r); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		return r.ID
	}
	ended := func(id string) *server.Run {
		t.Helper()
		var r *server.Run
		waitFor(t, "run "+id+" ended", func() bool {
			var err error
			r, err = st.Run(t.Context(), id)
			return err == nil && finishedStatus(r.Status)
		})
		return r
	}

	first := post("/threads/"+tid+"/runs", `{"assistant_id":"block","input":{"name":"x"}}`)
	if r := ended(first); r.Status != server.RunSuccess || r.Attempt != 1 {
		t.Fatalf("run on an idle thread: status %q, attempt %d; want success, 1", r.Status, r.Attempt)
	}
	if n := store.claims.Load(); n != 0 {
		t.Errorf("a run on an idle thread was claimed %d times apart from its creation; want 0", n)
	}

	blocked := post("/threads/"+tid+"/runs", `{"assistant_id":"block","input":{"name":"block"}}`)
	<-b.entered
	queued := post("/threads/"+tid+"/runs", `{"assistant_id":"block","input":{"name":"y"},"multitask_strategy":"enqueue"}`)
	if r, err := st.Run(t.Context(), queued); err != nil || r.Status != server.RunPending || r.Worker != "" {
		t.Errorf("run enqueued behind a running one: %+v, %v; want pending, unclaimed", r, err)
	}
	close(b.release)
	for _, id := range []string{blocked, queued} {
		if r := ended(id); r.Status != server.RunSuccess || r.Attempt != 1 {
			t.Errorf("run %s: status %q, attempt %d; want success, 1", id, r.Status, r.Attempt)
		}
	}
	if n, m := store.claims.Load(), store.nexts.Load(); n != 0 || m != 1 {
		t.Errorf("%d claims apart from creations and %d with a run's end; want 0 and 1 (the enqueued run's, with its predecessor's end)", n, m)
	}

	delayed := post("/threads/"+tid+"/runs", `{"assistant_id":"block","input":{"name":"z"},"after_seconds":0.01}`)
	if r := ended(delayed); r.Status != server.RunSuccess || r.Attempt != 1 {
		t.Errorf("delayed run: status %q, attempt %d; want success, 1", r.Status, r.Attempt)
	}
	if n := store.claims.Load(); n != 1 {
		t.Errorf("%d claims apart from creations and runs' ends; want 1 (the delayed run's)", n)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the graph ran %d times for 4 runs; want each run once", n)
	}
	waitFor(t, "the thread idle", func() bool {
		got, err := st.Thread(t.Context(), tid)
		return err == nil && got.Status == server.ThreadIdle
	})
}

// ackLost is a Store whose claimed creation commits and then reports an
// error, as when the connection drops after PostgreSQL applied the
// COMMIT.
type ackLost struct{ *postgres.Store }

func (a ackLost) CreateRunClaimedLocked(ctx context.Context, threadID string, lease time.Duration, plan func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error)) (bool, error) {
	created, err := a.Store.CreateRunClaimedLocked(ctx, threadID, lease, plan)
	if created && err == nil {
		return false, errors.New("connection reset by peer")
	}
	return created, err
}

// TestClaimedCreationAckLost: a run whose claimed creation committed
// although the call failed is executed by the instance that created it,
// at once and as its first attempt, not left claimed by nobody until its
// lease expires.
func TestClaimedCreationAckLost(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_claim_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	// A lease longer than the test: a run left to its lease would not end.
	hs, th := serveTrivial(t, server.Config{Store: ackLost{st}, Lease: time.Hour, SweepInterval: time.Hour})
	resp, err := http.Post(hs.URL+"/threads/"+th.ID+"/runs", "application/json",
		strings.NewReader(`{"assistant_id":"trivial","input":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		ID string `json:"run_id"`
	}
	if err := jsonDecode(resp, &r); err != nil || r.ID == "" {
		t.Fatalf("create: %d, %v; want the run", resp.StatusCode, err)
	}
	waitFor(t, "the run to end", func() bool {
		got, err := st.Run(t.Context(), r.ID)
		return err == nil && got.Status == server.RunSuccess
	})
	if got, _ := st.Run(t.Context(), r.ID); got.Attempt != 1 {
		t.Errorf("run attempt %d; want 1", got.Attempt)
	}
}
