package graph

import (
	"context"
	"sync"
	"sync/atomic"
)

// stepContext is the context of the tasks of a parallel step that is not
// served (see run.execute): a child of the run's context that the step
// cancels when a task fails and when it ends, as a context.WithCancel
// child would be, in one allocation, and with no channel until a task
// asks for Done.
//
// Until then, cancelling the step only records its error. The first Done
// makes inner, a context.WithCancel child of the parent, cancelled at
// once when the step already is, and cancelled with the step after: its
// channel is the step's, and Value answers through it from then on, so
// that a context a task derives from the step (with its own cancel,
// timeout or AfterFunc) registers with inner as with any cancellable
// parent, without a goroutine of its own.
type stepContext struct {
	context.Context // the parent: its deadline, values and cancellation

	mu    sync.Mutex
	err   error                        // the step's own cancellation, or the parent's when that came first
	stop  context.CancelFunc           // inner's cancel
	inner atomic.Pointer[innerContext] // set by the first Done
}

// innerContext holds the context made by a stepContext's first Done.
type innerContext struct{ context.Context }

// Done returns a channel closed when the step is cancelled or its parent
// is.
func (c *stepContext) Done() <-chan struct{} {
	if in := c.inner.Load(); in != nil {
		return in.Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.inner.Load()
	if in == nil {
		in = new(innerContext)
		in.Context, c.stop = context.WithCancel(c.Context)
		if c.err != nil {
			c.stop()
		}
		c.inner.Store(in)
	}
	return in.Done()
}

// Err returns the error of the first cancellation, the step's or its
// parent's, or nil.
func (c *stepContext) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.Context.Err()
}

// Value returns the value of key: the parent's, through inner once Done
// made it (which then answers for the cancellation it stands for).
func (c *stepContext) Value(key any) any {
	if in := c.inner.Load(); in != nil {
		return in.Value(key)
	}
	return c.Context.Value(key)
}

// cancel cancels the step: Err reports context.Canceled from then on, or
// the parent's error when the parent was cancelled first.
func (c *stepContext) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = context.Canceled
	if err := c.Context.Err(); err != nil {
		c.err = err
	}
	if c.stop != nil {
		c.stop()
	}
}
