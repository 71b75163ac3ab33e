package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentgraph/agentgraph/agent/server"
)

const (
	// maxStartWrite caps the starts one statement writes; a batch holding
	// more is written in several.
	maxStartWrite = 256
	// startWriteTimeout bounds a batch's write, which runs under no
	// caller's context: a write that blocks (a lock PostgreSQL does not
	// grant, a connection that stops answering) fails its batch's starts
	// after it, and the starts collected meanwhile go on in the next.
	startWriteTimeout = 30 * time.Second
)

// startReq is one StartRunEvent call waiting in a batch.
type startReq struct {
	runID, start, name string
	data               json.RawMessage
	max                int

	run *server.Run
	pos int64
	err error
}

// startBatch is the starts of one write.
type startBatch struct {
	done chan struct{}
	reqs []*startReq
}

// starts groups the concurrent StartRunEvent calls of a Store: the starts
// made while a write is in flight are written together by the next one,
// in one statement (group commit), as the event log groups appends. A
// lone start is written in its caller's goroutine by the one-run
// statement, under its caller's context.
type starts struct {
	mu      sync.Mutex
	next    *startBatch // collecting; nil when nothing waits
	running bool        // a write is in flight (in a caller's goroutine or the writer's)
	closed  bool
	idle    chan struct{} // closed when running ends after Close; nil until then

	// hook, if set (tests), is called before each write with the
	// number of its starts.
	hook func(n int)
}

// errStoreClosed is the failure of a start made after Store.Close.
var errStoreClosed = errors.New("postgres: store closed; make no call after Close")

// StartRunEvent implements [server.RunStarter] in one statement, that
// marks the run started, appends the event to the run's event log (as
// AppendEvent does, notifying the other instances) at one commit.
// With Config.SharedCheckpoints the commit does not wait for its WAL
// flush.
// max ≤ 0 keeps every event.
//
// The starts made by concurrent calls while one is being written are
// written together, in one statement for any number of runs (each run's
// record and event as its own statement would write them): the next
// write takes all of them. Each call gets its own run's record, event
// position or failure: a run that is missing fails alone
// (server.ErrNotFound), and when PostgreSQL refuses a statement of
// several starts (it then wrote none of them) each is written again on
// its own, so that one start PostgreSQL refuses fails alone. A call
// returns ctx.Err() once ctx ends: a start whose write had not begun is
// then never written; one whose write began may still be, as a
// statement of its own may commit after its caller gave up on it.
func (s *Store) StartRunEvent(ctx context.Context, runID, start, name string, data json.RawMessage, max int) (*server.Run, server.Event, error) {
	req := &startReq{runID: runID, start: start, name: name, data: data, max: max}
	b, leads, err := s.starts.enqueue(req)
	if err != nil {
		return nil, server.Event{}, err
	}
	if leads {
		s.leadStarts(ctx, b)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		s.starts.withdraw(b, req)
		return nil, server.Event{}, ctx.Err()
	}
	if req.err != nil {
		if ctx.Err() != nil {
			return nil, server.Event{}, ctx.Err()
		}
		return nil, server.Event{}, req.err
	}
	return req.run, server.Event{ID: req.pos, Name: name, Data: data}, nil
}

// enqueue adds req to the collecting batch and returns the batch. When no
// write is in flight the caller leads: it must call leadStarts.
func (st *starts) enqueue(req *startReq) (b *startBatch, leads bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, false, errStoreClosed
	}
	if st.next == nil {
		st.next = &startBatch{done: make(chan struct{})}
	}
	b = st.next
	b.reqs = append(b.reqs, req)
	if !st.running {
		st.running, leads = true, true
	}
	return b, leads, nil
}

// withdraw takes req out of b if b is still collecting, so that a start
// whose caller gave up before its write began is never written: written
// later, its event could follow the run's end, which the caller records
// next. A start whose write began is left to it.
func (st *starts) withdraw(b *startBatch, req *startReq) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.next != b {
		return
	}
	for i, r := range b.reqs {
		if r == req {
			b.reqs = append(b.reqs[:i], b.reqs[i+1:]...)
			return
		}
	}
}

// leadStarts writes b, the collecting batch, in the caller's goroutine
// under the caller's ctx when it holds the caller's start alone (so that
// ending ctx ends only the caller's write); else, and for what was
// collected meanwhile, it leaves the writing to a writer goroutine.
func (s *Store) leadStarts(ctx context.Context, b *startBatch) {
	st := &s.starts
	st.mu.Lock()
	if len(b.reqs) > 1 {
		st.mu.Unlock()
		go s.runStarts()
		return
	}
	st.next = nil
	st.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, startWriteTimeout)
	s.writeStarts(wctx, b.reqs)
	cancel()
	close(b.done)
	st.mu.Lock()
	if st.next == nil {
		st.stop()
		st.mu.Unlock()
		return
	}
	st.mu.Unlock()
	go s.runStarts()
}

// runStarts writes the collected batches one after the other until none
// is left. The writes are the batches', not one caller's: each runs to its
// end (or startWriteTimeout) whatever the callers' contexts.
func (s *Store) runStarts() {
	st := &s.starts
	for {
		st.mu.Lock()
		b := st.next
		st.next = nil
		if b == nil {
			st.stop()
			st.mu.Unlock()
			return
		}
		st.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), startWriteTimeout)
		s.writeStarts(ctx, b.reqs)
		cancel()
		close(b.done)
	}
}

// stop marks the writing stopped. st.mu is held.
func (st *starts) stop() {
	st.running = false
	if st.idle != nil {
		close(st.idle)
		st.idle = nil
	}
}

// close refuses the starts made from now on and waits for the writing of
// those made before to end.
func (st *starts) close() {
	st.mu.Lock()
	st.closed = true
	if !st.running {
		st.mu.Unlock()
		return
	}
	if st.idle == nil {
		st.idle = make(chan struct{})
	}
	idle := st.idle
	st.mu.Unlock()
	<-idle
}

// writeStarts writes reqs, in statements of at most maxStartWrite starts
// of distinct runs (a run started twice in a batch, as a retried call
// may, is started by the next statement again, after the first), each
// committing on its own, and sets each start's result. When PostgreSQL
// refuses a statement of several starts (it then wrote none of them),
// they are written again one by one; when a statement fails otherwise
// its outcome is unknown, and each of its starts fails with that error
// rather than risk writing its event twice.
func (s *Store) writeStarts(ctx context.Context, reqs []*startReq) {
	for len(reqs) > 0 {
		seen := make(map[string]bool, min(len(reqs), maxStartWrite))
		var chunk, rest []*startReq
		for _, r := range reqs {
			if len(chunk) < maxStartWrite && !seen[r.runID] {
				seen[r.runID] = true
				chunk = append(chunk, r)
			} else {
				rest = append(rest, r)
			}
		}
		reqs = rest
		if h := s.starts.hook; h != nil {
			h(len(chunk))
		}
		if len(chunk) == 1 {
			s.startOne(ctx, chunk[0])
			continue
		}
		err := s.startMany(ctx, chunk)
		if err == nil {
			continue
		}
		if ctx.Err() != nil || !refusedWhole(err) {
			for _, r := range chunk {
				r.err = err
			}
			continue
		}
		for _, r := range chunk {
			s.startOne(ctx, r)
		}
	}
}

// refusedWhole reports whether a failed statement wrote nothing for
// certain: PostgreSQL refused it (the statement, which commits on its
// own, rolled back), or it failed before it was sent.
func refusedWhole(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) || pgconn.SafeToRetry(err)
}

// startMax is max as the statements take it: ≤ 0 keeps every event.
func startMax(max int) int {
	if max <= 0 {
		return 1<<31 - 1
	}
	return max
}

// startOne writes one start with the one-run statement.
func (s *Store) startOne(ctx context.Context, req *startReq) {
	var sent, setting any
	query, extra := s.q.startRunEvent, []any{&req.pos, &sent}
	if s.shared {
		query, extra = s.q.startRunEventAsync, append(extra, &setting)
	}
	r, err := scanRun(extraRow{s.pool.QueryRow(ctx, query, req.runID, req.start, s.origin, req.name, raw(req.data), startMax(req.max),
		s.channel, s.origin+":"+req.runID), extra})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		req.err = fmt.Errorf("run %s: %w", req.runID, server.ErrNotFound)
	case err != nil:
		req.err = wrap("start run", err)
	default:
		req.run = r
	}
}

// startMany writes the starts of distinct runs reqs in one statement. A
// run the statement does not return is missing: its start fails with
// server.ErrNotFound.
func (s *Store) startMany(ctx context.Context, reqs []*startReq) error {
	n := len(reqs)
	ids, startCols, names, payloads := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	datas := make([][]byte, n)
	maxes := make([]int64, n)
	byID := make(map[string]*startReq, n)
	for i, r := range reqs {
		ids[i], startCols[i], names[i], datas[i], maxes[i] = r.runID, r.start, r.name, raw(r.data), int64(startMax(r.max))
		payloads[i] = s.origin + ":" + r.runID
		byID[r.runID] = r
	}
	query := s.q.startRunEvents
	if s.shared {
		query = s.q.startRunEventsAsync
	}
	rows, err := s.pool.Query(ctx, query, ids, startCols, s.origin, names, datas, maxes, s.channel, payloads)
	if err != nil {
		return wrap("start runs", err)
	}
	for rows.Next() {
		var pos int64
		var sent, setting any
		extra := []any{&pos, &sent}
		if s.shared {
			extra = append(extra, &setting)
		}
		r, err := scanRun(extraRow{rows, extra})
		if err != nil {
			rows.Close()
			return wrap("start runs", err)
		}
		if req := byID[r.ID]; req != nil && req.run == nil {
			req.run, req.pos = r, pos
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		for _, r := range reqs {
			r.run = nil
		}
		return wrap("start runs", err)
	}
	for _, r := range reqs {
		if r.run == nil {
			r.err = fmt.Errorf("run %s: %w", r.runID, server.ErrNotFound)
		}
	}
	return nil
}
