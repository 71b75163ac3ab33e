package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// threadTally is the sum of the bytes of checkpoints a principal's
// threads keep, as this instance last read it from the store
// (Config.MaxThreadBytes), and when.
type threadTally struct {
	bytes int64
	at    time.Time
}

// threadBytesRecount is how long an instance uses a principal's sum of
// thread bytes before it reads it from the store again: a run's creation
// costs no statement for the bound but once per principal per interval.
const threadBytesRecount = time.Second

// maxThreadTallies bounds the principals whose sums an instance keeps;
// past it one is forgotten (and read again at its next check).
const maxThreadTallies = 4096

// byteCounting returns the checkpointer's UsageReporter and the store's
// ByteCounter when Config.MaxThreadBytes bounds the principals' threads:
// it is set, and the checkpointer and the store are those.
func (s *Server) byteCounting() (checkpoint.UsageReporter, ByteCounter, bool) {
	if s.cfg.MaxThreadBytes < 0 {
		return nil, nil, false
	}
	u, ok := s.saver.(checkpoint.UsageReporter)
	if !ok {
		return nil, nil, false
	}
	c, ok := s.store.(ByteCounter)
	return u, c, ok
}

// checkThreadBytes refuses, with 429, new work that writes checkpoints
// (a run, a state update, a copy) to a principal whose threads keep more
// than Config.MaxThreadBytes bytes of checkpoints already. The sum is
// read from the store at most once per threadBytesRecount per principal.
func (s *Server) checkThreadBytes(ctx context.Context, who string) error {
	_, c, ok := s.byteCounting()
	if !ok {
		return nil
	}
	s.bmu.Lock()
	t, known := s.threadTallies[who]
	s.bmu.Unlock()
	if !known || time.Since(t.at) >= threadBytesRecount {
		// One read of the store per principal at a time: the requests
		// that find the sum expired together share it.
		ch := s.bflight.DoChan(who, func() (any, error) {
			s.bmu.Lock()
			gen := s.bforgets
			s.bmu.Unlock()
			rctx, cancel := s.recountContext(ctx)
			defer cancel()
			n, err := c.CountBytes(rctx, who)
			if err != nil {
				return nil, err
			}
			t := threadTally{bytes: n, at: time.Now()}
			s.bmu.Lock()
			defer s.bmu.Unlock()
			if s.bforgets != gen {
				// A deletion or a write was counted while the store was
				// read: the sum read may be stale; the next check reads
				// it again.
				return t, nil
			}
			if _, ok := s.threadTallies[who]; !ok && len(s.threadTallies) >= maxThreadTallies {
				for k := range s.threadTallies {
					delete(s.threadTallies, k) // any one: it is read again when needed
					break
				}
			}
			s.threadTallies[who] = t
			return t, nil
		})
		var res singleflight.Result
		select {
		case res = <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		if res.Err != nil {
			return fmt.Errorf("counting the bytes of this principal's threads (Config.MaxThreadBytes): %w", res.Err)
		}
		t = res.Val.(threadTally)
	}
	if t.bytes > s.cfg.MaxThreadBytes {
		return &requestError{status: http.StatusTooManyRequests, msg: fmt.Sprintf("%v: this principal's threads keep %d bytes of checkpoints, more than %d (Config.MaxThreadBytes); delete threads (DELETE /threads/{thread_id}) or prune them (POST /threads/prune) to go on, or raise Config.MaxThreadBytes", ErrLimit, t.bytes, s.cfg.MaxThreadBytes)}
	}
	return nil
}

// forgetThreadBytes drops this instance's sum of who's thread bytes, so
// that the next check reads it again: after a deletion or a prune, which
// may take the principal back under the bound, and after a copy or a
// state update, which may take it past. A read of the store that
// started before is not kept.
func (s *Server) forgetThreadBytes(who string) {
	s.bmu.Lock()
	delete(s.threadTallies, who)
	s.bforgets++ // a read of the store under way may have missed it
	s.bmu.Unlock()
}

// threadBytes returns the bytes of checkpoints thread tid keeps itself
// and, with subgraphs, those of its durable subgraph threads (found as a
// copy finds them: through its first Config.MaxCopyCheckpoints
// checkpoints); sub is -1 without subgraphs. ok is false when the bound
// is off.
func (s *Server) threadBytes(ctx context.Context, tid string, subgraphs bool) (own, sub int64, ok bool, err error) {
	u, _, ok := s.byteCounting()
	if !ok {
		return 0, -1, false, nil
	}
	n, err := u.Usage(ctx, tid)
	if err != nil {
		return 0, -1, true, err
	}
	own, sub = n.BlobBytes+n.WriteBytes, -1
	if !subgraphs {
		return own, sub, true, nil
	}
	plan, _, err := s.checkpointThreads(ctx, tid)
	if err != nil {
		return 0, -1, true, err
	}
	sub = 0
	for _, suffix := range plan {
		if suffix == "" {
			continue
		}
		n, err := u.Usage(ctx, tid+suffix)
		if err != nil {
			return 0, -1, true, err
		}
		sub += n.BlobBytes + n.WriteBytes
	}
	return own, sub, true, nil
}

// recordThreadBytes counts the bytes of thread tid (its subgraphs' too
// with subgraphs) and records them in the store, when the bound is on:
// after a copy or a prune. A failure is logged: the thread's count stays
// as it was until its next run's end. The writes it counts are
// committed: it counts them even when ctx, the request's, is cancelled
// (a client gone would otherwise leave a stale count), within
// Config.Lease.
func (s *Server) recordThreadBytes(ctx context.Context, tid string, subgraphs bool) {
	ctx, cancel := s.recountContext(ctx)
	defer cancel()
	own, sub, ok, err := s.threadBytes(ctx, tid, subgraphs)
	if !ok {
		return
	}
	if err == nil {
		_, c, _ := s.byteCounting()
		err = c.SetThreadBytes(ctx, tid, own, sub)
	}
	if err != nil {
		s.log.Warn("counting a thread's checkpoint bytes (Config.MaxThreadBytes); its count stays as it was until its next run ends", zapString("thread_id", tid), zapError(err))
	}
}

// recountContext returns the context of a count of a thread's bytes after
// committed writes: ctx's values without its cancellation, so that a
// request whose client has gone still records what it wrote, bounded by
// Config.Lease.
func (s *Server) recountContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Lease)
}
