package postgres

import (
	"context"
	"time"

	"github.com/agentgraph/agentgraph/internal/pglease"
)

// lockLease is how long a thread lock holds after its holder's last
// renewal: a holder that died releases it this long after. The server
// holds a thread's lock for a few statements; the lease is renewed
// while it is held.
const lockLease = 30 * time.Second

// newLocks returns the thread locks of s: lease rows of the table
// agentserver_locks (internal/pglease), released with a NOTIFY on a
// channel of their own when a waiter flagged the lock (WaitFlag): an
// uncontended release sends none, for every commit that sends one takes a
// lock of the whole database cluster.
func newLocks(s *Store) *pglease.Locks {
	l, err := pglease.New(pglease.Config{
		Pool: s.pool, Table: s.q.locks, KeyColumn: "thread_id",
		Channel: s.locksChannel(), Lease: lockLease, Poll: 50 * time.Millisecond, Logger: s.log,
		WaitFlag: true, XactLocks: true,
	})
	if err != nil {
		panic(err) // Pool and Table are set: unreachable
	}
	return l
}

// locksChannel is the NOTIFY channel of the thread locks' releases.
func (s *Store) locksChannel() string { return s.channel + "_locks" }

// LockThread implements [server.ThreadLocker] with a lease row of the
// table agentserver_locks (the same mechanism as memory/postgres's
// conversation locks): no connection is held while the lock is, the
// lease is renewed while it is held, and a holder that died releases it
// 30 seconds after its last renewal. A contended lock is woken by the
// release's NOTIFY, polling at most 50ms apart as a fallback. When no
// other instance waits for the lock, [Store.EndRun] releases it with
// the run's end, one round trip earlier than the unlock would.
//
// The [server.LockingRecorder] methods take the same lock without
// LockThread and without a row: their transaction's first statement
// takes the thread's transaction-level advisory lock
// (pglease.XactLock), which LockThread's take takes too before it writes
// its row, and their later statements hold the thread only if no lease
// row is live on it; the lock is released at their commit. A LockThread
// meanwhile waits in PostgreSQL for that commit, and one that holds the
// lock makes them refuse.
func (s *Store) LockThread(ctx context.Context, threadID string) (func(), error) {
	// Its holder may change the thread, and creations meanwhile find
	// the lock held: its guess would miss.
	s.guesses.forget(threadID)
	unlock, err := s.locks.Lock(ctx, threadID)
	if err != nil {
		return nil, wrap("lock thread", err)
	}
	return unlock, nil
}
