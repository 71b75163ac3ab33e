package graph

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// stepContext is the context of the tasks of a parallel step (see
// run.execute): a child of the run's context that the step
// cancels when a task fails and when it ends, as a context.WithCancel
// child would be, in one allocation, and with no channel until a task
// asks for Done. A streamed run's own context is one too, held in its
// sink (see streamSink.runc).
//
// Until then, cancelling the step only records its error. The first Done
// makes inner, a context.WithCancelCause child of the parent, cancelled at
// once when the step already is, and cancelled with the step after: its
// channel is the step's, and Value answers through it from then on, so
// that a context a task derives from the step (with its own cancel,
// timeout or AfterFunc) registers with inner as with any cancellable
// parent, without a goroutine of its own.
//
// context.Cause agrees with Err as for a WithCancel child: once the step
// is cancelled before its parent, inner is made apart from the parent's
// cancellation (Value makes it then, so that Cause does not find the
// parent's later cause), and cancelled with context.Canceled.
type stepContext struct {
	context.Context // the parent: its deadline, values and cancellation

	mu    sync.Mutex
	err   error                        // the step's own cancellation, or the parent's when that came first
	isErr atomic.Bool                  // err is set: Err reads it under mu
	own   atomic.Bool                  // the step was cancelled before its parent
	stop  context.CancelCauseFunc      // inner's cancel
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
		if c.own.Load() {
			// Cancelled before the parent: a later cancellation of the
			// parent, or its cause, is not the step's.
			in.Context, c.stop = context.WithCancelCause(context.WithoutCancel(c.Context))
			c.stop(context.Canceled)
		} else {
			// Linked to the parent, inner takes its error and cause
			// at once when the parent was cancelled first.
			in.Context, c.stop = context.WithCancelCause(c.Context)
		}
		c.inner.Store(in)
	}
	return in.Done()
}

// Err returns the error of the first cancellation, the step's or its
// parent's, or nil.
func (c *stepContext) Err() error {
	var parent error
	if !c.isErr.Load() {
		if parent = c.Context.Err(); parent == nil {
			return nil
		}
		// The parent is cancelled: a cancel of the step racing with it
		// may have recorded another error first. Under mu either cancel
		// has recorded its error, which is the first, or it has not and
		// will record the parent's, so every call answers the same.
	}
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if parent != nil {
		return parent
	}
	return c.Context.Err()
}

// String names the context as context.WithCancel would: the parent's name
// followed by ".WithCancel". It reads no field a cancel writes.
func (c *stepContext) String() string { return contextName(c.Context) + ".WithCancel" }

// contextName names ctx as the context package's contexts name
// themselves: by its String method, or by its type.
func contextName(ctx context.Context) string {
	if s, ok := ctx.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", ctx)
}

// Value returns the value of key: the parent's, through inner once Done
// made it (which then answers for the cancellation it stands for).
func (c *stepContext) Value(key any) any {
	if in := c.inner.Load(); in != nil {
		return in.Value(key)
	}
	if c.own.Load() {
		// The parent's cancellation is no longer the step's: inner
		// answers for it.
		c.Done()
		return c.inner.Load().Value(key)
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
	cause := error(context.Canceled)
	if err := c.Context.Err(); err != nil {
		// The parent came first: its error, and its cause for inner
		// should inner not have heard of the parent yet.
		c.err, cause = err, context.Cause(c.Context)
	} else {
		c.err = context.Canceled
		c.own.Store(true)
	}
	c.isErr.Store(true)
	if c.stop != nil {
		c.stop(cause)
	}
}
