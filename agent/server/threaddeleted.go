package server

import (
	"context"
	"errors"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// WithThreadDeleted has fn called when the server deletes a thread, so
// that a graph that keeps something of its own by thread (a bot's
// memory of the conversation, a cache, files) can delete it too: a
// thread's checkpoints, runs and event logs go with it, but the server
// knows nothing of what the graph's nodes stored elsewhere, which would
// otherwise outlive the thread (and be found again by a new thread
// given the same id).
//
// fn runs once the thread's record is deleted, whoever deletes it:
// DELETE /threads/{id}; POST /threads/prune with strategy delete;
// DELETE /assistants/{id} with delete_threads; a stateless run's
// temporary thread at the run's end, or when the run's creation failed,
// or when it was refused because the server was closing. It runs
// whether or not the graph ever ran on the thread (fn must treat a
// thread it does not know as done), and again when a run of the thread
// still going on another instance (one that seemed dead: a GC pause, a
// partition) saved its graph's data after the deletion and found its
// thread gone: fn must be idempotent. It does not run when a failed
// copy (POST /threads/{id}/copy) discards the thread it was making, nor
// when a rollback empties a thread (the thread stays).
//
// Only the instance that deletes the thread calls fn: every instance
// that serves the same store must register every graph that has a
// WithThreadDeleted function, with it; a deletion through an instance
// that lacks it does not call it.
//
// fn runs after the thread is deleted, under the thread's lock (no run
// of the thread starts meanwhile): fn must not call the server about
// threadID (a request for that thread waits on the lock until fn
// returns). ctx carries the thread's owner (guard.Principal; "" without
// Config.Authenticate); it is not cancelled with the deletion's request
// (a client that disconnects mid-delete does not stop fn) and ends after
// Config.Lease, which bounds how long fn holds the thread's lock, the
// deletion and Close. An error of fn is logged and does not undo the
// deletion, and nothing calls fn again for it: what it failed to delete
// (or what a crash between the deletion and fn left) needs a sweep of
// the graph's own.
func WithThreadDeleted[S any](fn func(ctx context.Context, threadID string) error) GraphOption[S] {
	return func(a *adapter[S]) { a.onDeleted = fn }
}

func (a *adapter[S]) threadDeleted() func(context.Context, string) error { return a.onDeleted }

// deletedHooks returns the WithThreadDeleted functions of the registered
// graphs, in registration order.
func (s *Server) deletedHooks() []func(context.Context, string) error {
	s.gmu.RLock()
	defer s.gmu.RUnlock()
	var fns []func(context.Context, string) error
	for _, id := range s.order {
		if fn := s.graphs[id].threadDeleted(); fn != nil {
			fns = append(fns, fn)
		}
	}
	return fns
}

// threadOwner returns the owner of thread id for the WithThreadDeleted
// functions, and whether there are any to call: false when none is
// registered or the thread is gone already.
func (s *Server) threadOwner(ctx context.Context, id string) (owner string, call bool, err error) {
	if len(s.deletedHooks()) == 0 {
		return "", false, nil
	}
	t, err := s.store.Thread(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return t.Owner, true, nil
}

// threadDeleted calls the WithThreadDeleted functions for thread id of
// owner, logging their errors. They are not cancelled with ctx (the
// thread is gone whether or not its request still waits) and are given
// Config.Lease in all.
func (s *Server) threadDeleted(ctx context.Context, id, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Lease)
	defer cancel()
	ctx = guard.WithPrincipal(ctx, owner)
	for _, fn := range s.deletedHooks() {
		if err := fn(ctx, id); err != nil {
			s.log.Warn("deleting a thread: a graph's WithThreadDeleted function failed; what it keeps of the thread stays", zapString("thread_id", id), zapError(err))
		}
	}
}
