package cognition_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/resilience"
)

// Flush returns only after every task queued before it has finished, even
// with several workers finishing out of order, and with a task that fails.
func TestQueueFlushWaitsForQueuedTasks(t *testing.T) {
	t.Parallel()
	var failed atomic.Int64
	q := newQueue(t, cognition.QueueConfig{Workers: 3, Size: 100, Retry: &resilience.Config{},
		OnFailure: func(cognition.Task, error) { failed.Add(1) }})
	var finished atomic.Int64
	for i := range 60 {
		err := q.Enqueue(cognition.Task{Name: "count", Run: func(context.Context) error {
			time.Sleep(time.Duration(i%4) * time.Millisecond) // out of order across workers
			finished.Add(1)
			if i == 59 {
				return errors.New("the last task fails")
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := finished.Load(); got != 60 {
		t.Errorf("%d of 60 tasks finished when Flush returned", got)
	}
	if got := failed.Load(); got != 1 {
		t.Errorf("OnFailure called %d times before Flush returned, want 1", got)
	}
	if st := q.Stats(); st.Done != 59 || st.Failed != 1 || st.Queued != 0 || st.Running != 0 {
		t.Errorf("stats after Flush = %+v", st)
	}
	// Nothing queued: Flush returns at once, even with an ended context.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := q.Flush(ctx); err != nil {
		t.Errorf("Flush of an idle queue: %v", err)
	}
}

// Flush returns ctx's error when ctx ends before the tasks have finished;
// the tasks go on, and a later Flush waits for them.
func TestQueueFlushCanceled(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{})
	release := make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // runs before newQueue's Close, should the test fail early
	var ran atomic.Bool
	err := q.Enqueue(cognition.Task{Name: "blocked", Run: func(ctx context.Context) error {
		select {
		case <-release:
			ran.Store(true)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- q.Flush(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush with a canceled context: %v, want context.Canceled", err)
	}
	if st := q.Stats(); st.Canceled != 0 || st.Done != 0 {
		t.Errorf("a canceled Flush touched the task: %+v", st)
	}
	unblock()
	if err := q.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !ran.Load() {
		t.Error("second Flush returned before the task ran")
	}
}

// Flush waits for the tasks queued before it, not for those queued during
// the call: it returns while producers keep the queue busy, and every task
// whose Enqueue had returned before the call has finished by then.
func TestQueueFlushWithConcurrentEnqueues(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{Workers: 2, Size: 64})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	queued, finished := map[int64]bool{}, map[int64]bool{}
	var next atomic.Int64
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := next.Add(1)
				err := q.Enqueue(cognition.Task{Name: "tick", Run: func(context.Context) error {
					time.Sleep(100 * time.Microsecond)
					mu.Lock()
					finished[id] = true
					mu.Unlock()
					return nil
				}})
				switch {
				case err == nil:
					mu.Lock()
					queued[id] = true
					mu.Unlock()
				case errors.Is(err, cognition.ErrQueueFull):
					time.Sleep(50 * time.Microsecond)
				default:
					t.Error(err)
					return
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	for range 20 {
		mu.Lock()
		var before []int64
		for id := range queued {
			if !finished[id] {
				before = append(before, id)
			}
		}
		mu.Unlock()
		if err := q.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		for _, id := range before {
			if !finished[id] {
				t.Errorf("task %d, queued before Flush, had not finished when it returned", id)
			}
		}
		mu.Unlock()
		if t.Failed() {
			return
		}
	}
}

// After Close, Flush returns nil: Close has drained the queue, or dropped
// what it could not run.
func TestQueueFlushAfterClose(t *testing.T) {
	t.Parallel()
	q := newQueue(t, cognition.QueueConfig{})
	for range 3 {
		if err := q.Enqueue(cognition.Task{Name: "wait", Run: func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := q.Close(ctx); err == nil {
		t.Fatal("Close with an ended context returned nil with tasks running")
	}
	if err := q.Flush(t.Context()); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
	if st := q.Stats(); st.Canceled != 3 {
		t.Errorf("stats = %+v, want 3 canceled", st)
	}
}

// Service.Flush returns once the turns observed before it have been
// learned from, while other users' turns keep arriving.
func TestServiceFlushWithConcurrentObserve(t *testing.T) {
	t.Parallel()
	store := cognition.NewInMemoryStore()
	learner := &echoLearner{}
	s := newService(t, cognition.Config{Store: store, Learner: learner, Workers: 2, QueueSize: 4096})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := s.Observe(interaction("other"+string(rune('a'+w)), "noise "+string(rune('a'+i%26))))
				if err != nil && !errors.Is(err, cognition.ErrQueueFull) {
					t.Error(err)
					return
				}
				time.Sleep(100 * time.Microsecond)
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	queries := []string{"reset my VPN token", "order a new laptop", "book the large meeting room"}
	for _, q := range queries {
		if err := s.Observe(interaction("ada", q)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	eps, err := store.Episodes(t.Context(), "ada")
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != len(queries) {
		t.Errorf("ada has %d episodes after Flush, want %d: %+v", len(eps), len(queries), eps)
	}
	if st := s.QueueStats(); st.Failed != 0 {
		t.Errorf("learning failed: %+v", st)
	}
}
