package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/agentgraph/agentgraph/internal/pglease"
	"github.com/agentgraph/agentgraph/memory"
)

// DefaultMaxLocks was Config.MaxLocks's default when locks held
// connections.
//
// Deprecated: Lock holds no connection any more; Config.MaxLocks is
// ignored.
const DefaultMaxLocks = 32

// DefaultLockLease is Config.LockLease when it is zero.
const DefaultLockLease = 30 * time.Second

var _ memory.Locker = (*Store)(nil)

// Lock implements [memory.Locker] with a lease row in the table
// memory_locks, so that every process sharing the tables serves a
// conversation's turns one at a time. No connection is held while the
// lock is: any number of conversations may be locked at once (a turn
// waiting for a person's answer keeps its lock without keeping a
// connection from the other turns). The lease is renewed while the lock
// is held; when the process holding it dies, the renewals stop and the
// conversation is free Config.LockLease later. A Lock that waits flags
// the row and is woken by the release's NOTIFY (sent only for a flagged
// row), and polls as a fallback. Close releases
// the locks still held.
func (s *Store) Lock(ctx context.Context, id string) (unlock func(), err error) {
	if err := memory.ValidateID(id); err != nil {
		return nil, err
	}
	unlock, err = s.locks.Lock(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("postgres: lock %q: %w", id, err)
	}
	return unlock, nil
}

// lockChannel is the NOTIFY channel of the releases of locks in table:
// a name under PostgreSQL's 63-byte limit, one per table.
func lockChannel(table string) string {
	h := fnv.New64a()
	h.Write([]byte(table))
	return fmt.Sprintf("memory_locks_%x", h.Sum64())
}

// newLocks returns the store's conversation locks.
func (s *Store) newLocks(lease time.Duration) error {
	l, err := pglease.New(pglease.Config{
		Pool: s.pool, Table: s.q.locks, KeyColumn: "conversation_id",
		Channel: lockChannel(s.q.locks), Lease: lease, WaitFlag: true, Logger: s.log,
	})
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.locks = l
	return nil
}
