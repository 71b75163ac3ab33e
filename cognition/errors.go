package cognition

import "errors"

var (
	// ErrInvalid is wrapped by errors about invalid arguments: a missing
	// user ID, an interaction with no messages, an unknown outcome.
	ErrInvalid = errors.New("cognition: invalid argument")
	// ErrQueueFull is returned by [Queue.Enqueue] (and so by
	// [Service.Observe]) when the queue holds Config.QueueSize tasks
	// waiting. The task was not queued; the caller decides whether to drop
	// the turn's learning or retry later. Raise QueueSize or Workers if it
	// happens under normal load.
	ErrQueueFull = errors.New("cognition: background queue is full; raise QueueSize or Workers, or drop this task")
	// ErrClosed is returned by calls on a closed [Queue] or [Service].
	ErrClosed = errors.New("cognition: closed")
)
