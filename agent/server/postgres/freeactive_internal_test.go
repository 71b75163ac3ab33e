package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestThreadFreeActiveOrder: a run's creation (CreateRunLocked, whose one
// read is threadFreeActive) hands its plan the thread once and the
// thread's active runs in ActiveRuns' order, running before pending and
// each by creation, whatever order the rows come in: here the running
// run is the second created of three. A thread without active runs, and
// a missing thread, come as they are.
func TestThreadFreeActiveOrder(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_freeactive_")
	st, err := New(t.Context(), Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
		if v[1].(bool) {
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
// initialised at every execution, with the ~30 columns it carries, and
// the order the runs need is made in Go: the sorts and the window
// function an order in SQL needed cost about a fifth of the statement's
// PostgreSQL instructions.
func TestThreadFreeActivePlan(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_freeactiveplan_")
	st, err := New(t.Context(), Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan := explainGeneric(t, st, st.q.threadFreeActive, "t")
	for _, node := range []string{"Sort", "Incremental Sort", "WindowAgg"} {
		if strings.Contains(plan, `"Node Type": "`+node+`"`) {
			t.Errorf("threadFreeActive's generic plan has a %s node:\n%s", node, plan)
		}
	}
}
