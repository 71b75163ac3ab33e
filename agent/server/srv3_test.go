package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestNamedPausedCheckpointOnHead: on a thread whose head a rollback left
// at a paused checkpoint H, a run naming H (checkpoint_id) with input
// supersedes H's paused step, as LangGraph does: the step is dropped on a
// new branch from H (an update whose parent is H) and the run starts from
// START with the input (it was refused, and before that cleared the head
// and then failed, undoing the rollback). A run naming H with a zero input
// ({}) resumes H (asking again) from a copy of it (an update whose parent
// is H), as a run with no input does: it resumed H itself, so that a
// takeover before its first checkpoint would have found the run rolled
// back as the thread's latest.
func TestNamedPausedCheckpointOnHead(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, paused := pausedHead(t, ts)
	runs := ts.URL + "/threads/" + tid + "/runs"
	var out map[string]any
	code := do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "ask", "checkpoint_id": paused, "input": humanInput("y")}, nil, &out)
	if _, failed := out["__error__"]; code != 200 || failed {
		t.Fatalf("run with input naming the paused head: %d %v; want 200, the input run from START", code, out)
	}
	st := readHeadState(t, ts.URL, tid)
	if ms := st.Values.Messages; len(ms) != 2 || ms[0].Content != "x" || ms[1].Content != "y" || len(st.Next) != 1 || st.Next[0] != "ask" {
		t.Fatalf("after a run with input naming the paused head: messages %v, next %v; want x and y, asking again", ms, st.Next)
	}
	if src := firstAfter(t, ts.URL, tid, st.Checkpoint.CheckpointID, paused).Metadata["source"]; src != "update" {
		t.Errorf("the run's first checkpoint after the head: source %v; want update (the drop of the head's paused step)", src)
	}

	ts = newTestServer(t, server.Config{})
	tid, paused = pausedHead(t, ts)
	runs = ts.URL + "/threads/" + tid + "/runs"
	if code := do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "ask", "checkpoint_id": paused, "input": map[string]any{}}, nil, nil); code != 200 {
		t.Fatalf("run with a zero input naming the paused head: %d", code)
	}
	st = readHeadState(t, ts.URL, tid)
	if len(st.Next) != 1 || st.Next[0] != "ask" {
		t.Fatalf("after the run with a zero input: next %v; want [ask] (asked again)", st.Next)
	}
	if src := firstAfter(t, ts.URL, tid, st.Checkpoint.CheckpointID, paused).Metadata["source"]; src != "update" {
		t.Errorf("the run's first checkpoint after the head: source %v; want update (the run's copy of the head)", src)
	}
}

// firstAfter returns the checkpoint of thread tid that is a child of
// ancestor on the chain of parents from id.
func firstAfter(t *testing.T, url, tid, id, ancestor string) historyEntry {
	t.Helper()
	var hist []historyEntry
	if code := do(t, "POST", url+"/threads/"+tid+"/history", map[string]any{"limit": 100}, nil, &hist); code != 200 {
		t.Fatalf("history: %d", code)
	}
	byID := map[string]historyEntry{}
	for _, h := range hist {
		byID[h.Checkpoint.CheckpointID] = h
	}
	cur, ok := byID[id]
	for ok && cur.ParentCheckpoint != nil && cur.ParentCheckpoint.CheckpointID != ancestor {
		cur, ok = byID[cur.ParentCheckpoint.CheckpointID]
	}
	if !ok || cur.ParentCheckpoint == nil {
		t.Fatalf("checkpoint %s does not descend from %s", id, ancestor)
	}
	return cur
}

// TestScalarResumeRefusedBeforeCopy: a scalar command.resume of a step
// paused on two interrupts is refused, as the graph refuses it, before
// the run copies its start: the thread's history stays as it was at
// every retry. Each refused retry added a copy, the thread's latest.
func TestScalarResumeRefusedBeforeCopy(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	parallelAsk(t, ts)
	tid := newThread(t, ts.URL)
	runs := ts.URL + "/threads/" + tid + "/runs"
	if code := do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "pask", "input": map[string]any{}}, nil, nil); code != 200 {
		t.Fatalf("first run: %d", code)
	}
	before := historyIDs(t, ts.URL, tid, map[string]any{"limit": 100})
	for range 2 {
		var out map[string]any
		do(t, "POST", runs+"/wait", map[string]any{"assistant_id": "pask", "command": map[string]any{"resume": "x"}}, nil, &out)
	}
	after := historyIDs(t, ts.URL, tid, map[string]any{"limit": 100})
	if !equalStrings(after, before) {
		t.Errorf("history after two refused scalar resumes: %d checkpoints %v; want the %d before %v", len(after), after, len(before), before)
	}
}

// ghostRunStore answers a run deleted with its thread as it last read
// it: the record of a run whose thread is deleted between the rollback's
// read of the run and its update of the thread.
type ghostRunStore struct {
	server.Store
	mu   sync.Mutex
	runs map[string]*server.Run
}

func (g *ghostRunStore) Run(ctx context.Context, id string) (*server.Run, error) {
	r, err := g.Store.Run(ctx, id)
	g.mu.Lock()
	defer g.mu.Unlock()
	if errors.Is(err, server.ErrNotFound) && g.runs[id] != nil {
		return g.runs[id], nil
	}
	if err == nil {
		c := *r
		g.runs[id] = &c
	}
	return r, err
}

// TestRollbackOfDeletedThreadDropsOrphans: a run stopped for a rollback
// whose thread was deleted meanwhile drops the checkpoints saved for the
// thread after the deletion (here one saved directly, as a late save of
// the run's lands), whether the rollback finds the run's record gone
// with its thread or finds it and then not the thread. They stayed, with
// no thread to delete them with.
func TestRollbackOfDeletedThreadDropsOrphans(t *testing.T) {
	for _, ghost := range []bool{false, true} {
		t.Run(fmt.Sprintf("record_read_%v", ghost), func(t *testing.T) { testRollbackOfDeletedThread(t, ghost) })
	}
}

func testRollbackOfDeletedThread(t *testing.T, ghost bool) {
	var st server.Store = server.NewMemoryStore()
	saver := checkpoint.NewMemory()
	if ghost {
		st = &ghostRunStore{Store: st, runs: map[string]*server.Run{}}
	}
	ts := newTestServer(t, server.Config{Store: st, Checkpointer: saver})
	entered, release := make(chan struct{}, 1), make(chan struct{})
	g := graph.New[chat]()
	g.AddNode("a", func(ctx context.Context, s chat) (graph.Update[chat], error) {
		entered <- struct{}{}
		<-release // the node outlives its run's cancellation
		return chatMessages.Set([]msg{{Type: "ai", Content: "a"}}), nil
	})
	g.AddEdge(graph.START, "a").AddEdge("a", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(ts.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(ts.Server, "held", app); err != nil {
		t.Fatal(err)
	}
	tid := newThread(t, ts.URL)
	var run struct {
		RunID string `json:"run_id"`
	}
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "held", "input": map[string]any{}}, nil, &run); code != 200 {
		t.Fatalf("run: %d", code)
	}
	<-entered
	if code := do(t, "POST", ts.URL+"/threads/"+tid+"/runs/"+run.RunID+"/cancel?action=rollback", nil, nil, nil); code/100 != 2 {
		close(release)
		t.Fatalf("rollback: %d", code)
	}
	ctx := t.Context()
	if err := st.DeleteThread(ctx, tid); err != nil {
		t.Fatal(err)
	}
	if err := saver.DeleteThread(ctx, tid); err != nil {
		t.Fatal(err)
	}
	late := &checkpoint.Checkpoint{ThreadID: tid, ID: "late", Metadata: map[string]string{"source": "loop"}, CreatedAt: time.Unix(0, 0)}
	if err := saver.Put(ctx, "", late, nil, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	waitUntil(t, "the checkpoints saved after the deletion to be deleted", func() bool {
		cps, err := saver.List(ctx, tid, checkpoint.ListOptions{})
		return err == nil && len(cps) == 0
	})
}
