package mcp

import (
	"context"
	"errors"

	"github.com/agentgraph/agentgraph/resilience"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// ErrCircuitOpen matches the error of a call refused because its server's
// circuit breaker is open: calls failed on the transport too many times in a
// row, and the manager stops sending calls for a cool-down period. It is
// [resilience.ErrCircuitOpen].
var ErrCircuitOpen = resilience.ErrCircuitOpen

// callPolicy runs one logical call with retry and circuit breaking: the
// package's single seam to the resilience layer.
type callPolicy = resilience.Policy[*mcpgo.CallToolResult]

// noRetry marks a transport failure after the request went out to a tool
// that is not known to be idempotent: it counts against the breaker but is
// not retried, since the tool may have run.
type noRetry struct{ err error }

func (e *noRetry) Error() string { return e.err.Error() }
func (e *noRetry) Unwrap() error { return e.err }

func newCallPolicy(server string, cfg resilience.Config, log *zap.Logger) (*callPolicy, error) {
	cfg.Name = "mcp:" + server
	userIf := cfg.Retry.If
	cfg.Retry.If = func(err error, class resilience.Class) bool {
		var nr *noRetry
		if errors.As(err, &nr) {
			return false
		}
		if userIf != nil {
			return userIf(err, class)
		}
		return class.Retryable()
	}
	return resilience.New[*mcpgo.CallToolResult](cfg, resilience.WithLogger(log), resilience.WithClassifier(classifyForPolicy))
}

// classifyForPolicy classifies the errors the manager's attempts return.
func classifyForPolicy(err error) resilience.Class {
	var nr *noRetry
	var marked *resilience.Error
	switch {
	case errors.As(err, &nr):
		return resilience.Transient // counts against the breaker; Retry.If refuses it
	case errors.As(err, &marked):
		return marked.Class // the manager's own verdict, such as permanent for a refused origin
	case errors.Is(err, context.Canceled):
		return resilience.Canceled
	case isTransportError(err):
		return resilience.Transient
	}
	return resilience.Unknown
}

func markTransient(err error) error { return resilience.MarkTransient(err) }
