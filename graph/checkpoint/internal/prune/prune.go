// Package prune holds the course of a Prune that the SQL backends of
// package checkpoint (postgres, sqlite) share: the idle threads first, in
// one transaction, then each thread with too many checkpoints, one
// transaction each. Each backend brings its own statements.
package prune

import (
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"go.uber.org/zap"
)

// Steps are a backend's parts of a Prune of a [checkpoint.Retention] r.
type Steps struct {
	// Idle deletes, in one transaction, the threads (only r.ThreadID when
	// set) not touched since before, and counts what it deleted.
	Idle func(before time.Time) (checkpoint.Pruned, error)
	// Long lists the threads (only r.ThreadID when set) with more than
	// r.KeepLatest checkpoints.
	Long func() ([]string, error)
	// KeepLatest deletes, in one transaction, the checkpoints of a thread
	// beyond its newest r.KeepLatest and the blobs no kept checkpoint
	// needs, and counts what it deleted.
	KeepLatest func(threadID string) (checkpoint.Pruned, error)
}

// Run prunes by r with the backend's steps: Idle when r.MaxIdle is set
// (logging to log how many threads it deleted), then, when r.KeepLatest
// is set, KeepLatest for each thread Long lists. It returns what was
// deleted; after an error, what the steps before it deleted.
func Run(r checkpoint.Retention, log *zap.Logger, st Steps) (checkpoint.Pruned, error) {
	if err := checkpoint.ValidateRetention(r); err != nil {
		return checkpoint.Pruned{}, err
	}
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	var total checkpoint.Pruned
	if r.MaxIdle > 0 {
		p, err := st.Idle(now.Add(-r.MaxIdle))
		if err != nil {
			return checkpoint.Pruned{}, err
		}
		total = p
		if total.Threads > 0 {
			log.Info("pruned idle threads", zap.Int("threads", total.Threads), zap.Duration("max_idle", r.MaxIdle))
		}
	}
	if r.KeepLatest <= 0 {
		return total, nil
	}
	threads, err := st.Long()
	if err != nil {
		return total, err
	}
	for _, id := range threads {
		p, err := st.KeepLatest(id)
		if err != nil {
			return total, err
		}
		total.Checkpoints += p.Checkpoints
		total.Blobs += p.Blobs
	}
	return total, nil
}
