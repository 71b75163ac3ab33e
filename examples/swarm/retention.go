package swarm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

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
	// for a thread already recorded, which moves it last), then forgets and
	// returns the threads of owner's tasks beyond the keep most recent and
	// those of all owners beyond the keepTotal most recent. The caller
	// deletes the returned threads' checkpoints.
	Finished(ctx context.Context, owner, thread string, keep, keepTotal int) ([]string, error)
}

// finished applies the retention to thread, whose run has just ended:
// its subgraph threads (the agents' and teams' steps, which a resume no
// longer needs) are deleted, the thread is pruned to its latest checkpoint,
// which holds the Outcome (Resume and the web API's GET read it), and the
// owner's oldest finished tasks beyond Config.KeepTasks, and all owners'
// beyond Config.KeepTotalTasks, are deleted. A failure is logged, not
// returned: the run itself succeeded.
func (w *Swarm) finished(ctx context.Context, thread string) {
	fail := func(what string, err error) {
		w.log.Warn("swarm: retention of finished tasks: "+what, zap.String("thread", thread), zap.Error(err))
	}
	if err := w.dropSubgraphs(ctx, thread, 0); err != nil {
		fail("deleting the subgraph threads", err)
	}
	if _, err := checkpoint.Prune(ctx, w.saver, checkpoint.Retention{ThreadID: thread, KeepLatest: 1}); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		fail("pruning the thread to its latest checkpoint", err)
	}
	owner := ""
	if p, _, ok := strings.Cut(thread, "."); ok && principalRe.MatchString(p) {
		owner = p
	}
	drop, err := w.tasks.Finished(ctx, owner, thread, w.cfg.KeepTasks, w.cfg.KeepTotalTasks)
	if err != nil {
		fail("recording the finished task", err)
		return
	}
	for _, old := range drop {
		if err := w.deleteTask(ctx, old); err != nil {
			fail("deleting the checkpoints of task "+old, err)
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
	over := n - keep
	l.tasks = slices.DeleteFunc(l.tasks, func(t loggedTask) bool {
		if over <= 0 || t.owner != owner {
			return false
		}
		over--
		drop = append(drop, t.thread)
		return true
	})
	if over := len(l.tasks) - keepTotal; over > 0 {
		for _, t := range l.tasks[:over] {
			drop = append(drop, t.thread)
		}
		l.tasks = slices.Delete(l.tasks, 0, over)
	}
	return drop, nil
}
