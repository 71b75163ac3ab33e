package pgnotify

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// MaxPendingNotifications bounds the distinct payloads a [Sender] holds
// while a send is in flight; past it, payloads are dropped (and logged):
// waiters poll, so a lost notification delays them, it does not lose
// anything.
const MaxPendingNotifications = 4096

// sendTimeout bounds one send.
const sendTimeout = 10 * time.Second

// Sender sends notifications on one channel after the changes they
// announce committed, outside the changes' transactions, in batches: the
// payloads given while a send is in flight go together, deduplicated, in
// the next one (one statement, one transaction, one wake-up of each
// listener). A NOTIFY inside a writing transaction holds a global lock
// from the commit's start to its end, WAL flush included, so every
// notifying writer waits for the others' flushes; a transaction that
// only notifies writes no WAL and holds the lock briefly. It is safe for
// concurrent use; use [NewSender].
type Sender struct {
	pool    *pgxpool.Pool
	channel string
	log     *zap.Logger

	mu      sync.Mutex
	pending map[string]struct{}
	running bool
	queued  uint64        // payloads queued (not dropped) so far
	sent    uint64        // of those, how many were sent (or failed)
	done    chan struct{} // closed (and replaced) when sent grows
}

// NewSender returns a sender on channel; nothing runs until Send.
func NewSender(pool *pgxpool.Pool, channel string, log *zap.Logger) *Sender {
	if log == nil {
		log = zap.NewNop()
	}
	return &Sender{pool: pool, channel: channel, log: log, pending: map[string]struct{}{}, done: make(chan struct{})}
}

// Send queues a notification with payload (at most 8000 bytes) and
// returns at once; it is sent by the next send.
func (s *Sender) Send(payload string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) >= MaxPendingNotifications {
		s.log.Warn("pgnotify: too many notifications waiting; dropping one (its waiters poll)", zap.String("channel", s.channel))
		return
	}
	s.pending[payload] = struct{}{}
	s.queued++
	if !s.running {
		s.running = true
		go s.run()
	}
}

// Wait returns once the notifications queued before it are sent (or
// failed), or ctx ends. Sends queued after it do not hold it up.
func (s *Sender) Wait(ctx context.Context) error {
	s.mu.Lock()
	target := s.queued
	for s.sent < target {
		done := s.done
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
	}
	s.mu.Unlock()
	return nil
}

func (s *Sender) run() {
	for {
		s.mu.Lock()
		if len(s.pending) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		payloads := make([]string, 0, len(s.pending))
		for p := range s.pending {
			payloads = append(payloads, p)
		}
		clear(s.pending)
		upto := s.queued
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
		_, err := s.pool.Exec(ctx, `SELECT count(pg_notify($1, p)) FROM unnest($2::text[]) p`, s.channel, payloads)
		cancel()
		if err != nil {
			s.log.Warn("pgnotify: sending notifications failed; their waiters poll", zap.String("channel", s.channel), zap.Int("notifications", len(payloads)), zap.Error(err))
		}
		s.mu.Lock()
		s.sent = upto
		close(s.done)
		s.done = make(chan struct{})
		s.mu.Unlock()
	}
}
