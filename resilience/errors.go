package resilience

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Conditions a caller branches on with [errors.Is].
var (
	// ErrCircuitOpen is matched by the error a [Policy] returns when its
	// circuit breaker is open (or half-open with its trial calls in flight)
	// and the call was refused without reaching the dependency. The error
	// itself is a [*CircuitOpenError].
	ErrCircuitOpen = errors.New("resilience: circuit breaker open")
	// ErrBulkheadFull is matched by the error a [Policy] returns when its
	// bulkhead had no free slot and no room in its queue, or the call waited
	// in the queue for longer than BulkheadConfig.MaxWait.
	ErrBulkheadFull = errors.New("resilience: bulkhead full")
	// ErrTimeout is matched by the error a [Policy] returns when an attempt
	// ran longer than Config.Timeout. The error itself is a [*TimeoutError].
	ErrTimeout = errors.New("resilience: attempt timed out")
)

// CircuitOpenError is returned by [Policy.Do] when the circuit breaker
// refused the call. It matches [ErrCircuitOpen], and [RetryAfter] reports
// RetryIn.
type CircuitOpenError struct {
	// Name is the Policy's Config.Name; may be empty.
	Name string
	// RetryIn is the time left until the breaker lets a trial call through;
	// zero when the breaker is half-open and its trial calls are in flight.
	RetryIn time.Duration
}

// Error returns `resilience: circuit breaker "name" open; next trial call in 12s`.
func (e *CircuitOpenError) Error() string {
	msg := "resilience: circuit breaker open"
	if e.Name != "" {
		msg = "resilience: circuit breaker " + strconv.Quote(e.Name) + " open"
	}
	if e.RetryIn > 0 {
		return msg + "; next trial call in " + e.RetryIn.Round(time.Millisecond).String()
	}
	return msg + "; trial call in progress"
}

// Is reports whether target is [ErrCircuitOpen].
func (e *CircuitOpenError) Is(target error) bool { return target == ErrCircuitOpen }

// TimeoutError is returned for an attempt that ran longer than
// Config.Timeout. It matches [ErrTimeout] and [context.DeadlineExceeded], and
// is [Transient].
type TimeoutError struct {
	// Limit is the per-attempt limit that was exceeded (Config.Timeout).
	Limit time.Duration
	// Err is what the attempt returned once its context was done; may be nil.
	Err error
}

// Error returns "resilience: attempt timed out after 2m0s: <Err>".
func (e *TimeoutError) Error() string {
	msg := "resilience: attempt timed out after " + e.Limit.String()
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is [ErrTimeout] or [context.DeadlineExceeded].
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Unwrap returns the error the attempt returned.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true, as a [net.Error] timeout does.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true; it completes the [net.Error] interface.
func (e *TimeoutError) Temporary() bool { return true }

// RetryError is returned by [Policy.Do] when more than one attempt was made
// and the last one failed. Err is the last attempt's error; [errors.Is],
// [errors.As] and [Classify] see through to it.
type RetryError struct {
	// Attempts is the number of attempts that reached the called function.
	Attempts int
	// Err is the error that ended the call.
	Err error
}

// Error returns "resilience: gave up after 3 attempts: <Err>".
func (e *RetryError) Error() string {
	return fmt.Sprintf("resilience: gave up after %d attempts: %v", e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Err }

// ConfigError reports one invalid [Config] field. [New] returns every problem
// it finds, joined with [errors.Join]; use [errors.As] to get the first.
type ConfigError struct {
	// Field is the field's path in Config, e.g. "Retry.MaxDelay".
	Field string
	// Problem says what is wrong and how to fix it.
	Problem string
}

// Error returns "resilience: Config.Retry.MaxDelay: <Problem>".
func (e *ConfigError) Error() string {
	return "resilience: Config." + e.Field + ": " + e.Problem
}
