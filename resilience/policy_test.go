package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/resilience"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

var errBoom = errors.New("boom")

// fast returns cfg with retry delays shrunk for tests.
func fast(cfg resilience.Config) resilience.Config {
	cfg.Retry.BaseDelay = time.Millisecond
	cfg.Retry.MaxDelay = 5 * time.Millisecond
	cfg.Retry.Jitter = 0
	return cfg
}

func mustNew[T any](t testing.TB, cfg resilience.Config, opts ...resilience.Option) *resilience.Policy[T] {
	t.Helper()
	p, err := resilience.New[T](cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// failing returns a function that fails with err on every call and counts
// its calls.
func failing(calls *atomic.Int32, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		calls.Add(1)
		return "", err
	}
}

func TestRetryCountsPerClass(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		retryIf  func(error, resilience.Class) bool
		attempts int32
	}{
		{"transient retried", resilience.MarkTransient(errBoom), nil, 3},
		{"rate limited retried", resilience.RateLimit(errBoom, 0), nil, 3},
		{"HTTP 503 retried", &resilience.HTTPError{StatusCode: 503}, nil, 3},
		{"permanent not retried", resilience.MarkPermanent(errBoom), nil, 1},
		{"HTTP 400 not retried", &resilience.HTTPError{StatusCode: 400}, nil, 1},
		{"unknown not retried", errBoom, nil, 1},
		{"inner cancellation not retried", context.Canceled, nil, 1},
		{"custom If retries unknown", errBoom, func(_ error, c resilience.Class) bool { return c == resilience.Unknown }, 3},
		{"custom If refuses transient", resilience.MarkTransient(errBoom), func(error, resilience.Class) bool { return false }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fast(resilience.MCP())
			cfg.Breaker = resilience.BreakerConfig{}
			cfg.Retry.If = tt.retryIf
			p := mustNew[string](t, cfg)
			var calls atomic.Int32
			_, err := p.Do(context.Background(), failing(&calls, tt.err))
			if got := calls.Load(); got != tt.attempts {
				t.Errorf("attempts = %d, want %d", got, tt.attempts)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("Do error %v does not wrap %v", err, tt.err)
			}
			var retryErr *resilience.RetryError
			if gotRetryErr := errors.As(err, &retryErr); gotRetryErr != (tt.attempts > 1) {
				t.Errorf("Do error %#v: is *RetryError = %v, want %v", err, gotRetryErr, tt.attempts > 1)
			} else if gotRetryErr && retryErr.Attempts != int(tt.attempts) {
				t.Errorf("RetryError.Attempts = %d, want %d", retryErr.Attempts, tt.attempts)
			}
			if tt.attempts == 1 && err != tt.err {
				t.Errorf("single attempt returned %#v, want fn's error unchanged", err)
			}
		})
	}
}

func TestRetryRecovers(t *testing.T) {
	p := mustNew[string](t, fast(resilience.MCP()))
	var calls atomic.Int32
	got, err := p.Do(context.Background(), func(context.Context) (string, error) {
		if calls.Add(1) < 3 {
			return "", resilience.MarkTransient(errBoom)
		}
		return "done", nil
	})
	if err != nil || got != "done" || calls.Load() != 3 {
		t.Errorf("Do = %q, %v after %d calls; want \"done\", nil after 3", got, err, calls.Load())
	}
}

func TestBackoffDelays(t *testing.T) {
	tests := []struct {
		name  string
		retry resilience.RetryConfig
		err   error
		want  []time.Duration
	}{
		{"doubling, capped", resilience.RetryConfig{MaxAttempts: 5, BaseDelay: 2 * time.Millisecond, MaxDelay: 10 * time.Millisecond},
			resilience.MarkTransient(errBoom), []time.Duration{2, 4, 8, 10}},
		{"custom multiplier", resilience.RetryConfig{MaxAttempts: 4, BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond, Multiplier: 3},
			resilience.MarkTransient(errBoom), []time.Duration{1, 3, 9}},
		{"no base delay", resilience.RetryConfig{MaxAttempts: 3},
			resilience.MarkTransient(errBoom), []time.Duration{0, 0}},
		{"hint above backoff", resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Second},
			resilience.RateLimit(errBoom, 7*time.Millisecond), []time.Duration{7, 7}},
		{"backoff above hint", resilience.RetryConfig{MaxAttempts: 3, BaseDelay: 4 * time.Millisecond, MaxDelay: time.Second},
			resilience.RateLimit(errBoom, 5*time.Millisecond), []time.Duration{5, 8}},
		{"hint capped by MaxDelay", resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 6 * time.Millisecond},
			resilience.RateLimit(errBoom, time.Hour), []time.Duration{6, 6}},
		{"HTTP Retry-After", resilience.RetryConfig{MaxAttempts: 2, MaxDelay: time.Second},
			&resilience.HTTPError{StatusCode: 503, RetryAfter: 3 * time.Millisecond}, []time.Duration{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var delays []time.Duration
			p := mustNew[string](t, resilience.Config{Retry: tt.retry}, resilience.WithObserver(func(a resilience.Attempt) {
				if a.Retry {
					delays = append(delays, a.Delay)
				}
			}))
			var calls atomic.Int32
			start := time.Now()
			p.Do(context.Background(), failing(&calls, tt.err))
			elapsed := time.Since(start)
			var want time.Duration
			for i := range tt.want {
				tt.want[i] *= time.Millisecond
				want += tt.want[i]
			}
			if diff := cmp.Diff(tt.want, delays); diff != "" {
				t.Errorf("delays mismatch (-want +got):\n%s", diff)
			}
			if elapsed < want {
				t.Errorf("Do took %v, less than the scheduled delays (%v)", elapsed, want)
			}
		})
	}
}

// TestRetryAfterHonoured measures the wall-clock gap between attempts.
func TestRetryAfterHonoured(t *testing.T) {
	const hint = 40 * time.Millisecond
	cfg := resilience.Config{Retry: resilience.RetryConfig{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Second, Jitter: 1}}
	p := mustNew[string](t, cfg)
	var times []time.Time
	p.Do(context.Background(), func(context.Context) (string, error) {
		times = append(times, time.Now())
		return "", resilience.RateLimit(errBoom, hint)
	})
	if len(times) != 2 {
		t.Fatalf("attempts = %d, want 2", len(times))
	}
	if gap := times[1].Sub(times[0]); gap < hint {
		t.Errorf("second attempt came %v after the first; the Retry-After hint was %v", gap, hint)
	}
}

func TestJitterStaysInBounds(t *testing.T) {
	const base = 2 * time.Millisecond
	var delays []time.Duration
	p := mustNew[string](t, resilience.Config{Retry: resilience.RetryConfig{MaxAttempts: 2, BaseDelay: base, Jitter: 0.5}},
		resilience.WithObserver(func(a resilience.Attempt) {
			if a.Retry {
				delays = append(delays, a.Delay)
			}
		}))
	for range 40 {
		p.Do(context.Background(), func(context.Context) (string, error) {
			return "", resilience.MarkTransient(errBoom)
		})
	}
	distinct := map[time.Duration]bool{}
	for _, d := range delays {
		if d < base/2 || d > base*3/2 {
			t.Errorf("delay %v outside [%v, %v]", d, base/2, base*3/2)
		}
		distinct[d] = true
	}
	if len(distinct) < 2 {
		t.Errorf("40 jittered delays took %d distinct values; want variation", len(distinct))
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	cfg := resilience.MCP()
	cfg.Retry.BaseDelay = 10 * time.Second // would sleep far longer than the test
	ctx, cancel := context.WithCancel(context.Background())
	p := mustNew[string](t, cfg, resilience.WithObserver(func(a resilience.Attempt) {
		if a.Retry {
			time.AfterFunc(10*time.Millisecond, cancel)
		}
	}))
	var calls atomic.Int32
	start := time.Now()
	_, err := p.Do(ctx, failing(&calls, resilience.MarkTransient(errBoom)))
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Do returned after %v; want it to return promptly on cancellation", elapsed)
	}
	if err != context.Canceled {
		t.Errorf("Do error = %v, want context.Canceled", err)
	}
	if calls.Load() != 1 {
		t.Errorf("attempts = %d, want 1 (none after cancellation)", calls.Load())
	}
}

func TestCallerContext(t *testing.T) {
	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var calls atomic.Int32
		fellBack := false
		p := mustNew[string](t, fast(resilience.MCP()), resilience.WithFallback(func(context.Context, error) (string, error) {
			fellBack = true
			return "fallback", nil
		}))
		_, err := p.Do(ctx, failing(&calls, nil))
		if err != context.Canceled || calls.Load() != 0 || fellBack {
			t.Errorf("Do = %v with %d calls, fallback %v; want context.Canceled, 0 calls, no fallback", err, calls.Load(), fellBack)
		}
	})
	t.Run("deadline during attempt", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		p := mustNew[string](t, fast(resilience.MCP()))
		var calls atomic.Int32
		_, err := p.Do(ctx, func(ctx context.Context) (string, error) {
			calls.Add(1)
			<-ctx.Done()
			return "", ctx.Err() // DeadlineExceeded is Transient, but it is the caller's
		})
		if err != context.DeadlineExceeded || calls.Load() != 1 {
			t.Errorf("Do = %v after %d calls; want context.DeadlineExceeded after 1", err, calls.Load())
		}
	})
	t.Run("cancelled while fn succeeds", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p := mustNew[string](t, resilience.Config{})
		_, err := p.Do(ctx, func(context.Context) (string, error) {
			cancel()
			return "late", nil
		})
		if err != nil && err != context.Canceled {
			t.Errorf("Do error = %v; want nil or context.Canceled", err)
		}
	})
}

func TestNoRetryPastCallerDeadline(t *testing.T) {
	cfg := resilience.Config{Retry: resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Minute}}
	var attempts []resilience.Attempt
	p := mustNew[string](t, cfg, resilience.WithObserver(func(a resilience.Attempt) { attempts = append(attempts, a) }))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	limited := resilience.RateLimit(errBoom, 30*time.Second) // longer than the 10s left
	var calls atomic.Int32
	start := time.Now()
	_, err := p.Do(ctx, failing(&calls, limited))
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Do took %v; it should give up at once rather than wait past the deadline", elapsed)
	}
	if err != limited || calls.Load() != 1 {
		t.Errorf("Do = %v after %d calls; want the rate-limit error itself after 1", err, calls.Load())
	}
	if len(attempts) != 1 || attempts[0].Retry || attempts[0].Err != limited {
		t.Errorf("observer saw %+v; want one attempt with the error and no retry", attempts)
	}

	// A delay that fits in the deadline is still waited.
	calls.Store(0)
	_, err = p.Do(ctx, failing(&calls, resilience.RateLimit(errBoom, 2*time.Millisecond)))
	if calls.Load() != 3 || !errors.Is(err, errBoom) {
		t.Errorf("Do = %v after %d calls; want 3 attempts", err, calls.Load())
	}
}

func TestTimeout(t *testing.T) {
	cfg := resilience.Config{
		Timeout: 15 * time.Millisecond,
		Retry:   resilience.RetryConfig{MaxAttempts: 2, BaseDelay: time.Millisecond},
	}
	p := mustNew[string](t, cfg)
	var calls atomic.Int32
	var hadDeadline atomic.Bool
	start := time.Now()
	_, err := p.Do(context.Background(), func(ctx context.Context) (string, error) {
		calls.Add(1)
		_, ok := ctx.Deadline()
		hadDeadline.Store(ok)
		<-ctx.Done()
		return "", ctx.Err()
	})
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Do took %v; the timeout is 15ms per attempt", elapsed)
	}
	var timeoutErr *resilience.TimeoutError
	if !errors.As(err, &timeoutErr) || timeoutErr.Limit != cfg.Timeout {
		t.Fatalf("Do error = %#v, want a *TimeoutError with Limit %v", err, cfg.Timeout)
	}
	if !errors.Is(err, resilience.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Do error %v does not match ErrTimeout and context.DeadlineExceeded", err)
	}
	if calls.Load() != 2 {
		t.Errorf("attempts = %d, want 2 (a timeout is transient)", calls.Load())
	}
	if !hadDeadline.Load() {
		t.Error("fn's context had no deadline; the per-attempt timeout should set one")
	}

	t.Run("fast attempt unaffected", func(t *testing.T) {
		got, err := p.Do(context.Background(), func(context.Context) (string, error) { return "ok", nil })
		if got != "ok" || err != nil {
			t.Errorf("Do = %q, %v; want \"ok\", nil", got, err)
		}
	})
	t.Run("error before the limit is not a timeout", func(t *testing.T) {
		_, err := p.Do(context.Background(), func(context.Context) (string, error) { return "", resilience.MarkPermanent(errBoom) })
		if errors.Is(err, resilience.ErrTimeout) {
			t.Errorf("Do error = %v; an error returned in time is not a timeout", err)
		}
	})
}

// transitions records breaker state changes.
type transitions struct {
	mu  sync.Mutex
	got []string
}

func (tr *transitions) record(from, to resilience.BreakerState) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.got = append(tr.got, from.String()+"→"+to.String())
}

func (tr *transitions) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	got := tr.got
	tr.got = nil
	return got
}

func TestBreakerTransitions(t *testing.T) {
	// Long enough that even a heavily loaded machine does not half-open
	// the breaker between two steps that expect it open.
	const recovery = 2 * time.Second
	var tr transitions
	cfg := resilience.Config{
		Name:    "svc",
		Breaker: resilience.BreakerConfig{FailureThreshold: 2, RecoveryTime: recovery, OnStateChange: tr.record},
	}
	p := mustNew[string](t, cfg)
	ctx := context.Background()
	var calls atomic.Int32
	fail := failing(&calls, resilience.MarkTransient(errBoom))
	succeed := func(context.Context) (string, error) { calls.Add(1); return "ok", nil }

	step := func(name string, fn func(context.Context) (string, error), wantErr error, wantCalls int32, wantState resilience.BreakerState, wantTransitions ...string) {
		t.Helper()
		calls.Store(0)
		_, err := p.Do(ctx, fn)
		if wantErr == nil && err != nil || wantErr != nil && !errors.Is(err, wantErr) {
			t.Errorf("%s: Do error = %v, want %v", name, err, wantErr)
		}
		if calls.Load() != wantCalls {
			t.Errorf("%s: fn called %d times, want %d", name, calls.Load(), wantCalls)
		}
		if got := p.Breaker().State; got != wantState {
			t.Errorf("%s: state = %v, want %v", name, got, wantState)
		}
		if diff := cmp.Diff(wantTransitions, tr.take()); diff != "" {
			t.Errorf("%s: transitions mismatch (-want +got):\n%s", name, diff)
		}
	}

	step("first failure", fail, errBoom, 1, resilience.BreakerClosed)
	step("success resets the count", succeed, nil, 1, resilience.BreakerClosed)
	step("failure", fail, errBoom, 1, resilience.BreakerClosed)
	step("second consecutive failure opens", fail, errBoom, 1, resilience.BreakerOpen, "closed→open")
	step("open refuses without calling", succeed, resilience.ErrCircuitOpen, 0, resilience.BreakerOpen)

	_, err := p.Do(ctx, succeed)
	var openErr *resilience.CircuitOpenError
	if !errors.As(err, &openErr) || openErr.Name != "svc" || openErr.RetryIn <= 0 || openErr.RetryIn > recovery {
		t.Errorf("Do error = %#v; want a *CircuitOpenError named svc with 0 < RetryIn <= %v", err, recovery)
	}
	if d, ok := resilience.RetryAfter(err); !ok || d != openErr.RetryIn {
		t.Errorf("RetryAfter(open error) = %v, %v; want %v, true", d, ok, openErr.RetryIn)
	}
	if st := p.Breaker(); !st.Enabled || st.RetryIn <= 0 || st.Failures != 2 {
		t.Errorf("Breaker() = %+v; want enabled, open, 2 failures and RetryIn > 0", st)
	}

	time.Sleep(recovery + 5*time.Millisecond)
	step("trial success closes", succeed, nil, 1, resilience.BreakerClosed, "open→half-open", "half-open→closed")

	step("failure", fail, errBoom, 1, resilience.BreakerClosed)
	step("reopens", fail, errBoom, 1, resilience.BreakerOpen, "closed→open")
	time.Sleep(recovery + 5*time.Millisecond)
	step("trial failure reopens", fail, errBoom, 1, resilience.BreakerOpen, "open→half-open", "half-open→open")
	step("open again", succeed, resilience.ErrCircuitOpen, 0, resilience.BreakerOpen)
}

func TestBreakerHalfOpenAdmitsOneTrial(t *testing.T) {
	const recovery = 10 * time.Millisecond
	p := mustNew[string](t, resilience.Config{Breaker: resilience.BreakerConfig{FailureThreshold: 1, RecoveryTime: recovery}})
	ctx := context.Background()
	var calls atomic.Int32
	p.Do(ctx, failing(&calls, resilience.MarkTransient(errBoom)))
	time.Sleep(recovery + 5*time.Millisecond)

	inTrial, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := p.Do(ctx, func(context.Context) (string, error) {
			close(inTrial)
			<-release
			return "ok", nil
		})
		done <- err
	}()
	<-inTrial
	if st := p.Breaker().State; st != resilience.BreakerHalfOpen {
		t.Errorf("state during trial = %v, want half-open", st)
	}
	_, err := p.Do(ctx, failing(&calls, nil))
	var openErr *resilience.CircuitOpenError
	if !errors.As(err, &openErr) || openErr.RetryIn != 0 {
		t.Errorf("second call during the trial: %#v; want a *CircuitOpenError with RetryIn 0", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("trial call: %v", err)
	}
	if st := p.Breaker().State; st != resilience.BreakerClosed {
		t.Errorf("state after trial = %v, want closed", st)
	}
}

func TestBreakerCounting(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		failureIf func(error, resilience.Class) bool
		opens     bool
	}{
		{"transient counts", resilience.MarkTransient(errBoom), nil, true},
		{"rate limited counts", &resilience.HTTPError{StatusCode: 429}, nil, true},
		{"unknown counts", errBoom, nil, true},
		{"timeout counts", &resilience.TimeoutError{Limit: time.Second}, nil, true},
		{"permanent does not count", &resilience.HTTPError{StatusCode: 400}, nil, false},
		{"cancellation does not count", context.Canceled, nil, false},
		{"custom FailureIf", errBoom, func(error, resilience.Class) bool { return false }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := resilience.Config{Breaker: resilience.BreakerConfig{FailureThreshold: 1, FailureIf: tt.failureIf}}
			p := mustNew[string](t, cfg)
			var calls atomic.Int32
			p.Do(context.Background(), failing(&calls, tt.err))
			if got := p.Breaker().State == resilience.BreakerOpen; got != tt.opens {
				t.Errorf("breaker open = %v, want %v", got, tt.opens)
			}
		})
	}
}

func TestRetryStopsAtOpenBreaker(t *testing.T) {
	cfg := fast(resilience.MCP())
	cfg.Retry.MaxAttempts = 5
	cfg.Breaker.FailureThreshold = 2
	p := mustNew[string](t, cfg)
	var calls atomic.Int32
	_, err := p.Do(context.Background(), failing(&calls, resilience.MarkTransient(errBoom)))
	if calls.Load() != 2 {
		t.Errorf("attempts = %d, want 2 (the breaker opens after 2 and retry does not knock on it)", calls.Load())
	}
	var retryErr *resilience.RetryError
	if !errors.Is(err, resilience.ErrCircuitOpen) || !errors.As(err, &retryErr) || retryErr.Attempts != 2 {
		t.Errorf("Do error = %v; want a *RetryError after 2 attempts wrapping the open breaker", err)
	}
}

func TestZeroConfig(t *testing.T) {
	p := mustNew[string](t, resilience.Config{})
	if st := p.Breaker(); st != (resilience.BreakerStatus{}) {
		t.Errorf("Breaker() without a breaker = %+v, want the zero status", st)
	}
	if st := p.Bulkhead(); st != (resilience.BulkheadStatus{}) {
		t.Errorf("Bulkhead() without a bulkhead = %+v, want the zero status", st)
	}
	var calls atomic.Int32
	for range 10 {
		p.Do(context.Background(), failing(&calls, resilience.MarkTransient(errBoom)))
	}
	if calls.Load() != 10 {
		t.Errorf("zero Config: %d calls for 10 Do, want 10 (one attempt each, nothing refused)", calls.Load())
	}
}

// blocker holds calls inside fn until released.
type blocker struct {
	entered chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blocker) fn(ctx context.Context) (string, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
		return "ok", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func TestBulkheadRejectsWhenFull(t *testing.T) {
	p := mustNew[string](t, resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxConcurrent: 2}})
	b := newBlocker()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { p.Do(context.Background(), b.fn) })
		<-b.entered
	}
	var calls atomic.Int32
	start := time.Now()
	_, err := p.Do(context.Background(), failing(&calls, nil))
	if !errors.Is(err, resilience.ErrBulkheadFull) || calls.Load() != 0 {
		t.Errorf("third call: %v with %d calls; want ErrBulkheadFull and fn not called", err, calls.Load())
	}
	if !strings.Contains(err.Error(), "Bulkhead.MaxConcurrent") {
		t.Errorf("error %q does not say which field to raise", err)
	}
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
		t.Errorf("rejection took %v; with no queue it must be immediate", elapsed)
	}
	close(b.release)
	wg.Wait()
	if _, err := p.Do(context.Background(), func(context.Context) (string, error) { return "ok", nil }); err != nil {
		t.Errorf("after release: %v; the slots must be free again", err)
	}
}

func TestBulkheadQueue(t *testing.T) {
	p := mustNew[string](t, resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxConcurrent: 1, MaxQueue: 1}})
	b := newBlocker()
	results := make(chan error, 2)
	go func() { _, err := p.Do(context.Background(), b.fn); results <- err }()
	<-b.entered
	go func() { _, err := p.Do(context.Background(), b.fn); results <- err }()

	waitFor(t, "the second call to queue", func() bool { return p.Bulkhead() == resilience.BulkheadStatus{Enabled: true, Running: 1, Queued: 1} })
	var calls atomic.Int32
	start := time.Now()
	_, err := p.Do(context.Background(), failing(&calls, nil))
	if !errors.Is(err, resilience.ErrBulkheadFull) || calls.Load() != 0 {
		t.Errorf("third call with the queue full: %v with %d calls; want ErrBulkheadFull, fn not called", err, calls.Load())
	}
	if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
		t.Errorf("rejection took %v; a full queue must refuse at once", elapsed)
	}
	close(b.release) // the first finishes; the queued one runs
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("call: %v", err)
		}
	}
	if st := p.Bulkhead(); st.Running != 0 || st.Queued != 0 {
		t.Errorf("Bulkhead() after all calls = %+v, want nothing running or queued", st)
	}
}

// waitFor polls cond until it holds, failing the test after 60 s (a
// generous deadline: it only bounds a broken test on a loaded machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBulkheadMaxWait(t *testing.T) {
	p := mustNew[string](t, resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxConcurrent: 1, MaxQueue: 5, MaxWait: 15 * time.Millisecond}})
	b := newBlocker()
	done := make(chan struct{})
	go func() { p.Do(context.Background(), b.fn); close(done) }()
	<-b.entered
	start := time.Now()
	var calls atomic.Int32
	_, err := p.Do(context.Background(), failing(&calls, nil))
	elapsed := time.Since(start)
	if !errors.Is(err, resilience.ErrBulkheadFull) || calls.Load() != 0 {
		t.Errorf("queued call: %v with %d calls; want ErrBulkheadFull after MaxWait", err, calls.Load())
	}
	if elapsed < 15*time.Millisecond || elapsed > time.Second {
		t.Errorf("queued call gave up after %v; want about MaxWait (15ms)", elapsed)
	}
	close(b.release)
	<-done
}

func TestBulkheadQueueCancellation(t *testing.T) {
	p := mustNew[string](t, resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxConcurrent: 1, MaxQueue: 1}})
	b := newBlocker()
	done := make(chan struct{})
	go func() { p.Do(context.Background(), b.fn); close(done) }()
	<-b.entered
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	var calls atomic.Int32
	_, err := p.Do(ctx, failing(&calls, nil))
	if err != context.Canceled || calls.Load() != 0 {
		t.Errorf("queued call: %v with %d calls; want context.Canceled and fn not called", err, calls.Load())
	}
	close(b.release)
	<-done
}

func TestBulkheadBoundsConcurrency(t *testing.T) {
	const limit, callers = 3, 24
	p := mustNew[int](t, resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxConcurrent: limit, MaxQueue: callers}})
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range callers {
		wg.Go(func() {
			v, err := p.Do(context.Background(), func(context.Context) (int, error) {
				n := running.Add(1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				running.Add(-1)
				return i, nil
			})
			if err != nil || v != i {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d calls failed; the queue holds them all", failed.Load())
	}
	if peak.Load() > limit {
		t.Errorf("peak concurrency %d, above MaxConcurrent %d", peak.Load(), limit)
	}
}

func TestBulkheadRejectionDoesNotTripBreaker(t *testing.T) {
	cfg := resilience.Config{
		Breaker:  resilience.BreakerConfig{FailureThreshold: 1},
		Bulkhead: resilience.BulkheadConfig{MaxConcurrent: 1},
	}
	p := mustNew[string](t, cfg)
	b := newBlocker()
	done := make(chan struct{})
	go func() { p.Do(context.Background(), b.fn); close(done) }()
	<-b.entered
	for range 3 {
		var calls atomic.Int32
		if _, err := p.Do(context.Background(), failing(&calls, nil)); !errors.Is(err, resilience.ErrBulkheadFull) {
			t.Fatalf("Do = %v, want ErrBulkheadFull", err)
		}
	}
	if st := p.Breaker().State; st != resilience.BreakerClosed {
		t.Errorf("breaker %v after bulkhead rejections; they must not count against the dependency", st)
	}
	close(b.release)
	<-done
}

func TestFallback(t *testing.T) {
	t.Run("after retries", func(t *testing.T) {
		var got error
		p := mustNew[string](t, fast(resilience.MCP()), resilience.WithFallback(func(_ context.Context, err error) (string, error) {
			got = err
			return "cached answer", nil
		}))
		var calls atomic.Int32
		v, err := p.Do(context.Background(), failing(&calls, resilience.MarkTransient(errBoom)))
		if v != "cached answer" || err != nil {
			t.Errorf("Do = %q, %v; want the fallback's result", v, err)
		}
		var retryErr *resilience.RetryError
		if !errors.As(got, &retryErr) || retryErr.Attempts != 3 || !errors.Is(got, errBoom) {
			t.Errorf("fallback saw %v; want the *RetryError after 3 attempts", got)
		}
	})
	t.Run("open breaker", func(t *testing.T) {
		var got error
		cfg := resilience.Config{Breaker: resilience.BreakerConfig{FailureThreshold: 1, RecoveryTime: time.Minute}}
		p := mustNew[int](t, cfg, resilience.WithFallback(func(_ context.Context, err error) (int, error) {
			got = err
			return -1, nil
		}))
		p.Do(context.Background(), func(context.Context) (int, error) { return 0, resilience.MarkTransient(errBoom) })
		v, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
		if v != -1 || err != nil || !errors.Is(got, resilience.ErrCircuitOpen) {
			t.Errorf("Do = %v, %v, fallback saw %v; want -1, nil, ErrCircuitOpen", v, err, got)
		}
	})
	t.Run("fallback error", func(t *testing.T) {
		p := mustNew[string](t, resilience.Config{}, resilience.WithFallback(func(_ context.Context, err error) (string, error) {
			return "", fmt.Errorf("no fallback either: %w", err)
		}))
		_, err := p.Do(context.Background(), func(context.Context) (string, error) { return "", errBoom })
		if !errors.Is(err, errBoom) || !strings.HasPrefix(err.Error(), "no fallback either") {
			t.Errorf("Do error = %v; want the fallback's error", err)
		}
	})
	t.Run("not on success", func(t *testing.T) {
		p := mustNew[string](t, resilience.Config{}, resilience.WithFallback(func(context.Context, error) (string, error) {
			t.Error("fallback called on success")
			return "", nil
		}))
		if v, err := p.Do(context.Background(), func(context.Context) (string, error) { return "real", nil }); v != "real" || err != nil {
			t.Errorf("Do = %q, %v", v, err)
		}
	})
	t.Run("wrong type", func(t *testing.T) {
		_, err := resilience.New[int](resilience.Config{}, resilience.WithFallback(func(context.Context, error) (string, error) { return "", nil }))
		if err == nil || !strings.Contains(err.Error(), "result type is int") {
			t.Errorf("New with a string fallback for an int Policy: %v; want an error naming the types", err)
		}
	})
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		cfg    resilience.Config
		fields []string
	}{
		{"negative attempts", resilience.Config{Retry: resilience.RetryConfig{MaxAttempts: -1}}, []string{"Retry.MaxAttempts"}},
		{"negative delays", resilience.Config{Retry: resilience.RetryConfig{BaseDelay: -1, MaxDelay: -1}}, []string{"Retry.BaseDelay", "Retry.MaxDelay"}},
		{"max below base", resilience.Config{Retry: resilience.RetryConfig{BaseDelay: 2 * time.Second, MaxDelay: time.Second}}, []string{"Retry.MaxDelay"}},
		{"base above default max", resilience.Config{Retry: resilience.RetryConfig{BaseDelay: time.Minute}}, []string{"Retry.MaxDelay"}},
		{"multiplier below 1", resilience.Config{Retry: resilience.RetryConfig{Multiplier: 0.5}}, []string{"Retry.Multiplier"}},
		{"jitter above 1", resilience.Config{Retry: resilience.RetryConfig{Jitter: 1.5}}, []string{"Retry.Jitter"}},
		{"negative breaker", resilience.Config{Breaker: resilience.BreakerConfig{FailureThreshold: -1, RecoveryTime: -1, SuccessThreshold: -1}},
			[]string{"Breaker.FailureThreshold", "Breaker.RecoveryTime", "Breaker.SuccessThreshold"}},
		{"negative timeout", resilience.Config{Timeout: -time.Second}, []string{"Timeout"}},
		{"negative bulkhead", resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxConcurrent: -1, MaxQueue: -1, MaxWait: -1}},
			[]string{"Bulkhead.MaxConcurrent", "Bulkhead.MaxQueue", "Bulkhead.MaxWait"}},
		{"queue without bulkhead", resilience.Config{Bulkhead: resilience.BulkheadConfig{MaxQueue: 3}}, []string{"Bulkhead.MaxConcurrent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := resilience.New[string](tt.cfg)
			if p != nil || err == nil {
				t.Fatalf("New = %v, %v; want an error", p, err)
			}
			var fields []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var ce *resilience.ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("error %v is not a *ConfigError", e)
				}
				if !strings.Contains(ce.Error(), "Config."+ce.Field+": ") || ce.Problem == "" {
					t.Errorf("message %q does not name the field and the problem", ce.Error())
				}
				fields = append(fields, ce.Field)
			}
			if diff := cmp.Diff(tt.fields, fields); diff != "" {
				t.Errorf("fields mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	wantMCP := resilience.Config{
		Retry:   resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 30 * time.Second, Multiplier: 2, Jitter: 0.2},
		Breaker: resilience.BreakerConfig{FailureThreshold: 5, RecoveryTime: 30 * time.Second, SuccessThreshold: 1},
	}
	wantLLM := resilience.Config{
		Retry:   resilience.RetryConfig{MaxAttempts: 3, BaseDelay: 2 * time.Second, MaxDelay: 60 * time.Second, Multiplier: 2, Jitter: 0.2},
		Breaker: resilience.BreakerConfig{FailureThreshold: 3, RecoveryTime: 60 * time.Second, SuccessThreshold: 1},
		Timeout: 120 * time.Second,
	}
	if diff := cmp.Diff(wantMCP, resilience.MCP()); diff != "" {
		t.Errorf("MCP() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantLLM, resilience.LLM()); diff != "" {
		t.Errorf("LLM() mismatch (-want +got):\n%s", diff)
	}
	for _, cfg := range []resilience.Config{resilience.MCP(), resilience.LLM()} {
		if _, err := resilience.New[string](cfg); err != nil {
			t.Errorf("preset does not validate: %v", err)
		}
	}
	// Presets are values: overriding one field leaves the next call's
	// preset untouched.
	cfg := resilience.LLM()
	cfg.Timeout = time.Second
	if resilience.LLM().Timeout != 120*time.Second {
		t.Error("changing a returned preset changed the preset")
	}
	p := mustNew[string](t, cfg)
	if got := p.Config().Timeout; got != time.Second {
		t.Errorf("Config().Timeout = %v, want the override", got)
	}
}

func TestObserver(t *testing.T) {
	var got []resilience.Attempt
	cfg := resilience.Config{Name: "svc", Retry: resilience.RetryConfig{MaxAttempts: 3, BaseDelay: time.Millisecond}}
	p := mustNew[string](t, cfg, resilience.WithObserver(func(a resilience.Attempt) {
		a.Duration = 0 // not deterministic
		got = append(got, a)
	}))
	errTransient := resilience.MarkTransient(errBoom)
	errPermanent := resilience.MarkPermanent(errBoom)
	var calls atomic.Int32
	p.Do(context.Background(), func(context.Context) (string, error) {
		switch calls.Add(1) {
		case 1:
			return "", errTransient
		case 2:
			return "", errPermanent
		}
		return "ok", nil
	})
	p.Do(context.Background(), func(context.Context) (string, error) { return "ok", nil })
	want := []resilience.Attempt{
		{Name: "svc", Number: 1, Err: errTransient, Class: resilience.Transient, Retry: true, Delay: time.Millisecond},
		{Name: "svc", Number: 2, Err: errPermanent, Class: resilience.Permanent},
		{Name: "svc", Number: 1},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("attempts mismatch (-want +got):\n%s", diff)
	}
}

// sdkError stands for an error type of some client library.
type sdkError struct{ code string }

func (e *sdkError) Error() string { return "sdk: " + e.code }

func TestWithClassifier(t *testing.T) {
	classify := func(err error) resilience.Class {
		var e *sdkError
		if errors.As(err, &e) && e.code == "overloaded" {
			return resilience.Transient
		}
		return resilience.Unknown
	}
	cfg := fast(resilience.MCP())
	cfg.Breaker = resilience.BreakerConfig{}
	p := mustNew[string](t, cfg, resilience.WithClassifier(classify))
	tests := []struct {
		err      error
		attempts int32
	}{
		{&sdkError{"overloaded"}, 3},
		{&sdkError{"invalid"}, 1},                   // Unknown: falls through to Classify
		{&resilience.HTTPError{StatusCode: 503}, 3}, // Classify still applies
		{&resilience.HTTPError{StatusCode: 401}, 1},
	}
	for _, tt := range tests {
		var calls atomic.Int32
		p.Do(context.Background(), failing(&calls, tt.err))
		if calls.Load() != tt.attempts {
			t.Errorf("%v: %d attempts, want %d", tt.err, calls.Load(), tt.attempts)
		}
	}
}

func TestPanicPropagatesAndReleases(t *testing.T) {
	cfg := resilience.Config{
		Retry:    resilience.RetryConfig{MaxAttempts: 3},
		Breaker:  resilience.BreakerConfig{FailureThreshold: 2, RecoveryTime: time.Minute},
		Bulkhead: resilience.BulkheadConfig{MaxConcurrent: 1},
	}
	p := mustNew[string](t, cfg)
	var calls atomic.Int32
	recovered := func() (r any) {
		defer func() { r = recover() }()
		p.Do(context.Background(), func(context.Context) (string, error) {
			calls.Add(1)
			panic("kaboom")
		})
		return nil
	}()
	if recovered != "kaboom" {
		t.Errorf("recovered %v, want the original panic value", recovered)
	}
	if calls.Load() != 1 {
		t.Errorf("fn called %d times; a panic must not be retried", calls.Load())
	}
	if st := p.Breaker(); st.Failures != 1 {
		t.Errorf("breaker failures = %d, want 1: a panic counts as a failure", st.Failures)
	}
	if v, err := p.Do(context.Background(), func(context.Context) (string, error) { return "ok", nil }); err != nil || v != "ok" {
		t.Errorf("call after the panic: %q, %v; the bulkhead slot must have been released", v, err)
	}
}

func TestLogging(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := resilience.Config{
		Name:    "svc",
		Retry:   resilience.RetryConfig{MaxAttempts: 2},
		Breaker: resilience.BreakerConfig{FailureThreshold: 2},
	}
	p := mustNew[string](t, cfg, resilience.WithLogger(zap.New(core)))
	var calls atomic.Int32
	p.Do(context.Background(), failing(&calls, resilience.MarkTransient(errBoom)))
	type entry struct {
		Level   zapcore.Level
		Message string
		Policy  any
	}
	var got []entry
	for _, e := range logs.All() {
		got = append(got, entry{e.Level, e.Message, e.ContextMap()["policy"]})
	}
	want := []entry{
		{zapcore.InfoLevel, "resilience: retrying", "svc"},
		{zapcore.WarnLevel, "resilience: circuit breaker opened", "svc"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log entries mismatch (-want +got):\n%s", diff)
	}
}

func TestConcurrentUse(t *testing.T) {
	cfg := fast(resilience.MCP())
	cfg.Timeout = time.Second
	cfg.Bulkhead = resilience.BulkheadConfig{MaxConcurrent: 4, MaxQueue: 64}
	cfg.Breaker.FailureThreshold = 1000
	p := mustNew[int](t, cfg)
	var wg sync.WaitGroup
	var wrong atomic.Int32
	for i := range 64 {
		wg.Go(func() {
			var n atomic.Int32
			v, err := p.Do(context.Background(), func(context.Context) (int, error) {
				if n.Add(1) == 1 && i%2 == 0 {
					return 0, resilience.MarkTransient(errBoom)
				}
				return i, nil
			})
			if err != nil || v != i {
				wrong.Add(1)
			}
			_ = p.Breaker()
		})
	}
	wg.Wait()
	if wrong.Load() != 0 {
		t.Errorf("%d of 64 concurrent calls got a wrong result", wrong.Load())
	}
}
