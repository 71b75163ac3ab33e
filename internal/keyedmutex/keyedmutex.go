// Package keyedmutex provides a mutex per key: callers locking the same key
// take turns, callers locking different keys do not wait for each other.
// A key's lock exists only while someone holds or waits for it, so the
// number of keys seen over time does not grow memory.
package keyedmutex

import (
	"context"
	"sync"
)

// Mutex is a set of mutexes, one per key. The zero value is ready to use;
// a Mutex must not be copied after first use.
type Mutex struct {
	mu    sync.Mutex
	locks map[string]*entry
}

type entry struct {
	ch   chan struct{} // holds one token while locked
	refs int           // holders and waiters
}

// Lock locks key and returns the function that unlocks it, which must be
// called exactly once. If ctx ends before the lock is free, Lock returns
// ctx's error and holds nothing. Waiters are not served in any particular
// order.
func (k *Mutex) Lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*entry)
	}
	l := k.locks[key]
	if l == nil {
		l = &entry{ch: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// Len returns the number of keys currently held or waited for.
func (k *Mutex) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.locks)
}

// Refs returns the number of callers holding or waiting for key's lock.
func (k *Mutex) Refs(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l := k.locks[key]; l != nil {
		return l.refs
	}
	return 0
}
