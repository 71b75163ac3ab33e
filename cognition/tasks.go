package cognition

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrLeaseLost is returned by [TaskQueue.Complete] and [TaskQueue.Fail]
// when the task is no longer claimed with the given token: its lease
// expired and another worker claimed it, or it was finished already.
var ErrLeaseLost = errors.New("cognition: task lease lost; the task was claimed again or finished")

// TaskState is where a durable task stands.
type TaskState string

// The states of a durable task.
const (
	TaskPending TaskState = "pending" // waits to be claimed
	TaskClaimed TaskState = "claimed" // held by a worker until its lease ends
	TaskDead    TaskState = "dead"    // failed MaxAttempts times; kept for inspection
)

// DefaultTaskAttempts is how many times a durable task is tried when
// TaskRecord.MaxAttempts is zero.
const DefaultTaskAttempts = 3

// TaskRecord is one durable task: what to do, for whom, and how it went.
type TaskRecord struct {
	// ID is assigned by [TaskQueue.Enqueue].
	ID int64
	// Kind says what the task does ("learn").
	Kind string
	// UserID is the user the task is for.
	UserID string
	// Payload is the task's input, opaque to the queue.
	Payload []byte
	// State is the task's state.
	State TaskState
	// Attempts counts the claims so far.
	Attempts int
	// MaxAttempts bounds Attempts; zero means [DefaultTaskAttempts].
	MaxAttempts int
	// LastError is the error of the last failed attempt.
	LastError string
	// Token identifies the current claim; [TaskQueue.Complete] and
	// [TaskQueue.Fail] take it back.
	Token string
}

// TaskCounts counts a durable queue's tasks by state.
type TaskCounts struct {
	Pending, Claimed, Dead int
}

// TaskQueue is a queue of learning tasks that outlives the process when
// its implementation is durable (packages cognition/sqlite and
// cognition/postgres). A worker claims a task with a lease; if the worker
// dies, the task is claimed again when the lease ends. A task that failed
// (or whose lease ended) MaxAttempts times is moved to the dead state,
// where it stays for inspection instead of being retried forever.
//
// Implementations must be safe for concurrent use by several goroutines
// and, when durable, several processes: no two claims may hold one task at
// once. Completed tasks are deleted.
type TaskQueue interface {
	// Enqueue adds a pending task and returns its ID.
	Enqueue(ctx context.Context, t TaskRecord) (int64, error)
	// Claim takes the oldest pending task, or a claimed one whose lease
	// has ended, for lease, counts the attempt and returns it with a new
	// Token. ok is false when no task is ready. Tasks whose lease ended
	// on their last attempt are moved to the dead state instead.
	Claim(ctx context.Context, lease time.Duration) (t TaskRecord, ok bool, err error)
	// Complete deletes a claimed task. It returns [ErrLeaseLost] if the
	// claim with token no longer holds the task.
	Complete(ctx context.Context, id int64, token string) error
	// Fail records cause for a claimed task and makes it pending again,
	// or dead if it has used its attempts or permanent is true. It
	// returns whether the task is now dead, and [ErrLeaseLost] if the
	// claim with token no longer holds the task.
	Fail(ctx context.Context, id int64, token, cause string, permanent bool) (dead bool, err error)
	// Counts counts the tasks by state.
	Counts(ctx context.Context) (TaskCounts, error)
	// Dead returns up to limit dead tasks, oldest first.
	Dead(ctx context.Context, limit int) ([]TaskRecord, error)
}

// NewTaskToken returns a random claim token, for implementations of
// [TaskQueue].
func NewTaskToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// MemoryTaskQueue is a [TaskQueue] in process memory, bounded in size: its
// tasks are lost with the process. It is safe for concurrent use.
type MemoryTaskQueue struct {
	mu    sync.Mutex
	size  int
	next  int64
	tasks []*memTask // in ID order
	now   func() time.Time
}

type memTask struct {
	TaskRecord
	until time.Time
}

var _ TaskQueue = (*MemoryTaskQueue)(nil)

// NewMemoryTaskQueue returns an empty queue holding at most size pending
// and claimed tasks (zero means 1024; dead ones are bounded by size too).
// now is the clock of leases; nil means time.Now.
func NewMemoryTaskQueue(size int, now func() time.Time) *MemoryTaskQueue {
	if size <= 0 {
		size = 1024
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryTaskQueue{size: size, now: now}
}

// Enqueue implements [TaskQueue]; it returns [ErrQueueFull] when the queue
// holds its size in tasks.
func (q *MemoryTaskQueue) Enqueue(ctx context.Context, t TaskRecord) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.tasks) >= q.size {
		return 0, fmt.Errorf("%w (%d tasks; task %q for user %q not queued)", ErrQueueFull, q.size, t.Kind, t.UserID)
	}
	q.next++
	t.ID, t.State, t.Attempts, t.Token, t.LastError = q.next, TaskPending, 0, "", ""
	if t.MaxAttempts <= 0 {
		t.MaxAttempts = DefaultTaskAttempts
	}
	t.Payload = append([]byte(nil), t.Payload...)
	q.tasks = append(q.tasks, &memTask{TaskRecord: t})
	return t.ID, nil
}

// Claim implements [TaskQueue].
func (q *MemoryTaskQueue) Claim(ctx context.Context, lease time.Duration) (TaskRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return TaskRecord{}, false, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, t := range q.tasks {
		if t.State == TaskClaimed && !now.Before(t.until) && t.Attempts >= t.MaxAttempts {
			t.State, t.Token, t.LastError = TaskDead, "", "lease expired on the last attempt"
		}
	}
	for _, t := range q.tasks {
		if t.State == TaskPending || (t.State == TaskClaimed && !now.Before(t.until)) {
			t.State, t.Token, t.until = TaskClaimed, NewTaskToken(), now.Add(lease)
			t.Attempts++
			out := t.TaskRecord
			out.Payload = append([]byte(nil), t.Payload...)
			return out, true, nil
		}
	}
	return TaskRecord{}, false, nil
}

func (q *MemoryTaskQueue) claimed(id int64, token string) (int, error) {
	for i, t := range q.tasks {
		if t.ID == id && t.State == TaskClaimed && t.Token == token {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w (task %d)", ErrLeaseLost, id)
}

// Complete implements [TaskQueue].
func (q *MemoryTaskQueue) Complete(ctx context.Context, id int64, token string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	i, err := q.claimed(id, token)
	if err != nil {
		return err
	}
	q.tasks = append(q.tasks[:i], q.tasks[i+1:]...)
	return nil
}

// Fail implements [TaskQueue].
func (q *MemoryTaskQueue) Fail(ctx context.Context, id int64, token, cause string, permanent bool) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i, err := q.claimed(id, token)
	if err != nil {
		return false, err
	}
	t := q.tasks[i]
	t.LastError, t.Token = cause, ""
	if permanent || t.Attempts >= t.MaxAttempts {
		t.State = TaskDead
		return true, nil
	}
	t.State = TaskPending
	return false, nil
}

// Counts implements [TaskQueue].
func (q *MemoryTaskQueue) Counts(ctx context.Context) (TaskCounts, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var c TaskCounts
	for _, t := range q.tasks {
		switch t.State {
		case TaskPending:
			c.Pending++
		case TaskClaimed:
			c.Claimed++
		case TaskDead:
			c.Dead++
		}
	}
	return c, nil
}

// Dead implements [TaskQueue].
func (q *MemoryTaskQueue) Dead(ctx context.Context, limit int) ([]TaskRecord, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []TaskRecord
	for _, t := range q.tasks {
		if t.State == TaskDead && len(out) < limit {
			out = append(out, t.TaskRecord)
		}
	}
	return out, nil
}
