package swarm_test

import (
	"context"
	"strings"
	"sync"
	"testing"

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
		if n := checkpoints(t, saver, a1); n != 0 {
			t.Errorf("alice's third finished task left her first with %d checkpoints; want it deleted (KeepTasks 2)", n)
		}
		b1 := postTask(t, srv.URL, bobToken, task).Thread
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
