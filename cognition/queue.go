package cognition

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentgraph/agentgraph/resilience"
	"go.uber.org/zap"
)

// Task is one unit of background work.
type Task struct {
	// Name says what the task does ("learn", "touch"), for logs and
	// errors.
	Name string
	// UserID is the user the task is for, if any, for logs and errors.
	UserID string
	// Run does the work. It must return when ctx is done. Errors marked
	// permanent with [resilience.MarkPermanent], and cancellations, are not
	// retried.
	Run func(ctx context.Context) error
}

// QueueConfig configures [NewQueue]. The zero value is usable.
type QueueConfig struct {
	// Workers is how many tasks run at once. Zero means 1, which keeps
	// a user's tasks in order.
	Workers int
	// Size is how many tasks may wait; [Queue.Enqueue] fails with
	// [ErrQueueFull] beyond it. Zero means 1024.
	Size int
	// Retry is the retry policy of each task (other resilience stages are
	// allowed too). Nil means [DefaultQueueRetry]; a pointer to the zero
	// Config runs each task once.
	Retry *resilience.Config
	// OnFailure, if set, is called (from a worker) with every task that
	// failed for good and its last error. Failures are logged at error
	// level and counted in [QueueStats] either way.
	OnFailure func(t Task, err error)
	// Logger receives failures and retries. Nil means no logging.
	Logger *zap.Logger
}

// DefaultQueueRetry is the retry policy of tasks when QueueConfig.Retry is
// nil: 3 attempts, 1 s then 2 s apart (±20%), for every error except
// those classed [resilience.Permanent] and cancellations.
func DefaultQueueRetry() resilience.Config {
	return resilience.Config{Name: "cognition:task", Retry: resilience.RetryConfig{
		MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 10 * time.Second, Multiplier: 2, Jitter: 0.2,
		If: func(err error, c resilience.Class) bool { return c != resilience.Permanent && c != resilience.Canceled },
	}}
}

// QueueStats counts a queue's tasks.
type QueueStats struct {
	// Queued is how many tasks wait to run.
	Queued int
	// Running is how many tasks run now.
	Running int
	// Done counts tasks that succeeded.
	Done int64
	// Failed counts tasks that failed for good (after retries).
	Failed int64
	// Rejected counts tasks refused with [ErrQueueFull] or [ErrClosed].
	Rejected int64
	// Canceled counts tasks that never ran, or stopped, because Close's
	// context ended first.
	Canceled int64
}

// Queue runs tasks in the background on a fixed number of workers, with
// retries, from a bounded in-process buffer. Enqueue never blocks; Flush
// waits for the tasks queued so far; Close stops accepting tasks and waits
// for the queued ones. Tasks live in memory only: those still queued when
// the process dies are lost (Close before exit). It is safe for concurrent
// use.
type Queue struct {
	tasks  chan queued
	policy *resilience.Policy[struct{}]
	fail   func(Task, error)
	log    *zap.Logger

	// ctx is the workers' context, cancelled by Close when its own context
	// ends before the queue has drained.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.RWMutex // guards closed against sends in flight
	closed  bool
	workers sync.WaitGroup

	running                             atomic.Int64
	done, failed, rejected, canceledCnt atomic.Int64

	// seqMu orders the numbering of tasks with their sends, so that the
	// buffer holds them in sequence order.
	seqMu sync.Mutex
	seq   uint64 // number of the last task queued

	// finMu guards the finished tasks' watermark: every task numbered up
	// to finished has finished; ahead holds those above it that finished
	// out of order (at most one per worker). advanced is closed, and
	// replaced, when finished grows while a Flush waits on it (waited).
	finMu    sync.Mutex
	finished uint64
	ahead    map[uint64]struct{}
	advanced chan struct{}
	waited   bool
}

// queued is a task with its sequence number (from 1, in queue order).
type queued struct {
	Task
	seq uint64
}

// NewQueue starts a queue's workers. Call [Queue.Close] to stop them.
func NewQueue(cfg QueueConfig) (*Queue, error) {
	workers, size := cfg.Workers, cfg.Size
	if workers < 0 {
		return nil, fmt.Errorf("%w: QueueConfig.Workers is %d; use 0 for the default (1) or more", ErrInvalid, workers)
	}
	if size < 0 {
		return nil, fmt.Errorf("%w: QueueConfig.Size is %d; use 0 for the default (1024) or more", ErrInvalid, size)
	}
	workers, size = cmp.Or(workers, 1), cmp.Or(size, 1024)
	rc := DefaultQueueRetry()
	if cfg.Retry != nil {
		rc = *cfg.Retry
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	policy, err := resilience.New[struct{}](rc, resilience.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("cognition: QueueConfig.Retry: %w", err)
	}
	q := &Queue{tasks: make(chan queued, size), policy: policy, fail: cfg.OnFailure, log: log,
		ahead: make(map[uint64]struct{}), advanced: make(chan struct{})}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	q.workers.Add(workers)
	for range workers {
		go q.work()
	}
	return q, nil
}

// Enqueue queues t without blocking. It returns [ErrQueueFull] when the
// buffer is full and [ErrClosed] after Close, and in both cases the task
// will not run.
func (q *Queue) Enqueue(t Task) error {
	if t.Run == nil {
		return fmt.Errorf("%w: Task.Run is nil", ErrInvalid)
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		q.rejected.Add(1)
		return fmt.Errorf("%w: task %q for user %q not queued", ErrClosed, t.Name, t.UserID)
	}
	q.seqMu.Lock()
	defer q.seqMu.Unlock()
	select {
	case q.tasks <- queued{Task: t, seq: q.seq + 1}:
		q.seq++
		return nil
	default:
		q.rejected.Add(1)
		return fmt.Errorf("%w (%d waiting; task %q for user %q not queued)", ErrQueueFull, cap(q.tasks), t.Name, t.UserID)
	}
}

func (q *Queue) work() {
	defer q.workers.Done()
	for t := range q.tasks {
		q.run(t.Task)
		q.finish(t.seq)
	}
}

// run runs t, with retries, and counts how it ended.
func (q *Queue) run(t Task) {
	if q.ctx.Err() != nil {
		q.canceledCnt.Add(1)
		q.log.Warn("cognition: task dropped at close", zap.String("task", t.Name), zap.String("user", t.UserID))
		return
	}
	q.running.Add(1)
	_, err := q.policy.Do(q.ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, t.Run(ctx) })
	q.running.Add(-1)
	switch {
	case err == nil:
		q.done.Add(1)
	case q.ctx.Err() != nil && errors.Is(err, context.Canceled):
		q.canceledCnt.Add(1)
		q.log.Warn("cognition: task stopped at close", zap.String("task", t.Name), zap.String("user", t.UserID))
	default:
		q.failed.Add(1)
		q.log.Error("cognition: task failed", zap.String("task", t.Name), zap.String("user", t.UserID), zap.Error(err))
		if q.fail != nil {
			q.fail(t, err)
		}
	}
}

// finish records that the task numbered seq has finished and wakes the
// Flush calls waiting for it.
func (q *Queue) finish(seq uint64) {
	q.finMu.Lock()
	defer q.finMu.Unlock()
	if seq != q.finished+1 {
		q.ahead[seq] = struct{}{}
		return
	}
	q.finished = seq
	for {
		if _, ok := q.ahead[q.finished+1]; !ok {
			break
		}
		delete(q.ahead, q.finished+1)
		q.finished++
	}
	if q.waited {
		close(q.advanced)
		q.advanced, q.waited = make(chan struct{}), false
	}
}

// Flush waits until every task queued before the call has finished (done,
// failed for good, or dropped by Close), and returns nil; tasks queued
// during the call are not waited for, so Flush returns even while new ones
// keep arriving. If ctx ends first it returns ctx's error; the tasks go on.
// Flush does not report how the tasks ended: see [QueueStats] and
// QueueConfig.OnFailure. After Close it keeps working, and returns nil
// once Close has drained or dropped the queue.
func (q *Queue) Flush(ctx context.Context) error {
	q.seqMu.Lock()
	target := q.seq
	q.seqMu.Unlock()
	for {
		q.finMu.Lock()
		finished, advanced := q.finished, q.advanced
		q.waited = true
		q.finMu.Unlock()
		if finished >= target {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return fmt.Errorf("cognition: flush: %w (%d of the tasks queued before the call not finished)", ctx.Err(), target-finished)
		}
	}
}

// Close stops accepting tasks and waits until the queued and running ones
// have finished. If ctx ends first, it cancels the running tasks, drops the
// queued ones (counted in QueueStats.Canceled and logged), waits for the
// workers to return, and returns ctx's error. Calling Close again returns
// nil at once after the first has returned.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	already := q.closed
	if !already {
		q.closed = true
		close(q.tasks)
	}
	q.mu.Unlock()
	drained := make(chan struct{})
	go func() { q.workers.Wait(); close(drained) }()
	select {
	case <-drained:
		q.cancel()
		return nil
	case <-ctx.Done():
		q.cancel()
		<-drained
		if already {
			return nil
		}
		return fmt.Errorf("cognition: close: %w (%d tasks canceled)", ctx.Err(), q.canceledCnt.Load())
	}
}

// Stats returns the queue's counters.
func (q *Queue) Stats() QueueStats {
	return QueueStats{
		Queued:   len(q.tasks),
		Running:  int(q.running.Load()),
		Done:     q.done.Load(),
		Failed:   q.failed.Load(),
		Rejected: q.rejected.Load(),
		Canceled: q.canceledCnt.Load(),
	}
}
