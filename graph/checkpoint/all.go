package checkpoint

import (
	"context"
	"iter"
)

// DefaultPageSize is the page size All uses when ListOptions.Limit is zero.
const DefaultPageSize = 100

// All iterates over a thread's checkpoints, newest first, reading them from s
// one page of opts.Limit checkpoints at a time (DefaultPageSize when zero).
// opts.Before and opts.Metadata select the checkpoints as for List. An error
// is yielded once, and ends the iteration.
func All(ctx context.Context, s Saver, threadID string, opts ListOptions) iter.Seq2[Checkpoint, error] {
	return func(yield func(Checkpoint, error) bool) {
		if opts.Limit <= 0 {
			opts.Limit = DefaultPageSize
		}
		for {
			page, err := s.List(ctx, threadID, opts)
			if err != nil {
				yield(Checkpoint{}, err)
				return
			}
			for _, cp := range page {
				if !yield(cp, nil) {
					return
				}
			}
			if len(page) < opts.Limit {
				return
			}
			opts.Before = page[len(page)-1].ID
		}
	}
}

// SnapshotLister is an optional interface of a Saver that loads a page of
// checkpoints together with their channel data and pending writes in one
// call, which spares reading a thread's history with one Get per
// checkpoint. Memory implements it; AllSnapshots uses it when present.
type SnapshotLister interface {
	// ListSnapshots returns, in order, what Get would return for each
	// checkpoint that List returns with the same arguments.
	ListSnapshots(ctx context.Context, threadID string, opts ListOptions) ([]*Snapshot, error)
}

// AllSnapshots iterates over a thread's snapshots (what Get returns),
// newest first, a page of opts.Limit at a time (DefaultPageSize when zero),
// selected as for List. It makes one ListSnapshots call per page when s is
// a SnapshotLister, and otherwise one List call per page and one Get per
// checkpoint. An error is yielded once, and ends the iteration.
func AllSnapshots(ctx context.Context, s Saver, threadID string, opts ListOptions) iter.Seq2[*Snapshot, error] {
	return func(yield func(*Snapshot, error) bool) {
		sl, ok := s.(SnapshotLister)
		if !ok {
			for cp, err := range All(ctx, s, threadID, opts) {
				if err != nil {
					yield(nil, err)
					return
				}
				snap, err := s.Get(ctx, threadID, cp.ID)
				if !yield(snap, err) || err != nil {
					return
				}
			}
			return
		}
		if opts.Limit <= 0 {
			opts.Limit = DefaultPageSize
		}
		for {
			page, err := sl.ListSnapshots(ctx, threadID, opts)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, snap := range page {
				if !yield(snap, nil) {
					return
				}
			}
			if len(page) < opts.Limit {
				return
			}
			opts.Before = page[len(page)-1].ID
		}
	}
}
