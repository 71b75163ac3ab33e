package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/chain"
)

const (
	// maxGroupPuts bounds the Puts sent together in one statement.
	maxGroupPuts = 64
	// maxGroupBytes bounds the bytes (bodies, metadata, references, IDs,
	// blob data and write values) of the Puts sent together. A Put
	// larger than that alone is sent alone.
	maxGroupBytes = 1 << 20
	// groupTimeout bounds the statement of a group sent by the group's
	// writer, which no caller's context bounds (it holds the Puts of
	// several callers).
	groupTimeout = time.Minute
	// maxInFlight bounds the Puts of one kind (with or without the flush
	// wait) being sent at once, each alone or as a group: a Put made
	// while fewer are being sent is sent at once, so that one Put stuck
	// on a row lock holds no other Put behind it.
	maxInFlight = 2
)

// onePut is a Put the Saver makes in one statement (see Saver.putOnce):
// the checkpoint, and what the statement needs to write it.
type onePut struct {
	expect string
	// The checkpoint's thread, parent and step, copied, and blobs and
	// writes, copies of the caller's slices when the Put joins a batch:
	// the caller's Checkpoint and slices are not read once it returns.
	thread, parentID string
	step             int
	blobs            []checkpoint.Blob
	writes           []checkpoint.Write
	parent           latestRef // the thread's latest checkpoint, remembered; zero for a thread's first
	seq              int64     // the new checkpoint's sequence number
	refs             chain.Refs
	raw              []byte // refs, encoded
	id               string
	now, created     time.Time
	body, md         []byte

	// The outcome, set by the group's writer before it closes the
	// batch's done: whether the checkpoint was saved, or the error of
	// the statement. alone says that PostgreSQL refused the statement
	// of the group, which saved nothing: the caller sends its Put alone,
	// so that a Put PostgreSQL refuses fails alone.
	saved, alone bool
	err          error
	// withdrawn is set, under group.mu, by a caller whose context ended
	// before its batch was taken: the batch is sent without it.
	withdrawn bool
}

// leftError is the error of a Put whose caller's context ended while
// the Put was sent with others: it wraps the context's error and says
// whether the checkpoint was saved.
func leftError(ctx context.Context, p *onePut) error {
	switch {
	case p.saved:
		return fmt.Errorf("postgres: put: %w (the checkpoint %s was saved before the Put returned)", context.Cause(ctx), p.id)
	case p.err != nil && !p.alone:
		return fmt.Errorf("postgres: put: %w; whether the checkpoint %s was saved is not known: %w", context.Cause(ctx), p.id, p.err)
	}
	return fmt.Errorf("postgres: put: %w (the checkpoint %s was not saved)", context.Cause(ctx), p.id)
}

// size is what p counts against maxGroupBytes.
func (p *onePut) size() int {
	n := len(p.body) + len(p.md) + len(p.raw) + len(p.parent.raw) + len(p.id) + len(p.expect) + len(p.thread) + len(p.parentID)
	for _, b := range p.blobs {
		n += len(b.Channel) + len(b.Data)
	}
	for _, w := range p.writes {
		n += len(w.TaskID) + len(w.Node) + len(w.Channel) + len(w.Value)
	}
	return n
}

// putBatch is the Puts of one group statement.
type putBatch struct {
	done  chan struct{} // closed once every Put of the batch has its outcome
	puts  []*onePut
	bytes int  // the sum of the sizes of puts, withdrawn ones included
	taken bool // the writer took the batch: its Puts are being sent
	// ctx is the context of the Put that formed the batch: the writer's
	// context keeps its values (for tracing), not its end.
	ctx context.Context
	// sent is how many Puts the writer sent, left how many of their
	// callers' contexts ended meanwhile; when every one has, the writer's
	// statement is cancelled (cancel, set when the batch is taken).
	sent, left int
	cancel     context.CancelFunc
}

// fits reports whether p (of size bytes) may join b: b has room for it,
// and no Put of p's thread (the group's statement writes one checkpoint
// a thread). A second Put of a thread is sent alone, at once, beside
// the batch: the two are sent concurrently, in no order, and at most one
// of two Puts extending one checkpoint is saved (the other goes through
// putTx, which reports the conflict). group.mu is held.
func (b *putBatch) fits(p *onePut, size int) bool {
	if len(b.puts) >= maxGroupPuts || b.bytes+size > maxGroupBytes {
		return false
	}
	for _, q := range b.puts {
		if q.thread == p.thread && !q.withdrawn {
			return false
		}
	}
	return true
}

// group sends the one-statement Puts of concurrent callers together
// (group commit): a Put made while fewer than maxInFlight are being sent
// is sent at once by its caller, alone; the Puts made while maxInFlight
// are being sent wait for one of them and are then sent together, by a
// writer goroutine, in one statement and so one transaction, and so on
// while Puts keep coming. No Put waits for a timer, and no Put waits
// behind a single Put stuck on a lock. Puts with and without the flush
// wait (PutNoSync, Put) are grouped apart. The zero group is ready.
type group struct {
	mu       sync.Mutex
	next     [2]*putBatch // collecting, indexed by lazy; nil when none waits
	inFlight [2]int       // how many Puts or groups of that kind are being sent
	left     int          // how many callers' contexts ended after their Put was taken
	writers  sync.WaitGroup
}

// wait waits for the writer goroutines to end.
func (g *group) wait() { g.writers.Wait() }

// put sends p, with the Puts of other callers when maxInFlight are being
// sent already, and reports whether it saved the checkpoint (when it did
// not, and err is nil, nothing was written and the caller goes through
// putTx).
//
// When ctx ends while p waits to be sent, p is withdrawn: put returns
// ctx.Err() and p is not written. When ctx ends while p is being sent
// with others, put still waits for the statement's outcome (which the
// group's timeout bounds; the statement is cancelled once every caller
// of its Puts left), so that nothing is written after it returns, and
// returns an error that wraps ctx.Err() and says whether p was saved.
func (g *group) put(ctx context.Context, s *Saver, p *onePut, lazy bool) (bool, error) {
	k := 0
	if lazy {
		k = 1
	}
	size := p.size()
	g.mu.Lock()
	if g.inFlight[k] < maxInFlight {
		g.inFlight[k]++
		g.mu.Unlock()
		defer g.handOff(s, k) // also when sendOne panics
		return s.sendOne(ctx, p, lazy)
	}
	b := g.next[k]
	if b == nil {
		b = &putBatch{done: make(chan struct{}), ctx: ctx}
	}
	if !b.fits(p, size) {
		// Full, or holding a Put of p's thread: p is sent now, beside
		// the group.
		g.mu.Unlock()
		return s.sendOne(ctx, p, lazy)
	}
	// The writer reads the slices after the caller's may have been
	// reused (a caller whose context ends before the batch is taken
	// returns at once).
	p.blobs, p.writes = slices.Clone(p.blobs), slices.Clone(p.writes)
	g.next[k] = b
	b.puts = append(b.puts, p)
	b.bytes += size
	g.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		if !g.leave(b, p) {
			return false, ctx.Err()
		}
		<-b.done
		return false, leftError(ctx, p)
	}
	if p.alone {
		return s.sendOne(ctx, p, lazy)
	}
	return p.saved, p.err
}

// leave is called when the context of p's caller ends while p is in b:
// it withdraws p when b was not taken yet and reports false; else it
// counts the caller as left (cancelling b's statement when every caller
// of it left) and reports true: p's outcome is b's. When b's outcome is
// known already, it reports true.
func (g *group) leave(b *putBatch, p *onePut) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !b.taken {
		p.withdrawn = true
		return false
	}
	select {
	case <-b.done:
		return true
	default:
	}
	g.left++
	if b.left++; b.left == b.sent {
		b.cancel()
	}
	return true
}

// handOff is called by a caller that sent its Put alone: when Puts of
// the kind k wait in a batch, it starts a writer for them, else it
// counts one Put of the kind fewer in flight.
func (g *group) handOff(s *Saver, k int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.next[k] == nil {
		g.inFlight[k]--
		return
	}
	g.writers.Add(1)
	go g.run(s, k)
}

// run sends the batches of the kind k one after the other until none
// waits.
func (g *group) run(s *Saver, k int) {
	defer g.writers.Done()
	for {
		g.mu.Lock()
		b := g.next[k]
		if b == nil {
			g.inFlight[k]--
			g.mu.Unlock()
			return
		}
		g.next[k] = nil
		b.taken = true
		puts := slices.DeleteFunc(b.puts, func(p *onePut) bool { return p.withdrawn })
		b.sent = len(puts)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), groupTimeout)
		b.cancel = cancel
		g.mu.Unlock()
		if len(puts) > 0 {
			s.sendGroup(ctx, puts, k == 1)
		}
		cancel()
		close(b.done)
	}
}

// sendGroup sends puts (each of another thread) in one statement and
// sets each one's outcome.
func (s *Saver) sendGroup(ctx context.Context, puts []*onePut, lazy bool) {
	if len(puts) == 1 {
		p := puts[0]
		p.saved, p.err = s.sendOne(ctx, p, lazy)
		return
	}
	// In the order of their threads, so that two statements lock the
	// threads' rows in one order: two groups (of two processes) sharing
	// threads do not deadlock.
	slices.SortFunc(puts, func(a, b *onePut) int { return strings.Compare(a.thread, b.thread) })
	n := len(puts)
	var (
		threads, ids, expects, praws, parents, refs, mds = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		pseqs, steps, nbs, bbs, nws, wbs                 = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		bodies                                           = make([][]byte, n)
		created                                          = make([]time.Time, n)
		now                                              = puts[0].now

		blobRow, blobBase             []int64
		blobChannel                   []string
		blobKind                      []int16
		blobData                      [][]byte
		writeRow                      []int64
		writeTask, writeNode, writeCh []string
		writeValue                    [][]byte
	)
	for i, p := range puts {
		threads[i], ids[i], expects[i], praws[i], parents[i] = p.thread, p.id, p.expect, string(p.parent.raw), p.parentID
		if p.expect == "" {
			praws[i] = "null"
		}
		refs[i], mds[i], bodies[i], created[i] = string(p.raw), string(p.md), p.body, p.created
		pseqs[i], steps[i] = p.parent.seq, int64(p.step)
		if p.now.After(now) {
			now = p.now
		}
		nbs[i], nws[i] = int64(len(p.blobs)), int64(len(p.writes))
		for _, bl := range p.blobs {
			data := bl.Data
			if data == nil {
				data = []byte{}
			}
			blobRow = append(blobRow, int64(i+1))
			blobChannel = append(blobChannel, bl.Channel)
			blobKind = append(blobKind, int16(bl.Kind))
			blobBase = append(blobBase, p.parent.refs.Base(bl.Channel, bl.Kind == checkpoint.Delta))
			blobData = append(blobData, data)
			bbs[i] += int64(len(data))
		}
		for _, w := range p.writes {
			v := w.Value
			if v == nil {
				v = []byte{}
			}
			writeRow = append(writeRow, int64(i+1))
			writeTask, writeNode, writeCh = append(writeTask, w.TaskID), append(writeNode, w.Node), append(writeCh, w.Channel)
			writeValue = append(writeValue, v)
			wbs[i] += int64(len(v))
		}
	}
	kind, firsts := groupMixed, 0
	for _, p := range puts {
		if p.expect == "" {
			firsts++
		}
	}
	switch firsts {
	case n:
		kind = groupFirst
	case 0:
		kind = groupNext
	}
	// The statement goes in a transaction of its own (one round trip),
	// which first makes PostgreSQL run it with its generic plan: the
	// plan of each execution, made for its arrays' lengths, costed
	// about as much as the generic plan plus planning, so PostgreSQL
	// kept planning the statement afresh, which cost more than the
	// statements of the Puts alone.
	settings := s.q.groupSettings[0]
	if lazy {
		settings = s.q.groupSettings[1]
	}
	saved := make([]bool, n)
	conn, err := s.pool.Acquire(ctx)
	if err == nil {
		defer conn.Release()
		var (
			i, seq int64
		)
		b := &pgx.Batch{}
		b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
		b.Queue(settings)
		b.Queue(s.q.putGroup[kind], threads, ids, now, expects, pseqs, praws, parents, steps, refs, bodies, mds, created,
			nbs, bbs, nws, wbs,
			blobRow, blobChannel, blobKind, blobBase, blobData,
			writeRow, writeTask, writeNode, writeCh, writeValue).Query(func(rows pgx.Rows) error {
			_, err := pgx.ForEachRow(rows, []any{&i, &seq}, func() error {
				if i < 1 || i > int64(n) {
					return fmt.Errorf("the statement returned row %d of %d", i, n)
				}
				saved[i-1] = seq == puts[i-1].seq
				return nil
			})
			return err
		})
		b.Queue("COMMIT")
		if err = conn.SendBatch(ctx, b).Close(); err != nil {
			rollback(conn)
		}
	}
	if err != nil {
		// The statement saved nothing.
		alone := groupRefused(err)
		for _, p := range puts {
			p.alone = alone
			if !alone {
				p.err = fmt.Errorf("postgres: put: %w", err)
			}
		}
		return
	}
	for i, p := range puts {
		if p.saved = saved[i]; p.saved {
			s.recent.put(p.thread, latestRef{id: p.id, seq: p.seq, raw: p.raw, refs: p.refs})
		}
	}
}

// groupRefused reports whether err is PostgreSQL's refusal of a group's
// statement: any error the server reports (a *pgconn.PgError: a value
// it cannot hold, a taken checkpoint ID, a deadlock, a lock or statement
// timeout, a resource limit) aborts the statement's explicit
// transaction, which then saved nothing, and each Put is sent again
// alone, so that it gets the outcome it would have had alone. Any other
// error (a broken connection, the end of the writer's context) fails
// every Put of the group: whether its transaction committed is not known.
func groupRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}
