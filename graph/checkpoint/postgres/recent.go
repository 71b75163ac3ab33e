package postgres

import (
	"sync"

	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/chain"
)

// DefaultRecentThreads is the number of threads whose latest checkpoint a
// Saver remembers when Config.RecentThreads is 0.
const DefaultRecentThreads = 4096

// latestRef is what a Saver remembers of a thread's latest checkpoint to
// save its next checkpoint in one statement: the references from which it
// computes the new checkpoint's, and the sequence number that the new
// checkpoint's follows.
type latestRef struct {
	id   string
	seq  int64
	raw  []byte // refs as stored
	refs chain.Refs
}

// recent remembers the latest checkpoint of the threads a Saver last saved
// or loaded, up to max threads (when full, an arbitrary thread is
// forgotten to make room). What it holds is only a guess: a Put made from
// it checks, in the statement that writes, that the thread's latest
// checkpoint and its references are still those remembered, and falls back
// to reading them otherwise. A nil *recent remembers nothing.
type recent struct {
	mu  sync.Mutex
	max int
	m   map[string]latestRef
}

// newRecent returns a recent holding up to max threads; nil when max < 0.
func newRecent(max int) *recent {
	if max == 0 {
		max = DefaultRecentThreads
	}
	if max < 0 {
		return nil
	}
	return &recent{max: max, m: make(map[string]latestRef)}
}

// get returns what is remembered of thread's latest checkpoint.
func (r *recent) get(thread string) (latestRef, bool) {
	if r == nil {
		return latestRef{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.m[thread]
	return l, ok
}

// put remembers l as thread's latest checkpoint. l's slices must not be
// modified afterwards.
func (r *recent) put(thread string, l latestRef) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[thread]; !ok && len(r.m) >= r.max {
		for k := range r.m {
			delete(r.m, k)
			break
		}
	}
	r.m[thread] = l
}

// forget forgets thread.
func (r *recent) forget(thread string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, thread)
}
