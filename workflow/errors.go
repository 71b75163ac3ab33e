package workflow

import (
	"errors"
	"fmt"
	"strings"
)

// Errors callers branch on.
var (
	// ErrInvalid matches every [*StepError] and [*CycleError].
	ErrInvalid = errors.New("workflow: invalid definition")
	// ErrSkipped is the cause recorded for a step that did not run because
	// a dependency did not succeed; the [*SkipError] names the dependency.
	ErrSkipped = errors.New("workflow: step skipped")
)

// StepError reports a problem with one step of a definition.
type StepError struct {
	// Step is the step's id ("#N" for a step without one; empty for a
	// problem with the whole definition).
	Step string
	// Field is the step's field: "id", "operator", "depends_on",
	// "input_mapping.PARAM".
	Field  string
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// Error describes the problem.
func (e *StepError) Error() string {
	if e.Step == "" {
		return fmt.Sprintf("workflow: %s %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("workflow: step %s: %s %s", e.Step, e.Field, e.Reason)
}

// Is reports whether target is ErrInvalid.
func (e *StepError) Is(target error) bool { return target == ErrInvalid }

// CycleError reports steps that depend on each other in a circle.
type CycleError struct {
	// Cycle lists the step ids around the cycle, the first repeated last.
	Cycle []string
}

// Error describes the problem.
func (e *CycleError) Error() string {
	return fmt.Sprintf("workflow: dependency cycle %s; remove one of its depends_on entries", strings.Join(e.Cycle, " -> "))
}

// Is reports whether target is ErrInvalid.
func (e *CycleError) Is(target error) bool { return target == ErrInvalid }

// SkipError is the cause of a skipped step: the dependency that did not
// succeed and why.
type SkipError struct {
	Step       string
	Dependency string
	// Cause is the dependency's own error.
	Cause error
}

// Error describes the problem.
func (e *SkipError) Error() string {
	return fmt.Sprintf("workflow: step %s skipped: dependency %s did not succeed: %v", e.Step, e.Dependency, e.Cause)
}

// Is reports whether target is ErrSkipped.
func (e *SkipError) Is(target error) bool { return target == ErrSkipped }

// Unwrap returns the dependency's error.
func (e *SkipError) Unwrap() error { return e.Cause }
