package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// maxEndGroup bounds the runs' ends one batch of [Store.finishRun]
// sends together (one transaction, one commit); the ends waiting beyond
// it go in the next batch.
const maxEndGroup = 32

// endReq is one run's end: finishRun's statements with their arguments,
// and, once its batch was read, what they returned.
type endReq struct {
	threadID, runID string
	lock            string // xactLock or xactLockThread
	args            []any  // finishRun's arguments
	claim           []any  // claimLocked's arguments; nil for no claim

	// The results, set before done is closed.
	free, found, lost bool
	rx                runScan
	active            int
	pos               *int64
	claimed           bool
	nx                runScan
	tx                threadScan
	err               error

	done chan struct{}  // closed once the results are set (ends that wait)
	lead chan []*endReq // the group this end is to send (ends that wait)
}

// queue queues r's statements on b: the lock, the end, and the claim if
// r makes one.
func (r *endReq) queue(b *pgx.Batch, q *queries) {
	b.Queue(r.lock, r.threadID)
	b.Queue(q.finishRun, r.args...)
	if r.claim != nil {
		b.Queue(q.claimLocked, r.claim...)
	}
}

// read reads the results of r's statements from br, in the order queue
// queued them, and returns the first error.
func (r *endReq) read(br pgx.BatchResults) error {
	_, lockErr := br.Exec()
	endErr := br.QueryRow().Scan(append(append([]any{&r.free, &r.found}, r.rx.dest()...), &r.active, &r.pos, &r.lost)...)
	var claimErr error
	if r.claim != nil {
		var nextFree bool
		claimErr = br.QueryRow().Scan(append(append([]any{&nextFree, &r.claimed}, r.nx.dest()...), r.tx.dest()...)...)
	}
	return errors.Join(lockErr, endErr, claimErr)
}

// reset clears r's results, before it is sent again.
func (r *endReq) reset() {
	r.free, r.found, r.lost, r.active, r.pos, r.claimed, r.err = false, false, false, 0, nil, false, nil
	r.rx, r.nx, r.tx = runScan{}, runScan{}, threadScan{}
}

// endGroups sends the runs' ends of a Store, as group commit: an end
// made while none is being sent is sent at once, alone; the ends made
// while one is being sent wait for it, and are then sent together, as
// one batch: one round trip and one transaction, whose commit waits for
// one WAL flush instead of one each. A lone end waits for nothing more
// than it did, and under load the ends of many runs share a commit.
type endGroups struct {
	mu      sync.Mutex
	sending bool // a batch of ends is under way
	// waiting holds the ends made meanwhile, in order: one per caller
	// blocked in end, so no more than the Store's callers.
	waiting []*endReq
}

// end records r: it sends r's batch, alone or with the ends waiting
// with it, and returns once r's results are set (r.err holds the
// batch's error). It returns ctx's error, without r's results, when ctx
// ends while r waits for the batch before it; once r's batch is under
// way, it waits for that batch, which its sender's deadline bounds.
func (s *Store) end(ctx context.Context, r *endReq) error {
	g := &s.ends
	g.mu.Lock()
	if !g.sending {
		g.sending = true
		g.mu.Unlock()
		s.sendEnds(ctx, []*endReq{r})
		s.handOff()
		return nil
	}
	r.done = make(chan struct{})
	r.lead = make(chan []*endReq, 1)
	g.waiting = append(g.waiting, r)
	g.mu.Unlock()
	select {
	case group := <-r.lead:
		s.sendEnds(ctx, group)
		s.handOff()
		return nil
	case <-r.done:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.waiting, r); i >= 0 {
		g.waiting = slices.Delete(g.waiting, i, i+1)
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Unlock()
	// r is in a batch that is being sent, or that r is to send: the
	// ends of that batch wait for it.
	select {
	case group := <-r.lead:
		s.sendEnds(ctx, group)
		s.handOff()
	case <-r.done:
	}
	return nil
}

// handOff passes the ends waiting, up to maxEndGroup, to the first of
// them, which sends them as one batch; with none waiting, the next end
// is sent at once.
func (s *Store) handOff() {
	g := &s.ends
	g.mu.Lock()
	if len(g.waiting) == 0 {
		g.sending = false
		g.mu.Unlock()
		return
	}
	n := min(len(g.waiting), maxEndGroup)
	group := slices.Clone(g.waiting[:n])
	g.waiting = slices.Delete(g.waiting, 0, n)
	if len(g.waiting) == 0 {
		g.waiting = nil // let the array go
	}
	g.mu.Unlock()
	group[0].lead <- group
}

// sendEnds sends the ends of group in one batch (an implicit
// transaction) and sets their results. A group of several is sent
// under ctx's deadline but not its cancellation: its other ends are not
// the sender's to cancel. Its ends are queued in the order of their
// threads, so that two batches (of two instances) that end runs of the
// same threads take the threads' locks in one order and never wait for
// each other in a cycle. When a group of several fails with an error of
// PostgreSQL's (which rolled the whole transaction back), each of its
// ends is sent again alone, so that one end's error (a value PostgreSQL
// refuses) fails that end only.
func (s *Store) sendEnds(ctx context.Context, group []*endReq) {
	defer func() {
		for _, r := range group {
			if r.done != nil {
				close(r.done)
			}
		}
	}()
	if len(group) == 1 {
		s.sendBatch(ctx, group)
		return
	}
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), d)
		defer cancel()
	} else {
		ctx = context.WithoutCancel(ctx)
	}
	slices.SortFunc(group, func(a, b *endReq) int {
		return cmp.Or(cmp.Compare(a.threadID, b.threadID), cmp.Compare(a.runID, b.runID))
	})
	var pe *pgconn.PgError
	if err := s.sendBatch(ctx, group); err == nil || !errors.As(err, &pe) {
		return
	}
	for _, r := range group {
		r.reset()
		s.sendBatch(ctx, []*endReq{r})
	}
}

// sendBatch sends the ends of group in one batch and sets their
// results; when the batch fails, every end's error is the batch's first
// (the transaction is one: no end of it committed, or, when the
// connection failed, it is not known whether all did). It returns that
// error.
func (s *Store) sendBatch(ctx context.Context, group []*endReq) error {
	b := &pgx.Batch{}
	for _, r := range group {
		r.queue(b, &s.q)
	}
	br := s.pool.SendBatch(ctx, b)
	var err error
	for _, r := range group {
		if rerr := r.read(br); err == nil {
			err = rerr
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	for _, r := range group {
		r.err = err
	}
	return err
}
