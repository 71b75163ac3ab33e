package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors a caller can test with errors.Is.
var (
	// ErrInvalidGraph wraps every problem Compile reports.
	ErrInvalidGraph = errors.New("graph: invalid graph")
	// ErrStepLimit is matched by a [*StepLimitError].
	ErrStepLimit = errors.New("graph: step limit reached")
	// ErrConflict is matched by a [*ConflictError].
	ErrConflict = errors.New("graph: conflicting writes")
	// ErrNodeTimeout is matched by a [*TimeoutError].
	ErrNodeTimeout = errors.New("graph: node timed out")
	// ErrNodePanic is matched by a [*PanicError].
	ErrNodePanic = errors.New("graph: node panicked")
	// ErrBadRoute is returned when a node or router routes to a target that
	// is unknown or was not declared.
	ErrBadRoute = errors.New("graph: bad route")
	// ErrNoCheckpointer is returned by durable operations (Interrupt,
	// the methods of [Thread], Resume, ...) on a graph compiled without
	// [WithCheckpointer].
	ErrNoCheckpointer = errors.New("graph: no checkpointer")
	// ErrNoThread is returned when a graph with a checkpointer runs
	// without a thread: run it with [Compiled.Thread] (or, for code that
	// passes a run through a context, with RunConfig.ThreadID set).
	ErrNoThread = errors.New("graph: no thread id")
	// ErrInterrupted is matched by an [*InterruptError].
	ErrInterrupted = errors.New("graph: run interrupted")
	// ErrNothingToResume is returned when resume values do not match the
	// thread's pending interrupts.
	ErrNothingToResume = errors.New("graph: nothing to resume")
	// ErrThreadPaused is returned when new input is given to a thread whose
	// latest checkpoint has a step pending: paused (on [Interrupt] or at a
	// breakpoint), in progress in another run, or left mid-way by a run
	// that failed or was cancelled. The error of the last two, which
	// cannot be told apart, also matches checkpoint.ErrConflict (see
	// [Thread]); its text says it is not a pause. Retrying on it
	// converges only for a run in progress: a step a failed, cancelled or
	// step-limited run left stays pending until a run goes on with it (a
	// zero input) or drops it, so bound such retries.
	ErrThreadPaused = errors.New("graph: thread is paused")

	// ErrBadSnapshot reports a [ContinueFrom] the run cannot go on from:
	// a snapshot not returned by Thread.State of the run's compiled graph
	// and thread, or given with [FromCheckpoint].
	ErrBadSnapshot = errors.New("graph: snapshot not usable by this run")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidGraph, fmt.Sprintf(format, args...))
}

// NodeError is the error of a run whose node failed. It names the node and
// the super-step; Err is the node's own error (or a [*PanicError] or
// [*TimeoutError]), so errors.Is and errors.As see through it.
type NodeError struct {
	Node     string // the node's name
	Step     int    // the super-step, counted from 1
	Task     int    // index of the task within its step
	Attempts int    // how many times the node ran, retries included
	Err      error
}

// Error names the node and step, then the node's error.
func (e *NodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph: node %q failed at step %d", e.Node, e.Step)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// CheckpointError is the error of a durable operation whose checkpointer
// failed: a save of a checkpoint or of a task's writes (Op "save"), or a
// read of the thread's checkpoints (Op "load"). Err is the
// [checkpoint.Saver]'s own error, which errors.Is and errors.As see
// through (checkpoint.ErrNotFound for a checkpoint that is not there,
// a *checkpoint.ConflictError, a database's error). A caller that passes
// errors on to others tells it apart from a node's ([*NodeError]) with
// errors.As: the Saver's text may describe its database.
type CheckpointError struct {
	Op     string // "save" or "load"
	Thread string // the thread whose checkpoints failed
	Err    error  // the Saver's error
	msg    string // what failed, before Err's text
}

// Error says what failed, then the Saver's error.
func (e *CheckpointError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("graph: checkpointer %s of thread %.64q failed: %v", e.Op, e.Thread, e.Err)
	}
	return e.msg + ": " + e.Err.Error()
}

// Unwrap returns the Saver's error.
func (e *CheckpointError) Unwrap() error { return e.Err }

// loadError is the error of a failed read of thread's checkpoints.
func loadError(thread string, err error) error {
	return &CheckpointError{Op: "load", Thread: thread, msg: fmt.Sprintf("graph: loading thread %.64q", thread), Err: err}
}

// StepLimitError is the error of a run that needed more super-steps than its
// limit allows. One step is one super-step: every node triggered at the
// same time runs in one step, however many there are.
type StepLimitError struct {
	Limit int
}

// Error says how to raise the limit.
func (e *StepLimitError) Error() string {
	return fmt.Sprintf("graph: step limit of %d super-steps reached before the graph finished; "+
		"if the graph is meant to loop that long, raise the limit with graph.WithStepLimit at Compile or per run", e.Limit)
}

// Is matches [ErrStepLimit].
func (e *StepLimitError) Is(target error) bool { return target == ErrStepLimit }

// ConflictError is the error of a run in which two tasks of one super-step
// wrote the same field and the field's reducer cannot merge them (it
// replaces).
type ConflictError struct {
	Field string    // the field's name
	Nodes [2]string // the two writers, in task order
	Step  int
}

// Error names both nodes and the field.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("graph: nodes %q and %q both wrote field %s in step %d; "+
		"a replace field takes one write per step: declare it with a merging reducer (graph.Append, graph.Sum, graph.Reduce, ...) "+
		"or let only one of them write it", e.Nodes[0], e.Nodes[1], e.Field, e.Step)
}

// Is matches [ErrConflict].
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// TimeoutError is the error of a node attempt that ran longer than its
// [Timeout]. It matches [ErrNodeTimeout] and [context.DeadlineExceeded].
type TimeoutError struct {
	Timeout time.Duration
}

// Error gives the timeout.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("graph: node timed out after %v", e.Timeout)
}

// Is matches [ErrNodeTimeout] and [context.DeadlineExceeded].
func (e *TimeoutError) Is(target error) bool {
	return target == ErrNodeTimeout || target == context.DeadlineExceeded
}

// PanicError is the error of a node that panicked. The run fails with it;
// the process does not crash.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the goroutine's stack at the panic
}

// Error gives the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("graph: node panicked: %v", e.Value) }

// Is matches [ErrNodePanic].
func (e *PanicError) Is(target error) bool { return target == ErrNodePanic }

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
