package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Defaults of the retention of finished tasks (Config.KeepTasks and
// Config.KeepTotalTasks).
const (
	// DefaultKeepTasks is how many finished tasks of one principal keep
	// their checkpoints when Config.KeepTasks is zero.
	DefaultKeepTasks = 100
	// DefaultKeepTotalTasks is how many finished tasks of all principals
	// together keep their checkpoints when Config.KeepTotalTasks is zero.
	DefaultKeepTotalTasks = 100000
)

// TaskLog records the finished tasks of each principal, oldest first, so
// that the swarm deletes the checkpoints of those beyond its bounds
// (Config.KeepTasks, Config.KeepTotalTasks). Implementations must be safe
// for concurrent use; OpenStorage's Memory keeps the log across processes.
type TaskLog interface {
	// Finished records thread as owner's most recent finished task (again
	// for a thread already recorded, which moves it last), then returns,
	// oldest first, the threads of owner's tasks beyond the keep most
	// recent and, of the others, those beyond the keepTotal most recent
	// of all owners. They stay recorded: the caller deletes their
	// checkpoints and then calls Forget, so that a deletion that failed
	// is returned again by a later Finished.
	Finished(ctx context.Context, owner, thread string, keep, keepTotal int) ([]string, error)
	// Forget removes thread from the log; its checkpoints are deleted.
	Forget(ctx context.Context, thread string) error
}

// retentionTimeout bounds the retention of a finished task, which runs
// on after the request that ran the task has ended.
const retentionTimeout = time.Minute

// finished applies the retention to thread, whose run has just ended:
// its subgraph threads (the agents' and teams' steps, which a resume no
// longer needs) are deleted, the thread is pruned to its latest checkpoint,
// which holds the Outcome (Resume and the web API's GET read it), and the
// owner's oldest finished tasks beyond Config.KeepTasks, and all owners'
// beyond Config.KeepTotalTasks, are deleted. It runs to its end, within
// retentionTimeout, when ctx (the request's) is cancelled. A failure is
// logged, not returned: the run itself succeeded.
func (w *Swarm) finished(ctx context.Context, thread string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), retentionTimeout)
	defer cancel()
	fail := func(what string, err error) {
		w.log.Warn("swarm: retention of finished tasks: "+what, zap.String("thread", thread), zap.Error(err))
	}
	owner := ""
	if p, _, ok := strings.Cut(thread, "."); ok && principalRe.MatchString(p) {
		owner = p
	}
	drop, err := w.tasks.Finished(ctx, owner, thread, w.cfg.KeepTasks, w.cfg.KeepTotalTasks)
	if err != nil {
		fail("recording the finished task", err)
	}
	if err := w.dropSubgraphs(ctx, thread, 0); err != nil {
		// Pruning would delete the checkpoints that name the subgraph
		// threads: they would be left for good.
		fail("deleting the subgraph threads (the thread is not pruned)", err)
	} else if _, err := checkpoint.Prune(ctx, w.saver, checkpoint.Retention{ThreadID: thread, KeepLatest: 1}); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		fail("pruning the thread to its latest checkpoint", err)
	}
	for _, old := range drop {
		if err := w.deleteTask(ctx, old); err != nil {
			fail("deleting the checkpoints of task "+old+" (it stays recorded)", err)
			continue
		}
		if err := w.tasks.Forget(ctx, old); err != nil {
			fail("forgetting task "+old, err)
		}
	}
}

// deleteTask deletes thread and its subgraph threads.
func (w *Swarm) deleteTask(ctx context.Context, thread string) error {
	return errors.Join(w.dropSubgraphs(ctx, thread, 0), w.saver.DeleteThread(ctx, thread))
}

// maxSubgraphDepth bounds how deep dropSubgraphs follows subgraph threads:
// a team's agents are one level below the team, which is one below the
// swarm.
const maxSubgraphDepth = 8

// dropSubgraphs deletes the durable subgraph threads of thread's tasks
// (graph.SubgraphThread: thread|<task id>), theirs first.
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
		errs = append(errs, w.dropSubgraphs(ctx, sub, depth+1), w.saver.DeleteThread(ctx, sub))
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

// Finished implements TaskLog.
func (l *taskLog) Finished(ctx context.Context, owner, thread string, keep, keepTotal int) ([]string, error) {
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
		drop = append(drop, t.thread)
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
