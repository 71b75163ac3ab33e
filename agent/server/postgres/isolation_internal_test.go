package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pglease"
)

// TestLockedCallsSessionRepeatableRead: the one-round-trip batches that
// take a thread's transaction-level lock and then read its LockThread
// lease (ClaimThreadLocked, FinishRunLocked, FinishClaimNextLocked) run
// at the session's default isolation. On a session set to REPEATABLE
// READ after New read the pool's default (a SET on a connection of a
// shared pool), a lease that another instance's LockThread committed
// while the batch waited for the lock is not in the batch's snapshot,
// taken before the lock: the batch must not count the thread free, but
// write nothing and return ErrThreadLocked.
func TestLockedCallsSessionRepeatableRead(t *testing.T) {
	base, schema := postgrestest.Schema(t, "agentserver_iso_")
	ctx := t.Context()
	direct, err := New(ctx, Config{Pool: base, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Close)
	// A pool of one connection, whose session is set to REPEATABLE
	// READ once the Store is made.
	pcfg, err := pgxpool.ParseConfig(base.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 1
	one, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Close)
	st, err := New(ctx, Config{Pool: one, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := one.Exec(ctx, `SET default_transaction_isolation = 'repeatable read'`); err != nil {
		t.Fatal(err)
	}
	var iso string
	if err := one.QueryRow(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&iso); err != nil || iso != "repeatable read" {
		t.Fatalf("the session's isolation: %q, %v; want repeatable read", iso, err)
	}
	at := time.Now().UTC().Add(-time.Hour)
	for _, tc := range []struct {
		name    string
		running bool // the thread's run is running under w, attempt 1; pending otherwise
		call    func(tid string, r *server.Run) error
	}{
		{"ClaimThreadLocked", false, func(tid string, _ *server.Run) error {
			_, _, err := st.ClaimThreadLocked(ctx, tid, "w", time.Minute)
			return err
		}},
		{"FinishRunLocked", true, func(tid string, r *server.Run) error {
			_, _, err := st.FinishRunLocked(ctx, isolationEnd(r))
			return err
		}},
		{"FinishClaimNextLocked", true, func(tid string, r *server.Run) error {
			_, _, _, _, err := st.FinishClaimNextLocked(ctx, isolationEnd(r), "w", time.Minute)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tid := "t-" + tc.name
			if err := direct.CreateThread(ctx, &server.Thread{ID: tid, Owner: "o", Status: server.ThreadBusy, CreatedAt: at, UpdatedAt: at, GraphID: "g"}); err != nil {
				t.Fatal(err)
			}
			r := &server.Run{ID: tid + "-r", ThreadID: tid, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"}
			if tc.running {
				r.Status, r.Worker, r.Attempt, r.LeaseUntil, r.Started = server.RunRunning, "w", 1, time.Now().Add(time.Hour), true
			}
			if err := direct.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			// Another instance's LockThread takes the lease: the thread's
			// transaction-level lock, then the lease row, committed
			// once the call waits for the lock.
			other, err := base.Acquire(ctx)
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
			if _, err := tx.Exec(ctx, `SELECT `+pglease.XactLock(direct.q.locks, "$1::text"), tid); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+direct.q.locks+` (thread_id, token, until) VALUES ($1, 'other', clock_timestamp() + interval '1 hour')`, tid); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.call(tid, r) }()
			for waiting := 0; waiting == 0; {
				select {
				case err := <-done:
					t.Fatalf("%s returned %v without waiting for the thread's lock", tc.name, err)
				default:
				}
				if err := base.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, otherPID).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				if waiting == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, server.ErrThreadLocked) {
				t.Fatalf("%s under REPEATABLE READ past a lease committed while it waited: %v; want ErrThreadLocked", tc.name, err)
			}
			got, err := direct.Run(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != r.Status || got.Worker != r.Worker || got.Attempt != r.Attempt {
				t.Fatalf("run %+v after %s under another's lease; want it left %s under %q attempt %d", got, tc.name, r.Status, r.Worker, r.Attempt)
			}
		})
	}
}

// isolationEnd is the end of run r by worker w, attempt 1.
func isolationEnd(r *server.Run) server.RunEnd {
	at := time.Now().UTC()
	return server.RunEnd{RunID: r.ID, ThreadID: r.ThreadID, Refresh: server.ThreadRefresh{State: true, Values: json.RawMessage(`{"v":1}`),
		Exclude: []string{r.ID}, At: at}, EventName: "end", EventData: json.RawMessage(`{}`),
		Status: server.RunSuccess, At: at, Worker: "w", Attempt: 1}
}
