package postgres

// Queued reports the records of l's write in flight and those collected
// for the next one.
func Queued(l *Log) (inflight, next int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight != nil {
		inflight = len(l.inflight.recs)
	}
	if l.next != nil {
		next = len(l.next.recs)
	}
	return inflight, next
}
