package resilience

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"go.uber.org/zap"
)

// Policy runs calls to one dependency under a [Config]: fallback, retry,
// bulkhead, circuit breaker and timeout, composed in that order from the
// outside in (see the package documentation). T is the calls' result type.
//
// A Policy is safe for concurrent use and is meant to be shared: make one per
// dependency (per MCP server, per model) and send every call through it, so
// that its breaker and bulkhead see all the traffic.
type Policy[T any] struct {
	cfg      Config
	log      *zap.Logger
	classify func(error) Class
	observe  func(Attempt)
	fallback func(context.Context, error) (T, error)

	breaker  circuitbreaker.CircuitBreaker[T] // nil without a breaker
	bulkhead *bulkheadStage[T]                // nil without a bulkhead
	policies []failsafe.Policy[T]
	executor failsafe.Executor[T]
}

// Attempt describes one finished attempt, for the observer set with
// [WithObserver].
type Attempt struct {
	// Name is the Policy's Config.Name.
	Name string
	// Number counts attempts from 1.
	Number int
	// Err is the attempt's error; nil on success.
	Err error
	// Class is Err's class ([Unknown] when Err is nil).
	Class Class
	// Duration is how long the attempt ran.
	Duration time.Duration
	// Retry reports whether another attempt is scheduled.
	Retry bool
	// Delay is the wait before that attempt; zero when Retry is false.
	Delay time.Duration
}

// Option configures secondary behaviour of a [Policy] in [New].
type Option func(*options)

type options struct {
	log        *zap.Logger
	classifier func(error) Class
	observer   func(Attempt)
	fallback   any
}

// WithLogger sets the logger. The Policy logs retries (Info), breaker state
// changes (Warn when it opens, Info otherwise), bulkhead rejections (Debug)
// and panics in the called function (Error). The default logs nothing.
func WithLogger(l *zap.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithClassifier puts fn before [Classify]: the Policy uses fn's class unless
// it returns [Unknown], in which case Classify decides. Use it to teach a
// Policy the errors of an SDK that hides status codes in its own types.
func WithClassifier(fn func(error) Class) Option {
	return func(o *options) { o.classifier = fn }
}

// WithObserver calls fn after every attempt that reached the called function,
// on the calling goroutine, before any retry delay. Use it for metrics and
// progress events ("retrying in 2s"). It must not block.
func WithObserver(fn func(Attempt)) Option {
	return func(o *options) { o.observer = fn }
}

// WithFallback makes [Policy.Do] call fn with the final error instead of
// returning it, and return what fn returns. It is the outermost stage: fn
// sees the error after every retry, an open breaker's [*CircuitOpenError],
// a full bulkhead's [ErrBulkheadFull]. It is not called when the caller's
// context is done. T must be the Policy's result type; [New] reports a
// mismatch.
func WithFallback[T any](fn func(ctx context.Context, err error) (T, error)) Option {
	return func(o *options) { o.fallback = fn }
}

// New builds a Policy from cfg. It returns every invalid field of cfg, each a
// [*ConfigError] naming the field and the fix, joined with [errors.Join].
func New[T any](cfg Config, opts ...Option) (*Policy[T], error) {
	o := options{log: zap.NewNop()}
	for _, opt := range opts {
		opt(&o)
	}
	err := cfg.validate()
	var fallback func(context.Context, error) (T, error)
	if o.fallback != nil {
		fb, ok := o.fallback.(func(context.Context, error) (T, error))
		if !ok {
			err = errors.Join(err, fmt.Errorf("resilience: WithFallback: the fallback is a %T but the Policy's result type is %T; make them the same type",
				o.fallback, *new(T)))
		}
		fallback = fb
	}
	if err != nil {
		return nil, err
	}
	p := &Policy[T]{
		cfg:      cfg,
		log:      o.log,
		observe:  o.observer,
		fallback: fallback,
		classify: Classify,
	}
	if cfg.Name != "" {
		p.log = p.log.With(zap.String("policy", cfg.Name))
	}
	if c := o.classifier; c != nil {
		p.classify = func(err error) Class {
			if class := c(err); class != Unknown {
				return class
			}
			return Classify(err)
		}
	}
	if cfg.Retry.MaxAttempts > 1 {
		p.policies = append(p.policies, p.newRetry())
	}
	if cfg.Bulkhead.MaxConcurrent > 0 {
		p.bulkhead = newBulkheadStage[T](cfg.Bulkhead, func() {
			p.log.Debug("resilience: bulkhead full")
		})
		p.policies = append(p.policies, p.bulkhead)
	}
	if cfg.Breaker.FailureThreshold > 0 {
		p.breaker = p.newBreaker()
		p.policies = append(p.policies, p.breaker)
	}
	p.executor = failsafe.With(p.policies...)
	return p, nil
}

func (p *Policy[T]) newRetry() retrypolicy.RetryPolicy[T] {
	return retrypolicy.NewBuilder[T]().
		WithMaxAttempts(p.cfg.Retry.MaxAttempts).
		HandleIf(func(_ T, err error) bool {
			if _, stop := err.(*stopRetry); stop {
				return false
			}
			return err != nil && !errors.Is(err, circuitbreaker.ErrOpen) && p.shouldRetry(err)
		}).
		ReturnLastFailure().
		WithDelayFunc(func(exec failsafe.ExecutionAttempt[T]) time.Duration {
			if c, ok := exec.Context().Value(callKey{}).(*call); ok {
				return c.delay
			}
			return 0
		}).
		OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[T]) {
			err := e.LastError()
			p.log.Info("resilience: retrying",
				zap.Int("attempt", e.Attempts()), zap.Duration("delay", e.Delay),
				zap.Stringer("class", p.classify(err)), zap.Error(err))
		}).
		Build()
}

func (p *Policy[T]) newBreaker() circuitbreaker.CircuitBreaker[T] {
	b := p.cfg.Breaker
	recovery := b.RecoveryTime
	if recovery == 0 {
		recovery = DefaultRecoveryTime
	}
	successes := max(b.SuccessThreshold, 1)
	return circuitbreaker.NewBuilder[T]().
		HandleIf(func(_ T, err error) bool { return err != nil && p.countsAgainstBreaker(err) }).
		WithFailureThreshold(uint(b.FailureThreshold)).
		WithSuccessThreshold(uint(successes)).
		WithDelay(recovery).
		OnStateChanged(func(e circuitbreaker.StateChangedEvent) {
			from, to := breakerState(e.OldState), breakerState(e.NewState)
			if to == BreakerOpen {
				p.log.Warn("resilience: circuit breaker opened", zap.Stringer("from", from), zap.Duration("recovery", recovery))
			} else {
				p.log.Info("resilience: circuit breaker "+to.String(), zap.Stringer("from", from))
			}
			if b.OnStateChange != nil {
				b.OnStateChange(from, to)
			}
		}).
		Build()
}

// shouldRetry reports whether a failed attempt may be retried, before
// counting attempts.
func (p *Policy[T]) shouldRetry(err error) bool {
	if errors.Is(err, errPanicked) {
		return false
	}
	class := p.classify(err)
	if p.cfg.Retry.If != nil {
		return p.cfg.Retry.If(err, class)
	}
	return class.Retryable()
}

// countsAgainstBreaker reports whether a failed attempt is a failure of the
// dependency.
func (p *Policy[T]) countsAgainstBreaker(err error) bool {
	if errors.Is(err, errPanicked) {
		return true
	}
	class := p.classify(err)
	if f := p.cfg.Breaker.FailureIf; f != nil {
		return f(err, class)
	}
	return class == Transient || class == RateLimited || class == Unknown
}

// delay computes the wait before the retry that follows attempt n, which
// failed with err.
func (p *Policy[T]) delay(n int, err error) time.Duration {
	r := p.cfg.Retry
	maxDelay := r.maxDelay()
	d := time.Duration(0)
	if r.BaseDelay > 0 {
		f := float64(r.BaseDelay)
		for i := 1; i < n && f < float64(maxDelay); i++ {
			f *= r.multiplier()
		}
		if r.Jitter > 0 {
			f *= 1 + r.Jitter*(2*rand.Float64()-1)
		}
		d = time.Duration(min(f, float64(maxDelay)))
	}
	if hint, ok := RetryAfter(err); ok {
		d = max(d, hint)
	}
	return min(d, maxDelay)
}

// callKey keys the per-call state in the context handed to failsafe.
type callKey struct{}

// call is the state of one Do call. Attempts run one after another, so it
// needs no lock.
type call struct {
	attempts int
	delay    time.Duration // before the next attempt
	panicked bool
	panicVal any
}

// errPanicked stands for a panic in the called function while the Policy's
// stages unwind; Do then re-panics with the original value.
var errPanicked = errors.New("resilience: called function panicked")

// Do calls fn under the Policy and returns its result. fn receives a context
// derived from ctx, with the per-attempt deadline when Config.Timeout is set;
// it must return promptly once that context is done, since the Policy never
// abandons a running fn (no goroutine is left behind).
//
// Do stops as soon as ctx is done: it makes no further attempt, cuts short a
// retry delay or a wait in the bulkhead queue, skips the fallback, and
// returns ctx.Err(). It does not start a retry delay that would outlast ctx's
// deadline either: it gives up at once with the last error, which says more
// than the deadline would. Otherwise it returns fn's result, or, on failure:
//
//   - fn's error, as is, when only one attempt was made;
//   - a [*RetryError] wrapping the last error after several attempts;
//   - a [*CircuitOpenError] when the breaker refused the call;
//   - an error matching [ErrBulkheadFull] when the bulkhead refused it;
//   - a [*TimeoutError] when the last attempt ran out of time;
//
// or, with [WithFallback], whatever the fallback returns for that error.
//
// If fn panics, the Policy records a failure, stops, and Do panics with the
// same value.
func (p *Policy[T]) Do(ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	c := &call{}
	var v T
	var err error
	if len(p.policies) == 0 {
		v, err = p.attempt(ctx, c, fn)
	} else {
		v, err = p.executor.WithContext(context.WithValue(ctx, callKey{}, c)).
			GetWithExecution(func(exec failsafe.Execution[T]) (T, error) {
				return p.attempt(exec.Context(), c, fn)
			})
	}
	if c.panicked {
		panic(c.panicVal)
	}
	if err == nil {
		return v, nil
	}
	if s, ok := err.(*stopRetry); ok {
		err = s.err
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return zero, ctxErr
	}
	if p.breaker != nil && errors.Is(err, circuitbreaker.ErrOpen) {
		err = &CircuitOpenError{Name: p.cfg.Name, RetryIn: p.breaker.RemainingDelay()}
	}
	if c.attempts > 1 {
		err = &RetryError{Attempts: c.attempts, Err: err}
	}
	if p.fallback != nil {
		return p.fallback(ctx, err)
	}
	return v, err
}

// attempt runs fn once under the per-attempt timeout and reports it to the
// observer.
func (p *Policy[T]) attempt(ctx context.Context, c *call, fn func(context.Context) (T, error)) (v T, err error) {
	c.attempts++
	c.delay = 0
	actx := ctx
	if p.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, p.cfg.Timeout, ErrTimeout)
		defer cancel()
	}
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			c.panicked, c.panicVal = true, r
			p.log.Error("resilience: called function panicked", zap.Any("panic", r), zap.ByteString("stack", debug.Stack()))
			var zero T
			v, err = zero, errPanicked
		}
	}()
	v, err = fn(actx)
	if err != nil && p.cfg.Timeout > 0 && ctx.Err() == nil && context.Cause(actx) == ErrTimeout {
		err = &TimeoutError{Limit: p.cfg.Timeout, Err: err}
	}
	retry, stop := false, false
	if err != nil && c.attempts < p.cfg.Retry.MaxAttempts && ctx.Err() == nil && p.shouldRetry(err) {
		c.delay = p.delay(c.attempts, err)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= c.delay {
			// The caller's deadline would pass during the wait: give up
			// now with this error rather than later with the deadline's.
			p.log.Info("resilience: not retrying: the caller's deadline comes first",
				zap.Int("attempt", c.attempts), zap.Duration("delay", c.delay), zap.Error(err))
			c.delay, stop = 0, true
		} else {
			retry = true
		}
	}
	if p.observe != nil {
		a := Attempt{Name: p.cfg.Name, Number: c.attempts, Err: err, Duration: time.Since(start), Retry: retry, Delay: c.delay}
		if err != nil {
			a.Class = p.classify(err)
		}
		p.observe(a)
	}
	if stop {
		err = &stopRetry{err}
	}
	return v, err
}

// stopRetry carries an attempt's error past the retry stage when the Policy
// decided not to retry it for a reason the retry stage cannot see (the
// caller's deadline). Do unwraps it.
type stopRetry struct{ err error }

func (s *stopRetry) Error() string { return s.err.Error() }
func (s *stopRetry) Unwrap() error { return s.err }

// BreakerState is the state of a circuit breaker.
type BreakerState int

const (
	// BreakerClosed lets calls through and counts failures.
	BreakerClosed BreakerState = iota
	// BreakerOpen refuses calls until its recovery time has passed.
	BreakerOpen
	// BreakerHalfOpen lets a limited number of trial calls through.
	BreakerHalfOpen
)

// String returns "closed", "open" or "half-open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	default:
		return fmt.Sprintf("BreakerState(%d)", int(s))
	}
}

func breakerState(s circuitbreaker.State) BreakerState {
	switch s {
	case circuitbreaker.OpenState:
		return BreakerOpen
	case circuitbreaker.HalfOpenState:
		return BreakerHalfOpen
	default:
		return BreakerClosed
	}
}

// BreakerStatus is a snapshot of a Policy's circuit breaker, for health
// reporting.
type BreakerStatus struct {
	// Enabled is false when the Policy has no breaker; the other fields are
	// then zero.
	Enabled bool
	// State is the breaker's state. An open breaker whose recovery time has
	// passed reports BreakerOpen until the next call, which is its trial.
	State BreakerState
	// Failures and Successes are the attempts recorded in the current state
	// (in the last closed state, while open).
	Failures, Successes int
	// RetryIn is the time left before an open breaker lets a trial call
	// through; zero in other states.
	RetryIn time.Duration
}

// Breaker returns a snapshot of the circuit breaker's state.
func (p *Policy[T]) Breaker() BreakerStatus {
	if p.breaker == nil {
		return BreakerStatus{}
	}
	m := p.breaker.Metrics()
	return BreakerStatus{
		Enabled:   true,
		State:     breakerState(p.breaker.State()),
		Failures:  int(m.Failures()),
		Successes: int(m.Successes()),
		RetryIn:   p.breaker.RemainingDelay(),
	}
}

// BulkheadStatus is a snapshot of a Policy's bulkhead, for health reporting
// and metrics.
type BulkheadStatus struct {
	// Enabled is false when the Policy has no bulkhead; the other fields are
	// then zero.
	Enabled bool
	// Running is the number of attempts holding a slot.
	Running int
	// Queued is the number of attempts waiting for a slot.
	Queued int
}

// Bulkhead returns a snapshot of the bulkhead's occupancy. The counts are
// read without a lock and may be a moment apart.
func (p *Policy[T]) Bulkhead() BulkheadStatus {
	if p.bulkhead == nil {
		return BulkheadStatus{}
	}
	return p.bulkhead.status()
}

// Config returns the configuration the Policy was built from.
func (p *Policy[T]) Config() Config { return p.cfg }
