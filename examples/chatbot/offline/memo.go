package offline

import (
	"regexp"
	"strings"
	"sync"
)

// memo remembers the results of a pure function of a string, so that the
// rules that read the same text several times in a turn (a tool result
// read by the reflection and again by the writer, a user message read by
// the supervisor and again by the writer, earlier messages of the
// conversation at every turn) cut and scan it once. It is bounded: when it
// holds maxEntries keys or maxBytes bytes of keys, it starts over empty.
// Values must not be modified by those who get them. Safe for concurrent
// use.
type memo[V any] struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	m     map[string]V
	bytes int
}

// get returns f(key), from memory when key was seen since the memo last
// started over. Keys longer than a quarter of maxBytes are not kept.
// Two callers missing the same key at once both compute it.
func (c *memo[V]) get(key string, f func(string) V) V {
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v
	}
	if len(key) > c.maxBytes/4 {
		return f(key)
	}
	// The memo keeps its own copy, so that neither the key nor the
	// substrings of it in v hold on to a larger string key is part of.
	key = strings.Clone(key)
	v = f(key)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= c.maxEntries || c.bytes+len(key) > c.maxBytes {
		c.m, c.bytes = make(map[string]V, min(c.maxEntries, 64)), 0
	}
	if _, ok := c.m[key]; !ok {
		c.m[key] = v
		c.bytes += len(key)
	}
	c.mu.Unlock()
	return v
}

// replaceAll is re.ReplaceAllString(s, repl), without copying s when re
// does not match it: the rules try many patterns on every message, and
// most match none.
func replaceAll(re *regexp.Regexp, s, repl string) string {
	if !re.MatchString(s) {
		return s
	}
	return re.ReplaceAllString(s, repl)
}

// replaceAllFunc is re.ReplaceAllStringFunc(s, f), without copying s
// when re does not match it.
func replaceAllFunc(re *regexp.Regexp, s string, f func(string) string) string {
	if !re.MatchString(s) {
		return s
	}
	return re.ReplaceAllStringFunc(s, f)
}

// containsFold reports whether s contains sub, which is lower-case ASCII,
// in any case: a test before a case-insensitive pattern, without
// lower-casing s.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}
