package cognitiontest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/internal/conformance"
)

// RunTaskQueue runs the conformance checks of [cognition.TaskQueue] as
// subtests of t. newQueue is called once per subtest and must return an
// empty queue; release it with t.Cleanup. The lease checks wait for short
// leases to end, polling with a generous deadline.
func RunTaskQueue(t *testing.T, newQueue func(t *testing.T) cognition.TaskQueue) {
	t.Helper()
	conformance.Run(t, newQueue, []conformance.Check[cognition.TaskQueue]{
		{Name: "ClaimInOrder", Fn: testClaimInOrder},
		{Name: "FailRetriesThenDead", Fn: testFailRetries},
		{Name: "FailPermanent", Fn: testFailPermanent},
		{Name: "LeaseExpiry", Fn: testLeaseExpiry},
		{Name: "LeaseExpiryOnLastAttempt", Fn: testLeaseExpiryLast},
		{Name: "ConcurrentClaims", Fn: testConcurrentClaims},
	})
}

const long = time.Hour

func enqueue(t *testing.T, q cognition.TaskQueue, user string, max int) int64 {
	t.Helper()
	id, err := q.Enqueue(t.Context(), cognition.TaskRecord{Kind: "learn", UserID: user, Payload: []byte("payload of " + user), MaxAttempts: max})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func claim(t *testing.T, q cognition.TaskQueue, lease time.Duration) (cognition.TaskRecord, bool) {
	t.Helper()
	c, ok, err := q.Claim(t.Context(), lease)
	if err != nil {
		t.Fatal(err)
	}
	return c, ok
}

func counts(t *testing.T, q cognition.TaskQueue, want cognition.TaskCounts) {
	t.Helper()
	got, err := q.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Counts = %+v, want %+v", got, want)
	}
}

func testClaimInOrder(t *testing.T, q cognition.TaskQueue) {
	if _, ok := claim(t, q, long); ok {
		t.Fatal("Claim on an empty queue returned a task")
	}
	a, b := enqueue(t, q, "a", 0), enqueue(t, q, "b", 0)
	counts(t, q, cognition.TaskCounts{Pending: 2})
	c, ok := claim(t, q, long)
	if !ok || c.ID != a || c.UserID != "a" || string(c.Payload) != "payload of a" || c.Kind != "learn" ||
		c.Attempts != 1 || c.MaxAttempts != cognition.DefaultTaskAttempts || c.Token == "" {
		t.Fatalf("first claim = %+v, %v; want task %d of user a, attempt 1 of %d, with a token", c, ok, a, cognition.DefaultTaskAttempts)
	}
	counts(t, q, cognition.TaskCounts{Pending: 1, Claimed: 1})
	d, ok := claim(t, q, long)
	if !ok || d.ID != b {
		t.Fatalf("second claim = %+v, %v; want task %d", d, ok, b)
	}
	if _, ok := claim(t, q, long); ok {
		t.Fatal("Claim returned a task held by a live lease")
	}
	if err := q.Complete(t.Context(), c.ID, "wrong"); !errors.Is(err, cognition.ErrLeaseLost) {
		t.Errorf("Complete with a wrong token = %v, want ErrLeaseLost", err)
	}
	for _, x := range []cognition.TaskRecord{c, d} {
		if err := q.Complete(t.Context(), x.ID, x.Token); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Complete(t.Context(), c.ID, c.Token); !errors.Is(err, cognition.ErrLeaseLost) {
		t.Errorf("second Complete = %v, want ErrLeaseLost", err)
	}
	counts(t, q, cognition.TaskCounts{})
}

func testFailRetries(t *testing.T, q cognition.TaskQueue) {
	id := enqueue(t, q, "u", 2)
	c, _ := claim(t, q, long)
	dead, err := q.Fail(t.Context(), c.ID, c.Token, "boom 1", false)
	if err != nil || dead {
		t.Fatalf("first Fail = %v, %v; want a pending task", dead, err)
	}
	if _, err := q.Fail(t.Context(), c.ID, c.Token, "again", false); !errors.Is(err, cognition.ErrLeaseLost) {
		t.Errorf("Fail with a spent token = %v, want ErrLeaseLost", err)
	}
	counts(t, q, cognition.TaskCounts{Pending: 1})
	c, ok := claim(t, q, long)
	if !ok || c.ID != id || c.Attempts != 2 || c.LastError != "boom 1" {
		t.Fatalf("retry claim = %+v, %v; want attempt 2 of task %d with the last error", c, ok, id)
	}
	if dead, err := q.Fail(t.Context(), c.ID, c.Token, "boom 2", false); err != nil || !dead {
		t.Fatalf("last Fail = %v, %v; want a dead task", dead, err)
	}
	counts(t, q, cognition.TaskCounts{Dead: 1})
	if _, ok := claim(t, q, long); ok {
		t.Error("Claim returned a dead task")
	}
	ds, err := q.Dead(t.Context(), 10)
	if err != nil || len(ds) != 1 || ds[0].ID != id || ds[0].LastError != "boom 2" || ds[0].Attempts != 2 || ds[0].State != cognition.TaskDead {
		t.Errorf("Dead = %+v, %v; want task %d after 2 attempts with error boom 2", ds, err, id)
	}
}

func testFailPermanent(t *testing.T, q cognition.TaskQueue) {
	enqueue(t, q, "u", 5)
	c, _ := claim(t, q, long)
	if dead, err := q.Fail(t.Context(), c.ID, c.Token, "bad input", true); err != nil || !dead {
		t.Fatalf("permanent Fail = %v, %v; want a dead task", dead, err)
	}
	counts(t, q, cognition.TaskCounts{Dead: 1})
}

// reclaim polls Claim until it returns a task or a minute has passed.
func reclaim(t *testing.T, q cognition.TaskQueue) (cognition.TaskRecord, bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if c, ok := claim(t, q, long); ok {
			return c, true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cognition.TaskRecord{}, false
}

func testLeaseExpiry(t *testing.T, q cognition.TaskQueue) {
	id := enqueue(t, q, "u", 0)
	first, _ := claim(t, q, 50*time.Millisecond)
	second, ok := reclaim(t, q)
	if !ok || second.ID != id || second.Attempts != 2 || second.Token == first.Token {
		t.Fatalf("claim after the lease = %+v, %v; want task %d, attempt 2, new token", second, ok, id)
	}
	if err := q.Complete(t.Context(), id, first.Token); !errors.Is(err, cognition.ErrLeaseLost) {
		t.Errorf("Complete by the expired claim = %v, want ErrLeaseLost", err)
	}
	if err := q.Complete(t.Context(), id, second.Token); err != nil {
		t.Fatal(err)
	}
	counts(t, q, cognition.TaskCounts{})
}

func testLeaseExpiryLast(t *testing.T, q cognition.TaskQueue) {
	enqueue(t, q, "u", 1)
	claim(t, q, 50*time.Millisecond)
	deadline := time.Now().Add(time.Minute)
	for {
		if _, ok := claim(t, q, long); ok {
			t.Fatal("a task whose lease ended on its last attempt was claimed again")
		}
		c, err := q.Counts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if c.Dead == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Counts = %+v a minute after the lease; want the task dead", c)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testConcurrentClaims(t *testing.T, q cognition.TaskQueue) {
	const n, workers = 40, 4
	for i := range n {
		enqueue(t, q, fmt.Sprint("u", i), 0)
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			ctx := context.Background()
			for {
				c, ok, err := q.Claim(ctx, long)
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				seen[c.ID]++
				mu.Unlock()
				if err := q.Complete(ctx, c.ID, c.Token); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != n {
		t.Errorf("%d tasks claimed, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("task %d claimed %d times", id, k)
		}
	}
	counts(t, q, cognition.TaskCounts{})
}
