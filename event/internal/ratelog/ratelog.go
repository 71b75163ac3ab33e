// Package ratelog bounds how often a repeated condition (a dropped event,
// a message that does not decode) is logged: the packages of event count
// every occurrence in their stats and log one in an interval, with the
// number left unlogged since the last line, so that a flood of them
// (from a slow handler or from anyone who can publish) costs a few log
// lines, not one each.
package ratelog

import (
	"sync"
	"time"
)

// DefaultEvery is the interval of a zero [Limiter].
const DefaultEvery = time.Second

// Limiter lets one occurrence in Every be logged. The zero Limiter lets
// one a second through. It is safe for concurrent use.
type Limiter struct {
	// Every is the least time between two lines logged. Zero means
	// DefaultEvery.
	Every time.Duration

	mu      sync.Mutex
	next    time.Time
	skipped uint64
}

// Allow reports whether to log this occurrence, and when it does, how
// many occurrences were not logged since the last one that was.
func (l *Limiter) Allow() (ok bool, skipped uint64) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.skipped++
		return false, 0
	}
	every := l.Every
	if every <= 0 {
		every = DefaultEvery
	}
	l.next = now.Add(every)
	skipped, l.skipped = l.skipped, 0
	return true, skipped
}
