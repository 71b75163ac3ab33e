package resilience

import (
	"errors"
	"fmt"
	"time"
)

// Defaults used when an enabled stage leaves a field at zero.
const (
	// DefaultMaxDelay caps retry delays when RetryConfig.MaxDelay is zero.
	DefaultMaxDelay = 30 * time.Second
	// DefaultMultiplier is the backoff growth factor when
	// RetryConfig.Multiplier is zero.
	DefaultMultiplier = 2.0
	// DefaultRecoveryTime is how long an open breaker stays open when
	// BreakerConfig.RecoveryTime is zero.
	DefaultRecoveryTime = 30 * time.Second
)

// Config describes a [Policy]. The zero Config is valid and does nothing but
// call the function once: every stage is off until its fields enable it. Start
// from a preset ([MCP], [LLM]) and override fields, or fill one in.
type Config struct {
	// Name identifies the protected dependency ("mcp:github", "llm:gpt-4o")
	// in log fields and in [CircuitOpenError]. Optional.
	Name string
	// Retry tries failed attempts again with exponential backoff.
	Retry RetryConfig
	// Breaker stops calling a dependency that keeps failing.
	Breaker BreakerConfig
	// Timeout bounds each attempt: its context is cancelled after Timeout
	// and the attempt fails with a [*TimeoutError]. Zero means no limit
	// beyond the caller's own context.
	Timeout time.Duration
	// Bulkhead limits how many attempts run at once.
	Bulkhead BulkheadConfig
}

// RetryConfig configures the retry stage. Retry is on when MaxAttempts > 1.
//
// The delay before retry n (n = 1, 2, ...) is BaseDelay × Multiplierⁿ⁻¹,
// varied by ±Jitter, capped by MaxDelay. If the error carries a Retry-After
// hint ([RetryAfter]), the delay is at least the hint, still capped by
// MaxDelay. A retry whose delay would outlast the caller's deadline is not
// made: the call fails at once with the last error.
type RetryConfig struct {
	// MaxAttempts is the total number of attempts, the first included.
	// 0 or 1 means a single attempt (no retry).
	MaxAttempts int
	// BaseDelay is the delay before the first retry. Zero retries at once,
	// which is rarely right against a remote service.
	BaseDelay time.Duration
	// MaxDelay caps every delay, Retry-After hints included. Zero means
	// [DefaultMaxDelay]. It must not be below BaseDelay.
	MaxDelay time.Duration
	// Multiplier is the backoff growth factor, at least 1. Zero means
	// [DefaultMultiplier] (2).
	Multiplier float64
	// Jitter varies each delay randomly by up to ±Jitter of itself, between
	// 0 and 1 (0.2 turns 1s into 0.8s..1.2s), so that callers that failed
	// together do not retry together. Zero means no jitter. Jitter never
	// takes a delay below a Retry-After hint.
	Jitter float64
	// If decides whether a failed attempt is tried again; class is the
	// error's [Class] as the Policy's classifier sees it. Nil retries
	// [Transient] and [RateLimited] errors ([Class.Retryable]). Whatever If
	// says, the caller's cancelled context and an open circuit breaker are
	// never retried.
	If func(err error, class Class) bool
}

// BreakerConfig configures the circuit breaker. The breaker is on when
// FailureThreshold > 0.
//
// Closed, it lets calls through and counts consecutive failures; at
// FailureThreshold it opens. Open, it refuses every call at once with a
// [*CircuitOpenError] for RecoveryTime. Then it half-opens: it lets up to
// SuccessThreshold trial calls through at once and refuses the rest; a failed
// trial opens it again, SuccessThreshold successful trials close it.
type BreakerConfig struct {
	// FailureThreshold is the number of consecutive failed attempts that
	// opens the breaker. Zero means no breaker.
	FailureThreshold int
	// RecoveryTime is how long the breaker stays open before a trial call.
	// Zero means [DefaultRecoveryTime].
	RecoveryTime time.Duration
	// SuccessThreshold is the number of successful trial calls that close a
	// half-open breaker. Zero means 1.
	SuccessThreshold int
	// FailureIf decides whether a failed attempt counts against the
	// dependency. Nil counts [Transient], [RateLimited] and [Unknown]
	// errors; [Permanent] errors (the dependency answered, the request was
	// wrong) and [Canceled] ones (the caller gave up) count as successes.
	FailureIf func(err error, class Class) bool
	// OnStateChange, if set, is called after every state change, outside
	// the breaker's lock (it may read [Policy.Breaker]); calls for
	// concurrent transitions may overlap. It must not block.
	OnStateChange func(from, to BreakerState)
}

// BulkheadConfig configures the bulkhead. The bulkhead is on when
// MaxConcurrent > 0.
type BulkheadConfig struct {
	// MaxConcurrent is the most attempts that run at once. Zero means no
	// bulkhead.
	MaxConcurrent int
	// MaxQueue is the most attempts that wait for a slot when all are busy;
	// an attempt that finds the queue full fails at once with
	// [ErrBulkheadFull]. Zero means none wait.
	MaxQueue int
	// MaxWait is the longest a queued attempt waits before failing with
	// [ErrBulkheadFull]. Zero means it waits until a slot frees or its
	// context is done.
	MaxWait time.Duration
}

// MCP returns the preset for calls to MCP servers: 3 attempts with backoff
// from 1 s to at most 30 s (jitter 0.2), and a breaker that opens after 5
// consecutive failures and tries again after 30 s. No timeout: tool calls run
// as long as their context allows. Override fields on the returned value.
func MCP() Config {
	return Config{
		Retry:   RetryConfig{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 30 * time.Second, Multiplier: 2, Jitter: 0.2},
		Breaker: BreakerConfig{FailureThreshold: 5, RecoveryTime: 30 * time.Second, SuccessThreshold: 1},
	}
}

// LLM returns the preset for calls to language-model APIs: 3 attempts with
// backoff from 2 s to at most 60 s (jitter 0.2, longer for rate limits), a
// breaker that opens after 3 consecutive failures and tries again after 60 s,
// and a 120 s limit per attempt. Override fields on the returned value.
func LLM() Config {
	return Config{
		Retry:   RetryConfig{MaxAttempts: 3, BaseDelay: 2 * time.Second, MaxDelay: 60 * time.Second, Multiplier: 2, Jitter: 0.2},
		Breaker: BreakerConfig{FailureThreshold: 3, RecoveryTime: 60 * time.Second, SuccessThreshold: 1},
		Timeout: 120 * time.Second,
	}
}

// validate returns every problem in c, joined, or nil.
func (c Config) validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	r := c.Retry
	if r.MaxAttempts < 0 {
		bad("Retry.MaxAttempts", "%d is negative; use 1 for a single attempt or the total number of attempts (e.g. 3)", r.MaxAttempts)
	}
	if r.BaseDelay < 0 {
		bad("Retry.BaseDelay", "%v is negative; use 0 to retry at once or a positive delay (e.g. 1s)", r.BaseDelay)
	}
	if r.MaxDelay < 0 {
		bad("Retry.MaxDelay", "%v is negative; use 0 for the default (%v) or a positive cap", r.MaxDelay, DefaultMaxDelay)
	}
	if maxDelay := r.maxDelay(); r.BaseDelay > maxDelay && r.MaxDelay >= 0 {
		bad("Retry.MaxDelay", "%v is below Retry.BaseDelay (%v); raise MaxDelay or lower BaseDelay", maxDelay, r.BaseDelay)
	}
	if r.Multiplier != 0 && r.Multiplier < 1 {
		bad("Retry.Multiplier", "%v is below 1; use 0 for the default (%v) or a factor of at least 1", r.Multiplier, DefaultMultiplier)
	}
	if r.Jitter < 0 || r.Jitter > 1 {
		bad("Retry.Jitter", "%v is outside [0, 1]; use a fraction such as 0.2, or 0 for none", r.Jitter)
	}
	b := c.Breaker
	if b.FailureThreshold < 0 {
		bad("Breaker.FailureThreshold", "%d is negative; use 0 for no breaker or the number of consecutive failures that opens it (e.g. 5)", b.FailureThreshold)
	}
	if b.RecoveryTime < 0 {
		bad("Breaker.RecoveryTime", "%v is negative; use 0 for the default (%v) or a positive duration", b.RecoveryTime, DefaultRecoveryTime)
	}
	if b.SuccessThreshold < 0 {
		bad("Breaker.SuccessThreshold", "%d is negative; use 0 for the default (1) or a positive count", b.SuccessThreshold)
	}
	if c.Timeout < 0 {
		bad("Timeout", "%v is negative; use 0 for no per-attempt limit or a positive duration (e.g. 30s)", c.Timeout)
	}
	k := c.Bulkhead
	if k.MaxConcurrent < 0 {
		bad("Bulkhead.MaxConcurrent", "%d is negative; use 0 for no bulkhead or the number of attempts allowed at once", k.MaxConcurrent)
	}
	if k.MaxQueue < 0 {
		bad("Bulkhead.MaxQueue", "%d is negative; use 0 for no queue or the number of attempts that may wait", k.MaxQueue)
	}
	if k.MaxWait < 0 {
		bad("Bulkhead.MaxWait", "%v is negative; use 0 to wait as long as the context allows or a positive duration", k.MaxWait)
	}
	if k.MaxConcurrent == 0 && (k.MaxQueue > 0 || k.MaxWait > 0) {
		bad("Bulkhead.MaxConcurrent", "is 0 (no bulkhead) but MaxQueue or MaxWait is set; set MaxConcurrent to enable the bulkhead")
	}
	return errors.Join(errs...)
}

func (r RetryConfig) maxDelay() time.Duration {
	if r.MaxDelay == 0 {
		return DefaultMaxDelay
	}
	return r.MaxDelay
}

func (r RetryConfig) multiplier() float64 {
	if r.Multiplier == 0 {
		return DefaultMultiplier
	}
	return r.Multiplier
}
