// Package lru is a fixed-size cache that evicts the least recently used
// entry, for state keyed by input (model names, client ids) that must stay
// bounded.
package lru

import (
	"container/list"
	"sync"
)

// Cache holds at most its size of entries. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // front: most recently used
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns a cache of at most size entries; size below 1 means 1.
func New[K comparable, V any](size int) *Cache[K, V] {
	size = max(size, 1)
	return &Cache[K, V]{size: size, order: list.New(), items: make(map[K]*list.Element, min(size, 1024))}
}

// Get returns the value of key and marks it used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// GetOrAdd returns the value of key, adding make's value first when the
// key is absent (evicting the least recently used entry if the cache is
// full). make runs under the cache's lock: keep it short.
func (c *Cache[K, V]) GetOrAdd(key K, make func() V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*entry[K, V]).val
	}
	v := make()
	c.items[key] = c.order.PushFront(&entry[K, V]{key, v})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*entry[K, V]).key)
	}
	return v
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
