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
// fn runs for every thread the server deletes, whether a client deleted
// it (DELETE /threads/{id}, POST /threads/prune with strategy delete)
// or a stateless run's temporary thread ended, and whether or not the
// graph ever ran
// on it: fn must treat a thread it does not know as done. It runs on the
// instance that deletes the thread, under the thread's lock (no run of
// the thread starts meanwhile), after the thread is deleted; ctx carries
// the thread's owner (guard.Principal; "" without Config.Authenticate)
// and ends with the deletion's request. An error of fn is logged and
// does not undo the deletion: fn should be idempotent and quick, and
// what it failed to delete (or what a crash between the deletion and fn
// left) needs a sweep of the graph's own.
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
// owner, logging their errors.
func (s *Server) threadDeleted(ctx context.Context, id, owner string) {
	ctx = guard.WithPrincipal(ctx, owner)
	for _, fn := range s.deletedHooks() {
		if err := fn(ctx, id); err != nil {
			s.log.Warn("deleting a thread: a graph's WithThreadDeleted function failed; what it keeps of the thread stays", zapString("thread_id", id), zapError(err))
		}
	}
}
