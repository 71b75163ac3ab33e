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
