package plan

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid matches every [*StepError] and [*CycleError].
var ErrInvalid = errors.New("plan: invalid plan")

// StepError reports a problem with one step of a plan.
type StepError struct {
	// Step is the step's id ("#N" for a step without one; empty for a
	// problem with the whole plan).
	Step string
	// Field is the step's field: "id", "operator", "depends_on",
	// "input_mapping.PARAM".
	Field string
	// Reason says what is wrong and how to fix it.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// Error describes the problem.
func (e *StepError) Error() string {
	if e.Step == "" {
		return fmt.Sprintf("plan: %s %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("plan: step %s: %s %s", e.Step, e.Field, e.Reason)
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
	return fmt.Sprintf("plan: dependency cycle %s; remove one of its depends_on entries", strings.Join(e.Cycle, " -> "))
}

// Is reports whether target is ErrInvalid.
func (e *CycleError) Is(target error) bool { return target == ErrInvalid }
