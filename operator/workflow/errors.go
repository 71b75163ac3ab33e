package workflow

import (
	"errors"
	"fmt"
)

// Errors callers branch on.
var (
	// ErrSkipped is the cause recorded for a step that did not run because
	// a dependency did not succeed; the [*SkipError] names the dependency.
	ErrSkipped = errors.New("workflow: step skipped")
	// ErrNoSavedRun is returned by [Workflow.Resume] and
	// [Executor.Resume] for a thread with no checkpoint: there is no run
	// to continue; start one with Run.
	ErrNoSavedRun = errors.New("workflow: no saved run to resume")
)

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
