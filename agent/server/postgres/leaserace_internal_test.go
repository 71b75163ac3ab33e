package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestExpiredLeaseChangedDuringDrop: a run's creation that finds a
// LockThread lease expired and goes to delete it, while another
// transaction holds the lease row, sees that transaction's outcome. A
// transaction that deleted the row (an unlock, say) leaves the thread
// free: the creation goes on. One that renewed the lease leaves it held:
// the creation is refused with ErrThreadLocked and the lease stays.
func TestExpiredLeaseChangedDuringDrop(t *testing.T) {
	st, pool := schemaStore(t, "agentserver_leaserace_")
	ctx := t.Context()
	now := time.Now().UTC()
	if err := st.CreateThread(ctx, &server.Thread{ID: "t1", Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	leases := func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+st.q.locks+` WHERE thread_id = 't1'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, tc := range []struct {
		name   string
		change string // what the other transaction does to the expired lease
		held   bool   // whether the lease is live after it
	}{
		{"deleted", `DELETE FROM ` + st.q.locks + ` WHERE thread_id = 't1'`, false},
		{"renewed", `UPDATE ` + st.q.locks + ` SET until = clock_timestamp() + interval '1 minute' WHERE thread_id = 't1'`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := pool.Exec(ctx, `INSERT INTO `+st.q.locks+` (thread_id, token, until) VALUES ('t1', 'old', clock_timestamp() - interval '1 second')
				ON CONFLICT (thread_id) DO UPDATE SET token = 'old', until = EXCLUDED.until`); err != nil {
				t.Fatal(err)
			}
			other, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Release()
			tx, err := other.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.Background())
			var otherPID uint32
			if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&otherPID); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, tc.change); err != nil {
				t.Fatal(err)
			}
			runID := []string{"r1", "r2"}[i]
			plan := func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
				return &server.Run{ID: runID, ThreadID: "t1", AssistantID: "a", CreatedAt: now, UpdatedAt: now, Status: server.RunPending,
					MultitaskStrategy: "enqueue", Owner: "o"}, "g", map[string]any{}, nil
			}
			type result struct {
				created bool
				err     error
			}
			done := make(chan result, 1)
			go func() {
				created, err := st.CreateRunLocked(ctx, "t1", plan)
				done <- result{created, err}
			}()
			// The creation read the expired lease in its snapshot and
			// waits, in the lease's deletion, for the other transaction.
			for waiting := 0; waiting == 0; {
				select {
				case r := <-done:
					t.Fatalf("CreateRunLocked returned %v, %v without waiting for the transaction holding the lease row", r.created, r.err)
				default:
				}
				if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, otherPID).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if tc.held {
				if !errors.Is(r.err, server.ErrThreadLocked) {
					t.Fatalf("CreateRunLocked past a lease renewed while it ran: %v, %v; want ErrThreadLocked", r.created, r.err)
				}
				if n := leases(); n != 1 {
					t.Fatalf("the renewed lease's row: %d after CreateRunLocked; want it kept", n)
				}
				if _, err := pool.Exec(ctx, `DELETE FROM `+st.q.locks+` WHERE thread_id = 't1'`); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !r.created || r.err != nil {
				t.Fatalf("CreateRunLocked past a lease deleted while it ran: %v, %v; want the run created", r.created, r.err)
			}
			if n := leases(); n != 0 {
				t.Fatalf("the deleted lease's row: %d after CreateRunLocked; want none", n)
			}
		})
	}
}
