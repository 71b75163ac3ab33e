package cognition_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/resilience"
)

// fastRetry is the default task retry policy with millisecond delays.
func fastRetry() *resilience.Config {
	rc := cognition.DefaultQueueRetry()
	rc.Retry.BaseDelay, rc.Retry.MaxDelay, rc.Retry.Jitter = time.Millisecond, 5*time.Millisecond, 0
	return &rc
}

func newQueue(t *testing.T, cfg cognition.QueueConfig) *cognition.Queue {
	t.Helper()
	q, err := cognition.NewQueue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close(context.Background()) })
	return q
}

func TestQueueCloseDrains(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{Workers: 2, Size: 50})
	var ran atomic.Int64
	for range 50 {
		err := q.Enqueue(cognition.Task{Name: "count", Run: func(context.Context) error {
			time.Sleep(time.Millisecond)
			ran.Add(1)
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := ran.Load(); got != 50 {
		t.Errorf("%d of 50 tasks ran before Close returned", got)
	}
	if st := q.Stats(); st.Done != 50 || st.Queued != 0 || st.Running != 0 {
		t.Errorf("stats after Close = %+v", st)
	}
	err := q.Enqueue(cognition.Task{Name: "late", Run: func(context.Context) error { return nil }})
	if !errors.Is(err, cognition.ErrClosed) {
		t.Errorf("Enqueue after Close: %v, want ErrClosed", err)
	}
	if err := q.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestQueueFull(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{Workers: 1, Size: 1})
	started, release := make(chan struct{}), make(chan struct{})
	block := cognition.Task{Name: "block", Run: func(context.Context) error {
		started <- struct{}{}
		<-release
		return nil
	}}
	if err := q.Enqueue(block); err != nil {
		t.Fatal(err)
	}
	<-started // the worker holds the first task; the buffer is empty
	if err := q.Enqueue(cognition.Task{Name: "waits", Run: func(context.Context) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	err := q.Enqueue(cognition.Task{Name: "third", UserID: "u7", Run: func(context.Context) error { return nil }})
	if !errors.Is(err, cognition.ErrQueueFull) {
		t.Fatalf("Enqueue on a full queue: %v, want ErrQueueFull", err)
	}
	for _, want := range []string{"third", "u7", "QueueSize"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	close(release)
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := q.Stats(); st.Done != 2 || st.Rejected != 1 {
		t.Errorf("stats = %+v, want 2 done and 1 rejected", st)
	}
}

func TestQueueRetries(t *testing.T) {
	t.Parallel()
	var failed []string
	var mu sync.Mutex
	q := newQueue(t, cognition.QueueConfig{Retry: fastRetry(), OnFailure: func(task cognition.Task, err error) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, task.Name+": "+err.Error())
	}})
	var flaky, permanent, broken atomic.Int64
	tasks := []cognition.Task{
		{Name: "flaky", Run: func(context.Context) error {
			if flaky.Add(1) < 3 {
				return errors.New("store unavailable") // unknown class: retried
			}
			return nil
		}},
		{Name: "permanent", Run: func(context.Context) error {
			permanent.Add(1)
			return resilience.MarkPermanent(errors.New("bad input"))
		}},
		{Name: "broken", Run: func(context.Context) error {
			broken.Add(1)
			return errors.New("still down")
		}},
	}
	for _, task := range tasks {
		if err := q.Enqueue(task); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if flaky.Load() != 3 || permanent.Load() != 1 || broken.Load() != 3 {
		t.Errorf("attempts: flaky %d (want 3), permanent %d (want 1), broken %d (want 3)", flaky.Load(), permanent.Load(), broken.Load())
	}
	if st := q.Stats(); st.Done != 1 || st.Failed != 2 {
		t.Errorf("stats = %+v, want 1 done and 2 failed", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failed) != 2 {
		t.Errorf("OnFailure got %q, want the permanent and broken tasks", failed)
	}
}

func TestQueueCloseTimeoutCancels(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{Workers: 1})
	started := make(chan struct{})
	var sawCancel atomic.Bool
	err := q.Enqueue(cognition.Task{Name: "slow", Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		return ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	var queuedRan atomic.Bool
	for range 2 {
		if err := q.Enqueue(cognition.Task{Name: "queued", Run: func(context.Context) error { queuedRan.Store(true); return nil }}); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err = q.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with an expiring context: %v, want DeadlineExceeded", err)
	}
	if !sawCancel.Load() {
		t.Error("the running task's context was not cancelled")
	}
	if queuedRan.Load() {
		t.Error("a queued task ran after Close gave up")
	}
	if st := q.Stats(); st.Canceled != 3 || st.Failed != 0 {
		t.Errorf("stats = %+v, want 3 canceled, 0 failed", st)
	}
}

func TestQueueConcurrentEnqueueAndClose(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{Workers: 2, Size: 8})
	var wg sync.WaitGroup
	var ran, refused atomic.Int64
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if err := q.Enqueue(cognition.Task{Name: "n", Run: func(context.Context) error { ran.Add(1); return nil }}); err != nil {
					refused.Add(1)
				}
			}
		})
	}
	wg.Go(func() { q.Close(t.Context()) })
	wg.Wait()
	q.Close(t.Context())
	if ran.Load()+refused.Load() != 400 {
		t.Errorf("ran %d + refused %d != 400 enqueued: a task was lost", ran.Load(), refused.Load())
	}
}

func TestQueueConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []cognition.QueueConfig{{Workers: -1}, {Size: -1}} {
		if _, err := cognition.NewQueue(cfg); !errors.Is(err, cognition.ErrInvalid) {
			t.Errorf("NewQueue(%+v): %v, want ErrInvalid", cfg, err)
		}
	}
	q := newQueue(t, cognition.QueueConfig{})
	if err := q.Enqueue(cognition.Task{Name: "nil"}); !errors.Is(err, cognition.ErrInvalid) {
		t.Errorf("Enqueue without Run: %v, want ErrInvalid", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
