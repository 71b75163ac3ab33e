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
)

// onePut is a Put the Saver makes in one statement (see Saver.putOnce):
// the checkpoint, and what the statement needs to write it.
type onePut struct {
	expect string
	// The checkpoint's thread, parent and step, copied: the caller's
	// Checkpoint is not read once the Put is handed to the group, as a
	// caller whose context ends while its group is sent returns at once.
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
}

// fits reports whether p (of size bytes) may join b: b has room for it,
// and no Put of p's thread. Two Puts of one thread go in two statements,
// in the order they joined, as each may need the other's checkpoint.
// group.mu is held.
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
// (group commit): a Put made while no other is being sent is sent at
// once by its caller, alone; the Puts made while one is being sent wait
// for it and are then sent together, by a writer goroutine, in one
// statement and so one transaction, and so on while Puts keep coming.
// No Put waits for a timer. Puts with and without the flush wait
// (PutNoSync, Put) are grouped apart. The zero group is ready.
type group struct {
	mu      sync.Mutex
	next    [2]*putBatch // collecting, indexed by lazy; nil when none waits
	running [2]bool      // a Put of that kind is being sent
	writers sync.WaitGroup
}

// wait waits for the writer goroutines to end.
func (g *group) wait() { g.writers.Wait() }

// put sends p, with the Puts of other callers when some are being sent
// already, and reports whether it saved the checkpoint (when it did not,
// and err is nil, nothing was written and the caller goes through
// putTx).
//
// When ctx ends while p waits to be sent, p is withdrawn: put returns
// ctx.Err() and p is not written. When ctx ends while p is being sent
// with others, put returns ctx.Err() at once; the statement goes on for
// the others, and p may be saved (as a statement cancelled after it was
// sent may have committed): it is saved whole or not at all.
func (g *group) put(ctx context.Context, s *Saver, p *onePut, lazy bool) (bool, error) {
	k := 0
	if lazy {
		k = 1
	}
	size := p.size()
	g.mu.Lock()
	if !g.running[k] {
		g.running[k] = true
		g.mu.Unlock()
		saved, err := s.sendOne(ctx, p, lazy)
		g.handOff(s, k)
		return saved, err
	}
	b := g.next[k]
	if b == nil {
		b = &putBatch{done: make(chan struct{})}
	}
	if !b.fits(p, size) {
		// Full, or holding a Put of p's thread: p is sent now, beside
		// the group.
		g.mu.Unlock()
		return s.sendOne(ctx, p, lazy)
	}
	g.next[k] = b
	b.puts = append(b.puts, p)
	b.bytes += size
	g.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		g.mu.Lock()
		if !b.taken {
			p.withdrawn = true
		}
		g.mu.Unlock()
		return false, ctx.Err()
	}
	if p.alone {
		return s.sendOne(ctx, p, lazy)
	}
	return p.saved, p.err
}

// handOff is called by a caller that sent its Put alone: when Puts of
// the kind k joined a batch meanwhile, it starts a writer for them, else
// it marks nothing of the kind as being sent.
func (g *group) handOff(s *Saver, k int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.next[k] == nil {
		g.running[k] = false
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
			g.running[k] = false
			g.mu.Unlock()
			return
		}
		g.next[k] = nil
		b.taken = true
		puts := slices.DeleteFunc(b.puts, func(p *onePut) bool { return p.withdrawn })
		g.mu.Unlock()
		if len(puts) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
			s.sendGroup(ctx, puts, k == 1)
			cancel()
		}
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
// statement because of one of its Puts, or of its locks: a data
// exception (class 22: a value PostgreSQL cannot hold), an integrity
// violation (class 23: a taken checkpoint ID) or a transaction rollback
// (class 40: a deadlock with another process's statement). The
// statement then saved nothing, and each Put is sent again alone, so
// that it gets the outcome it would have had alone. Any other error (a
// broken connection, a timeout) fails every Put of the group: whether
// its statement committed is not known.
func groupRefused(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) != 5 {
		return false
	}
	switch pe.Code[:2] {
	case "22", "23", "40":
		return true
	}
	return false
}
