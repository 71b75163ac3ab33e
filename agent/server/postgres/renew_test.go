package postgres_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestRenewAttempt: after this worker's own sweep took over its run whose
// lease expired (same worker, attempt 2), RenewAttempt refuses the stale
// execution's attempt 1 with ErrNotFound, where Renew, which checks only
// the worker, extends it; the new attempt renews.
func TestRenewAttempt(t *testing.T) {
	ctx := t.Context()
	st := open(t)
	var _ server.AttemptRenewer = st
	now := time.Now().UTC()
	if err := st.CreateThread(ctx, &server.Thread{ID: "t1", CreatedAt: now, UpdatedAt: now, Status: server.ThreadIdle, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateRun(ctx, &server.Run{ID: "r1", ThreadID: "t1", CreatedAt: now, UpdatedAt: now, Status: server.RunPending,
		Kwargs: json.RawMessage(`{"assistant_id":"g"}`), Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	c, err := st.ClaimDue(ctx, "w", time.Minute)
	if err != nil || c == nil || c.Attempt != 1 {
		t.Fatalf("ClaimDue: %+v, %v; want r1, attempt 1", c, err)
	}
	if err := st.RenewAttempt(ctx, "r1", "w", 1, -time.Second); err != nil {
		t.Fatalf("RenewAttempt by the holder: %v", err)
	}
	c, err = st.ClaimDue(ctx, "w", time.Minute)
	if err != nil || c == nil || c.Attempt != 2 {
		t.Fatalf("ClaimDue after the lease expired: %+v, %v; want r1, attempt 2", c, err)
	}
	for _, tc := range []struct {
		worker  string
		attempt int
	}{{"w", 1}, {"w2", 2}} {
		if err := st.RenewAttempt(ctx, "r1", tc.worker, tc.attempt, time.Hour); !errors.Is(err, server.ErrNotFound) {
			t.Errorf("RenewAttempt by %s attempt %d: %v; want ErrNotFound", tc.worker, tc.attempt, err)
		}
	}
	if err := st.RenewAttempt(ctx, "r1", "w", 2, time.Hour); err != nil {
		t.Fatalf("RenewAttempt by attempt 2: %v", err)
	}
}
