package postgres_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestRunResumesAfterLostCheckpoint: with SharedCheckpoints and the
// saver's AsyncCommit, a PostgreSQL crash may lose a run's latest
// checkpoint while its instance keeps the lease. The test loses it as
// the crash would (the checkpoint's transaction undone by hand: its row,
// blobs and writes deleted, the thread's latest set back) while the
// run's node is held; when the node returns, the run's save finds the
// thread behind (a conflict on the run's own thread). The run does not
// fail: it starts again from its input, its node runs a second time, and
// it ends "success" with its reply in the thread and, the crash having
// emptied its event log, a log that holds the resumed execution's
// metadata event and ends with "end", ids increasing (issue #21).
func TestRunResumesAfterLostCheckpoint(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, SharedCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	saver, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema, AsyncCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 2), make(chan struct{})
	var mu sync.Mutex
	ran := map[string]int{}
	hs := serveGreet(t, server.Config{Store: st, Checkpointer: saver, SweepInterval: time.Hour}, "g",
		func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
			mu.Lock()
			ran[s.Name]++
			mu.Unlock()
			if s.Name == "block" {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return graph.Update[greeting]{}, ctx.Err()
				}
			}
			return greetingReply.Set("hi " + s.Name), nil
		})
	tid := newThreadAt(t, hs.URL)
	run := func(name string) string {
		t.Helper()
		resp, err := http.Post(hs.URL+"/threads/"+tid+"/runs", "application/json", strings.NewReader(`{"assistant_id":"g","input":{"name":"`+name+`"}}`))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID string `json:"run_id"`
		}
		if err := jsonDecode(resp, &r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("creating a run: %s, %v", resp.Status, err)
		}
		return r.ID
	}
	ended := func(rid string) *server.Run {
		t.Helper()
		var r *server.Run
		waitFor(t, "the run's end", func() bool {
			var err error
			r, err = st.Run(t.Context(), rid)
			return err == nil && finishedStatus(r.Status)
		})
		return r
	}
	// A first run gives the thread checkpoints that stay.
	if r := ended(run("x")); r.Status != server.RunSuccess {
		t.Fatalf("first run: %s; want success", r.Status)
	}
	rid := run("block")
	<-entered
	// What a client was sent before the crash: the log's ids up to seen.
	before, _, err := st.Events(t.Context(), rid, -1, 0)
	if err != nil || len(before) == 0 {
		t.Fatalf("the run's events before the crash: %v, %v; want its metadata event at least", before, err)
	}
	seen := before[len(before)-1].ID
	// The run's input checkpoint, the thread's latest, is lost.
	tbl := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var seq int64
	if err := tx.QueryRow(t.Context(), `SELECT seq FROM `+tbl("agentgraph_threads")+` WHERE thread_id = $1 FOR UPDATE`, tid).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DELETE FROM ` + tbl("agentgraph_checkpoints") + ` WHERE thread_id = $1 AND seq = $2`,
		`DELETE FROM ` + tbl("agentgraph_blobs") + ` WHERE thread_id = $1 AND writer = $2`,
		`DELETE FROM ` + tbl("agentgraph_writes") + ` WHERE thread_id = $1 AND checkpoint_seq = $2`,
		`UPDATE ` + tbl("agentgraph_threads") + ` SET seq = $2 - 1, latest_id = (SELECT checkpoint_id FROM ` + tbl("agentgraph_checkpoints") + `
			WHERE thread_id = $1 AND seq = $2 - 1) WHERE thread_id = $1`,
	} {
		if ct, err := tx.Exec(t.Context(), q, tid, seq); err != nil {
			t.Fatal(err)
		} else if strings.HasPrefix(q, "DELETE FROM "+tbl("agentgraph_checkpoints")) && ct.RowsAffected() != 1 {
			t.Fatalf("deleted %d checkpoints; want the latest, 1", ct.RowsAffected())
		}
	}
	// The crash empties the UNLOGGED event log tables too: the run's
	// log, its metadata event included, is gone.
	for _, q := range []string{
		`DELETE FROM ` + tbl("agentserver_log_events") + ` WHERE key = $1`,
		`DELETE FROM ` + tbl("agentserver_log_keys") + ` WHERE key = $1`,
	} {
		if ct, err := tx.Exec(t.Context(), q, rid); err != nil {
			t.Fatal(err)
		} else if ct.RowsAffected() == 0 {
			t.Fatalf("%s deleted nothing; want the run's log", q)
		}
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	close(release)
	if r := ended(rid); r.Status != server.RunSuccess {
		t.Fatalf("run whose checkpoint was lost: %s; want success", r.Status)
	}
	mu.Lock()
	n := ran["block"]
	mu.Unlock()
	if n != 2 {
		t.Errorf("the node ran %d times for the run; want 2 (again from the run's input, its checkpoint lost)", n)
	}
	th, err := st.Thread(t.Context(), tid)
	if err != nil || !strings.Contains(string(th.Values), "hi block") {
		t.Fatalf("thread %+v, %v; want the run's reply in its values", th, err)
	}
	resp, err := http.Get(hs.URL + "/threads/" + tid + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Values greeting `json:"values"`
		Next   []string `json:"next"`
	}
	if err := jsonDecode(resp, &state); err != nil || state.Values.Reply != "hi block" || len(state.Next) != 0 {
		t.Fatalf("thread's checkpoint state %+v, %v; want the run's reply and no next step", state, err)
	}
	evs, _, err := st.Events(t.Context(), rid, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ids := map[int64]bool{}
	for i, ev := range evs {
		names = append(names, ev.Name)
		if ids[ev.ID] || i > 0 && ev.ID <= evs[i-1].ID {
			t.Errorf("event %d (%s) has id %d after %d; want ids increasing, each once", i, ev.Name, ev.ID, evs[i-1].ID)
		}
		ids[ev.ID] = true
	}
	// The log the crash emptied holds the events sent since: those of the
	// step whose save was lost, then the resumed execution's, its
	// metadata event first, and the end last.
	if got := strings.Join(names, " "); strings.Count(got, "metadata") != 1 || !strings.HasSuffix(got, "end") {
		t.Errorf("events %s; want one metadata event (the resumed execution's) and end last", got)
	}
	// Its ids are above every id sent before the crash: a new epoch of
	// the attempt, not 0 again.
	if evs[0].ID <= seen {
		t.Errorf("the log the crash emptied starts again at id %d, at or below %d, an id a client was sent before the crash; want ids above it", evs[0].ID, seen)
	}
	// A client that resumes with the last id it was sent is told that
	// events were lost, then sent every event since, the end last.
	req, err := http.NewRequest("GET", hs.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Last-Event-ID", strconv.FormatInt(seen, 10))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sse := readEvents(t, resp)
	var got []string
	for _, ev := range sse {
		got = append(got, ev.Name)
	}
	if len(sse) != len(evs)+1 || sse[0].Name != "error" || !strings.Contains(sse[0].Data, "EventsDropped") {
		t.Fatalf("stream resumed after %d: %v; want an EventsDropped error event, then the %d events of the log", seen, got, len(evs))
	}
	for i, ev := range sse[1:] {
		if ev.ID != evs[i].ID || ev.Name != evs[i].Name {
			t.Errorf("resumed stream's event %d: %s %d; want %s %d", i+1, ev.Name, ev.ID, evs[i].Name, evs[i].ID)
		}
	}
}

// readEvents reads a whole SSE response.
func readEvents(t *testing.T, resp *http.Response) []sseEvent {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %s", resp.Status)
	}
	evs, err := scanEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
