package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestCountActiveRunsReadsOwnerIndex: the count of a principal's active
// runs (Config.MaxActiveRuns, at each run's creation) reads the index of
// the active runs by owner (migration 6), under the generic plan a
// prepared statement settles on: EXPLAIN names the index, and with 3000
// active runs of another principal (and 300 ended runs of the principal)
// the count reads about as many buffers as with none. Before the index it
// read every principal's active runs. The count a run's creation makes
// in its read (CreateRunClaimedCountActive) reads the index too.
func TestCountActiveRunsReadsOwnerIndex(t *testing.T) {
	st, pool := schemaStore(t, "agentserver_owneridx_")
	q := st.q
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(t.Context(), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	now := time.Now().UTC()
	exec(`INSERT INTO `+q.threads+` (id, owner, status, created, updated, graph_id, head, rolled) VALUES
		('ta', 'alice', 'busy', $1, $1, 'g', '', false), ('tb', 'bob', 'busy', $1, $1, 'g', '', false)`, now)
	runs := func(prefix, thread, owner, status string, n int) {
		t.Helper()
		exec(`INSERT INTO `+q.runs+` (id, thread_id, assistant_id, created, updated, status, multitask, owner, worker, attempt, started, start, cancel, error)
			SELECT $1 || i, $2, 'a', $5, $5, $4, 'enqueue', $3, '', 0, false, '', '', '' FROM generate_series(1, $6::int) i`, prefix, thread, owner, status, now, n)
	}
	runs("a", "ta", "alice", "pending", 2)
	exec(`ANALYZE ` + q.runs)
	short := postgrestest.Buffers(t, pool, q.countActive, "alice")
	runs("b", "tb", "bob", "pending", 2000)
	runs("c", "tb", "bob", "running", 1000)
	runs("d", "ta", "alice", "success", 300)
	exec(`ANALYZE ` + q.runs)
	long := postgrestest.Buffers(t, pool, q.countActive, "alice")
	t.Logf("count of alice's active runs: %d buffers alone, %d beside 3000 active runs of bob and 300 ended of hers", short, long)
	if long > short+3 {
		t.Errorf("the count read %d buffers beside bob's 3000 active runs, %d without them; want about as many (the index by owner)", long, short)
	}
	if n, err := st.CountActiveRuns(t.Context(), "alice"); err != nil || n != 2 {
		t.Errorf("CountActiveRuns(alice) = %d, %v; want 2", n, err)
	}
	if n, err := st.CountActiveRuns(t.Context(), "bob"); err != nil || n != 3000 {
		t.Errorf("CountActiveRuns(bob) = %d, %v; want 3000", n, err)
	}
	plan := explainGeneric(t, st, q.countActive, "alice")
	if !strings.Contains(plan, `"Index Name": "agentserver_runs_owner_active"`) {
		t.Errorf("the count's plan does not read agentserver_runs_owner_active:\n%s", plan)
	}
	// The count a run's creation makes in its read of the thread
	// (CreateRunClaimedCountActive) reads the same index, and counts the
	// owner's active runs on every thread.
	plan = explainGeneric(t, st, q.threadFreeActiveCount, "ta", "alice")
	if !strings.Contains(plan, `"Index Name": "agentserver_runs_owner_active"`) {
		t.Errorf("the creation's read does not count on agentserver_runs_owner_active:\n%s", plan)
	}
	for _, c := range []struct {
		thread, owner string
		want          int
	}{{"ta", "alice", 2}, {"ta", "bob", 3000}, {"tb", "alice", 2}} {
		counted := -1
		_, err := st.CreateRunClaimedCountActive(t.Context(), c.thread, c.owner, time.Minute, func(_ *server.Thread, _ []*server.Run, n int) (*server.Run, string, map[string]any, error) {
			counted = n
			return nil, "", nil, nil // creates nothing
		})
		if err != nil || counted != c.want {
			t.Errorf("CreateRunClaimedCountActive(%s, %s) counted %d, %v; want %d", c.thread, c.owner, counted, err, c.want)
		}
	}
}

// explainGeneric returns EXPLAIN (FORMAT JSON) of sql with args under the
// generic plan of a prepared statement, as the pool runs it after its
// first executions.
func explainGeneric(t *testing.T, st *Store, sql string, args ...string) string {
	t.Helper()
	ctx := t.Context()
	pc, err := st.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `PREPARE explained AS `+sql); err != nil {
		t.Fatal(err)
	}
	lits := make([]string, len(args))
	for i, a := range args {
		lits[i] = "'" + strings.ReplaceAll(a, "'", "''") + "'"
	}
	var out json.RawMessage
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE explained(`+strings.Join(lits, ", ")+`)`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
