package postgres

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// TestThreadFreeActiveOrder: a run's creation (CreateRunLocked, whose one
// read is threadFreeActive) hands its plan the thread once and the
// thread's active runs in ActiveRuns' order, running before pending and
// each by creation, whatever order the rows come in: here the running
// run is the second created of three. A thread without active runs, and
// a missing thread, come as they are.
func TestThreadFreeActiveOrder(t *testing.T) {
	st, pool := schemaStore(t, "agentserver_freeactive_")
	q := st.q
	now := time.Now().UTC()
	for _, sql := range []string{
		`INSERT INTO ` + q.threads + ` (id, owner, status, created, updated, graph_id, head, rolled, vals) VALUES
			('busy', 'o', 'busy', $1, $1, 'g', '', false, '\x7b7d'), ('idle', 'o', 'idle', $1, $1, 'g', '', false, NULL)`,
		`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
			VALUES ('ended', 'busy', 'a', $1, $1, 'success', 'enqueue', 'o', '', 1, true, '', '', '')`,
		`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
			VALUES ('p1', 'busy', 'a', $1, $1, 'pending', 'enqueue', 'o', '', 0, false, '', '', '')`,
		`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
			VALUES ('r2', 'busy', 'a', $1, $1, 'running', 'enqueue', 'o', 'w', 1, true, '', '', '')`,
		`INSERT INTO ` + q.runs + ` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
			VALUES ('p3', 'busy', 'a', $1, $1, 'pending', 'enqueue', 'o', '', 0, false, '', '', '')`,
	} {
		if _, err := pool.Exec(t.Context(), sql, now); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	ids := func(runs []*server.Run) string {
		var s []string
		for _, r := range runs {
			s = append(s, r.ID+":"+r.Status)
		}
		return strings.Join(s, ",")
	}
	want, err := st.ActiveRuns(t.Context(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(want); got != "r2:running,p1:pending,p3:pending" {
		t.Fatalf("ActiveRuns(busy) = %s; want r2:running,p1:pending,p3:pending", got)
	}
	for _, c := range []struct {
		thread, active string
		found          bool
	}{
		{"busy", "r2:running,p1:pending,p3:pending", true},
		{"idle", "", true},
		{"missing", "", false},
	} {
		var seen bool
		if _, err := st.CreateRunLocked(t.Context(), c.thread, func(th *server.Thread, active []*server.Run) (*server.Run, string, map[string]any, error) {
			seen = true
			if (th != nil) != c.found {
				t.Errorf("%s: plan's thread %v; want found %v", c.thread, th, c.found)
			}
			if th != nil && (th.ID != c.thread || th.Owner != "o") {
				t.Errorf("%s: plan's thread is %q of %q; want %q of o", c.thread, th.ID, th.Owner, c.thread)
			}
			if got := ids(active); got != c.active {
				t.Errorf("%s: plan's active runs %s; want %s", c.thread, got, c.active)
			}
			return nil, "", nil, nil // creates nothing
		}); err != nil {
			t.Fatalf("CreateRunLocked(%s): %v", c.thread, err)
		}
		if !seen {
			t.Errorf("%s: plan not called", c.thread)
		}
	}
	// The thread's columns come on one row of the three.
	rows, err := pool.Query(t.Context(), q.threadFreeActive, "busy")
	if err != nil {
		t.Fatal(err)
	}
	n, withThread := 0, 0
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		n++
		if v[1] != nil { // the thread's id
			withThread++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 3 || withThread != 1 {
		t.Errorf("threadFreeActive(busy): %d rows, %d with the thread; want 3 rows, 1 with the thread", n, withThread)
	}
}

// TestThreadFreeActivePlan: the generic plan of the creation's read
// (threadFreeActive) has no sort and no window function. Each node is
// initialised at every execution, with the columns it carries, and
// the order the runs need is made in Go: the sorts and the window
// function an order in SQL needed cost about a sixth of the statement's
// PostgreSQL instructions.
func TestThreadFreeActivePlan(t *testing.T) {
	st, _ := schemaStore(t, "agentserver_freeactiveplan_")
	plan := explainGeneric(t, st, st.q.threadFreeActive, "t")
	for _, node := range []string{"Sort", "Incremental Sort", "WindowAgg"} {
		if strings.Contains(plan, `"Node Type": "`+node+`"`) {
			t.Errorf("threadFreeActive's generic plan has a %s node:\n%s", node, plan)
		}
	}
}

// TestLeaseReadsPlanNoDelete: the statements that read whether a
// LockThread lease is live on the thread (the creation's read, the claim
// and the end, under the transaction-level lock) have no DELETE of the
// lease table in their generic plans: the deletion of an expired lease
// is a function called only when one is there
// (TestLockedCallsDropExpiredLease). As a data-modifying WITH query its
// nodes were initialised at every execution, 50k to 67k of PostgreSQL's
// instructions each time, to delete nothing almost always.
func TestLeaseReadsPlanNoDelete(t *testing.T) {
	st, _ := schemaStore(t, "agentserver_leaseplan_")
	at := time.Now().UTC().Format(time.RFC3339Nano)
	for _, s := range []struct {
		name, sql string
		args      []string
	}{
		{"threadFreeActive", st.q.threadFreeActive, []string{"t"}},
		{"claimLocked", st.q.claimLocked, []string{"t", "w", "60000000"}},
		{"finishRun", st.q.finishRun, []string{"t", "{}", "true", "v", "null", "false", "false", "false", at,
			"r", "wr", "end", "e", "100", "success", "", at, "w", "1", "0", "-1", "-1"}},
	} {
		plan := explainGeneric(t, st, s.sql, s.args...)
		var v any
		if err := json.Unmarshal([]byte(plan), &v); err != nil {
			t.Fatal(err)
		}
		reads, deletes := 0, 0
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if v["Relation Name"] == "agentserver_locks" {
					reads++
					if v["Node Type"] == "ModifyTable" {
						deletes++
					}
				}
				for _, c := range v {
					walk(c)
				}
			case []any:
				for _, c := range v {
					walk(c)
				}
			}
		}
		walk(v)
		if deletes > 0 || reads == 0 {
			t.Errorf("%s's generic plan: %d nodes of the lease table, %d of them a ModifyTable; want reads alone:\n%s", s.name, reads, deletes, plan)
		}
	}
}

// TestLockedCallsDropExpiredLease: the run's creation and the claim,
// like the end (TestLockedCallDropsExpiredLease), go on past a LockThread
// lease that expired and delete its row, so that its holder finds it
// gone; a live lease stops them and stays.
func TestLockedCallsDropExpiredLease(t *testing.T) {
	st, pool := schemaStore(t, "agentserver_leasedrop_")
	ctx := t.Context()
	now := time.Now().UTC()
	if err := st.CreateThread(ctx, &server.Thread{ID: "t1", Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	lease := func(until string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `INSERT INTO `+st.q.locks+` (thread_id, token, until) VALUES ('t1', 'old', clock_timestamp() + interval '`+until+`')
			ON CONFLICT (thread_id) DO UPDATE SET token = 'old', until = EXCLUDED.until`); err != nil {
			t.Fatal(err)
		}
	}
	leases := func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+st.q.locks+` WHERE thread_id = 't1'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	plan := func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
		return &server.Run{ID: "r1", ThreadID: "t1", AssistantID: "a", CreatedAt: now, UpdatedAt: now, Status: server.RunPending,
			MultitaskStrategy: "enqueue", Owner: "o"}, "g", map[string]any{}, nil
	}
	lease("1 minute")
	if _, err := st.CreateRunLocked(ctx, "t1", plan); !errors.Is(err, server.ErrThreadLocked) {
		t.Fatalf("CreateRunLocked under a live lease: %v; want ErrThreadLocked", err)
	}
	if n := leases(); n != 1 {
		t.Fatalf("the live lease's row: %d after CreateRunLocked; want it kept", n)
	}
	lease("-1 second")
	if created, err := st.CreateRunLocked(ctx, "t1", plan); !created || err != nil {
		t.Fatalf("CreateRunLocked past an expired lease: %v, %v; want the run created", created, err)
	}
	if n := leases(); n != 0 {
		t.Fatalf("the expired lease's row: %d after CreateRunLocked; want it deleted", n)
	}
	lease("1 minute")
	if _, _, err := st.ClaimThreadLocked(ctx, "t1", "w", time.Minute); !errors.Is(err, server.ErrThreadLocked) {
		t.Fatalf("ClaimThreadLocked under a live lease: %v; want ErrThreadLocked", err)
	}
	if n := leases(); n != 1 {
		t.Fatalf("the live lease's row: %d after ClaimThreadLocked; want it kept", n)
	}
	lease("-1 second")
	if r, _, err := st.ClaimThreadLocked(ctx, "t1", "w", time.Minute); err != nil || r == nil || r.ID != "r1" {
		t.Fatalf("ClaimThreadLocked past an expired lease: %+v, %v; want r1 claimed", r, err)
	}
	if n := leases(); n != 0 {
		t.Fatalf("the expired lease's row: %d after ClaimThreadLocked; want it deleted", n)
	}
}
