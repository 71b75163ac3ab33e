package swarm_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/swarm"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// recordingSaver is a real Saver that notes the threads it was given
// checkpoints of and how many blobs of each channel each got. It forwards
// Prune, which embedding the interface would hide.
type recordingSaver struct {
	checkpoint.Saver
	mu    sync.Mutex
	blobs map[string]map[string]int // thread → channel → blobs put
}

func newRecordingSaver(s checkpoint.Saver) *recordingSaver {
	return &recordingSaver{Saver: s, blobs: map[string]map[string]int{}}
}

func (r *recordingSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	r.mu.Lock()
	m := r.blobs[cp.ThreadID]
	if m == nil {
		m = map[string]int{}
		r.blobs[cp.ThreadID] = m
	}
	for _, b := range blobs {
		m[b.Channel]++
	}
	r.mu.Unlock()
	return r.Saver.Put(ctx, expect, cp, blobs, writes)
}

func (r *recordingSaver) Prune(ctx context.Context, p checkpoint.Retention) (checkpoint.Pruned, error) {
	return checkpoint.Prune(ctx, r.Saver, p)
}

// threads returns the threads given checkpoints so far.
func (r *recordingSaver) threads() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for t := range r.blobs {
		out = append(out, t)
	}
	return out
}

// checkpoints returns how many checkpoints thread has.
func checkpoints(t *testing.T, s checkpoint.Saver, thread string) int {
	t.Helper()
	cps, err := s.List(t.Context(), thread, checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(cps)
}

// TestFinishedTaskRetention: a finished task keeps its last checkpoint
// only, which still gives its Outcome, and none of its agents' subgraph
// threads; a principal's finished tasks beyond KeepTasks, and all
// principals' beyond KeepTotalTasks, are deleted, oldest first; with
// OpenStorage's Memory the record of finished tasks outlives the Swarm.
func TestFinishedTaskRetention(t *testing.T) {
	storages(t, func(t *testing.T, st *swarm.Storage) {
		var base checkpoint.Saver = checkpoint.NewMemory()
		if st != nil {
			base = st.Checkpointer
		}
		saver := newRecordingSaver(base)
		cfg := withStorage(swarm.Config{KeepTasks: 2, KeepTotalTasks: 3}, st)
		cfg.Checkpointer = saver
		s := newSwarm(t, cfg)
		srv := apiServer(t, s, twoTokens)
		const task = "What is 15% of 240?"
		a1 := postTask(t, srv.URL, aliceToken, task).Thread
		a2 := postTask(t, srv.URL, aliceToken, task).Thread
		s.WaitRetention()
		for _, th := range []string{a1, a2} {
			if n := checkpoints(t, saver, th); n != 1 {
				t.Errorf("finished task %s has %d checkpoints; want its last only", th, n)
			}
			var out *swarm.Outcome
			for ev, err := range s.Resume(t.Context(), th) {
				if err != nil {
					t.Fatalf("Resume(%s) of a finished task: %v", th, err)
				}
				out = ev.Outcome
			}
			s.WaitRetention()
			if out == nil || out.Answer == "" || out.Status != "complete" {
				t.Errorf("Resume(%s) of a pruned finished task: %+v; want its Outcome", th, out)
			}
		}
		subs := 0
		for _, th := range saver.threads() {
			if strings.Contains(th, "|") {
				subs++
				if n := checkpoints(t, saver, th); n != 0 {
					t.Errorf("subgraph thread %s of a finished task has %d checkpoints; want none", th, n)
				}
			}
		}
		if subs == 0 {
			t.Fatal("no subgraph thread was saved: the test no longer sees the agents' checkpoints")
		}

		a3 := postTask(t, srv.URL, aliceToken, task).Thread
		s.WaitRetention()
		if n := checkpoints(t, saver, a1); n != 0 {
			t.Errorf("alice's third finished task left her first with %d checkpoints; want it deleted (KeepTasks 2)", n)
		}
		b1 := postTask(t, srv.URL, bobToken, task).Thread
		s.WaitRetention()
		for _, th := range []string{a2, a3, b1} {
			if n := checkpoints(t, saver, th); n != 1 {
				t.Errorf("task %s has %d checkpoints after bob's first; want 1: bob's tasks do not count against alice's", th, n)
			}
		}
		_, out := run(t, s, task) // no principal: the fourth task kept in all
		if n := checkpoints(t, saver, a2); n != 0 {
			t.Errorf("the oldest task %s has %d checkpoints after a fourth finished; want it deleted (KeepTotalTasks 3)", a2, n)
		}
		for _, th := range []string{a3, b1, out.Thread} {
			if n := checkpoints(t, saver, th); n != 1 {
				t.Errorf("task %s has %d checkpoints; want 1", th, n)
			}
		}
		if st == nil {
			return
		}
		// A new Swarm on the same storage knows alice's finished tasks.
		cfg.KeepTasks, cfg.KeepTotalTasks = 1, 0
		s2 := newSwarm(t, cfg)
		a4 := postTask(t, apiServer(t, s2, twoTokens).URL, aliceToken, task).Thread
		if n := checkpoints(t, saver, a3); n != 0 {
			t.Errorf("alice's task %s of the earlier Swarm has %d checkpoints after her next finished; want it deleted (KeepTasks 1)", a3, n)
		}
		for _, th := range []string{b1, out.Thread, a4} {
			if n := checkpoints(t, saver, th); n != 1 {
				t.Errorf("task %s has %d checkpoints; want 1", th, n)
			}
		}
	})
}

// TestRequestSavedOnce: a run stores its request once, from its input;
// preprocess, which normalises it, does not store it again unchanged.
func TestRequestSavedOnce(t *testing.T) {
	saver := newRecordingSaver(checkpoint.NewMemory())
	_, out := run(t, newSwarm(t, swarm.Config{Checkpointer: saver}), "What is 15% of 240?")
	saver.mu.Lock()
	n := saver.blobs[out.Thread]["Request"]
	saver.mu.Unlock()
	if n != 1 {
		t.Errorf("the request was stored %d times; want once", n)
	}
}

// TestKeepTasksNegative: a negative bound is refused, naming the field.
func TestKeepTasksNegative(t *testing.T) {
	for _, cfg := range []swarm.Config{{KeepTasks: -1}, {KeepTotalTasks: -1}} {
		_, err := swarm.New(cfg)
		field := "KeepTasks"
		if cfg.KeepTotalTasks < 0 {
			field = "KeepTotalTasks"
		}
		if err == nil || !strings.Contains(err.Error(), "Config."+field) {
			t.Errorf("New with %s negative: %v; want an error naming Config.%s", field, err, field)
		}
	}
}

// TestTaskLogBounds: the task logs in memory, SQLite and PostgreSQL agree:
// a principal's tasks beyond its bound go first, then everyone's beyond
// the total bound, counted by tasks (not by finishes: a task finished
// again leaves a gap), and a returned task stays recorded until
// forgotten.
func TestTaskLogBounds(t *testing.T) {
	check := func(t *testing.T, l swarm.TaskLog) {
		ctx := t.Context()
		finish := func(owner, thread string) []string {
			t.Helper()
			drop, err := l.Record(ctx, owner, thread, 3, 5)
			if err != nil {
				t.Fatal(err)
			}
			return drop
		}
		for _, th := range []string{"a1", "b1", "a2", "b2"} {
			if d := finish(th[:1], th); len(d) != 0 {
				t.Fatalf("finishing %s of 4 tasks dropped %v", th, d)
			}
		}
		// a busy principal finishing the same task again: no one's task
		// is beyond a bound.
		for range 10 {
			if d := finish("a", "a2"); len(d) != 0 {
				t.Fatalf("finishing a2 again dropped %v; want none (4 tasks kept)", d)
			}
		}
		if d := finish("a", "a3"); len(d) != 0 {
			t.Fatalf("a3, the 5th task: dropped %v", d)
		}
		// a4: a's 4th: a1 is beyond a's bound, and with it gone 5 remain.
		if d := finish("a", "a4"); !slices.Equal(d, []string{"a1"}) {
			t.Fatalf("a4 dropped %v; want [a1]", d)
		}
		// Not forgotten: returned again.
		if d := finish("b", "b3"); !slices.Equal(d, []string{"a1", "b1"}) {
			t.Fatalf("b3 dropped %v; want [a1 b1] (a1 not forgotten, 6 others)", d)
		}
		for _, th := range []string{"a1", "b1"} {
			if err := l.Forget(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		if d := finish("c", "c1"); !slices.Equal(d, []string{"b2"}) {
			t.Fatalf("c1 dropped %v; want [b2]", d)
		}
		// A backlog is returned MaxTaskDeletions at a time, oldest first.
		for i := range swarm.MaxTaskDeletions + 4 {
			if _, err := l.Record(ctx, "d", fmt.Sprint("d", i), 100, 100); err != nil {
				t.Fatal(err)
			}
		}
		d, err := l.Record(ctx, "d", "last", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(d) != swarm.MaxTaskDeletions || d[0] != "d0" {
			t.Fatalf("a backlog of %d tasks returned %d, starting %v; want MaxTaskDeletions (%d), oldest (d0) first", swarm.MaxTaskDeletions+5, len(d), d[:min(len(d), 1)], swarm.MaxTaskDeletions)
		}
	}
	t.Run("memory", func(t *testing.T) { check(t, swarm.NewTaskLog()) })
	t.Run("sqlite", func(t *testing.T) {
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		check(t, st.Memory)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, schema := postgresSchema(t)
		st, err := swarm.OpenStorage(t.Context(), swarm.StorageConfig{DSN: dsn, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		check(t, st.Memory)
	})
}

// faultySaver is a recordingSaver whose DeleteThread first calls
// onDelete with the thread, then fails for the threads fail names.
type faultySaver struct {
	*recordingSaver
	mu       sync.Mutex
	fail     func(thread string) bool
	onDelete func(thread string)
}

func (f *faultySaver) DeleteThread(ctx context.Context, thread string) error {
	f.mu.Lock()
	fail := f.fail != nil && f.fail(thread)
	on := f.onDelete
	f.mu.Unlock()
	if on != nil {
		on(thread)
	}
	if fail {
		return errors.New("injected: deleting " + thread)
	}
	return f.recordingSaver.DeleteThread(ctx, thread)
}

func (f *faultySaver) set(fail func(string) bool, onDelete func(string)) {
	f.mu.Lock()
	f.fail, f.onDelete = fail, onDelete
	f.mu.Unlock()
}

// TestRetentionSurvivesFailures: a task counts against KeepTasks from its
// start, so a task that never finishes is deleted like a finished one; a
// task whose checkpoints could not be deleted stays recorded and is
// deleted by a later start; the retention runs to its end when the
// request's context ends during it; a thread whose subgraph threads could
// not be deleted is not pruned (its checkpoints still name them).
func TestRetentionSurvivesFailures(t *testing.T) {
	saver := &faultySaver{recordingSaver: newRecordingSaver(checkpoint.NewMemory())}
	s := newSwarm(t, swarm.Config{Checkpointer: saver, KeepTasks: 1})
	const task = "What is 15% of 240?"
	// runCtx runs the task on ctx, calling first with its thread on its
	// first event; a false from first stops the run there.
	runCtx := func(ctx context.Context, first func(thread string) bool) string {
		t.Helper()
		var thread string
		for ev, err := range s.Run(ctx, task) {
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if thread == "" && first != nil && !first(ev.Thread) {
				s.WaitRetention()
				return ev.Thread
			}
			thread = ev.Thread
		}
		s.WaitRetention()
		return thread
	}
	t1 := runCtx(t.Context(), nil)
	// t2 starts, and its client leaves: it never finishes.
	t2 := runCtx(t.Context(), func(string) bool { return false })
	if n := checkpoints(t, saver, t1); n != 0 {
		t.Errorf("task %s has %d checkpoints once a later one started; want it deleted (KeepTasks 1)", t1, n)
	}
	if n := checkpoints(t, saver, t2); n == 0 {
		t.Fatalf("the unfinished task %s has no checkpoints", t2)
	}

	saver.set(func(th string) bool { return th == t2 }, nil)
	t3 := runCtx(t.Context(), nil)
	if n := checkpoints(t, saver, t2); n == 0 {
		t.Fatalf("task %s, whose deletion failed, has no checkpoints", t2)
	}
	// t4's request ends while the retention deletes its subgraph threads.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	t4 := runCtx(ctx, func(t4 string) bool {
		saver.set(nil, func(thread string) {
			if strings.HasPrefix(thread, t4+"|") {
				cancel()
			}
		})
		return true
	})
	for _, th := range []string{t2, t3} {
		if n := checkpoints(t, saver, th); n != 0 {
			t.Errorf("task %s has %d checkpoints after a later start; want it deleted (an unfinished task counts, a failed deletion is tried again)", th, n)
		}
	}
	if n := checkpoints(t, saver, t4); n != 1 {
		t.Errorf("task %s, whose request ended during its retention, has %d checkpoints; want 1", t4, n)
	}
	for _, th := range saver.threads() {
		if strings.HasPrefix(th, t4+"|") {
			if n := checkpoints(t, saver, th); n != 0 {
				t.Errorf("subgraph thread %s of task %s, whose request ended during its retention, has %d checkpoints; want none", th, t4, n)
			}
		}
	}

	saver.set(func(th string) bool { return strings.Contains(th, "|") }, nil)
	t5 := runCtx(t.Context(), nil)
	if n := checkpoints(t, saver, t5); n < 2 {
		t.Errorf("task %s, whose subgraph threads could not be deleted, has %d checkpoints; want it not pruned", t5, n)
	}
}

// TestRetentionSparesRunning: a task beyond KeepTasks whose run is in
// flight keeps its checkpoints: its run goes on.
func TestRetentionSparesRunning(t *testing.T) {
	called := make(chan struct{})
	client, err := agent.New(agent.Config{Model: hangOnce(called)})
	if err != nil {
		t.Fatal(err)
	}
	saver := checkpoint.NewMemory()
	s := newSwarm(t, swarm.Config{Client: client, Checkpointer: saver, KeepTasks: 1})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	first := make(chan string, 1)
	ended := make(chan error, 1)
	go func() {
		var runErr error
		for ev, err := range s.Run(ctx, teamTask) {
			select {
			case first <- ev.Thread:
			default:
			}
			if err != nil {
				runErr = err
				break
			}
		}
		ended <- runErr
	}()
	<-called // the first run waits on its first agent's model call
	running := <-first
	_, out := run(t, s, "What is 15% of 240?")
	if n := checkpoints(t, saver, running); n == 0 {
		t.Errorf("task %s, running while a later one (%s) started, lost its checkpoints; want them kept while it runs", running, out.Thread)
	}
	cancel()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the first run ended with %v; want context.Canceled", err)
	}
}

// TestRetentionRetriesSubgraphs: a task whose subgraph threads could not
// be deleted keeps its own thread, which names them, so that a later
// retention deletes them all; none is left behind.
func TestRetentionRetriesSubgraphs(t *testing.T) {
	saver := &faultySaver{recordingSaver: newRecordingSaver(checkpoint.NewMemory())}
	s := newSwarm(t, swarm.Config{Checkpointer: saver, KeepTasks: 1})
	const task = "What is 15% of 240?"
	saver.set(func(th string) bool { return strings.Contains(th, "|") }, nil)
	_, o1 := run(t, s, task) // its subgraph threads are kept
	_, o2 := run(t, s, task) // deletes o1, but for its subgraph threads
	if n := checkpoints(t, saver, o1.Thread); n == 0 {
		t.Fatalf("task %s, whose subgraph threads could not be deleted, lost its own checkpoints; want them kept for a retry", o1.Thread)
	}
	saver.set(nil, nil)
	_, o3 := run(t, s, task)
	for _, th := range saver.threads() {
		if th == o3.Thread || strings.HasPrefix(th, o3.Thread+"|") {
			continue
		}
		if n := checkpoints(t, saver, th); n != 0 {
			t.Errorf("thread %s has %d checkpoints after the retention of %s; want it deleted (tasks %s, %s are beyond KeepTasks 1)", th, n, o3.Thread, o1.Thread, o2.Thread)
		}
	}
}

// TestRetentionOffRequestPath: a start's retention deletes in the
// background, so a slow deletion does not hold the run up, and one pass
// runs at a time: a task started meanwhile does not delete again what
// the pass deletes.
func TestRetentionOffRequestPath(t *testing.T) {
	saver := &faultySaver{recordingSaver: newRecordingSaver(checkpoint.NewMemory())}
	s := newSwarm(t, swarm.Config{Checkpointer: saver, KeepTasks: 1})
	const task = "What is 15% of 240?"
	_, o1 := run(t, s, task)
	entered, firstEvent := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	deletes := 0
	saver.set(nil, func(th string) {
		if !strings.HasPrefix(th, o1.Thread) {
			return
		}
		mu.Lock()
		if th == o1.Thread {
			deletes++
		}
		mu.Unlock()
		once.Do(func() {
			close(entered)
			select { // the run goes on while its start's deletion waits
			case <-firstEvent:
			case <-time.After(time.Minute):
				t.Error("the run emitted no event while its start's retention was deleting: the retention holds the request up")
			}
		})
	})
	var t2 string
	for ev, err := range s.Run(t.Context(), task) {
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if t2 == "" {
			t2 = ev.Thread
			<-entered
			// A task started while the pass deletes starts no second pass.
			for _, err := range s.Run(t.Context(), task) {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			}
			close(firstEvent)
		}
	}
	s.WaitRetention()
	if n := checkpoints(t, saver, o1.Thread); n != 0 {
		t.Errorf("task %s has %d checkpoints once the retention of %s ended; want it deleted (KeepTasks 1)", o1.Thread, n, t2)
	}
	mu.Lock()
	defer mu.Unlock()
	if deletes != 1 {
		t.Errorf("task %s was deleted %d times; want once: one retention pass at a time", o1.Thread, deletes)
	}
}
