package operator

import (
	"errors"
	"fmt"
	"strings"
)

// Errors callers branch on.
var (
	// ErrUnknown matches an [*UnknownError]: an operator or a tool that is
	// not registered.
	ErrUnknown = errors.New("operator: unknown name")
	// ErrDuplicate is returned when a name is registered twice.
	ErrDuplicate = errors.New("operator: name already registered")
	// ErrNoElicitor is returned by Confirm and Choose when the context has
	// no way to ask the user.
	ErrNoElicitor = errors.New("operator: no elicitor to ask the user; set one with NewMessenger")
	// ErrPaused matches the error an [elicit.Elicitor] returns when it paused a
	// durable graph run instead of waiting for the answer (the workflow
	// package's InterruptElicitor does): the
	// operator returns it (wrapped or not), [Registry.Execute] neither
	// retries it nor falls back, and the node running the operator must
	// return it so that the run pauses.
	ErrPaused = errors.New("operator: paused until the user answers")
	// ErrDeclined is returned by Choose when the user declined or cancelled.
	ErrDeclined = errors.New("operator: the user declined to answer")
	// ErrNoQuestion is returned by Elicitations.Respond for an id with no
	// pending question.
	ErrNoQuestion = errors.New("operator: no pending question with this id")
	// ErrNeedsMCP is returned when an MCP-backed or hybrid operator runs
	// without Context.Tools.
	ErrNeedsMCP = errors.New("operator: this operator calls MCP tools; set Context.Tools to the request's MCP session")
	// ErrNoModel is returned when an LLM operator has no model.
	ErrNoModel = errors.New("operator: no language model; set Deps.Models")
)

// UnknownError reports a name that is not registered: an operator a
// [Registry] does not hold ([Registry.New], [Registry.Tool]) or a tool no
// source of a [Provider] knows ([Provider.Execute]).
type UnknownError struct {
	// Name is the name asked for.
	Name string
	// Kind is what was asked for: "tool", or "operator" when empty.
	Kind string
	// Registered lists the names that are known, sorted.
	Registered []string
}

// Error describes the problem.
func (e *UnknownError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "operator"
	}
	// The name may be a model's, of any length: quoted clipped.
	if len(e.Registered) == 0 {
		return fmt.Sprintf("operator: unknown %s %s; none is registered", kind, quoteName(e.Name))
	}
	return fmt.Sprintf("operator: unknown %s %s; registered: %s", kind, quoteName(e.Name), strings.Join(e.Registered, ", "))
}

// Is reports whether target is ErrUnknown or memory.ErrNotFound (so that a
// [Provider] serves tools.schema(NAME) as [memory.Tools] asks).
func (e *UnknownError) Is(target error) bool { return target == ErrUnknown || target == notFound }

// MetadataError reports bad operator metadata.
type MetadataError struct {
	Operator string
	Field    string
	Reason   string
}

// Error describes the problem.
func (e *MetadataError) Error() string {
	if e.Operator == "" {
		return fmt.Sprintf("operator: Metadata.%s %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("operator: %q: Metadata.%s %s", e.Operator, e.Field, e.Reason)
}

// CapabilityError reports a message the operator's capabilities do not
// allow.
type CapabilityError struct {
	Operator   string
	Capability string
}

// Error describes the problem.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("operator: %q does not declare %s; add it to Metadata.Capabilities", e.Operator, e.Capability)
}

// ExecError is the failure of one operator run after its retries.
type ExecError struct {
	Operator string
	// Attempts is how many times the operator ran.
	Attempts int
	Err      error
}

// Error describes the problem.
func (e *ExecError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("operator: %s failed after %d attempts: %v", e.Operator, e.Attempts, e.Err)
	}
	return fmt.Sprintf("operator: %s failed: %v", e.Operator, e.Err)
}

// Unwrap returns the operator's error.
func (e *ExecError) Unwrap() error { return e.Err }

// FallbackError reports that an operator and its fallback both failed. It
// keeps both errors; errors.Is and errors.As see both.
type FallbackError struct {
	Operator    string
	Err         error
	Fallback    string
	FallbackErr error
}

// Error describes the problem.
func (e *FallbackError) Error() string {
	return fmt.Sprintf("operator: %s failed (%v), and its fallback %s failed too (%v)", e.Operator, e.Err, e.Fallback, e.FallbackErr)
}

// Unwrap returns both errors.
func (e *FallbackError) Unwrap() []error { return []error{e.Err, e.FallbackErr} }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as not worth retrying: Execute goes straight to the
// fallback. Nil stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with [Permanent].
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}
