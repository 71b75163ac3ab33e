package resilience

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"
)

// Class says what kind of failure an error is, and so whether trying again
// can help. [Classify] computes it; [Mark], [MarkTransient], [MarkPermanent]
// and [RateLimit] attach one explicitly.
type Class int

const (
	// Unknown is the class of nil and of errors nothing recognises. The
	// default retry does not retry Unknown errors; the default breaker counts
	// them as failures of the dependency.
	Unknown Class = iota
	// Transient failures are likely to succeed when tried again: timeouts,
	// refused or reset connections, server errors (HTTP 5xx, 408), a full
	// bulkhead.
	Transient
	// RateLimited failures come from a dependency asking its callers to slow
	// down (HTTP 429). They are retried, after the Retry-After delay the error
	// carries if it carries one (see [RetryAfter]).
	RateLimited
	// Permanent failures will fail the same way every time: bad requests,
	// authentication and permission errors, unknown hosts, certificate
	// errors. They are never retried by default and do not count against a
	// circuit breaker, since the dependency answered.
	Permanent
	// Canceled is the class of [context.Canceled]: somebody gave up on the
	// call. It is never retried and does not count against a breaker.
	Canceled
)

// String returns the class name in lower case ("rate-limited").
func (c Class) String() string {
	switch c {
	case Unknown:
		return "unknown"
	case Transient:
		return "transient"
	case RateLimited:
		return "rate-limited"
	case Permanent:
		return "permanent"
	case Canceled:
		return "canceled"
	default:
		return "Class(" + strconv.Itoa(int(c)) + ")"
	}
}

// Retryable reports whether the default retry tries again after an error of
// class c: true for [Transient] and [RateLimited].
func (c Class) Retryable() bool { return c == Transient || c == RateLimited }

// Error is an error with an explicit [Class] and, optionally, a Retry-After
// hint. [Mark], [MarkTransient], [MarkPermanent] and [RateLimit] create it;
// code that knows what its failure means (an SDK error with a status code, a
// tool reporting bad arguments) uses them so that [Classify] need not guess.
//
// Error is transparent: its message is the wrapped error's message, and
// [errors.Is] and [errors.As] see through it.
type Error struct {
	// Class is the class [Classify] reports for this error.
	Class Class
	// RetryAfter is how long the dependency asked callers to wait before
	// trying again; zero means no hint.
	RetryAfter time.Duration
	// Err is the underlying error; never nil.
	Err error
}

// Error returns the wrapped error's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Mark returns err marked with class c, or nil if err is nil. The outermost
// mark wins: Mark(MarkTransient(err), Permanent) classifies as [Permanent].
func Mark(err error, c Class) error {
	if err == nil {
		return nil
	}
	return &Error{Class: c, Err: err}
}

// MarkTransient returns err marked [Transient], or nil if err is nil.
func MarkTransient(err error) error { return Mark(err, Transient) }

// MarkPermanent returns err marked [Permanent], or nil if err is nil.
func MarkPermanent(err error) error { return Mark(err, Permanent) }

// RateLimit returns err marked [RateLimited] with a Retry-After hint (zero or
// negative means none), or nil if err is nil. A retrying [Policy] waits at
// least retryAfter, capped by its RetryConfig.MaxDelay, before trying again.
func RateLimit(err error, retryAfter time.Duration) error {
	if err == nil {
		return nil
	}
	return &Error{Class: RateLimited, RetryAfter: max(retryAfter, 0), Err: err}
}

// RetryAfter returns the delay a dependency asked for before the next try,
// if any error in err's chain carries one: an [*Error] made by [RateLimit],
// an [*HTTPError] from a response with a Retry-After header, or a
// [*CircuitOpenError] (the time until the breaker lets a trial call through).
func RetryAfter(err error) (time.Duration, bool) {
	var d time.Duration
	found := walk(err, func(e error) bool {
		var v time.Duration
		switch e := e.(type) {
		case *Error:
			v = e.RetryAfter
		case *HTTPError:
			v = e.RetryAfter
		case *CircuitOpenError:
			v = e.RetryIn
		}
		if v > 0 {
			d = v
			return true
		}
		return false
	})
	return d, found
}

// walk calls visit on err and each error it wraps, depth first, until visit
// returns true; it reports whether one did.
func walk(err error, visit func(error) bool) bool {
	for err != nil {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, visit) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// Classify says what kind of failure err is. The first rule that matches
// decides:
//
//  1. nil is [Unknown].
//  2. An explicit mark ([*Error], from [Mark] and friends) gives its class;
//     the outermost mark wins.
//  3. This package's own errors: a [*TimeoutError], [ErrBulkheadFull] and
//     [ErrCircuitOpen] are [Transient].
//  4. [context.Canceled] is [Canceled].
//  5. An [*HTTPError] is classified by its status code ([ClassifyStatus]).
//  6. [context.DeadlineExceeded] is [Transient]: some deadline inside the
//     call expired. (Classify cannot tell whose deadline it was; [Policy.Do]
//     checks the caller's own context before any retry, so the caller's
//     deadline never causes one.)
//  7. Certificate and TLS handshake errors are [Permanent]; a DNS "no such
//     host" is [Permanent], any other DNS failure [Transient]; an invalid
//     address ([*net.AddrError]) is [Permanent].
//  8. Network timeouts ([net.Error] with Timeout() true), refused, reset or
//     aborted connections, broken pipes, unreachable hosts or networks, a
//     closed connection ([net.ErrClosed]), an unexpected end of stream
//     ([io.EOF], [io.ErrUnexpectedEOF]) and any other [*net.OpError] are
//     [Transient].
//  9. Anything else is [Unknown].
//
// A [Policy] can put its own rules first with [WithClassifier].
func Classify(err error) Class {
	if err == nil {
		return Unknown
	}
	var marked *Error
	if errors.As(err, &marked) {
		return marked.Class
	}
	var timeoutErr *TimeoutError
	if errors.As(err, &timeoutErr) || errors.Is(err, ErrBulkheadFull) || errors.Is(err, ErrCircuitOpen) {
		return Transient
	}
	if errors.Is(err, context.Canceled) {
		return Canceled
	}
	var httpErr *HTTPError
	if errors.As(err, &httpErr) {
		return ClassifyStatus(httpErr.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Transient
	}
	if c := classifyNetwork(err); c != Unknown {
		return c
	}
	return Unknown
}

// classifyNetwork classifies errors from the net, crypto/tls and crypto/x509
// packages and the system calls under them.
func classifyNetwork(err error) Class {
	// Certificates and handshakes do not fix themselves on a retry.
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalidCert      x509.CertificateInvalidError
		hostname         x509.HostnameError
		verification     *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &invalidCert) || errors.As(err, &hostname) ||
		errors.As(err, &verification) || errors.As(err, &recordHeader) {
		return Permanent
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return Permanent
		}
		return Transient
	}
	var addrErr *net.AddrError
	if errors.As(err, &addrErr) {
		return Permanent
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return Transient
	}
	for _, target := range transientNetworkErrors {
		if errors.Is(err, target) {
			return Transient
		}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return Transient
	}
	return Unknown
}

// transientNetworkErrors are the connection-level failures that a new
// connection may well not see.
var transientNetworkErrors = []error{
	syscall.ECONNREFUSED,
	syscall.ECONNRESET,
	syscall.ECONNABORTED,
	syscall.EPIPE,
	syscall.ETIMEDOUT,
	syscall.EHOSTUNREACH,
	syscall.ENETUNREACH,
	syscall.ENETDOWN,
	net.ErrClosed,
	io.ErrUnexpectedEOF,
	io.EOF,
}
