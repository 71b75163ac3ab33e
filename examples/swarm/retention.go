package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Defaults of the retention of tasks (Config.KeepTasks and
// Config.KeepTotalTasks).
const (
	// DefaultKeepTasks is how many tasks of one principal keep
	// their checkpoints when Config.KeepTasks is zero.
	DefaultKeepTasks = 100
	// DefaultKeepTotalTasks is how many tasks of all principals
	// together keep their checkpoints when Config.KeepTotalTasks is zero.
	DefaultKeepTotalTasks = 100000
)

// MaxTaskDeletions bounds how many tasks one TaskLog.Record returns, and
// so how many tasks one retention pass deletes: a backlog (the bounds were
// lowered, or deletions failed) is worked off by later passes, never all
// at once.
const MaxTaskDeletions = 16

// TaskLog records the tasks of each principal, least recently started or
// finished first, so that the swarm deletes the checkpoints of those beyond
// its bounds (Config.KeepTasks, Config.KeepTotalTasks): a task counts from
// its start, so that tasks that never finish (failed, timed out, abandoned
// by their client) are bounded too. Implementations must be safe for
// concurrent use; OpenStorage's Memory keeps the log across processes.
type TaskLog interface {
	// Record records thread as owner's most recent task (again for a
	// thread already recorded, which moves it last), then returns, oldest
	// first, the threads of owner's tasks beyond the keep most recent and,
	// of the others, those beyond the keepTotal most recent of all owners,
	// at most MaxTaskDeletions of them.
	// They stay recorded: the caller deletes their checkpoints and then
	// calls Forget, so that a deletion that failed is returned again by a
	// later Record.
	Record(ctx context.Context, owner, thread string, keep, keepTotal int) ([]string, error)
	// Forget removes thread from the log; its checkpoints are deleted.
	Forget(ctx context.Context, thread string) error
}

// retentionTimeout bounds the retention of a task, which runs on after
// the request that ran the task has ended.
const retentionTimeout = time.Minute

// retain records thread, which starts or has just finished, as its
// owner's most recent task, then deletes the tasks beyond Config.KeepTasks
// and Config.KeepTotalTasks, but for those in flight (which a later
// Record returns again, unless they moved last). It runs to its end,
// within retentionTimeout, when ctx (the request's) is cancelled. A
// failure is logged, not returned: the task runs, or ran, regardless.
//
// One deletion pass runs at a time per Swarm: when one is running, retain
// only records thread (the tasks stay recorded, and a later Record
// returns them). With background, the pass runs off the caller's path,
// on a goroutine that Close cancels and waits for.
func (w *Swarm) retain(ctx context.Context, thread string, background bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), retentionTimeout)
	defer cancel()
	drop, err := w.tasks.Record(ctx, ownerOf(thread), thread, w.cfg.KeepTasks, w.cfg.KeepTotalTasks)
	if err != nil {
		w.retentionFailed(thread, "recording the task", err)
	}
	drop = drop[:min(len(drop), MaxTaskDeletions)]
	if len(drop) == 0 || !w.retaining.CompareAndSwap(false, true) {
		return
	}
	if !background {
		defer w.retaining.Store(false)
		w.deleteTasks(ctx, thread, drop)
		return
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.retaining.Store(false)
		return
	}
	w.passes.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.passes.Done()
		defer w.retaining.Store(false)
		ctx, cancel := context.WithTimeout(w.stop, retentionTimeout)
		defer cancel()
		w.deleteTasks(ctx, thread, drop)
	}()
}

// deleteTasks deletes the tasks drop, beyond the bounds once thread was
// recorded, and forgets them; a task whose deletion failed stays recorded.
func (w *Swarm) deleteTasks(ctx context.Context, thread string, drop []string) {
	for _, old := range drop {
		if w.inFlight(old) {
			continue
		}
		if err := w.deleteTask(ctx, old); err != nil {
			w.retentionFailed(thread, "deleting the checkpoints of task "+old+" (it stays recorded)", err)
			continue
		}
		if err := w.tasks.Forget(ctx, old); err != nil {
			w.retentionFailed(thread, "forgetting task "+old, err)
		}
	}
}

func (w *Swarm) retentionFailed(thread, what string, err error) {
	w.log.Warn("swarm: retention of tasks: "+what, zap.String("thread", thread), zap.Error(err))
}

// finished applies the retention to thread, whose run has just ended:
// its subgraph threads (the agents' and teams' steps, which a resume no
// longer needs) are deleted, the thread is pruned to its latest checkpoint,
// which holds the Outcome (Resume and the web API's GET read it), and it
// is recorded again (see retain), which moves it last. It runs to its end,
// within retentionTimeout, when ctx (the request's) is cancelled.
func (w *Swarm) finished(ctx context.Context, thread string) {
	w.retain(ctx, thread, false)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), retentionTimeout)
	defer cancel()
	if err := w.dropSubgraphs(ctx, thread, 0); err != nil {
		// Pruning would delete the checkpoints that name the subgraph
		// threads: they would be left for good.
		w.retentionFailed(thread, "deleting the subgraph threads (the thread is not pruned)", err)
	} else if _, err := checkpoint.Prune(ctx, w.saver, checkpoint.Retention{ThreadID: thread, KeepLatest: 1}); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		w.retentionFailed(thread, "pruning the thread to its latest checkpoint", err)
	}
}

// inFlight reports whether a run of thread is in flight in this process.
func (w *Swarm) inFlight(thread string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running[thread] > 0
}

// begin counts a run of thread in flight until the returned func.
func (w *Swarm) begin(thread string) func() {
	w.mu.Lock()
	w.running[thread]++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		if w.running[thread]--; w.running[thread] <= 0 {
			delete(w.running, thread)
		}
		w.mu.Unlock()
	}
}

// deleteTask deletes thread's subgraph threads, then thread. thread is
// kept when a subgraph thread's deletion failed: its checkpoints name the
// subgraph threads, so that a retry finds and deletes them.
func (w *Swarm) deleteTask(ctx context.Context, thread string) error {
	if err := w.dropSubgraphs(ctx, thread, 0); err != nil {
		return err
	}
	return w.saver.DeleteThread(ctx, thread)
}

// maxSubgraphDepth bounds how deep dropSubgraphs follows subgraph threads:
// a team's agents are one level below the team, which is one below the
// swarm.
const maxSubgraphDepth = 8

// dropSubgraphs deletes the durable subgraph threads of thread's tasks
// (graph.SubgraphThread: thread|<task id>), theirs first. A subgraph
// thread is kept when the deletion of one of its own failed, so that a
// retry finds it again.
func (w *Swarm) dropSubgraphs(ctx context.Context, thread string, depth int) error {
	if depth >= maxSubgraphDepth {
		return fmt.Errorf("swarm: subgraph threads nested deeper than %d under %q", maxSubgraphDepth, thread)
	}
	cps, err := w.saver.List(ctx, thread, checkpoint.ListOptions{})
	if err != nil {
		return err
	}
	var subs []string
	for _, cp := range cps {
		for _, t := range cp.Next {
			if t.ID != "" && !slices.Contains(subs, t.ID) {
				subs = append(subs, t.ID)
			}
		}
	}
	var errs []error
	for _, id := range subs {
		sub := thread + "|" + id
		has, err := w.saver.List(ctx, sub, checkpoint.ListOptions{Limit: 1})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(has) == 0 {
			continue // the task ran no durable subgraph
		}
		if err := w.dropSubgraphs(ctx, sub, depth+1); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, w.saver.DeleteThread(ctx, sub))
	}
	return errors.Join(errs...)
}

// taskLog is the TaskLog of a Swarm without Config.Tasks: in memory,
// forgotten when the process exits.
type taskLog struct {
	mu    sync.Mutex
	tasks []loggedTask // oldest first
}

type loggedTask struct{ owner, thread string }

// Record implements TaskLog.
func (l *taskLog) Record(ctx context.Context, owner, thread string, keep, keepTotal int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tasks = slices.DeleteFunc(l.tasks, func(t loggedTask) bool { return t.thread == thread })
	l.tasks = append(l.tasks, loggedTask{owner, thread})
	n := 0
	for _, t := range l.tasks {
		if t.owner == owner {
			n++
		}
	}
	var drop []string
	overOwn, overAll := n-keep, len(l.tasks)-max(n-keep, 0)-keepTotal
	for _, t := range l.tasks {
		switch {
		case t.owner == owner && overOwn > 0:
			overOwn--
		case overAll > 0: // of the rest, oldest first
			overAll--
		default:
			continue
		}
		if drop = append(drop, t.thread); len(drop) == MaxTaskDeletions {
			break
		}
	}
	return drop, nil
}

// Forget implements TaskLog.
func (l *taskLog) Forget(ctx context.Context, thread string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tasks = slices.DeleteFunc(l.tasks, func(t loggedTask) bool { return t.thread == thread })
	return nil
}
