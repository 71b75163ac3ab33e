package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/event"
	evpg "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/internal/pgdb"
)

var (
	_ server.LostLogAppender = (*Store)(nil)
	_ server.EventEnder      = (*Store)(nil)
)

// logEpoch is the epoch (of evpg.EpochSize ids) from which a run's event
// log that an append of the run's attempt finds missing (a database crash
// emptied the UNLOGGED log tables) numbers its events. When the attempt's
// execution was given ids (after >= 0, the highest), it is the epoch
// after that of after, so that the new ids are above every id the lost
// log can have given a client (an epoch holds fewer events than
// EpochSize), and at least the one after the attempt's first: only a log
// that holds every event of its attempt starts at the attempt's base,
// which a client that saw none of the run's events (Last-Event-ID -1)
// reads without an EventsDropped (the lost log held those of an attempt
// that went on from an earlier attempt's log, its metadata event
// included, below the attempt's base). When the execution was given
// none (after < 0) it is the attempt's first, as startRunEvent numbers a
// log it creates (attemptBase times the attempt, from the second, capped
// at maxBaseAttempt). It is at most the attempt's last epoch, below the
// next attempt's base (and 2^53): an attempt whose log is lost more than
// 255 times numbers it from that last epoch again (see the package doc).
func logEpoch(attempt int, after int64) int64 {
	per := attemptBase / evpg.EpochSize
	first := int64(0)
	if attempt > 1 {
		first = int64(min(attempt, maxBaseAttempt)) * per
	}
	e := first
	if after >= 0 {
		e = max(first+1, after/evpg.EpochSize+1)
	}
	return min(e, first+per-1)
}

// AppendEventAfter implements [server.LostLogAppender]: AppendEvent,
// whose log, when the run's is missing, is created from logEpoch(attempt,
// after). An error that is not PostgreSQL's (a connection's, a
// cancelled ctx while the write goes on) leaves the write's outcome
// unknown: it is returned as a [*server.UnknownAppendError] whose MaxID
// is that epoch's last id.
func (s *Store) AppendEventAfter(ctx context.Context, runID string, attempt int, after int64, name string, data json.RawMessage, max int) (server.Event, error) {
	if max <= 0 {
		max = math.MaxInt32
	}
	epoch := logEpoch(attempt, after)
	id, err := s.events.AppendEpoch(ctx, runID, max, epoch, evpg.Record{Name: name, Data: data})
	if errors.Is(err, event.ErrUnknownKey) {
		return server.Event{}, fmt.Errorf("run %s: %w", runID, server.ErrNotFound)
	}
	if err != nil && outcomeUnknown(err) {
		// The write may have committed, in the log the run had or in
		// one it created from epoch: its ids are at most that epoch's
		// last.
		return server.Event{}, &server.UnknownAppendError{MaxID: (epoch+1)*evpg.EpochSize - 1, Err: wrap("append event", err)}
	}
	if err != nil {
		return server.Event{}, wrap("append event", err)
	}
	return server.Event{ID: id, Name: name, Data: data}, nil
}

// endEventQuery is the run's last event as the event log's one-record
// write ($1 the run, $2 the writer, $3 and $4 the event, $5 the log's
// cap, $6 the epoch of a log it creates: see logEpoch), without the
// log's NOTIFY (the run's end notifies once committed); it returns the
// event's position.
func endEventQuery(schema string) string {
	keys, events := pgdb.Table(schema, logName+"_keys"), pgdb.Table(schema, logName+"_events")
	size := strconv.FormatInt(evpg.EpochSize, 10)
	return `WITH h AS (INSERT INTO ` + keys + ` AS k (key, writer, next, ended, updated)
			VALUES ($1, $2, $6::bigint * ` + size + ` + 1, false, clock_timestamp())
			ON CONFLICT (key) DO UPDATE SET next = k.next + 1, writer = EXCLUDED.writer, updated = EXCLUDED.updated
			RETURNING next),
		i AS (INSERT INTO ` + events + ` (key, pos, seq, name, data) SELECT $1, h.next - 1, 0, $3, $4 FROM h),
		e AS (DELETE FROM ` + events + ` WHERE key = $1 AND pos = (SELECT next FROM h) - 1 - $5::bigint AND (SELECT next FROM h) % ` + size + ` > $5::bigint)
		SELECT next - 1 FROM h`
}

// EndRunEvent implements [server.EventEnder] in one transaction of two
// statements: the run's last event in its log (the log's row first, then
// the run's, the order a run's start and FinishRunLocked lock them in),
// then EndRun's statement (EndRunOwned's when e.Worker is set), which
// also releases the thread's lock this Store holds, as EndRun does. It
// notifies the other instances once committed. A commit whose reply is
// lost (the connection cut after it) is read back, as FinishRunLocked's
// is: the run ended with e's status, error and time (and attempt, with
// e.Worker set) is returned as the reply would have returned it,
// notified. The server ends a run
// with it when it ends it step by step (the thread's lock held
// elsewhere, or FinishRunLocked failed).
func (s *Store) EndRunEvent(ctx context.Context, e server.RunEnd) (*server.Run, server.Event, error) {
	max := e.MaxEvents
	if max <= 0 {
		max = math.MaxInt32
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, server.Event{}, wrap("end run", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var pos int64
	if err := tx.QueryRow(ctx, endEventQuery(s.schema), e.RunID, s.origin, e.EventName, raw(e.EventData), max, logEpoch(e.Attempt, e.Next-1)).Scan(&pos); err != nil {
		return nil, server.Event{}, wrap("end run", err)
	}
	keys, tokens := s.locks.Holding()
	var released string
	var row pgx.Row
	if e.Worker != "" {
		row = tx.QueryRow(ctx, s.q.endRunOwned, e.RunID, e.Status, e.Error, e.At, keys, tokens, e.Worker, e.Attempt)
	} else {
		row = tx.QueryRow(ctx, s.q.endRun, e.RunID, e.Status, e.Error, e.At, keys, tokens)
	}
	r, err := scanRun(extraRow{row, []any{&released}})
	if errors.Is(err, pgx.ErrNoRows) {
		var exists bool
		if err := tx.QueryRow(ctx, s.q.runExists, e.RunID).Scan(&exists); err != nil {
			return nil, server.Event{}, wrap("end run", err)
		}
		if !exists {
			return nil, server.Event{}, fmt.Errorf("run %s: %w", e.RunID, server.ErrNotFound)
		}
		return nil, server.Event{}, fmt.Errorf("postgres: end run %s: the run is no longer running under worker %q attempt %d; its end is its new owner's to record: %w",
			e.RunID, e.Worker, e.Attempt, server.ErrLeaseLost)
	}
	if err != nil {
		return nil, server.Event{}, wrap("end run", err)
	}
	if err := tx.Commit(ctx); err != nil {
		if !outcomeUnknown(err) {
			return nil, server.Event{}, wrap("end run", err)
		}
		// The commit may have happened with its reply lost (a connection
		// cut after it): if the run reads back as ended by it, the end
		// is returned as its reply would have, and notified, rather than
		// failed while the other instances' streams wait for a
		// notification that never comes.
		var rerr error
		if r, rerr = s.endedBy(ctx, e); r == nil {
			if rerr != nil {
				// Unknown still: the event may be stored, at pos.
				s.log.Warn("postgres: reading whether a run's end committed after its reply was lost", zap.String("run", e.RunID), zap.Error(rerr))
				return nil, server.Event{}, &server.UnknownAppendError{MaxID: pos, Err: wrap("end run", err)}
			}
			return nil, server.Event{}, wrap("end run", err)
		}
		s.log.Info("postgres: a run's end committed but its reply was lost; read it back", zap.String("run", e.RunID), zap.Error(err))
	}
	if released != "" {
		s.locks.Released(released)
	}
	s.changed(e.RunID)
	return r, server.Event{ID: pos, Name: e.EventName, Data: e.EventData}, nil
}

// endedBy reads back whether EndRunEvent's transaction for e committed
// although the reply to its commit was lost: it returns the run as ended
// by it (e's status, error and time, and e's attempt when e names a
// worker), or nil with the read's error (nil when the run is not ended
// so).
func (s *Store) endedBy(ctx context.Context, e server.RunEnd) (*server.Run, error) {
	r, err := s.Run(ctx, e.RunID)
	if errors.Is(err, server.ErrNotFound) {
		return nil, nil
	}
	if err != nil || r.Status != e.Status || !r.UpdatedAt.Equal(e.At.Truncate(time.Microsecond)) || r.Worker != "" ||
		r.Error != e.Error || e.Worker != "" && r.Attempt != e.Attempt {
		return nil, err
	}
	return r, nil
}
