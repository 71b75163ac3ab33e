package postgres_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
)

// newThread saves a thread with head and rolled set as given, and
// active pending runs on it (plus one ended run).
func newThread(t *testing.T, st *postgres.Store, id, head string, rolled bool, active int) *server.Thread {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	th := &server.Thread{ID: id, Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy,
		Metadata: map[string]any{"k": "v"}, Values: json.RawMessage(`{"old":1}`),
		Interrupts: map[string][]server.Interrupt{"task": {{ID: "i", Value: json.RawMessage(`1`)}}},
		GraphID:    "g", Head: head, Rolled: rolled}
	if err := st.CreateThread(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	for i := range active + 1 {
		status := server.RunPending
		if i == active {
			status = server.RunSuccess
		}
		r := &server.Run{ID: fmt.Sprintf("%s-r%d", id, i), ThreadID: id, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: status, Owner: "o"}
		if err := st.CreateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	return th
}

// TestRefreshThreadMatchesApply compares RefreshThread, in SQL, with
// ThreadRefresh.Apply, in Go, over the refreshes a run's end makes
// (state or none, next tasks or none, failed, cancelled) on threads with
// and without a head of their own, rolled back or not, with 0 to 2
// active runs, one of them excluded or not: the thread records and the
// active counts must be the same.
func TestRefreshThreadMatchesApply(t *testing.T) {
	st := open(t)
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	n := 0
	for _, head := range []string{"", "cp1"} {
		for _, rolled := range []bool{false, true} {
			for active := range 3 {
				for _, f := range []server.ThreadRefresh{
					{},
					{State: true, Values: json.RawMessage(`{"new":2}`), Interrupts: map[string][]server.Interrupt{}},
					{State: true, Values: json.RawMessage(`{"new":2}`), Next: true,
						Interrupts: map[string][]server.Interrupt{"t2": {{ID: "x", Value: json.RawMessage(`"ask"`)}}}},
					{State: true, Values: json.RawMessage(`{"new":2}`), Next: true, Cancelled: true},
					{Failed: true},
					{State: true, Values: json.RawMessage(`{"new":2}`), Failed: true},
				} {
					for _, exclude := range []bool{false, true} {
						n++
						id := fmt.Sprintf("t%d", n)
						want := newThread(t, st, id, head, rolled, active)
						f.At = at
						f.Exclude = nil
						wantActive := active
						if exclude && active > 0 {
							f.Exclude = []string{id + "-r0"}
							wantActive--
						}
						f.Apply(want, wantActive)
						got, err := st.RefreshThread(t.Context(), id, f)
						if err != nil {
							t.Fatal(err)
						}
						if got != wantActive {
							t.Errorf("%s (head %q, rolled %v, %+v): %d active runs, want %d", id, head, rolled, f, got, wantActive)
						}
						th, err := st.Thread(t.Context(), id)
						if err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(th, want) {
							t.Errorf("%s (head %q, rolled %v, %+v):\n got %+v\nwant %+v", id, head, rolled, f, th, want)
						}
					}
				}
			}
		}
	}
	if got, err := st.RefreshThread(t.Context(), "missing", server.ThreadRefresh{At: at}); got != 0 || err != nil {
		t.Errorf("RefreshThread of a missing thread: %d, %v; want 0, nil", got, err)
	}
}

// TestRunRecorder checks the other RunRecorder methods against the
// read-modify-writes they replace.
func TestRunRecorder(t *testing.T) {
	st := open(t)
	ctx := t.Context()
	newThread(t, st, "t", "", false, 0)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	r := &server.Run{ID: "r", ThreadID: "t", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o", Kwargs: json.RawMessage(`{}`)}
	md := map[string]any{"graph_id": "g2", "assistant_id": "a2"}
	if err := st.CreateRunBusy(ctx, r, "g2", md); err != nil {
		t.Fatal(err)
	}
	th, err := st.Thread(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status != server.ThreadBusy || th.GraphID != "g2" || !th.UpdatedAt.Equal(at) ||
		!reflect.DeepEqual(th.Metadata, map[string]any{"k": "v", "graph_id": "g2", "assistant_id": "a2"}) {
		t.Errorf("thread after CreateRunBusy: %+v; want busy, graph g2, updated %v, metadata merged", th, at)
	}
	if err := st.CreateRunBusy(ctx, r, "g2", md); !errors.Is(err, server.ErrExists) {
		t.Errorf("CreateRunBusy of a taken id: %v; want ErrExists", err)
	}
	orphan := *r
	orphan.ID, orphan.ThreadID = "r2", "missing"
	if err := st.CreateRunBusy(ctx, &orphan, "g2", md); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("CreateRunBusy on a missing thread: %v; want ErrNotFound", err)
	}

	claimed, ct, err := st.ClaimThread(ctx, "t", "w", time.Minute)
	if err != nil || claimed == nil || claimed.ID != "r" || claimed.Status != server.RunRunning || claimed.Attempt != 1 {
		t.Fatalf("ClaimThread: %+v, %v; want run r running, attempt 1", claimed, err)
	}
	if ct == nil || ct.ID != "t" || ct.GraphID != "g2" {
		t.Errorf("ClaimThread's thread: %+v; want thread t", ct)
	}
	if again, at, err := st.ClaimThread(ctx, "t", "w2", time.Minute); again != nil || at != nil || err != nil {
		t.Errorf("ClaimThread with the run held: %+v, %+v, %v; want nothing", again, at, err)
	}

	got, err := st.StartRun(ctx, "r", "cp1")
	if err != nil || !got.Started || got.Start != "cp1" {
		t.Fatalf("StartRun: %+v, %v; want started from cp1", got, err)
	}
	// A second start (a takeover) keeps the first start's checkpoint.
	if got, err = st.StartRun(ctx, "r", "cp2"); err != nil || !got.Started || got.Start != "cp1" {
		t.Errorf("StartRun again: %+v, %v; want started from cp1 still", got, err)
	}
	if _, err := st.StartRun(ctx, "missing", ""); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("StartRun of a missing run: %v; want ErrNotFound", err)
	}

	end := at.Add(time.Hour)
	got, err = st.EndRun(ctx, "r", server.RunError, "boom", end)
	if err != nil || got.Status != server.RunError || got.Error != "boom" || got.Worker != "" || !got.LeaseUntil.IsZero() || !got.UpdatedAt.Equal(end) {
		t.Errorf("EndRun: %+v, %v; want error boom, no worker nor lease, updated %v", got, err, end)
	}
	if cur, err := st.Run(ctx, "r"); err != nil || !reflect.DeepEqual(cur, got) {
		t.Errorf("the run after EndRun: %+v, %v; want %+v", cur, err, got)
	}
	if _, err := st.EndRun(ctx, "missing", server.RunSuccess, "", end); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("EndRun of a missing run: %v; want ErrNotFound", err)
	}

	th, active, err := st.ThreadActive(ctx, "t")
	if err != nil || th.ID != "t" || len(active) != 0 {
		t.Errorf("ThreadActive: %+v, %d runs, %v; want thread t, no active run", th, len(active), err)
	}
	if _, _, err := st.ThreadActive(ctx, "missing"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("ThreadActive of a missing thread: %v; want ErrNotFound", err)
	}
}
