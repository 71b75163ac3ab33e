package cognition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/resilience"
	"go.uber.org/zap"
)

// taskKindLearn is the kind of the durable tasks that learn from a turn.
const taskKindLearn = "learn"

// taskRunner runs a service's learning from a [TaskQueue].
type taskRunner struct {
	s        *Service
	q        TaskQueue
	lease    time.Duration
	attempts int
	poll     time.Duration

	wake chan struct{} // a turn was queued here
	stop chan struct{} // closed by close: claim no more
	ctx  context.Context
	kill context.CancelFunc // cancels running tasks when close gives up
	wg   sync.WaitGroup

	mu     sync.Mutex
	closed bool
}

func startTasks(s *Service, q TaskQueue, workers int, lease time.Duration, attempts int, poll time.Duration) *taskRunner {
	r := &taskRunner{s: s, q: q, lease: lease, attempts: attempts, poll: poll,
		wake: make(chan struct{}, workers), stop: make(chan struct{})}
	r.ctx, r.kill = context.WithCancel(context.Background())
	r.wg.Add(workers)
	for range workers {
		go r.work()
	}
	return r
}

// enqueue stores the turn's learning task; the store's write is bounded by
// the lease.
func (r *taskRunner) enqueue(in Interaction) error {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: turn of user %q not queued", ErrClosed, in.UserID)
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%w: turn of user %q: %v", ErrInvalid, in.UserID, err)
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.lease)
	defer cancel()
	if _, err := r.q.Enqueue(ctx, TaskRecord{Kind: taskKindLearn, UserID: in.UserID, Payload: payload, MaxAttempts: r.attempts}); err != nil {
		return fmt.Errorf("cognition: queue learning for %q: %w", in.UserID, err)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return nil
}

func (r *taskRunner) work() {
	defer r.wg.Done()
	tick := time.NewTicker(r.poll)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		t, ok, err := r.q.Claim(r.ctx, r.lease)
		if err != nil && r.ctx.Err() == nil {
			r.s.log.Error("cognition: claiming a task failed", zap.Error(err))
		}
		if ok {
			r.run(t)
			continue
		}
		select {
		case <-r.stop:
			return
		case <-r.wake:
		case <-tick.C:
		}
	}
}

// run learns from a claimed task and completes it, or records its failure.
// A task interrupted by close is left to its lease.
func (r *taskRunner) run(t TaskRecord) {
	var in Interaction
	err := json.Unmarshal(t.Payload, &in)
	if err != nil {
		err = resilience.MarkPermanent(fmt.Errorf("%w: task %d: payload: %v", ErrInvalid, t.ID, err))
	} else if t.Kind != taskKindLearn {
		err = resilience.MarkPermanent(fmt.Errorf("%w: task %d has unknown kind %q", ErrInvalid, t.ID, t.Kind))
	} else {
		ctx, cancel := context.WithTimeout(r.ctx, r.lease)
		err = r.s.learn(ctx, &learnState{in: in})
		cancel()
	}
	if r.ctx.Err() != nil {
		return // close gave up; the lease ends and another worker retries
	}
	bg := context.WithoutCancel(r.ctx)
	if err == nil {
		if err := r.q.Complete(bg, t.ID, t.Token); err != nil {
			r.s.log.Warn("cognition: completing a task failed", zap.Int64("task", t.ID), zap.Error(err))
		}
		return
	}
	permanent := resilience.Classify(err) == resilience.Permanent
	dead, ferr := r.q.Fail(bg, t.ID, t.Token, err.Error(), permanent)
	switch {
	case ferr != nil:
		r.s.log.Warn("cognition: recording a task's failure failed", zap.Int64("task", t.ID), zap.Error(errors.Join(err, ferr)))
	case dead:
		r.s.log.Error("cognition: task dead", zap.Int64("task", t.ID), zap.String("user", t.UserID), zap.Int("attempts", t.Attempts), zap.Error(err))
	default:
		r.s.log.Warn("cognition: task failed; will retry", zap.Int64("task", t.ID), zap.String("user", t.UserID), zap.Int("attempt", t.Attempts), zap.Error(err))
	}
}

// flush polls until the queue has no pending or claimed task.
func (r *taskRunner) flush(ctx context.Context) error {
	for {
		c, err := r.q.Counts(ctx)
		if err != nil {
			return fmt.Errorf("cognition: flush: %w", err)
		}
		if c.Pending+c.Claimed == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cognition: flush: %w (%d tasks pending, %d claimed)", ctx.Err(), c.Pending, c.Claimed)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// close stops claiming and waits for the running tasks; if ctx ends first
// it cancels them (their leases end, and they are retried).
func (r *taskRunner) close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		r.kill()
		return nil
	case <-ctx.Done():
		r.kill()
		<-done
		return fmt.Errorf("cognition: close: %w (running tasks left to their leases)", ctx.Err())
	}
}
