package graph

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// StateSnapshot is a thread's state at one checkpoint.
type StateSnapshot[S any] struct {
	Values       S                 // the state
	Next         []string          // nodes of the tasks that run next; empty when the run finished
	Interrupts   []InterruptInfo   // interrupts the thread waits on
	Ran          []string          // nodes that ran in the step that made the checkpoint
	Step         int               // the super-step that made the checkpoint (0 for the first input)
	CheckpointID string            // the checkpoint; pass it to FromCheckpoint to run from here
	ParentID     string            // the checkpoint it derives from
	Metadata     map[string]string // includes MetaSource
	CreatedAt    time.Time

	// read is the checkpoint as Thread.State read it, and from the
	// checkpointing of the graph that read it: what ContinueFrom gives a
	// run. Nil in a snapshot of StateAt or History, which are not
	// known to be the thread's latest.
	read *checkpoint.Snapshot
	from *durable[S]
}

// durable returns the graph's checkpointing, or an error saying what the
// thread lacks.
func (t Thread[S]) durable() (*durable[S], error) {
	if t.c == nil || t.c.dur == nil {
		return nil, fmt.Errorf("%w: compile the graph with graph.WithCheckpointer", ErrNoCheckpointer)
	}
	if t.id == "" {
		return nil, fmt.Errorf("%w: Compiled.Thread was given an empty id", ErrNoThread)
	}
	return t.c.dur, nil
}

// State returns the thread's latest state: its values, the next nodes,
// pending interrupts and metadata. A thread with no checkpoint gives an
// error wrapping [checkpoint.ErrNotFound].
//
// The snapshot can be passed to a run of the thread with [ContinueFrom],
// which then does not read the checkpoint again; for that it keeps, in
// unexported fields, the encoded checkpoint it was decoded from (compare
// snapshots with cmpopts.IgnoreUnexported).
func (t Thread[S]) State(ctx context.Context) (StateSnapshot[S], error) {
	var out StateSnapshot[S]
	d, err := t.durable()
	if err != nil {
		return out, err
	}
	snap, err := d.saver.Get(ctx, t.id, "")
	if err != nil {
		return out, loadError(t.id, err)
	}
	out, err = d.stateOf(snap)
	if err == nil {
		out.read, out.from = snap, d
	}
	return out, err
}

// StateAt returns the thread's state at checkpoint id ("" for the
// latest).
func (t Thread[S]) StateAt(ctx context.Context, id string) (StateSnapshot[S], error) {
	var out StateSnapshot[S]
	d, err := t.durable()
	if err != nil {
		return out, err
	}
	snap, err := d.saver.Get(ctx, t.id, id)
	if err != nil {
		return out, loadError(t.id, err)
	}
	return d.stateOf(snap)
}

// stateOf decodes a loaded checkpoint.
func (d *durable[S]) stateOf(snap *checkpoint.Snapshot) (StateSnapshot[S], error) {
	var out StateSnapshot[S]
	if err := d.decodeState(snap, &out.Values, nil); err != nil {
		return out, err
	}
	cp := &snap.Checkpoint
	for _, t := range cp.Next {
		if t.ID != "" {
			out.Next = append(out.Next, t.Node)
		}
	}
	out.Interrupts = toInterrupts(cp.Interrupts, d.ser)
	out.Ran, out.Step, out.CheckpointID, out.ParentID = cp.Ran, cp.Step, cp.ID, cp.ParentID
	out.Metadata, out.CreatedAt = cp.Metadata, cp.CreatedAt
	return out, nil
}

// History iterates over the thread's checkpoints, newest first, reading them
// page by page (opts.Limit per page, checkpoint.DefaultPageSize when zero;
// opts.Before and opts.Metadata select as for [checkpoint.Saver.List]). A
// Saver that implements [checkpoint.SnapshotLister] (the memory, SQLite and
// PostgreSQL ones do) is read with one call per page; others with one List
// per page and one Get per checkpoint. An error is yielded once and ends the
// iteration.
func (t Thread[S]) History(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[StateSnapshot[S], error] {
	return func(yield func(StateSnapshot[S], error) bool) {
		d, err := t.durable()
		if err != nil {
			yield(StateSnapshot[S]{}, err)
			return
		}
		for snap, err := range checkpoint.AllSnapshots(ctx, d.saver, t.id, opts) {
			if err != nil {
				yield(StateSnapshot[S]{}, &CheckpointError{Op: "load", Thread: t.id, msg: fmt.Sprintf("graph: reading the history of thread %.64q", t.id), Err: err})
				return
			}
			s, err := d.stateOf(snap)
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// UpdateOption configures [Thread.Update].
type UpdateOption func(*updateOptions)

type updateOptions struct {
	asNode     string
	from       string
	keepWrites bool
}

// AsNode makes [Thread.Update] act as if node had returned the update: the
// next tasks are those node's edges, routers and the update's routing give.
// AsNode([END]) ends the thread's run: the update is saved with no next tasks
// and no pending interrupts, so the thread is finished and its next run
// takes new input and starts from START (what LangGraph does when a paused
// or stopped thread is given new input). AsNode([START]) applies the update
// as a run's input: the next tasks are those START's edges and routers
// give (and any pending step or interrupt is dropped), so a zero-input run
// of the thread then runs the graph from its first nodes; on a thread with
// no checkpoint it seeds the thread. The checkpoint's Ran is empty.
func AsNode(node string) UpdateOption {
	return func(o *updateOptions) { o.asNode = node }
}

// UpdateFrom makes [Thread.Update] edit the state of checkpoint id, an
// earlier checkpoint of the thread, instead of the latest: the new
// checkpoint's parent is id, so it starts a new branch of the thread (as
// [FromCheckpoint] does for a run) and becomes the thread's latest state.
// An id the thread does not have fails the update with an error wrapping
// [checkpoint.ErrNotFound]. An empty id means the latest state.
func UpdateFrom(id string) UpdateOption {
	return func(o *updateOptions) { o.from = id }
}

// KeepWrites makes [Thread.Update] without [AsNode] carry the pending
// writes of the checkpoint it edits over to the new one: the tasks that
// finished in a paused step stay finished (they do not run again) and the
// resume values given to its interrupts stay given (a value saved before
// the resumed step ran, see [Resume], only if the checkpoint is still the
// thread's latest). With an empty update
// it copies the checkpoint as the thread's latest (with [UpdateFrom], a
// new branch from it), from which a run goes on as it would from the
// checkpoint itself. The update must be empty: a kept write of a task
// that finished would be applied over it when the step is resumed (a
// replace reducer's field would lose the update's value), so
// [Thread.Update] refuses an update that writes a field with KeepWrites.
// With [AsNode] it has no effect (and the update is not refused).
func KeepWrites() UpdateOption {
	return func(o *updateOptions) { o.keepWrites = true }
}

// Update edits the thread's latest state (or, with [UpdateFrom], an
// earlier one): u merges through the fields' reducers. Without [AsNode] the next tasks (and pending interrupts) stay
// as they were, and u's routing ([Update.Goto], [Update.Send]) adds tasks
// to them, to any node of the graph (LangGraph's Command with goto given
// as a run's input; a target [END] adds none); with AsNode(name) the
// update counts as that node's, and the
// next tasks are those its edges, routers and u's routing (to the node's
// declared [Targets]; with AsNode([START]), as in a run's input, to any
// node) give. It saves a
// new checkpoint (metadata source "update") and returns its ID. Writes of
// tasks that finished in a paused step are dropped: those tasks run again
// (unless [KeepWrites] keeps them).
func (t Thread[S]) Update(ctx context.Context, u Update[S], opts ...UpdateOption) (string, error) {
	var o updateOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	c, thread, asNode := t.c, t.id, o.asNode
	if o.keepWrites && asNode == "" {
		if f := u.Fields(); len(f) > 0 {
			return "", fmt.Errorf("graph: Thread.Update of thread %q with KeepWrites writes fields %v: the kept writes of the paused step's finished tasks would be applied over them on resume; give an empty update to copy the checkpoint, or update without KeepWrites (those tasks then run again)", thread, f)
		}
	}
	dur, err := t.durable()
	if err != nil {
		return "", err
	}
	var nd *node[S]
	finish := asNode == END
	switch {
	case asNode == START:
		nd = c.start
	case asNode != "" && !finish:
		i, ok := c.index[asNode]
		if !ok {
			return "", fmt.Errorf("graph: Thread.Update as unknown node %q; give graph.AsNode one of the graph's nodes (%s), graph.START or graph.END", asNode, strings.Join(c.Nodes(), ", "))
		}
		nd = c.nodes[i]
	}
	r := c.pool.Get().(*run[S])
	defer func() {
		r.freeDrun()
		r.release()
		c.pool.Put(r)
	}()
	r.set = c.set
	d := r.newDrun(dur, thread)
	r.d = d
	snap, err := dur.saver.Get(ctx, thread, o.from)
	var interrupts []checkpoint.Interrupt
	var writes []checkpoint.Write
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && o.from != "":
		return "", fmt.Errorf("graph: Thread.Update from checkpoint %q of thread %q: %w", o.from, thread, err)
	case errors.Is(err, checkpoint.ErrNotFound):
	case err != nil:
		return "", loadError(thread, err)
	default:
		if err := dur.decodeState(snap, &r.state, d); err != nil {
			return "", err
		}
		r.step = snap.Step
		d.latest, d.parent = snap.ID, snap.ID
		if o.from != "" {
			// The save checks the thread's latest checkpoint, not the one
			// the update starts from.
			latest, err := dur.saver.List(ctx, thread, checkpoint.ListOptions{Limit: 1})
			if err != nil {
				return "", loadError(thread, err)
			}
			if len(latest) > 0 {
				d.latest = latest[0].ID
			}
		}
		if nd == nil && !finish {
			interrupts = snap.Interrupts
			if o.keepWrites {
				// The new checkpoint has the same step and next tasks:
				// the writes' task ids still name them. Resume values
				// given to an earlier checkpoint while it was the
				// thread's latest are not kept (see wGiven).
				writes = snap.Writes
				if d.latest != snap.ID {
					writes = slices.DeleteFunc(slices.Clone(writes), func(w checkpoint.Write) bool { return w.Channel == wGiven })
				}
			}
			for _, t := range snap.Next {
				if i, ok := c.index[t.Node]; ok && t.ID == "" {
					if err := r.held(i, t.Input); err != nil {
						return "", err
					}
				} else if ok {
					tk := task[S]{n: c.nodes[i]}
					if t.Input != nil {
						arg, err := r.decodeArg(c.nodes[i], t.Input)
						if err != nil {
							return "", err
						}
						tk.arg, tk.push = arg, true
					}
					r.cur = append(r.cur, tk)
				}
			}
		}
	}
	for i, n := 0, u.ops.len(); i < n; i++ {
		f := u.ops.at(i)
		f.apply(&r.state, &u.val)
		d.mark(f)
	}
	if nd == nil && !u.route.IsZero() {
		if finish {
			return "", fmt.Errorf("%w: Thread.Update of thread %q as graph.END routes to %s; an update that ends the run goes nowhere, give AsNode another node or leave the routing out", ErrBadRoute, thread, u.route)
		}
		if err := r.routeOutside(u.route); err != nil {
			return "", err
		}
	}
	var ran []string
	if nd != nil {
		if nd != c.start {
			ran = []string{asNode}
		}
		if err := r.routeFrom(ctx, nd); err != nil {
			return "", err
		}
		if !u.route.IsZero() && nd != c.start {
			if err := r.follow(nd, false, u.route, nd.targets, nd.targetIdx); err != nil {
				return "", err
			}
		}
		r.schedule()
		if !u.route.IsZero() && nd == c.start {
			// As a run's input: routing adds to START's next tasks,
			// to any node.
			if err := r.routeOutside(u.route); err != nil {
				return "", err
			}
		}
	}
	cp, err := r.put(ctx, ran, metaUpdate, interrupts, writes)
	if err != nil {
		return "", err
	}
	return cp.ID, nil
}

// routeOutside adds the tasks of rt, routing from outside the graph (an
// update without AsNode), to the next step's tasks (after those it has):
// its targets (a node that has a task of the step already gets no
// other; a deferred node waiting, triggered, becomes a task, its trigger
// cleared), any node of the
// graph but a task node ([END] adds none), and its Sends, to task nodes
// of the graph.
func (r *run[S]) routeOutside(rt Route) error {
	c := r.c
	for _, name := range rt.Targets() {
		if name == END {
			continue
		}
		i, ok := c.index[name]
		if !ok {
			return fmt.Errorf("%w: update routes to unknown node %q; route to one of the graph's nodes (%s) or graph.END", ErrBadRoute, name, strings.Join(c.Nodes(), ", "))
		}
		if c.nodes[i].task != nil {
			return fmt.Errorf("%w: update routes to task node %q, which takes its input from Send; send it a task instead", ErrBadRoute, name)
		}
		if !slices.ContainsFunc(r.cur, func(t task[S]) bool { return t.n.idx == i && !t.push }) {
			r.cur = append(r.cur, task[S]{n: c.nodes[i]})
		}
		if r.trig[i] {
			// A deferred node waiting, triggered, runs as the task
			// added, not again after it: its trigger and the edges
			// that fired it go, as when it is scheduled.
			r.take(i, c.nodes[i])
		}
	}
	for _, s := range rt.sends {
		if s.def == nil {
			return fmt.Errorf("%w: update sends an empty Send; make Sends with a task node's Send method or Compiled.SendTo", ErrBadRoute)
		}
		i := s.def.idx
		if i < 0 || i >= len(c.nodes) || c.nodes[i].def != s.def {
			return fmt.Errorf("%w: update sends a task to %q, a task node of another graph", ErrBadRoute, s.def.name)
		}
		r.cur = append(r.cur, task[S]{n: c.nodes[i], arg: s.arg, push: true})
	}
	return nil
}
