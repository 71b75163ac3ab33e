package graph

import (
	"context"
	"iter"
	"slices"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Thread is a handle on one thread of a graph compiled with
// [WithCheckpointer]: a durable conversation or job, named by its id, whose
// runs continue one another (see "Durable runs" in the package doc). Get
// one with [Compiled.Thread]; it is a small value, cheap to make for each
// request, and safe for concurrent use (two runs writing one thread at
// once do not fork it: the second to save fails with checkpoint.ErrConflict).
//
// A run given new input while another run is inside a step of the thread
// fails before it runs anything, with an error that matches
// checkpoint.ErrConflict as well as [ErrThreadPaused]: a caller that
// retries a run that lost the race on ErrConflict (reading the thread
// again) retries this one too, and it succeeds once the other run has
// finished. A thread whose last run failed or was cancelled inside a step
// gives the same error (the checkpoint cannot tell the two apart) until
// the step is run again with a zero input or dropped ([FromCheckpoint]
// with the input, or [Thread.Update] with AsNode([END])): bound such
// retries.
//
//	th := app.Thread("conversation-42")
//	out, err := th.Invoke(ctx, State{Messages: []string{"hi"}})
//	snap, err := th.State(ctx)
//
// On a graph without a checkpointer every method fails with an error
// wrapping [ErrNoCheckpointer]; with an empty id, [ErrNoThread].
type Thread[S any] struct {
	c  *Compiled[S]
	id string
}

// Thread returns the handle on the thread named id. It does not touch the
// checkpointer: a thread exists once a run or an Update saved to it.
func (c *Compiled[S]) Thread(id string) Thread[S] { return Thread[S]{c: c, id: id} }

// Checkpointer returns the saver c was compiled with ([WithCheckpointer]),
// which keeps its threads' checkpoints, or nil for a graph without one.
// A program that serves the graph's threads checks with it that they are
// in the saver it deletes and counts them from.
func (c *Compiled[S]) Checkpointer() checkpoint.Saver { return c.set.saver }

// ID returns the thread's id.
func (t Thread[S]) ID() string { return t.id }

// Invoke runs the graph on the thread, as [Compiled.Invoke] runs it
// without one: a new thread starts from input, a finished one merges input
// into its state and runs again from START, and a paused or stopped one
// resumes its pending step (with [Resume], [ResumeByID] or a zero input).
// Nodes see the thread's id in [ConfigFrom]'s RunConfig.ThreadID. A pause
// returns an [*InterruptError].
func (t Thread[S]) Invoke(ctx context.Context, input S, opts ...RunOption) (S, error) {
	if _, err := t.durable(); err != nil {
		return input, err
	}
	c := t.c
	set := c.set
	if len(opts) > 0 {
		set.hooks = slices.Clip(set.hooks)
		set.runOpts(opts)
	}
	return c.execDurable(withThread(detached(ctx), t.id), t.id, input, set, nil, nil, nil)
}

// Stream runs the graph on the thread like [Thread.Invoke] and yields its
// events like [Compiled.Stream]; a pause ends the stream with a
// [StreamInterrupt] event, unless its saves failed ([DurabilityAsync]: a
// save, or the Sync that makes them durable): then the stream ends with
// the error, which Invoke returns too, joined to the *InterruptError.
func (t Thread[S]) Stream(ctx context.Context, input S, opts ...RunOption) iter.Seq2[Event[S], error] {
	if _, err := t.durable(); err != nil {
		return func(yield func(Event[S], error) bool) { yield(Event[S]{}, err) }
	}
	return t.c.stream(withThread(ctx, t.id), t.id, input, opts)
}

// withThread returns ctx with RunConfig.ThreadID set to id, for the nodes
// and hooks of a run on a thread (tracing reads it there).
func withThread(ctx context.Context, id string) context.Context {
	cfg, _ := ctx.Value(configKey{}).(*RunConfig)
	if cfg != nil && cfg.ThreadID == id {
		return ctx
	}
	var c RunConfig
	if cfg != nil {
		c = *cfg
	}
	c.ThreadID = id
	return context.WithValue(ctx, configKey{}, &c)
}
