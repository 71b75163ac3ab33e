package mcp

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by the package. Match them with errors.Is; the typed errors
// below match with errors.As.
var (
	// ErrShutdown is returned for work started after Manager.Shutdown.
	ErrShutdown = errors.New("mcp: manager is shut down; create a new Manager")
	// ErrSessionClosed is returned for calls on a closed Session.
	ErrSessionClosed = errors.New("mcp: session is closed; open a new one with NewSession")
	// ErrCallbacksDropped says a tool's result came, but the call's
	// context ended (or its session closed) while the session's callbacks
	// before it were still being delivered, so the call's own callbacks
	// still queued were dropped. The tool ran: the result is returned with
	// the error, and retrying may run it twice.
	ErrCallbacksDropped = errors.New("mcp: the tool ran and its result came, but the call ended before its callbacks were delivered; they were dropped (do not retry a tool that must run once)")
	// ErrServerRequestsUnsupported says a server sent a request (elicitation,
	// sampling, roots) that its transport cannot answer: the legacy HTTP+SSE
	// transport carries no server-to-client requests. Use streamable HTTP.
	ErrServerRequestsUnsupported = errors.New("mcp: the legacy SSE transport cannot carry server-to-client requests (elicitation, sampling, roots); configure the server with transport \"http\" (streamable HTTP)")
)

// UnknownServerError reports a server name the manager does not know.
type UnknownServerError struct {
	Name  string
	Known []string
}

// Error names the server and the known ones.
func (e *UnknownServerError) Error() string {
	return fmt.Sprintf("mcp: unknown server %q (known: %s); add it with Manager.Add or the config file", e.Name, strings.Join(e.Known, ", "))
}

// ToolNotFoundError reports a tool name no server offers, with the closest
// names that exist.
type ToolNotFoundError struct {
	Name    string
	Similar []string
}

// Error names the tool and the close names.
func (e *ToolNotFoundError) Error() string {
	if len(e.Similar) == 0 {
		return fmt.Sprintf("mcp: unknown tool %q", e.Name)
	}
	return fmt.Sprintf("mcp: unknown tool %q; did you mean %s?", e.Name, quoteList(e.Similar))
}

// AmbiguousToolError reports a bare tool name that more than one server
// offers; call it by one of its qualified names instead.
type AmbiguousToolError struct {
	Name      string
	Qualified []string
}

// Error names the qualified names to use.
func (e *AmbiguousToolError) Error() string {
	return fmt.Sprintf("mcp: tool %q is offered by several servers; use one of %s", e.Name, quoteList(e.Qualified))
}

// ErrorKind classifies a failed call by what went wrong, for a caller to
// decide whether to retry, report or give up.
type ErrorKind string

// The error kinds.
const (
	// KindTimeout: the call's deadline passed.
	KindTimeout ErrorKind = "timeout"
	// KindConnection: the server could not be reached, the connection or
	// subprocess died, or the server's circuit breaker is open.
	KindConnection ErrorKind = "connection"
	// KindExecution: the server ran the tool and it failed (an isError result
	// or a JSON-RPC error).
	KindExecution ErrorKind = "execution"
	// KindValidation: the request or an elicitation answer did not match its
	// schema, the server rejected the arguments, or a result's
	// structuredContent did not match the tool's declared output schema.
	KindValidation ErrorKind = "validation"
	// KindCancelled: the caller cancelled the call.
	KindCancelled ErrorKind = "cancelled"
)

// CallError is the error of a failed tool call.
type CallError struct {
	Server string
	Tool   string
	Kind   ErrorKind
	Err    error
}

// Error reads "mcp: server/tool: kind: cause".
func (e *CallError) Error() string {
	return fmt.Sprintf("mcp: %s/%s: %s: %v", e.Server, e.Tool, e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error { return e.Err }

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
