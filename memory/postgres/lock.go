package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/memory"
)

// DefaultMaxLocks is Config.MaxLocks when it is zero.
const DefaultMaxLocks = 32

var _ memory.Locker = (*Store)(nil)

// Lock implements [memory.Locker] with a PostgreSQL session-level advisory
// lock, so that every process sharing the tables serves a conversation's
// turns one at a time. The lock is held on a connection of its own, taken
// from at most Config.MaxLocks connections that only locks use (so that
// held locks never starve the queries of the turns holding them); a Lock
// that finds them all busy waits for one. Close cuts the connections of
// the locks still held, which releases them. When the process holding
// a lock dies, its connection closes and PostgreSQL releases the lock: a
// conversation is never left reserved by a process that is gone.
//
// The lock's key is a 64-bit hash of the table and the conversation id;
// two conversations whose keys collide (about one pair in 2^32 among 2^32
// conversations) are serialized with each other, which delays but never
// breaks them.
func (s *Store) Lock(ctx context.Context, id string) (unlock func(), err error) {
	if err := memory.ValidateID(id); err != nil {
		return nil, err
	}
	key := lockKey(s.q.conversations, id)
	var conn *pgx.Conn
	for fresh := false; ; fresh = true {
		c, reused, err := s.locks.acquire(ctx, s.pool, fresh)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("postgres: lock %q: %w", id, err)
		}
		_, err = c.Exec(ctx, "SELECT pg_advisory_lock($1)", key)
		if err == nil {
			conn = c
			break
		}
		// A cancelled wait may leave the session in any state: close it,
		// which releases whatever it holds, rather than keep it.
		s.locks.release(c, false)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !reused {
			return nil, fmt.Errorf("postgres: lock %q: %w", id, err)
		}
		// An idle connection may have died meanwhile (the server
		// restarted, or ended the session): try once more on a new one.
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", key)
			if err != nil && !s.locks.isClosed() {
				s.log.Warn("postgres: unlocking a conversation failed; closing its connection, which releases the lock",
					zap.String("conversation_id", id), zap.Error(err))
			}
			s.locks.release(conn, err == nil)
		})
	}, nil
}

// lockConns are the connections that hold conversation locks: at most max
// at once, idle ones kept for the next Lock.
type lockConns struct {
	sem chan struct{} // a token per connection in use

	mu     sync.Mutex
	idle   []*pgx.Conn
	held   map[*pgx.Conn]struct{}
	closed bool
}

func newLockConns(max int) *lockConns {
	return &lockConns{sem: make(chan struct{}, max), held: map[*pgx.Conn]struct{}{}}
}

// acquire returns a lock connection, an idle one (reused) unless fresh
// or none is left, else one dialled with pool's settings.
func (l *lockConns) acquire(ctx context.Context, pool *pgxpool.Pool, fresh bool) (c *pgx.Conn, reused bool, err error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.sem
		return nil, false, errors.New("the store is closed")
	}
	if n := len(l.idle); n > 0 && !fresh {
		c := l.idle[n-1]
		l.idle = l.idle[:n-1]
		l.held[c] = struct{}{}
		l.mu.Unlock()
		return c, true, nil
	}
	l.mu.Unlock()
	c, err = pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		<-l.sem
		return nil, false, fmt.Errorf("connecting: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close(context.Background())
		<-l.sem
		return nil, false, errors.New("the store is closed")
	}
	l.held[c] = struct{}{}
	return c, false, nil
}

// release gives c back; a connection that is not reusable is closed.
func (l *lockConns) release(c *pgx.Conn, reusable bool) {
	l.mu.Lock()
	_, held := l.held[c]
	delete(l.held, c)
	keep := reusable && held && !l.closed
	if keep {
		l.idle = append(l.idle, c)
	}
	l.mu.Unlock()
	if !keep {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = c.Close(ctx)
		cancel()
	}
	<-l.sem
}

func (l *lockConns) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// close closes the idle connections and cuts the sockets of the held ones,
// which ends their sessions and so releases their locks; their unlock
// functions then only tidy up.
func (l *lockConns) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	for _, c := range l.idle {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.Close(ctx)
		cancel()
	}
	l.idle = nil
	for c := range l.held {
		_ = c.PgConn().Conn().Close()
	}
}

// lockKey is the advisory lock key of conversation id in table.
func lockKey(table, id string) int64 {
	h := fnv.New64a()
	h.Write([]byte(table))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return int64(h.Sum64())
}
