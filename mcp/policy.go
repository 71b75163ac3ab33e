package mcp

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// ErrCircuitOpen is returned while a server's circuit breaker is open: too
// many calls in a row failed on the transport, and the manager stops sending
// calls for a cool-down period.
var ErrCircuitOpen = errors.New("mcp: circuit breaker open for this server; calls resume after the cool-down")

// callPolicy runs one logical call with retry on transient failures and a
// circuit breaker. It is the package's single seam to the resilience layer.
type callPolicy struct {
	attempts  int
	base, max time.Duration
	failures  int
	cooldown  time.Duration

	mu        sync.Mutex
	fails     int
	openUntil time.Time
}

func newCallPolicy(r Retry) *callPolicy {
	return &callPolicy{attempts: r.Attempts, base: r.BaseDelay, max: r.MaxDelay, failures: r.BreakerFailures, cooldown: r.BreakerCooldown}
}

// transientError marks a failure that may be retried.
type transientError struct{ err error }

func (e transientError) Error() string { return e.err.Error() }
func (e transientError) Unwrap() error { return e.err }

func markTransient(err error) error { return transientError{err} }

func isTransient(err error) bool {
	var t transientError
	return errors.As(err, &t)
}

// open reports whether the breaker refuses calls now.
func (p *callPolicy) open() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Now().Before(p.openUntil)
}

func (p *callPolicy) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err == nil:
		p.fails = 0
		return
	case !isTransient(err) && !isTransportError(err):
		return // the server answered, or the caller gave up
	}
	p.fails++
	if p.fails >= p.failures {
		p.openUntil = time.Now().Add(p.cooldown)
		p.fails = 0
	}
}

func (p *callPolicy) do(ctx context.Context, fn func(context.Context) (*mcpgo.CallToolResult, error)) (*mcpgo.CallToolResult, error) {
	delay := p.base
	var err error
	for attempt := 1; ; attempt++ {
		if p.open() {
			return nil, ErrCircuitOpen
		}
		var res *mcpgo.CallToolResult
		res, err = fn(ctx)
		p.record(err)
		if err == nil || !isTransient(err) || attempt >= p.attempts {
			return res, err
		}
		wait := delay/2 + rand.N(delay/2+1)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		delay = min(2*delay, p.max)
	}
}
