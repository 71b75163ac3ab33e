package postgres

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	evpg "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

// TestStartAndEndTrimLogByFunction: a run's start and its end, which
// each append an event to the run's event log in SQL of their own, trim
// the log to its cap by the event log's function, called only when the
// log is full, not by a DELETE of their own: their plans hold no
// DELETE, whose nodes PostgreSQL initialised at every execution (about
// 30k to 60k instructions each time, callgrind). The logs are trimmed
// still: a start and an end past the cap leave the cap's newest events.
// The start's statement is the run's UPDATE itself (its plan's top
// node), which returns the run's record without an outer SELECT.
func TestStartAndEndTrimLogByFunction(t *testing.T) {
	st, _ := schemaStore(t, "agentserver_trim_")
	ctx := t.Context()
	for name, sql := range map[string]string{"start": st.q.startRunEvent, "start (async)": st.q.startRunEventAsync} {
		plan := explainGeneric(t, st, sql, "r", "cp", "w", "metadata", `\x00`, "2", "", "")
		if strings.Contains(plan, `"Operation": "Delete"`) {
			t.Errorf("the %s's plan holds a DELETE:\n%s", name, plan)
		}
		// The run's UPDATE is the statement itself, returning the
		// run: no outer SELECT carries its columns through a scan of a
		// WITH query and a join.
		var top []struct {
			Plan struct {
				NodeType  string `json:"Node Type"`
				Operation string
			}
		}
		if err := json.Unmarshal([]byte(plan), &top); err != nil || len(top) != 1 || top[0].Plan.NodeType != "ModifyTable" || top[0].Plan.Operation != "Update" {
			t.Errorf("the %s's plan is not the run's UPDATE at its top (%v):\n%s", name, err, plan)
		}
	}
	plan := explainGeneric(t, st, st.q.finishRun, "t", "{}", "true", `\x00`, "null", "false", "false", "false", "2026-01-01T00:00:00Z",
		"r", "w", "end", `\x00`, "2", "success", "", "2026-01-01T00:00:00Z", "", "0", "0", "-1", "-1")
	if strings.Contains(plan, `"Operation": "Delete"`) {
		t.Errorf("the end's plan holds a DELETE:\n%s", plan)
	}
	// The end's row joins the log's row h: h is scanned by the join,
	// the event's insert and the run's UPDATE (which waits for it), not
	// once more per column that reads it (5 scans before).
	if n := strings.Count(plan, `"CTE Name": "h"`); n > 3 {
		t.Errorf("the end's plan scans h %d times; want at most 3 (the join's, the event's insert's and the run's UPDATE's):\n%s", n, plan)
	}

	claimedRun(t, st)
	for i := range 3 {
		if _, err := st.AppendEvent(ctx, "r", "values", json.RawMessage(`{"i":`+string(rune('0'+i))+`}`), 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.StartRunEvent(ctx, "r", "cp", "metadata", json.RawMessage(`{}`), 2); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		t.Helper()
		evs, _, err := st.Events(ctx, "r", -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			out = append(out, e.Name+":"+string(e.Data))
		}
		return out
	}
	if got, want := strings.Join(names(), " "), `values:{"i":2} metadata:{}`; got != want {
		t.Errorf("after a start capped at 2: the log holds %s; want %s", got, want)
	}
	endRun(t, st)
	if got, want := strings.Join(names(), " "), `metadata:{} end:{}`; got != want {
		t.Errorf("after an end capped at 2: the log holds %s; want %s", got, want)
	}
}

// TestEpochLogTrimsOnlyWhenFull: a run's log that starts at an epoch
// above 0 (here created by an append of the run's second attempt, as
// after a loss) has the run's start and end call the trim function only
// once the log holds more than its cap, not at every append (its next
// position is above the cap from its first event); and they trim it
// still.
func TestEpochLogTrimsOnlyWhenFull(t *testing.T) {
	st, pool := schemaStore(t, "agentserver_epoch_trim_")
	schema := st.schema
	ctx := t.Context()
	calls := pgdb.Table(schema, "trim_calls")
	if _, err := pool.Exec(ctx, `CREATE TABLE `+calls+` (k text, p bigint)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE OR REPLACE FUNCTION `+evpg.TrimOneFunction(schema, logName)+`(k text, p bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $f$
	BEGIN
		INSERT INTO `+calls+` VALUES (k, p);
		DELETE FROM `+pgdb.Table(schema, logName+"_events")+` WHERE key = k AND pos = p;
		RETURN true;
	END
	$f$`); err != nil {
		t.Fatal(err)
	}
	trims := func(after string, want int) {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+calls).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("after %s of a log of epoch above 0 capped at 2: the trim function was called %d times; want %d (once per event past the cap)", after, n, want)
		}
	}

	claimedRun(t, st)
	ev, err := st.AppendEventAfter(ctx, "r", 2, -1, "values", json.RawMessage(`{}`), 2)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID < evpg.EpochSize {
		t.Fatalf("the second attempt's first event has id %d; want it in an epoch above 0", ev.ID)
	}
	trims("the first event", 0)
	if _, _, err := st.StartRunEvent(ctx, "r", "cp", "metadata", json.RawMessage(`{}`), 2); err != nil {
		t.Fatal(err)
	}
	trims("the start (2 events)", 0)
	endRun(t, st)
	trims("the end (3 events)", 1)
	evs, _, err := st.Events(ctx, "r", -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Name)
	}
	if strings.Join(got, " ") != "metadata end" {
		t.Errorf("after an end capped at 2 the log holds %v; want [metadata end]", got)
	}
}

// claimedRun creates the thread t and its pending run r, and claims the
// thread for the worker w, as a run's start finds them.
func claimedRun(t *testing.T, st *Store) {
	t.Helper()
	ctx := t.Context()
	now := time.Now().UTC()
	if err := st.CreateThread(ctx, &server.Thread{ID: "t", Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	run := &server.Run{ID: "r", ThreadID: "t", AssistantID: "a", CreatedAt: now, UpdatedAt: now, Status: server.RunPending, Kwargs: json.RawMessage(`{"assistant_id":"a"}`), MultitaskStrategy: "reject", Owner: "o"}
	if _, err := st.CreateRunLocked(ctx, "t", func(*server.Thread, []*server.Run) (*server.Run, string, map[string]any, error) {
		return run, "g", map[string]any{"graph_id": "g"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.ClaimThreadLocked(ctx, "t", "w", time.Minute); err != nil {
		t.Fatal(err)
	}
}

// endRun ends the run r of claimedRun in success with the event end, its
// log capped at 2 events.
func endRun(t *testing.T, st *Store) {
	t.Helper()
	now := time.Now().UTC()
	if _, _, err := st.FinishRunLocked(t.Context(), server.RunEnd{RunID: "r", ThreadID: "t",
		Refresh:   server.ThreadRefresh{State: true, Values: json.RawMessage(`{}`), Exclude: []string{"r"}, At: now},
		EventName: "end", EventData: json.RawMessage(`{}`), MaxEvents: 2, Status: server.RunSuccess, At: now}); err != nil {
		t.Fatal(err)
	}
}
